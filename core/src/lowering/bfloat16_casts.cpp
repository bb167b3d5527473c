// Conversions from bfloat16, spelled in integers after Halide's lowering.
//
// The lowering widens bfloat16 with Halide's own cast (the exact float32 whose top half the
// bfloat16 is), so that Halide's passes see a conversion. Left to Halide's code generator, that
// cast is "emulated" with a warning on every compile, and a chain bfloat16 -> float32 -> float16
// that its simplifier had folded into one cast turned NaN into infinity. This pass, run after
// Halide's last simplification, rewrites each cast from bfloat16 as the shift of its bits into a
// float32 (then the float32's conversion to the destination, if another), which no target needs
// help with. (Written that way in the lowering itself, before Halide's passes, the special-value
// tests of the float32 were folded away under fast-math: cos(inf) gave 0.78.)
#include <Halide.h>

#include "hcompile/lowering.h"

namespace hc {
namespace {

using namespace Halide::Internal;

class WidenBFloat16InIntegers : public IRMutator {
    using IRMutator::visit;

    Halide::Expr visit(const Cast *op) override {
        Halide::Expr value = mutate(op->value);
        if (!value.type().is_bfloat()) return value.same_as(op->value) ? Halide::Expr(op) : Halide::cast(op->type, value);
        const int lanes = value.type().lanes();
        const Halide::Type u32 = Halide::UInt(32, lanes);
        Halide::Expr bits = Halide::cast(u32, Halide::reinterpret(Halide::UInt(16, lanes), value));
        Halide::Expr wide = Halide::reinterpret(Halide::Float(32, lanes), bits << make_const(u32, 16));
        return op->type == wide.type() ? wide : Halide::cast(op->type, wide);
    }
};

}  // namespace

void add_bfloat16_widening_pass(Halide::Pipeline &pipeline) {
    pipeline.add_custom_lowering_pass(new WidenBFloat16InIntegers);
}

}  // namespace hc
