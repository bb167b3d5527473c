// Vectors of 8- and 16-bit values inside GPU kernels, loaded and stored whole.
//
// Halide's CUDA back end loads a thread's four float32 points as one 16-byte access, a case it
// handles itself (a dense 4-lane 32-bit load becomes one 128-bit load); any other vector goes to
// LLVM at its element's alignment, which splits it into one access per element. A float16,
// bfloat16 or uint8 kernel then moved every value with its own 2- or 1-byte load or store (a
// float16 `x + y`: 8 single loads and 4 single stores a thread, where float32 had 2 loads and 1
// store). This pass does for those vectors what the back end does for float32's: a dense vector
// whose first element is a multiple of its lane count from the buffer's start, 32, 64 or 128 bits
// in all, is loaded or stored as one unsigned integer of that width, reinterpreted. Every device
// array a kernel reads is 16-byte aligned (the dispatch copies any that is not), and Halide's own
// allocations are too, so an index aligned in lanes is an address aligned in bytes.
#include <Halide.h>

#include <optional>

#include "hcompile/lowering.h"
#include "kernel_mutator.h"

namespace hc {
namespace {

using namespace Halide::Internal;

// The unsigned type to move a dense vector of `t` as one access, or none (a 32-bit or wider
// element, which the back end handles; a bool; a width no single access has).
std::optional<Halide::Type> whole_access_type(const Halide::Type &t) {
    if (t.lanes() == 1 || (t.bits() != 8 && t.bits() != 16)) return std::nullopt;
    const int bits = t.bits() * t.lanes();
    if (bits != 32 && bits != 64 && bits != 128) return std::nullopt;
    return Halide::UInt(bits);
}

// The index of the whole access (in units of its type) for a dense ramp of `lanes` elements whose
// first element is known to be a multiple of `lanes`, or none.
std::optional<Halide::Expr> whole_index(const Halide::Expr &index, const Halide::Expr &predicate,
                                        const ModulusRemainder &alignment, int lanes) {
    const Ramp *ramp = index.as<Ramp>();
    if (!ramp || !is_const_one(ramp->stride) || !is_const_one(predicate)) return std::nullopt;
    if (alignment.modulus % lanes != 0 || alignment.remainder % lanes != 0) return std::nullopt;
    return simplify(ramp->base / lanes);
}

ModulusRemainder in_units_of(const ModulusRemainder &alignment, int lanes) {
    return {alignment.modulus / lanes, alignment.remainder / lanes};
}

class WholeNarrowVectorsInKernels : public lowering::KernelAwareMutator {
    using KernelAwareMutator::visit;

    Halide::Expr visit(const Load *op) override {
        Halide::Expr e = IRMutator::visit(op);
        const Load *load = e.as<Load>();
        if (!in_kernel() || !load) return e;
        const std::optional<Halide::Type> whole = whole_access_type(load->type);
        if (!whole) return e;
        const int lanes = load->type.lanes();
        const std::optional<Halide::Expr> index = whole_index(load->index, load->predicate, load->alignment, lanes);
        if (!index) return e;
        Halide::Expr access = Load::make(*whole, load->name, *index, load->image, load->param, const_true(),
                                         in_units_of(load->alignment, lanes));
        return Halide::reinterpret(load->type, access);
    }

    Stmt visit(const Store *op) override {
        Stmt s = IRMutator::visit(op);
        const Store *store = s.as<Store>();
        if (!in_kernel() || !store) return s;
        const std::optional<Halide::Type> whole = whole_access_type(store->value.type());
        if (!whole) return s;
        const int lanes = store->value.type().lanes();
        const std::optional<Halide::Expr> index = whole_index(store->index, store->predicate, store->alignment, lanes);
        if (!index) return s;
        return Store::make(store->name, Halide::reinterpret(*whole, store->value), *index, store->param, const_true(),
                           in_units_of(store->alignment, lanes));
    }
};

}  // namespace

void add_gpu_narrow_vectors_pass(Halide::Pipeline &pipeline) {
    pipeline.add_custom_lowering_pass(new WholeNarrowVectorsInKernels);
}

}  // namespace hc
