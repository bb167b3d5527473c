// A compiled kernel: one JIT-compiled Halide pipeline plus what the dispatcher needs to call it.
#pragma once

#include <Halide.h>

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

struct Kernel {
    Halide::Callable callable;
    std::vector<KernelInput> inputs;    // Halide argument order: inputs, scalars, outputs
    std::vector<KernelScalar> scalars;
    std::vector<KernelOutput> outputs;
    std::vector<std::pair<int, int>> symbol_sources;  // (argument, axis) per symbolic extent

    // Runs the pipeline: `buffers` holds the inputs then the outputs, in Halide argument order.
    // Returns Halide's error code (0 on success) and never throws (it may run without the GIL);
    // on failure `error` receives Halide's message.
    int run(halide_buffer_t *const *buffers, std::string *error) const;
};

using KernelPtr = std::shared_ptr<const Kernel>;

}  // namespace hc
