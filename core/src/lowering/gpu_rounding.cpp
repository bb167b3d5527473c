// Every float product on the GPU rounded on its own, as NumPy (and the CPU's strict-float code)
// rounds it.
//
// Halide's CUDA back end compiles with LLVM's contraction of a multiply feeding an add into one
// fused multiply-add, whatever strict_float says: `a * b + c` then differed from NumPy's in the
// last bit, and the exact splits of hc::math's double-double products came apart (float64 pow
// was off by 97 ulp on the GPU, 2.65 on the CPU). This pass runs after Halide's lowering and
// puts each float product behind llvm.arithmetic.fence, which LLVM does not contract across.
// Fused multiply-adds written as such (matrix products' llvm.fma) stay fused, as on the CPU.
#include <Halide.h>

#include <string>

#include "hcompile/lowering.h"

namespace hc {
namespace {

using namespace Halide::Internal;

// The fence for one value of `type`'s element type; a vector's is called lane by lane (Halide
// scalarizes an extern call it has no vector version of), which costs nothing on the GPU.
Halide::Expr fenced(const Halide::Expr &product) {
    const std::string name = "llvm.arithmetic.fence.f" + std::to_string(product.type().bits());
    return Call::make(product.type(), name, {product}, Call::PureExtern);
}

class FenceFloatProducts : public IRMutator {
    using IRMutator::visit;

    Halide::Expr visit(const Mul *op) override {
        Halide::Expr e = IRMutator::visit(op);
        return op->type.is_float() && op->type.bits() >= 32 ? fenced(e) : e;
    }

    Halide::Expr visit(const Call *op) override {
        Halide::Expr e = IRMutator::visit(op);
        return op->is_intrinsic(Call::strict_mul) && op->type.bits() >= 32 ? fenced(e) : e;
    }
};

// float32 to float16, rounded to nearest even, in integer arithmetic. LLVM's NVPTX back end
// folded a vector conversion feeding a store into a truncating store of the float32 bits
// (softmax of float16 rows stored halves of float32 patterns, on an H100): written without a
// float conversion, the store is an integer one. NaN becomes float16's quiet NaN.
Halide::Expr to_float16_in_integers(const Halide::Expr &value) {
    using Halide::Expr;
    // Each value is named once (a Let): the conversion reads it at several places, and a chain
    // of float16 steps would otherwise copy its operand's expression four times a step.
    const int lanes = value.type().lanes();
    const Halide::Type u32 = Halide::UInt(32).with_lanes(lanes);
    auto c = [&](uint32_t v) { return Halide::Internal::make_const(u32, v); };
    const std::string bits_name = unique_name("f16_bits"), magnitude_name = unique_name("f16_magnitude");
    Expr bits = Variable::make(u32, bits_name), magnitude = Variable::make(u32, magnitude_name);
    Expr sign = (bits >> c(16)) & c(0x8000);
    // Below 2^-14 the result is subnormal: adding 0.5 puts float16's last place at float32's,
    // and the float addition rounds to nearest even.
    Expr magic = Halide::reinterpret(value.type(), c(126u << 23));
    Expr subnormal = Halide::reinterpret(u32, Halide::reinterpret(value.type(), magnitude) + magic) - c(126u << 23);
    // Normal: rebias the exponent, then round the 13 dropped bits to nearest even (a carry into
    // the exponent is the right answer, up to infinity).
    Expr odd = (magnitude >> c(13)) & c(1);
    Expr normal = (magnitude + c(0xc8000fffu) + odd) >> c(13);
    Expr half = select(magnitude > c(0x7f800000), c(0x7e00),
                       select(magnitude >= c(0x477ff000), c(0x7c00),
                              select(magnitude < c(113u << 23), subnormal, normal)));
    Expr result = Halide::reinterpret(Halide::Float(16).with_lanes(lanes),
                                      Halide::cast(Halide::UInt(16).with_lanes(lanes), half | sign));
    result = Let::make(magnitude_name, bits & c(0x7fffffff), result);
    return Let::make(bits_name, Halide::reinterpret(u32, value), result);
}

class ConvertToFloat16InIntegers : public IRMutator {
    using IRMutator::visit;

    Halide::Expr visit(const Cast *op) override {
        Halide::Expr value = mutate(op->value);
        if (op->type.is_float() && !op->type.is_bfloat() && op->type.bits() == 16 && value.type().is_float() && value.type().bits() == 32) {
            return to_float16_in_integers(value);
        }
        return Halide::cast(op->type, value);
    }
};

}  // namespace

void add_gpu_rounding_pass(Halide::Pipeline &pipeline) {
    pipeline.add_custom_lowering_pass(new FenceFloatProducts);
    pipeline.add_custom_lowering_pass(new ConvertToFloat16InIntegers);
}

}  // namespace hc
