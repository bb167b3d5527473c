// An exact float32 division by a scalar (x / 3, x / 255.0, x / n, x / s of a 0-d array) inside
// GPU kernels, with the divisor's reciprocal computed once a thread instead of once a point.
//
// Why: the GPU has no division instruction. `div.rn.f32` is a reciprocal estimate refined by
// Newton's step, a quotient, one correction and a range check with its slow path: about ten
// machine instructions a point, and ptxas repeats the reciprocal's four for every point although
// the divisor is the kernel's (each division is a branch region of its own). The 3x3 blur
// divides twice a point.
//
// How: y = 1 / b, an IEEE division, once (b is a kernel argument: LLVM hoists it). Then a point's
// quotient is q = a y, its remainder r = fma(-b, q, a) (exact) and the correctly rounded quotient
// q + r y, one fused multiply-add: Markstein's correction. It needs y correctly rounded (one ulp
// off, it failed 2908 of 2^35 quotients); with y = RN(1/b) it matched the IEEE division on all
// 2^24 numerators of two binades for each of 12288 divisors (8192 random significands, 4096 next
// to 1 and 2), which by scaling covers every exponent where no step leaves the normal range. The
// range is checked: the sequence runs for 2^-98 <= |a| <= 2^100 or a zero (its sign copied from
// q: the corrected sum of zeros may drop it) and 2^-24 <= |b| <= 2^24, so that the quotient, the
// remainder and its products stay normal; a thread's vector of points with any other operand
// (infinities, NaN, extreme exponents) takes the IEEE divisions, on a branch of its own (Halide's
// if_then_else evaluates one side). The answer is NumPy's bit for bit.
//
// Only for a vector of points (a branch a point would cost as much as the reciprocal it saves),
// and not for a vector with masked-off lanes (below). Divisors that are a row's value (softmax's
// e / sum, layer norm's d / sqrt(var + eps)) keep the IEEE division: measured on an H200, they
// gained nothing, and softmax over rows of 8192 lost 6% (the sum is read from shared memory per
// vector, its reciprocal computed again each time; apps/RESULTS.md gpu-scalar-division).
//
// The lowering marks each such division (scalar_division_marker); this pass replaces the marks
// once Halide has decided what runs where: the sequence inside GPU kernels, the plain division on
// the host.
#include <Halide.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernel_mutator.h"
#include "numpy_math.h"
#include "rules.h"

namespace hc {
namespace {

using Halide::Expr;
using Halide::Internal::Call;
using Halide::Internal::Shuffle;

constexpr const char *kScalarDivisionMark = "hc_divide_by_scalar_f32";

Expr f32(double v) { return Halide::Internal::make_const(Halide::Float(32), v); }

Expr fma_in_kernel(const Expr &a, const Expr &b, const Expr &c) {
    return lowering::kernel_sequence(math::fused_multiply_add(a, b, c));
}

Expr fabs_f32(const Expr &x) { return Call::make(Halide::Float(32), "llvm.fabs.f32", {x}, Call::PureExtern); }

// Whether scalar x's magnitude is in [lo, hi] (false for NaN), or x is a zero where `zero_too`:
// comparisons of |x|, which the GPU's comparison takes as an operand modifier.
Expr magnitude_within(const Expr &x, double lo, double hi, bool zero_too = false) {
    Expr m = fabs_f32(x);
    Expr above_lo = zero_too ? (m >= f32(lo) || m == f32(0.0)) : m >= f32(lo);
    return above_lo && m <= f32(hi);
}

// a / b, lane by lane: the corrected products where every lane's operands are in range, the IEEE
// divisions otherwise. One branch for the vector (a thread's points, registers side by side on
// the GPU).
Expr divide(const Expr &numerator, const Expr &divisor) {
    using Halide::Internal::Let;
    using Halide::Internal::Variable;
    // Each operand named once: a lane taken from a vector load would be a load of its own.
    const std::string a_name = Halide::Internal::unique_name("a"), b_name = Halide::Internal::unique_name("b");
    Expr b_value = divisor;
    const auto *broadcast = divisor.as<Halide::Internal::Broadcast>();
    if (broadcast) b_value = broadcast->value;
    Expr a = Variable::make(numerator.type(), a_name), b = Variable::make(b_value.type(), b_name);
    const int lanes = a.type().lanes();
    Expr y = f32(1.0) / b;
    std::vector<Expr> quotients;
    Expr in_range = magnitude_within(b, std::ldexp(1.0, -24), std::ldexp(1.0, 24));
    for (int i = 0; i < lanes; ++i) {
        Expr ai = Shuffle::make_extract_element(a, i);
        Expr q = ai * y;
        // q carries the quotient's sign, also for a zero numerator, whose corrected sum of
        // zeros may not (-0 / 2 would be +0).
        Expr corrected = fma_in_kernel(fma_in_kernel(-b, q, ai), y, q);
        quotients.push_back(Call::make(Halide::Float(32), "llvm.copysign.f32", {corrected, q}, Call::PureExtern));
        in_range = in_range && magnitude_within(ai, std::ldexp(1.0, -98), std::ldexp(1.0, 100), /*zero_too=*/true);
    }
    // The products and the test are named outside the branch, so that equal divisions (the
    // blur's rows, read by three outputs each) are computed once: LLVM merges equal values, not
    // equal branches. The branch holds only the IEEE divisions. (Products inside it: the blur
    // took 173.4 us against 167.0 on an H200.)
    const std::string q_name = Halide::Internal::unique_name("q"), ok_name = Halide::Internal::unique_name("ok");
    Expr exact = a / Halide::Internal::Broadcast::make(b, lanes);
    Expr e = Call::make(a.type(), Call::if_then_else,
                        {Variable::make(Halide::Bool(), ok_name), Variable::make(a.type(), q_name), exact}, Call::PureIntrinsic);
    e = Let::make(q_name, Shuffle::make_concat(quotients), Let::make(ok_name, in_range, e));
    return Let::make(a_name, numerator, Let::make(b_name, b_value, e));
}

// Whether `e` reads lanes that may hold no value: a predicated load's masked-off lanes (a
// vector's tail past the array's end). A branch on their range is a branch on LLVM's poison, and
// LLVM dropped the tail's whole path as unreachable (two columns a row never written).
class FindMaskedLoads : public Halide::Internal::IRGraphVisitor {
    using IRGraphVisitor::visit;
    void visit(const Halide::Internal::Load *op) override {
        masked = masked || !Halide::Internal::is_const_one(op->predicate);
        IRGraphVisitor::visit(op);
    }

public:
    bool masked = false;
};

bool reads_masked_lanes(const Expr &e) {
    FindMaskedLoads finder;
    e.accept(&finder);
    return finder.masked;
}

class ExpandScalarDivisions : public lowering::KernelAwareMutator {
    using KernelAwareMutator::visit;

    Expr visit(const Call *op) override {
        Expr e = IRMutator::visit(op);
        const Call *call = e.as<Call>();
        if (!call || call->call_type != Call::PureExtern || call->name != kScalarDivisionMark) return e;
        // A point alone keeps the IEEE division: its own branch costs what the reciprocal saves.
        const Expr &a = call->args[0], &b = call->args[1];
        const bool one_divisor_a_vector = a.type().is_vector() && (b.type().is_scalar() || b.as<Halide::Internal::Broadcast>()) &&
                                          !reads_masked_lanes(a) && !reads_masked_lanes(b);
        return in_kernel() && one_divisor_a_vector ? divide(a, b) : a / b;
    }
};

}  // namespace

namespace lowering {

Expr scalar_division_marker(const Graph &graph, const Node &n, const std::vector<Expr> &operands) {
    if (n.kind != OpKind::Div || operands.size() != 2 || n.ndim() == 0) return Expr();
    for (const Expr &e : operands) {
        if (e.type().element_of() != Halide::Float(32)) return Expr();
    }
    const Node *divisor = &graph.node(n.inputs[1]);
    while (divisor->kind == OpKind::Broadcast) divisor = &graph.node(divisor->inputs[0]);
    if (divisor->ndim() != 0) return Expr();   // a 0-d divisor: a kernel argument
    return Call::make(operands[0].type(), kScalarDivisionMark, operands, Call::PureExtern);
}

}  // namespace lowering

void add_gpu_scalar_division_pass(Halide::Pipeline &pipeline) { pipeline.add_custom_lowering_pass(new ExpandScalarDivisions); }

}  // namespace hc
