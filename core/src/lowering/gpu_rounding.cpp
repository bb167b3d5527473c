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

}  // namespace

void add_gpu_rounding_pass(Halide::Pipeline &pipeline) { pipeline.add_custom_lowering_pass(new FenceFloatProducts); }

}  // namespace hc
