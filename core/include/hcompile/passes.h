// Graph-to-graph passes. Each is a free function returning a new graph with the same outputs
// (by meaning); none mutates its argument. The order they run in is in compile_graph().
#pragma once

#include "hcompile/graph.h"

namespace hc {

// Evaluates elementwise ops whose operands are all constants (exactly, in the node's dtype), and
// drops no-op layout/casts (cast to the same dtype, reshape/broadcast to the same shape, identity
// transpose).
Graph fold_constants(const Graph &graph);

// Merges nodes with the same kind, attributes and (already merged) inputs.
Graph eliminate_common_subexpressions(const Graph &graph);

// Drops nodes no output depends on.
Graph eliminate_dead_code(const Graph &graph);

}  // namespace hc
