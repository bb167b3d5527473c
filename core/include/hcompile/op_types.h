// The typing rules of the IR: each op's dtype and shape from its inputs and attributes.
#pragma once

#include "hcompile/graph.h"

namespace hc {

// Fills node.dtype and node.shape from its kind, inputs and attrs; throws GraphError when the op
// is used against the rules in core/OPS.md.
void infer_type(const Graph &graph, Node &node);

}  // namespace hc
