#include "hcompile/passes.h"

#include "graph_copy.h"

namespace hc {

namespace {

// The value of a reduction (or a matmul's dot) over no elements: NumPy's identity. max, min and
// their arg forms have none (NumPy raises, and so does the capture). -1: not such a node.
int empty_reduction_identity(const Graph &graph, const Node &n) {
    if (n.inputs.empty() || graph.node(n.inputs[0]).size() != 0) return -1;
    switch (n.kind) {
    case OpKind::Sum:
    case OpKind::Any:
    case OpKind::Matmul:
        return 0;
    case OpKind::Prod:
    case OpKind::All:
        return 1;
    default:
        return -1;
    }
}

}  // namespace

Graph replace_empty_arrays(const Graph &graph) {
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes(), -1);
    for (const Node &n : graph.nodes()) {
        // An empty result: any value does, and zero is a constant of every dtype. A reduction
        // over no elements is its identity; computed, it would loop over an empty domain, which
        // Halide does not keep once the empty operand became a constant.
        int identity = n.size() == 0 ? 0 : empty_reduction_identity(graph, n);
        if (n.kind != OpKind::Input && identity >= 0) {
            NodeId value = out.add_constant_int(identity, n.dtype, n.loc);
            remap[n.id] = out.add_op(OpKind::Broadcast, {value}, {{"shape", n.shape}}, n.loc);
            continue;
        }
        remap[n.id] = copy_node(out, n, remap);
    }
    copy_outputs(out, graph, remap);
    return out;
}

}  // namespace hc
