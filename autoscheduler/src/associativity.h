// Whether Halide's rfactor will accept an accumulator's update (shared by the producers of
// decision lists that may choose reduce_in_lanes).
#pragma once

#include <Halide.h>

namespace hc {

// The lowering builds plain sums, products, min/max and any/all, but Halide sees the update
// after simplifying it: a product of a constant (np.prod(a > a): acc * 0) is no longer an
// operator it can prove associative, and rfactor would stop the compile (fuzz seed 3, program
// 73987).
inline bool update_provably_associative(Halide::Func acc) {
    const Halide::Internal::Definition &update = acc.function().update(0);
    std::vector<Halide::Expr> values;
    for (const Halide::Expr &v : update.values()) values.push_back(Halide::Internal::simplify(v));
    return Halide::Internal::prove_associativity(acc.name(), update.args(), values).associative();
}

}  // namespace hc
