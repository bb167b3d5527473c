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

// A vector of 8-bit lanes read backwards (a ramp of negative stride: `y[::-1]` on int8, uint8 or
// bool arrays), as its bytes loaded one by one and packed into 32-bit words by shifts. Left to
// Halide, it is a dense load and a lane-reversing shuffle of 8-bit lanes, on which the LLVM
// inside Halide 21 aborts the process compiling for NVPTX (an assertion in APInt::extractBits;
// `x + y[::-1]` on int8 arrays). Null where the load is not such a one.
Halide::Expr packed_if_reversed_bytes(const Load *load) {
    const Ramp *ramp = load->index.as<Ramp>();
    const std::optional<int64_t> stride = ramp ? as_const_int(ramp->stride) : std::nullopt;
    const int lanes = load->type.lanes();
    if (load->type.bits() != 8 || lanes % 4 != 0 || !stride || *stride >= 0 || !is_const_one(load->predicate)) {
        return Halide::Expr();
    }
    std::vector<Halide::Expr> lanes16;
    for (int i = 0; i < lanes; ++i) {
        lanes16.push_back(Halide::cast(Halide::UInt(16), Load::make(Halide::UInt(8), load->name, simplify(ramp->base + i * ramp->stride),
                                                                    load->image, load->param, const_true(), ModulusRemainder())));
    }
    return Halide::cast(load->type, Shuffle::make_concat(lanes16));
}

// A single 8-bit element at an index known to sit in a 32-bit word at a known place, as that
// word's load and a shift. Neighbouring elements a thread reads one by one (a row of four
// booleans reduced in a thread, unrolled) are otherwise four byte loads, which LLVM's SLP
// vectorizer makes one vector of four bytes, and the LLVM inside Halide 21 aborts the process
// compiling its 8-bit lane operations for NVPTX (`(a & b).any(axis=1)` over rows of four).
// The four loads of one word are then one load. Only for the pipeline's inputs: device arrays at
// 16-byte aligned addresses, so the word never leaves the allocation's granule (an array of a
// length not a multiple of four ends inside its last word); not for the kernel's own allocations
// (a one-byte accumulator), whose word would be past their end. Null where the load is not such a one.
Halide::Expr from_word_if_aligned_byte(const Load *load) {
    if (load->type.lanes() != 1 || load->type.bits() != 8 || !is_const_one(load->predicate) ||
        !(load->param.defined() || load->image.defined())) {
        return Halide::Expr();
    }
    const ModulusRemainder &a = load->alignment;
    if (a.modulus % 4 != 0) return Halide::Expr();
    const int64_t byte = ((a.remainder % 4) + 4) % 4;
    const Halide::Expr word = Load::make(Halide::UInt(32), load->name, simplify((load->index - static_cast<int>(byte)) / 4),
                                         load->image, load->param, const_true(), ModulusRemainder());
    return Halide::reinterpret(load->type, Halide::cast(Halide::UInt(8), word >> static_cast<int>(8 * byte)));
}

class WholeNarrowVectorsInKernels : public lowering::KernelAwareMutator {
    using KernelAwareMutator::visit;

    Halide::Expr visit(const Load *op) override {
        Halide::Expr e = IRMutator::visit(op);
        const Load *load = e.as<Load>();
        if (!in_kernel() || !load) return e;
        if (Halide::Expr packed = packed_if_reversed_bytes(load); packed.defined()) return packed;
        if (Halide::Expr from_word = from_word_if_aligned_byte(load); from_word.defined()) return from_word;
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
