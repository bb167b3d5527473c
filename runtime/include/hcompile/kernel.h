// A compiled kernel: one JIT-compiled Halide pipeline plus what the dispatcher needs to call it.
#pragma once

#include <Halide.h>

#include <memory>
#include <string>
#include <vector>

#include "hcompile/dtype.h"

namespace hc {

struct KernelInput {
    int arg_index = -1;  // which call argument feeds this Halide input
    DType dtype = DType::Float32;
    int ndim = 0;
};

struct KernelOutput {
    DType dtype = DType::Float32;
    std::vector<int64_t> shape;  // static for the guard set this kernel was compiled under
};

struct Kernel {
    Halide::Callable callable;
    std::vector<KernelInput> inputs;    // Halide argument order
    std::vector<KernelOutput> outputs;  // follow the inputs in the argument list

    // Runs the pipeline: `buffers` holds the inputs then the outputs, in Halide argument order.
    // Returns Halide's error code (0 on success) and never throws (it may run without the GIL);
    // on failure `error` receives Halide's message.
    int run(halide_buffer_t *const *buffers, std::string *error) const;
};

using KernelPtr = std::shared_ptr<const Kernel>;

}  // namespace hc
