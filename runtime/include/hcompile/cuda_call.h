// Running a kernel compiled for CUDA on device memory another library owns (PyTorch, CuPy, any
// DLPack producer): its buffers are wrapped, never copied, and the kernel runs on the device's
// primary context (the one PyTorch, CuPy and JAX use) and on the caller's stream, through the
// JIT's CUDA handlers, so it is ordered with the caller's own work without a synchronisation.
// The CUDA driver library is opened when the first call needs it: nothing here needs a GPU to
// build, load or compile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hcompile/kernel.h"

namespace hc {

// One C-contiguous array in device memory, its shape in NumPy's axis order; its address aligned
// to kDeviceAlignment bytes (the kernels' widest vector load or store).
struct DeviceArray {
    uint64_t pointer = 0;
    std::vector<int64_t> shape;
};

constexpr uint64_t kDeviceAlignment = 16;

// Axis `axis`'s size of call argument `arg` among a kernel's `inputs` (Kernel::inputs order): where
// a symbolic extent (Kernel::symbol_sources) is read from. -1 where no input is that argument.
int64_t input_extent(const Kernel &kernel, const std::vector<DeviceArray> &inputs, int arg, int axis);

// Runs `kernel` (compiled for a CUDA target) on `inputs` (in Kernel::inputs order) into
// `outputs` (Kernel::outputs order) on CUDA device `device` and stream `stream` (0: the legacy
// default stream). Returns Halide's error code (0: success; -1 for a problem found here, said in
// `error`). Never throws; needs no GIL. `captured`: `stream` is being captured into a CUDA graph
// (between begin_graph_allocations and end_graph_allocations, cuda_graph_memory.h): the kernel's
// intermediates are allocated on the stream, memory the graph owns.
int run_on_cuda(const Kernel &kernel, const std::vector<DeviceArray> &inputs, const std::vector<DeviceArray> &outputs,
                int device, uint64_t stream, std::string *error, bool captured = false);

}  // namespace hc
