// Helpers several doctest files share: the AVX2 target golden tests schedule for, and a row slice.
#pragma once

#include <cstdint>
#include <vector>

#include "hcompile/graph.h"
#include "hcompile/target.h"

namespace hc::testing {

// Golden decisions are for this target, whatever the machine running the tests has.
inline Halide::Target avx2() { return ieee_target(parse_target("x86-64-linux-avx-avx2-f16c-fma-sse41")); }

// Rows [first, first + count) of a 2-D node with `cols` columns.
inline NodeId rows(Graph &g, NodeId x, int64_t first, int64_t count, int64_t cols) {
    using Ints = std::vector<int64_t>;
    return g.add_op(OpKind::Slice, {x},
                    Attrs{{"starts", Ints{first, 0}}, {"stops", Ints{first + count, cols}}, {"steps", Ints{1, 1}}});
}

}  // namespace hc::testing
