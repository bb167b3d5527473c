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
// A reduction to one value of at least this many elements: its last step keeps its axis (an
// output of shape (1,), reshaped to ()), which the GPU schedule reduces with a block of threads
// (gpu_rows) instead of one thread (the last step of an 8192² sum, 8192 values, was 0.4 ms).
constexpr int64_t kLongReduction = 256;
// A long reduction of a 1-D array is read as rows of at most this many elements (a power of two
// dividing its size), one row per block, then the rows' results.
constexpr int64_t kRowOfLong = 8192;
constexpr int64_t kShortestRow = 1024;

bool reduces(const Node &n) {
    // Reductions over a list of axes (an arg reduction has one axis, and an index to keep).
    return op_class(n.kind) == OpClass::Reduction && n.kind != OpKind::Argmax && n.kind != OpKind::Argmin;
}

bool splits(const Graph &graph, const Node &n) {
    const Node &x = graph.node(n.inputs[0]);
    return reduces(n) && n.ints_attr("axes").size() >= 2 && n.size() < kFewOutputs &&
           x.size() / std::max<int64_t>(n.size(), 1) >= kManyReduced;
}

// The row length a long 1-D reduction is cut into, or 0 (too short, or no such power of two).
int64_t row_of_long(const Node &x) {
    if (x.ndim() != 1 || x.size() < kManyReduced) return 0;
    int64_t row = kRowOfLong;
    while (row >= kShortestRow && x.size() % row != 0) row /= 2;
    return row >= kShortestRow ? row : 0;
}

}  // namespace

Graph split_reductions_for_gpu(const Graph &graph) {
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes(), -1);
    for (const Node &n : graph.nodes()) {
        const Node *x = reduces(n) ? &graph.node(n.inputs[0]) : nullptr;
        const int64_t row = x && n.ndim() == 0 ? row_of_long(*x) : 0;
        const bool to_one_value = x && n.ndim() == 0 && x->size() >= kLongReduction;
        if (!x || (!splits(graph, n) && !to_one_value)) {
            remap[n.id] = copy_node(out, n, remap);
            continue;
        }
        std::vector<int64_t> axes = n.ints_attr("axes");
        std::sort(axes.begin(), axes.end());
        const int64_t keepdims = n.int_attr("keepdims");
        NodeId value = remap[n.inputs[0]];
        if (row > 0) {  // (n,) as (n / row, row): both axes reduced, the rows first
            value = out.add_op(OpKind::Reshape, {value}, {{"shape", std::vector<int64_t>{x->size() / row, row}}}, n.loc);
            axes = {0, 1};
        }
        if (splits(graph, n) || row > 0) {
            // The innermost reduced axis first: dropping the highest index leaves the others'
            // indices as they are (keepdims keeps it as 1 in any case).
            while (axes.size() > 1) {
                value = out.add_op(n.kind, {value}, {{"axes", std::vector<int64_t>{axes.back()}}, {"keepdims", keepdims}}, n.loc);
                axes.pop_back();
            }
        }
        if (!to_one_value) {
            remap[n.id] = out.add_op(n.kind, {value}, {{"axes", axes}, {"keepdims", keepdims}}, n.loc);
            continue;
        }
        // The last step to one value keeps its last axis as 1 for the GPU's block; a reshape drops it.
        const int64_t left = static_cast<int64_t>(out.node(value).ndim());
        std::vector<int64_t> all(left);
        for (int64_t a = 0; a < left; ++a) all[a] = a;
        value = out.add_op(n.kind, {value}, {{"axes", all}, {"keepdims", int64_t{1}}}, n.loc);
        remap[n.id] = out.add_op(OpKind::Reshape, {value}, {{"shape", std::vector<int64_t>{}}}, n.loc);
    }
    copy_outputs(out, graph, remap);
    return out;
}

}  // namespace hc
