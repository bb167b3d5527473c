// Internal to lowering: custom lowering passes that rewrite calls differently inside GPU kernels
// than on the host (gpu_libm_calls.cpp, gpu_fast_math.cpp).
#pragma once

#include <Halide.h>

#include <optional>

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

// `sequence` (built by a pass that runs after Halide has answered its questions about the target)
// with its questions answered for inside a GPU kernel: the target has fused multiply-adds (the
// exact polynomials and math::fused_multiply_add ask), then simplified.
inline Halide::Expr kernel_sequence(const Halide::Expr &sequence) {
    class AnswerFmaQuery : public Halide::Internal::IRMutator {
        using IRMutator::visit;
        Halide::Expr visit(const Halide::Internal::Call *op) override {
            if (op->is_intrinsic(Halide::Internal::Call::target_has_feature)) {
                const std::optional<int64_t> feature = Halide::Internal::as_const_int(op->args[0]);
                if (feature && *feature == Halide::Target::FMA) return Halide::Internal::const_true();
            }
            return IRMutator::visit(op);
        }
    };
    return Halide::Internal::simplify(AnswerFmaQuery().mutate(sequence));
}

}  // namespace hc::lowering
