// Which matrix products call a BLAS library instead of running as Halide loops: an algorithm
// choice, so it is made on the graph, before lowering (lower_to_halide takes the list); the
// schedule then records it as a `call_library` decision for the region.
#pragma once

#include <vector>

#include "hcompile/graph.h"

namespace hc {

// Below these many multiply-adds the register-tiled Halide loop wins or ties: it fuses the
// operands' elementwise producers and stores nothing. Measured on the 2-core machine (BLAS in
// one parallel call per core, against the Halide tiles): 128^3 0.71x, 256^3 0.89x, 384^3 1.03x,
// 512^3 1.16x, 1024x64x1024 1.10x; a deep product gains sooner, 64x2048x64 (8.4M) 1.35x.
constexpr int64_t kMinLibraryMultiplyAdds = int64_t{1} << 25;
constexpr int64_t kMinDeepLibraryMultiplyAdds = int64_t{1} << 22;
constexpr int64_t kDeepProduct = 1024;   // k from which a product is deep

// The 2-D float32/float64 matmul nodes of `graph` large enough to call BLAS. Empty when no
// BLAS library is loaded (`available`).
std::vector<NodeId> choose_library_calls(const Graph &graph, bool available);

}  // namespace hc
