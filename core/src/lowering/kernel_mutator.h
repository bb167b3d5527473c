// Internal to lowering: custom lowering passes that rewrite calls differently inside GPU kernels
// than on the host (gpu_libm_calls.cpp, gpu_fast_math.cpp, gpu_tanh.cpp), or only inside them
// (gpu_narrow_vectors.cpp).
#pragma once

#include <Halide.h>

#include <optional>
#include <string>
#include <vector>

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

// A scalar function applied lane by lane: the NVPTX intrinsics and libm take one float (the GPU
// has no vector float arithmetic; a thread's vector of points is registers side by side). Each
// computed argument is named first (a Let) and the lanes extract from the name: extracted from
// the expression itself, each lane would compute it again, and the simplifier would turn every
// vector load inside it into one single load a lane (fast_math's softmax: 32 of them in its
// kernel, where exact math kept 8 vector loads).
inline Halide::Expr lanewise(const std::string &name, const std::vector<Halide::Expr> &args) {
    using Halide::Internal::Broadcast;
    using Halide::Internal::Call;
    using Halide::Internal::Let;
    using Halide::Internal::Shuffle;
    using Halide::Internal::Variable;
    const Halide::Type t = args[0].type();
    if (t.lanes() == 1) return Call::make(t, name, args, Call::PureExtern);
    std::vector<std::pair<std::string, Halide::Expr>> named;
    std::vector<Halide::Expr> vectors;
    for (const Halide::Expr &a : args) {
        if (a.as<Variable>() || a.as<Broadcast>() || Halide::Internal::is_const(a)) {
            vectors.push_back(a);
            continue;
        }
        named.emplace_back(Halide::Internal::unique_name("lanewise_arg"), a);
        vectors.push_back(Variable::make(a.type(), named.back().first));
    }
    std::vector<Halide::Expr> lanes;
    for (int i = 0; i < t.lanes(); ++i) {
        std::vector<Halide::Expr> lane_args;
        for (const Halide::Expr &a : vectors) lane_args.push_back(Shuffle::make_extract_element(a, i));
        lanes.push_back(Call::make(t.element_of(), name, lane_args, Call::PureExtern));
    }
    Halide::Expr result = Shuffle::make_concat(lanes);
    for (auto it = named.rbegin(); it != named.rend(); ++it) result = Let::make(it->first, it->second, result);
    return result;
}

// 1 / d on rcp.approx.ftz.f32: 1 ulp for d in the normal range (where it is used).
inline Halide::Expr rcp_approx(const Halide::Expr &d) { return lanewise("llvm.nvvm.rcp.approx.ftz.f", {d}); }

}  // namespace hc::lowering
