// Internal to lowering: custom lowering passes that rewrite calls differently inside GPU kernels
// than on the host (gpu_libm_calls.cpp, gpu_fast_math.cpp).
#pragma once

#include <Halide.h>

namespace hc::lowering {

// An IRMutator that knows whether the node it visits runs inside a GPU kernel: under a loop over
// GPU blocks or threads, or one Halide offloads to CUDA.
class KernelAwareMutator : public Halide::Internal::IRMutator {
protected:
    using Halide::Internal::IRMutator::visit;
    bool in_kernel() const { return in_kernel_; }

    Halide::Internal::Stmt visit(const Halide::Internal::For *op) override {
        const bool was = in_kernel_;
        in_kernel_ = in_kernel_ || op->device_api == Halide::DeviceAPI::CUDA || Halide::Internal::is_gpu(op->for_type);
        Halide::Internal::Stmt s = IRMutator::visit(op);
        in_kernel_ = was;
        return s;
    }

private:
    bool in_kernel_ = false;
};

}  // namespace hc::lowering
