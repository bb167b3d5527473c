// The GPU's schedule (a CUDA target): one producer of decision lists (decisions.h). Every region
// the partitioner stores runs as a kernel of its own, in blocks of threads over its two innermost
// axes, one thread per output point; optional regions are inlined as the baseline inlines them.
// Where the partitioner fused regions per row of a root (softmax, layer norm), each row is one
// block instead (Choice::GpuRows): its members in shared memory, its reductions by the block's
// threads; other reductions over rows a block per output. A fixed rule: the GPU cost model
// (gpu_cost_model.h) predicts it and ranks the alternatives below.
#pragma once

#include "hcompile/analysis.h"
#include "hcompile/decisions.h"
#include "hcompile/gpu_device.h"
#include "hcompile/lowering.h"

#include <utility>
#include <vector>

namespace hc {

// `analysis`: analyze_pipeline(lowered), which the cost model reads too (built once per compile).
Schedule gpu_schedule(const LoweredPipeline &lowered, const PipelineAnalysis &analysis);

// max-autotune on the device: up to `limit` alternatives to `base` (gpu_schedule's), each one
// region's decisions away from it (a row member recomputed instead of stored per row, 128 or 512
// threads a row, other block shapes, fewer points or rows a thread, another register cap), each
// with the GPU cost model's predicted seconds on `device`, the fastest predicted first.
std::vector<std::pair<Schedule, double>> gpu_schedule_candidates(const LoweredPipeline &lowered, const Schedule &base,
                                                                 int limit, const PipelineAnalysis &analysis,
                                                                 const GpuDevice &device);

// The registers a thread of the pipeline's kernels may use: CUDA compiles them as one module
// under one cap, which the runtime sets when the module loads (runtime/src/cuda_register_cap.h). The most its
// kernels (regions computed at the root) ask for (Choice::GpuRegisters), Halide's default of
// kHalideGpuRegisters where one asks for none; 0 where that is the answer (or not on the GPU).
constexpr int64_t kHalideGpuRegisters = 64;
int gpu_register_cap(const LoweredPipeline &lowered, const Schedule &schedule);

}  // namespace hc
