// The GPU the GPU cost model predicts for: the device's own attributes (multiprocessors, their
// thread, block and shared-memory limits, L2, clock, double-precision rate) and its measured
// copy bandwidth, read by runtime/cuda_device_probe.h from the CUDA driver; a reference H100 where
// no device is present (compile-only, CI).
#pragma once

#include <string>

namespace hc {

struct GpuDevice {
    std::string name = "reference H100 (not measured)";
    int multiprocessors = 132;
    int max_threads_per_multiprocessor = 2048;
    int max_blocks_per_multiprocessor = 32;
    long long shared_bytes_per_multiprocessor = 228 * 1024;
    long long l2_bytes = 50 << 20;
    double clock_hz = 1.98e9;
    int single_to_double_ratio = 2;      // float32 lanes per float64 lane
    // Bytes per second a device-to-device copy moves (read + write counted), measured.
    double copy_bandwidth = 3.0e12;
    // Not measured (constants of Hopper-class GPUs): a DRAM round trip, what a cache read costs
    // against a DRAM read, the device's idle time between two kernels.
    double memory_latency_seconds = 7e-7;
    double cache_bandwidth_factor = 2.5;
    double kernel_gap_seconds = 1e-6;
    // The host's side of a call (calibrated on an H200 host, apps/gpu_cost_model_ranking.py):
    // hcompile's dispatcher (7.8-9.0 us a call of one kernel in apps/gpu_bench.py's small table),
    // each kernel launch through Halide's runtime, each cuBLAS call through hcompile's extern.
    double call_seconds = 6e-6;
    double launch_seconds = 3e-6;
    double library_call_seconds = 12e-6;
    bool measured = false;

    // float32 lanes of arithmetic per second (128 per multiprocessor per clock: Volta and later).
    double lane_ops_per_second() const { return multiprocessors * 128.0 * clock_hz; }
    std::string print() const;
};

}  // namespace hc
