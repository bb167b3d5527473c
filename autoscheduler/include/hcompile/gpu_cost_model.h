// The GPU cost model: predicted seconds of a GPU schedule (gpu_schedule.h's decision lists) from
// the pipeline analysis and the device (gpu_device.h). Per kernel (a stored region with its row
// members and the regions inlined into them): DRAM bytes (each stored array once; its further
// reads in the same kernel from cache), arithmetic, blocks, threads and shared memory per block
// from the decisions; occupancy from the device's limits; memory efficiency from the bytes each
// multiprocessor keeps in flight against bandwidth x latency, the last wave's idle share and
// uncoalesced reads; the larger of memory and arithmetic time, a DRAM latency per dependent pass
// of a row block per wave, and the gap between kernels. cuBLAS calls: their products at the
// device's rate or their operands' bytes. A call takes the longer of the device's time and the
// host's (the dispatcher, a launch per kernel and per cuBLAS call), which overlap.
#pragma once

#include <string>
#include <vector>

#include "hcompile/analysis.h"
#include "hcompile/decisions.h"
#include "hcompile/gpu_device.h"

namespace hc {

struct GpuKernelPrediction {
    int region = -1;                 // the kernel's stored region
    int64_t blocks = 0, threads = 0, shared_bytes = 0;
    double dram_bytes = 0, cache_bytes = 0, ops = 0;
    double blocks_per_multiprocessor = 0;
    double memory_efficiency = 0;    // of the copy bandwidth, in (0, 1]
    double memory_seconds = 0, arithmetic_seconds = 0, latency_seconds = 0, seconds = 0;
};

struct GpuPrediction {
    double seconds = 0;              // the longer of the two below
    double device_seconds = 0;       // the kernels' and cuBLAS calls' times, one after another
    double host_seconds = 0;         // the host's work per call: the dispatcher and each launch
    std::vector<GpuKernelPrediction> kernels;
    std::string print(const LoweredPipeline &lowered) const;
};

// Throws std::invalid_argument for a list that does not fit the pipeline (plan_regions).
GpuPrediction predict_gpu(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const Schedule &schedule,
                          const GpuDevice &device);

}  // namespace hc
