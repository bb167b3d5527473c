// A compiled kernel: one JIT-compiled Halide pipeline plus what the dispatcher needs to call it.
#pragma once

#include <Halide.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hcompile/dtype.h"

namespace hc {

struct KernelInput {
    int arg_index = -1;  // which call argument feeds this Halide input
    DType dtype = DType::Float32;
    int ndim = 0;
};

// A scalar argument with a fixed value (the graph's float constants; see LoweredScalar).
struct KernelScalar {
    uint64_t storage = 0;  // the value's bytes in its own type, passed to Halide by pointer
    static KernelScalar of(DType dtype, double value);
};

struct KernelOutput {
    DType dtype = DType::Float32;
    // Static for the guard set this kernel was compiled under; -1 - k for symbol k: the extent
    // of the call argument `Kernel::symbol_sources[k]` names, plus `offsets[d]`.
    std::vector<int64_t> shape;
    std::vector<int64_t> offsets;
    int alias_arg = -1;          // >= 0: written into this call argument (C-contiguous, same shape)
};

// The bytes of one array of a kernel serving symbolic extents (dynamic shapes): the product
// of its static extents times each symbolic one (symbol k's call extent plus an offset).
struct SymbolicArrayBytes {
    int64_t static_bytes = 1;                           // item size times the static extents
    std::vector<std::pair<int, int64_t>> symbol_terms;  // (symbol, offset) per symbolic extent
};

struct Kernel {
    Halide::Callable callable;
    std::vector<KernelInput> inputs;    // Halide argument order: inputs, scalars, outputs
    std::vector<KernelScalar> scalars;
    std::vector<KernelOutput> outputs;
    std::vector<std::pair<int, int>> symbol_sources;  // (argument, axis) per symbolic extent
    // A kernel compiled for any size cannot know a call's intermediate sizes in advance: the
    // arrays whose size depends on the symbols, checked against Halide's 2 GiB buffer limit
    // before each call (an outer product of two long vectors fits no buffer).
    std::vector<SymbolicArrayBytes> symbolic_arrays;

    // Whether every array of the call fits Halide's buffers; `extent_of(arg, axis)` reads a
    // call argument's extent. A static kernel's arrays were checked when it was captured.
    template <typename ExtentOf>
    bool fits_buffer_limit(ExtentOf &&extent_of) const {
        for (const SymbolicArrayBytes &a : symbolic_arrays) {
            double bytes = static_cast<double>(a.static_bytes);
            for (const auto &[symbol, offset] : a.symbol_terms) {
                const auto &[arg, axis] = symbol_sources[symbol];
                bytes *= static_cast<double>(extent_of(arg, axis) + offset);
            }
            if (bytes >= kHalideBufferLimit) return false;
        }
        return true;
    }
    static constexpr double kHalideBufferLimit = 2147483648.0;  // 2^31 bytes

    // A kernel compiled for CUDA: the device interface its buffers' device memory is wrapped
    // with (cuda_call.h); null for the CPU.
    const halide_device_interface_t *device_interface = nullptr;
    // The registers a thread of its kernels may use (gpu_register_cap), set while the pipeline's
    // first run on a device loads its module (cuda_register_cap.h); 0: Halide's default.
    int gpu_registers = 0;
    mutable std::atomic<uint64_t> devices_loaded{0};   // a bit per device ordinal: its first run is done

    // Runs the pipeline: `buffers` holds the inputs then the outputs, in Halide argument order.
    // Returns Halide's error code (0 on success) and never throws (it may run without the GIL);
    // on failure `error` receives Halide's message. `context`: the JIT handlers for this call
    // (CUDA's, cuda_call.h); by default the host's, intermediates from the block pool.
    int run(halide_buffer_t *const *buffers, std::string *error, Halide::JITUserContext *context = nullptr) const;
};

using KernelPtr = std::shared_ptr<const Kernel>;

// The runtime type of a buffer of `t` (a bool is one bit in a byte).
halide_type_t halide_runtime_type(DType t);

}  // namespace hc
