// Helpers the graph-to-graph passes share: each pass builds a new graph node by node, renaming
// inputs through a table from old ids to new ones.
#pragma once

#include <vector>

#include "hcompile/graph.h"

namespace hc {

// Copies `node` into `out` with its inputs renamed through `remap`.
inline NodeId copy_node(Graph &out, const Node &node, const std::vector<NodeId> &remap) {
    Node copy = node;
    for (NodeId &in : copy.inputs) in = remap[in];
    return out.append(std::move(copy));
}

// Sets `out`'s outputs to `in`'s, renamed through `remap`.
inline void copy_outputs(Graph &out, const Graph &in, const std::vector<NodeId> &remap) {
    std::vector<NodeId> outs;
    for (NodeId id : in.outputs()) outs.push_back(remap[id]);
    out.set_outputs(outs);
}

}  // namespace hc
