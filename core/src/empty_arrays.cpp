#include "hcompile/passes.h"

namespace hc {

Graph replace_empty_arrays(const Graph &graph) {
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes(), -1);
    for (const Node &n : graph.nodes()) {
        if (n.kind != OpKind::Input && n.size() == 0) {
            // Any value does: there are no elements. Zero is a valid constant of every dtype.
            NodeId zero = out.add_constant_int(0, n.dtype, n.loc);
            remap[n.id] = out.add_op(OpKind::Broadcast, {zero}, {{"shape", n.shape}}, n.loc);
            continue;
        }
        Node copy = n;
        for (NodeId &in : copy.inputs) in = remap[in];
        remap[n.id] = out.append(std::move(copy));
    }
    std::vector<NodeId> outputs;
    for (NodeId id : graph.outputs()) outputs.push_back(remap[id]);
    out.set_outputs(outputs);
    return out;
}

}  // namespace hc
