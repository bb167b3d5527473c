// The exact float32 tanh inside GPU kernels with its one reciprocal from the GPU's estimate and a
// Newton step, instead of an IEEE division.
//
// Why: tanh|x| above 0.5625 is 1 - 2 (1 / D), D = e^2|x| + 1 (numpy_math.cpp). An IEEE reciprocal
// on the GPU is an estimate, refinements, a range check and its slow path: about a third of the
// exact tanh's instructions (48 a point on sm_90, apps/gpu_kernel_instructions.py), and tanh is
// half of tinyops', which is bound by its arithmetic. D is a normal float in [4, 2^65] (2|x| is
// clamped to 44), so the estimate needs no scaling and no range check: rcp.approx.ftz's 1 ulp,
// one Newton step r + r (1 - D r) in two fused multiply-adds, leaves the reciprocal within a
// rounding of 1 / D (it is not always the correctly rounded one). 2 (1 / D) <= 0.49 there, so that
// rounding reaches tanh at most about halved, as the IEEE reciprocal's own did.
//
// Everything else is tanh's own expansion: the polynomial below 0.5625, signs, NaN and the
// clamping. The host keeps math::tanh (its IEEE division), the value the CPU computes.
//
// The lowering marks each float32 tanh of a GPU pipeline (gpu_tanh_marker); this pass replaces
// the marks once Halide has decided what runs where.
#include <Halide.h>

#include <string>
#include <vector>

#include "kernel_mutator.h"
#include "numpy_math.h"
#include "rules.h"

namespace hc {
namespace {

using Halide::Expr;
using Halide::Internal::Call;

constexpr const char *kTanhMark = "hc_exact_tanh_f32";

// 1 / d for a normal float32 d whose reciprocal is normal too: the GPU's estimate refined by one
// Newton step. d is named once: each lane's estimate extracts from it (lanewise), and an
// expression extracted lane by lane would be computed again for every lane (the exp reduction
// twice a point).
Expr refined_reciprocal(const Expr &value) {
    const std::string name = Halide::Internal::unique_name("d");
    const Expr d = Halide::Internal::Variable::make(value.type(), name);
    const Expr r = lowering::rcp_approx(d);
    const Expr residual = math::fused_multiply_add(-d, r, Halide::Internal::make_one(d.type()));   // 1 - d r
    return Halide::Internal::Let::make(name, value, math::fused_multiply_add(residual, r, r));
}

class ExpandTanh : public lowering::KernelAwareMutator {
    using KernelAwareMutator::visit;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *call = e.as<Call>();
        if (!call || call->call_type != Call::PureExtern || call->name != kTanhMark) return e;
        if (!in_kernel()) return math::tanh(call->args[0]);
        // The argument named once (a lane of a vector load read again would be a load of its
        // own), and the expansion's repeated parts computed once: Halide's CSE ran before this pass.
        const std::string name = Halide::Internal::unique_name("t");
        const Expr x = Halide::Internal::Variable::make(call->args[0].type(), name);
        const Expr expanded = lowering::kernel_sequence(math::tanh_with_reciprocal(x, refined_reciprocal));
        return Halide::Internal::Let::make(name, call->args[0], Halide::Internal::common_subexpression_elimination(expanded));
    }
};

}  // namespace

namespace lowering {

Expr gpu_tanh_marker(const Node &n, const std::vector<Expr> &operands) {
    if (n.kind != OpKind::Tanh || operands.size() != 1 || operands[0].type().element_of() != Halide::Float(32)) return Expr();
    return Call::make(operands[0].type(), kTanhMark, operands, Call::PureExtern);
}

}  // namespace lowering

void add_gpu_tanh_pass(Halide::Pipeline &pipeline) { pipeline.add_custom_lowering_pass(new ExpandTanh); }

}  // namespace hc
