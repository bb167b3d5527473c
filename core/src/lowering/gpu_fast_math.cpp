// fast_math: float32 exp, tanh, division and reciprocal inside GPU kernels on the GPU's
// approximate instructions (ex2.approx, rcp.approx, div.full) instead of the NumPy-exact
// expansions.
//
// Why: an exact float32 exp is about 25 instructions a point on the GPU and an IEEE division
// about 10 (a reciprocal estimate, two refinements and a range check); tinyops runs about 93 a
// point and is then bound by arithmetic, not memory. torch.compile's kernels divide with div.full
// too. The user asks for this (hcompile(fast_math=True)); NumPy-exact stays the default.
//
// How: the lowering marks each such operation with a call of its own (fast_math_marker), and a
// custom lowering pass replaces the marks once Halide has decided what runs where: inside a GPU
// kernel the approximate sequence, on the host the exact operation (libm's expf and tanhf, an
// IEEE division). Bounds inference and the schedule see one opaque pure call per operation.
//
// Accuracy (each sequence's derivation below; measured on H100 and H200 by
// apps/gpu_fast_math_bench.py over 16M inputs): exp 3.14 ulp over its whole range, tanh 1.89,
// division 2.00, reciprocal 0.97; results below 2^-126 may flush to zero. NaN, infinities, signed
// zeros and overflow are NumPy's.
#include <Halide.h>

#include <optional>
#include <string>
#include <vector>

#include "kernel_mutator.h"
#include "numpy_math.h"
#include "rules.h"

namespace hc {
namespace {

using Halide::Expr;
using Halide::Internal::Call;
using Halide::Internal::IRMutator;
using lowering::lanewise;
using lowering::rcp_approx;

constexpr const char *kExpMark = "hc_fast_exp_f32";
constexpr const char *kTanhMark = "hc_fast_tanh_f32";
constexpr const char *kDivideMark = "hc_fast_divide_f32";
constexpr const char *kReciprocalMark = "hc_fast_reciprocal_f32";

Expr f32(double v, int lanes) { return Halide::Internal::make_const(Halide::Float(32, lanes), v); }

// 2^t on ex2.approx.ftz.f32: 2 ulp; a result below 2^-126 is 0 (the form that keeps subnormal
// results spends three more instructions scaling around the approximation).
Expr ex2_approx(const Expr &t) { return lanewise("llvm.nvvm.ex2.approx.ftz.f", {t}); }

// a / b on div.full.f32: at most 2 ulp for every a and b, IEEE's special values.
Expr div_full(const Expr &a, const Expr &b) { return lanewise("llvm.nvvm.div.full", {a, b}); }

// e^x = 2^h (1 + d): h = x log2(e) rounded, and d = (x log2(e) - h) ln 2 from the fused
// multiply-adds, the part of the exponent h lost (up to 2^-17 at |x| ~ 88). Without it the
// error would grow with |x| (about 1.2 |x| ulp, as CUDA's __expf). 1 + d
// keeps d to 2^-24, so the result is ex2's 2 ulp plus about one rounding. d comes from x
// clamped to +-104 so that it is finite: for larger |x| or a NaN, 2^h alone is the answer
// (inf, 0 or NaN) and multiplying it by 1 + d keeps that.
Expr approximate_exp(const Expr &x) {
    const int n = x.type().lanes();
    const double log2e = 1.4426950408889634, log2e_lo = 1.9259629911783425e-08;  // float32(log2e) + lo
    Expr h = x * f32(log2e, n);
    Expr xc = Halide::clamp(x, f32(-104.0, n), f32(104.0, n));
    Expr hc = xc * f32(log2e, n);
    Expr lost = math::fused_multiply_add(xc, f32(log2e_lo, n), math::fused_multiply_add(xc, f32(log2e, n), -hc));
    Expr scale = math::fused_multiply_add(lost, f32(0.6931471805599453, n), f32(1.0, n));
    return ex2_approx(h) * scale;
}

// tanh: below |x| = 0.5625 the exact expansion's odd polynomial (a few fused multiply-adds);
// above, 1 - 2 / (E + 1) with E = e^2|x| from ex2 (|x| clamped to 22, where tanh is 1: no
// overflow). 2 E / (E + 1)^2 <= 0.45 there, so E's error (ex2's, and the rounding of 2|x| log2(e),
// which grows with |x| as E's weight shrinks) reaches the result at most halved.
Expr approximate_tanh(const Expr &x) {
    return math::tanh_with(x, [](const Expr &a) {
        const int n = a.type().lanes();
        Expr e = ex2_approx(Halide::min(a, f32(22.0, n)) * f32(2.0 * 1.4426950408889634, n));
        // E + 1 is in [2.1, 2^64]: the reciprocal's normal range, with no scaling as div.full does.
        return f32(1.0, n) - f32(2.0, n) * rcp_approx(e + f32(1.0, n));
    });
}

// Replaces the marks: the approximate sequences inside GPU kernels, the exact operations on the
// host (libm called lane by lane, as C computes them).
class ExpandFastMath : public lowering::KernelAwareMutator {
    using KernelAwareMutator::visit;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *call = e.as<Call>();
        if (!call || call->call_type != Call::PureExtern) return e;
        if (call->name == kExpMark) return in_kernel() ? lowering::kernel_sequence(approximate_exp(call->args[0])) : lanewise("expf", call->args);
        if (call->name == kTanhMark) return in_kernel() ? lowering::kernel_sequence(approximate_tanh(call->args[0])) : lanewise("tanhf", call->args);
        if (call->name == kReciprocalMark) {
            return in_kernel() ? rcp_approx(call->args[0]) : f32(1.0, call->type.lanes()) / call->args[0];
        }
        if (call->name == kDivideMark) {
            return in_kernel() ? div_full(call->args[0], call->args[1]) : call->args[0] / call->args[1];
        }
        return e;
    }
};

}  // namespace

namespace lowering {

namespace {

// Whether node `id` is the constant 1 (broadcast or not): NumPy's 1 / x, a reciprocal.
bool is_one(const Graph &graph, NodeId id) {
    const Node *n = &graph.node(id);
    if (n->kind == OpKind::Broadcast) n = &graph.node(n->inputs[0]);
    return n->kind == OpKind::Constant && is_float(n->dtype) && constant_value(*n) == 1.0;
}

}  // namespace

Expr fast_math_marker(const Graph &graph, const Node &n, const std::vector<Expr> &operands) {
    if (operands.empty()) return Expr();
    for (const Expr &e : operands) {
        if (e.type().element_of() != Halide::Float(32)) return Expr();
    }
    const Halide::Type t = operands[0].type();
    auto mark = [&](const char *name, std::vector<Expr> args) { return Call::make(t, name, args, Call::PureExtern); };
    switch (n.kind) {
    case OpKind::Exp: return mark(kExpMark, {operands[0]});
    case OpKind::Tanh: return mark(kTanhMark, {operands[0]});
    case OpKind::Reciprocal: return mark(kReciprocalMark, {operands[0]});
    case OpKind::Div:
        return is_one(graph, n.inputs[0]) ? mark(kReciprocalMark, {operands[1]})
                                          : mark(kDivideMark, {operands[0], operands[1]});
    default: return Expr();
    }
}

}  // namespace lowering

void add_gpu_fast_math_pass(Halide::Pipeline &pipeline) { pipeline.add_custom_lowering_pass(new ExpandFastMath); }

}  // namespace hc
