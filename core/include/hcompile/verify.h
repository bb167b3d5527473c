// The graph verifier: structural invariants plus every node's typing rule, re-checked.
#pragma once

#include "hcompile/graph.h"

namespace hc {

// Throws GraphError naming the first broken node.
void verify(const Graph &graph);

}  // namespace hc
