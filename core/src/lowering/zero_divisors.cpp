// A float division by a constant zero, spelled without the division.
//
// Halide's code generator refuses `x / 0.0` ("Division by constant zero"), but NumPy answers it
// (inf, -inf or nan). Such a divisor is rarely written: it appears when Halide's simplifier folds
// an operand the lowering could not see was constant (`0 * n` cast to float, a select on a
// 0-d bool, a math function's inner division on a constant). The lowering cannot know which
// divisions will fold, so this pass runs after Halide's last simplification and rewrites each
// float `x / (+-0.0)` as `x * (+-inf)`, which is the same IEEE value for every x: finite non-zero
// x gives an infinity of the product's sign, 0 and NaN give NaN, an infinity stays one.
#include <Halide.h>

#include <cmath>
#include <limits>
#include <optional>

#include "hcompile/lowering.h"

namespace hc {
namespace {

using namespace Halide::Internal;

// The signed zero `e` holds, as a scalar double, or nothing if `e` is not a float zero.
std::optional<double> float_zero(const Halide::Expr &e) {
    if (const auto *b = e.as<Broadcast>()) return float_zero(b->value);
    const auto *f = e.as<FloatImm>();
    if (!f || f->value != 0.0) return std::nullopt;
    return f->value;
}

// The infinity that multiplies like a division by the signed zero `zero`, as a value of `type`.
Halide::Expr infinity_like(double zero, Halide::Type type) {
    double inf = std::copysign(std::numeric_limits<double>::infinity(), zero);
    Halide::Expr e = FloatImm::make(type.element_of(), inf);
    return type.is_vector() ? Broadcast::make(e, type.lanes()) : e;
}

// Under the strict_float target a division is still the intrinsic `strict_div` here (Halide
// turns it into a Div during code generation); without it, a plain Div.
class ZeroDivisorsAsInfinities : public IRMutator {
    using IRMutator::visit;

    Halide::Expr visit(const Div *op) override {
        std::optional<double> zero = op->type.is_float() ? float_zero(op->b) : std::nullopt;
        if (!zero) return IRMutator::visit(op);
        return Mul::make(mutate(op->a), infinity_like(*zero, op->type));
    }

    Halide::Expr visit(const Call *op) override {
        if (!op->is_intrinsic(Call::strict_div)) return IRMutator::visit(op);
        std::optional<double> zero = float_zero(op->args[1]);
        if (!zero) return IRMutator::visit(op);
        return Call::make(op->type, Call::strict_mul, {mutate(op->args[0]), infinity_like(*zero, op->type)},
                          Call::PureIntrinsic);
    }
};

}  // namespace

void add_ieee_zero_division_pass(Halide::Pipeline &pipeline) {
    pipeline.add_custom_lowering_pass(new ZeroDivisorsAsInfinities);
}

}  // namespace hc
