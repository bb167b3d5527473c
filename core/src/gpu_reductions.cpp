#include <algorithm>

#include "hcompile/ops.h"
#include "hcompile/passes.h"

#include "graph_copy.h"

namespace hc {

namespace {

// A reduction over several axes to few outputs has too few outputs to spread over a GPU's
// threads (one thread reduces each output: x.sum() of 8192 x 8192 was one thread's 67 million
// additions). Reduced one axis at a time, the first step has an output per row.
constexpr int64_t kFewOutputs = 4096;
constexpr int64_t kManyReduced = 1 << 16;

bool splits(const Graph &graph, const Node &n) {
    // Reductions over a list of axes (an arg reduction has one axis, and an index to keep).
    if (op_class(n.kind) != OpClass::Reduction || n.kind == OpKind::Argmax || n.kind == OpKind::Argmin) return false;
    const Node &x = graph.node(n.inputs[0]);
    return n.ints_attr("axes").size() >= 2 && n.size() < kFewOutputs && x.size() / std::max<int64_t>(n.size(), 1) >= kManyReduced;
}

}  // namespace

Graph split_reductions_for_gpu(const Graph &graph) {
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes(), -1);
    for (const Node &n : graph.nodes()) {
        if (!splits(graph, n)) {
            remap[n.id] = copy_node(out, n, remap);
            continue;
        }
        std::vector<int64_t> axes = n.ints_attr("axes");
        std::sort(axes.begin(), axes.end());
        const int64_t keepdims = n.int_attr("keepdims");
        // The innermost reduced axis first: dropping the highest index leaves the others' indices
        // as they are (keepdims keeps it as 1 in any case).
        NodeId value = remap[n.inputs[0]];
        while (axes.size() > 1) {
            value = out.add_op(n.kind, {value}, {{"axes", std::vector<int64_t>{axes.back()}}, {"keepdims", keepdims}}, n.loc);
            axes.pop_back();
        }
        remap[n.id] = out.add_op(n.kind, {value}, {{"axes", axes}, {"keepdims", keepdims}}, n.loc);
    }
    copy_outputs(out, graph, remap);
    return out;
}

}  // namespace hc
