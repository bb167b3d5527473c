#include "hcompile/verify.h"

#include "hcompile/op_types.h"
#include "hcompile/printer.h"

namespace hc {

void verify(const Graph &graph) {
    for (const Node &n : graph.nodes()) {
        auto broken = [&](const std::string &why) {
            throw GraphError("verifier: " + why + " at: " + format_node(graph, n));
        };
        if (n.id < 0 || n.id >= graph.num_nodes() || &graph.node(n.id) != &n) broken("node id out of place");
        for (NodeId in : n.inputs) {
            if (in < 0 || in >= n.id) broken("input is not an earlier node (graph not topological)");
        }
        switch (n.kind) {
        case OpKind::Input:
            if (!n.inputs.empty()) broken("input with operands");
            n.int_attr("arg");
            break;
        case OpKind::Constant:
            if (!n.inputs.empty() || !n.shape.empty()) broken("constant must be 0-d with no operands");
            n.float_attr("value");
            break;
        case OpKind::Extent:
            if (!n.inputs.empty() || !n.shape.empty()) broken("extent must be 0-d with no operands");
            n.int_attr("symbol");
            n.int_attr("scale");
            n.int_attr("offset");
            break;
        default: {
            Node retyped = n;
            infer_type(graph, retyped);
            if (retyped.dtype != n.dtype || retyped.shape != n.shape) broken("stored type differs from typing rule");
        }
        }
    }
    if (graph.outputs().empty()) throw GraphError("verifier: graph has no outputs");
    for (NodeId out : graph.outputs()) graph.node(out);
}

}  // namespace hc
