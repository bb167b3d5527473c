#include <algorithm>

#include "hcompile/ops.h"
#include "hcompile/passes.h"
#include "hcompile/symbols.h"

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

// A reduction over one axis to few outputs leaves most of a GPU idle: a column sum of a tall array
// ran a thread per column (x.sum(axis=0) of 8M x 16 float32 on an H200: 2.9 s, 16 threads adding
// 8M values each), a row sum of few long rows a block per row. The axis is then cut into chunks,
// reduced chunk by chunk first: down columns until about kColumnThreads threads have a chunk of
// at least kMinColumnChunk elements each; along rows until about kRowBlocks blocks have one of at
// least kRowOfLong. Columns shorter than kShortestSplitColumn stay whole (a kernel launch costs
// more than their serial steps).
constexpr int64_t kColumnThreads = int64_t{1} << 17;
constexpr int64_t kMinColumnChunk = 32;
constexpr int64_t kShortestSplitColumn = 256;
constexpr int64_t kRowBlocks = 256;

bool reduces(const Node &n) {
    // Reductions over a list of axes (an arg reduction has one axis, and an index to keep).
    return op_class(n.kind) == OpClass::Reduction && n.kind != OpKind::Argmax && n.kind != OpKind::Argmin;
}

bool splits(const Graph &graph, const Node &n) {
    const Node &x = graph.node(n.inputs[0]);
    return reduces(n) && n.ints_attr("axes").size() >= 2 && n.size() < kFewOutputs &&
           x.size() / std::max<int64_t>(n.size(), 1) >= kManyReduced;
}

// An argmax or argmin of a 1-D array of kLongReduction elements or more, to one index.
bool is_long_arg_reduction(const Graph &graph, const Node &n) {
    if (n.kind != OpKind::Argmax && n.kind != OpKind::Argmin) return false;
    const Node &x = graph.node(n.inputs[0]);
    return x.ndim() == 1 && n.ndim() == 0 && x.size() >= kLongReduction;
}

// The row length a long 1-D reduction is cut into, or 0 (too short, or no such power of two).
int64_t row_of_long(const Node &x) {
    if (x.ndim() != 1 || x.size() < kManyReduced) return 0;
    int64_t row = kRowOfLong;
    while (row >= kShortestRow && x.size() % row != 0) row /= 2;
    return row >= kShortestRow ? row : 0;
}

// The elementwise op that combines two partial results of reduction `kind` (one it reduces in any
// grouping: sums wrap, extrema propagate NaN, either way).
OpKind combining_op(OpKind kind) {
    switch (kind) {
    case OpKind::Sum: return OpKind::Add;
    case OpKind::Prod: return OpKind::Mul;
    case OpKind::Max: return OpKind::Maximum;
    case OpKind::Min: return OpKind::Minimum;
    case OpKind::Any: return OpKind::BitwiseOr;
    case OpKind::All: return OpKind::BitwiseAnd;
    default: return OpKind::Input;   // none
    }
}

// One-axis reductions of `kind` into `out`, each cut into chunks where it has few outputs
// (kColumnThreads above). Symbolic extents are not cut (their size is only known at run time).
class AxisReducer {
public:
    AxisReducer(Graph &out, OpKind kind, const std::string &loc, const SymbolicExtents &symbols)
        : out_(out), kind_(kind), loc_(loc), symbols_(symbols) {}

    // `value` reduced over `axis`: the chunks' results reduced over their own axis (cut again
    // where that is still long), and the elements past the last whole chunk reduced apart and
    // combined with them.
    NodeId reduce(NodeId value, int64_t axis, int64_t keepdims) {
        const int64_t chunks = chunks_of(value, axis);
        if (chunks < 2) return plain(value, axis, keepdims);
        const Shape shape = out_.node(value).shape;
        const int64_t extent = shape[axis], chunk = extent / chunks, whole = chunks * chunk;
        std::vector<int64_t> split(shape.begin(), shape.end());
        split[axis] = chunk;
        split.insert(split.begin() + axis, chunks);
        NodeId body = whole == extent ? value : slice(value, axis, 0, whole);
        body = out_.add_op(OpKind::Reshape, {body}, {{"shape", split}}, loc_);
        NodeId result = reduce(plain(body, axis + 1, 0), axis, keepdims);
        if (whole == extent) return result;
        const NodeId rest = reduce(slice(value, axis, whole, extent), axis, keepdims);
        return out_.add_op(combining_op(kind_), {result, rest}, {}, loc_);
    }

    // How many chunks `value`'s `axis` is reduced in first (a power of two; 1: as it is).
    int64_t chunks_of(NodeId value, int64_t axis) const {
        const Node &x = out_.node(value);
        if (combining_op(kind_) == OpKind::Input || x.size() == 0 || symbols_.any_symbolic(x.shape)) return 1;
        const int64_t extent = x.shape[axis], outputs = x.size() / extent;
        if (axis != x.ndim() - 1) return extent < kShortestSplitColumn ? 1 : gpu_column_chunks(outputs, extent);
        int64_t chunks = 1;
        while (outputs * chunks * 2 <= kRowBlocks && extent / (chunks * 2) >= kRowOfLong) chunks *= 2;
        return chunks;
    }

private:
    NodeId plain(NodeId value, int64_t axis, int64_t keepdims) {
        return out_.add_op(kind_, {value}, {{"axes", std::vector<int64_t>{axis}}, {"keepdims", keepdims}}, loc_);
    }

    NodeId slice(NodeId value, int64_t axis, int64_t start, int64_t stop) {
        const Shape &shape = out_.node(value).shape;
        std::vector<int64_t> starts(shape.size(), 0), stops(shape.begin(), shape.end()), steps(shape.size(), 1);
        starts[axis] = start;
        stops[axis] = stop;
        return out_.add_op(OpKind::Slice, {value}, {{"starts", starts}, {"stops", stops}, {"steps", steps}}, loc_);
    }

    Graph &out_;
    OpKind kind_;
    std::string loc_;
    const SymbolicExtents &symbols_;
};

// A reduction over several axes, some of them neighbours, with the neighbours merged into one
// axis (a reshape: the elements' order is the array's), or -1 (none neighbours, a symbolic or
// empty shape). x.reshape(-1, 64, 16).sum(axis=(0, 1)) is then a column sum of 8M x 16, reduced
// in chunks: as a sum over the 64 first, then down the rows in chunks, it took 496 us on an H200
// (128M float32; torch.compile 160).
NodeId merge_neighbour_axes(Graph &out, const Node &n, NodeId input, const SymbolicExtents &symbols) {
    const Node &x = out.node(input);
    std::vector<int64_t> axes = n.ints_attr("axes");
    std::sort(axes.begin(), axes.end());
    if (axes.size() < 2 || x.size() == 0 || symbols.any_symbolic(x.shape)) return -1;
    std::vector<int64_t> shape, merged_axes;
    for (int64_t a = 0; a < x.ndim(); ++a) {
        const bool reduced = std::binary_search(axes.begin(), axes.end(), a);
        if (reduced && a > 0 && std::binary_search(axes.begin(), axes.end(), a - 1)) {
            shape.back() *= x.shape[a];
            continue;
        }
        if (reduced) merged_axes.push_back(static_cast<int64_t>(shape.size()));
        shape.push_back(x.shape[a]);
    }
    if (merged_axes.size() == axes.size()) return -1;
    // (A reshape of a reshape reads the first one's input: one index map, not two.)
    const NodeId source = x.kind == OpKind::Reshape ? x.inputs[0] : input;
    const NodeId reshaped = out.add_op(OpKind::Reshape, {source}, {{"shape", shape}}, n.loc);
    const NodeId reduced =
        out.add_op(n.kind, {reshaped}, {{"axes", merged_axes}, {"keepdims", int64_t{0}}}, n.loc);
    if (n.int_attr("keepdims") == 0) return reduced;
    return out.add_op(OpKind::Reshape, {reduced}, {{"shape", std::vector<int64_t>(n.shape.begin(), n.shape.end())}}, n.loc);
}

// The graph with neighbouring reduced axes merged (merge_neighbour_axes) wherever there are some.
Graph merge_reduced_neighbours(const Graph &graph, const SymbolicExtents &symbols) {
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes(), -1);
    for (const Node &n : graph.nodes()) {
        const NodeId merged = reduces(n) ? merge_neighbour_axes(out, n, remap[n.inputs[0]], symbols) : -1;
        remap[n.id] = merged >= 0 ? merged : copy_node(out, n, remap);
    }
    copy_outputs(out, graph, remap);
    return out;
}

}  // namespace

int64_t gpu_column_chunks(int64_t outputs, int64_t extent) {
    int64_t chunks = 1;
    while (outputs * chunks * 2 <= kColumnThreads && extent / (chunks * 2) >= kMinColumnChunk) chunks *= 2;
    return chunks;
}

Graph split_reductions_for_gpu(const Graph &input, const std::vector<int64_t> &symbol_values) {
    SymbolicExtents symbols;
    symbols.values = symbol_values;
    const Graph graph = merge_reduced_neighbours(input, symbols);
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes(), -1);
    for (const Node &n : graph.nodes()) {
        if (is_long_arg_reduction(graph, n)) {
            // (n,) as (1, n): the same indices, in a row the GPU lowering reduces in stored lanes
            // (LaneParts) where a 0-d result was one thread's.
            const int64_t length = graph.node(n.inputs[0]).size();
            NodeId row = out.add_op(OpKind::Reshape, {remap[n.inputs[0]]}, {{"shape", std::vector<int64_t>{1, length}}}, n.loc);
            row = out.add_op(n.kind, {row}, {{"axis", int64_t{1}}, {"keepdims", int64_t{1}}}, n.loc);
            remap[n.id] = out.add_op(OpKind::Reshape, {row}, {{"shape", std::vector<int64_t>{}}}, n.loc);
            continue;
        }
        if (!reduces(n)) {
            remap[n.id] = copy_node(out, n, remap);
            continue;
        }
        const Node &x = graph.node(n.inputs[0]);
        const int64_t row = n.ndim() == 0 ? row_of_long(x) : 0;
        const bool to_one_value = n.ndim() == 0 && x.size() >= kLongReduction;
        AxisReducer reducer(out, n.kind, n.loc, symbols);
        std::vector<int64_t> axes = n.ints_attr("axes");
        const bool one_axis = axes.size() == 1 && !to_one_value && reducer.chunks_of(remap[n.inputs[0]], axes[0]) > 1;
        if (!splits(graph, n) && !to_one_value && !one_axis) {
            remap[n.id] = copy_node(out, n, remap);
            continue;
        }
        std::sort(axes.begin(), axes.end());
        const int64_t keepdims = n.int_attr("keepdims");
        if (one_axis) {
            remap[n.id] = reducer.reduce(remap[n.inputs[0]], axes[0], keepdims);
            continue;
        }
        NodeId value = remap[n.inputs[0]];
        if (row > 0) {  // (n,) as (n / row, row): both axes reduced, the rows first
            value = out.add_op(OpKind::Reshape, {value}, {{"shape", std::vector<int64_t>{x.size() / row, row}}}, n.loc);
            axes = {0, 1};
        }
        if (splits(graph, n) || row > 0) {
            // The innermost reduced axis first: dropping the highest index leaves the others'
            // indices as they are (keepdims keeps it as 1 in any case).
            while (axes.size() > 1) {
                value = reducer.reduce(value, axes.back(), keepdims);
                axes.pop_back();
            }
        }
        if (!to_one_value) {
            remap[n.id] = axes.size() == 1 ? reducer.reduce(value, axes[0], keepdims)
                                           : out.add_op(n.kind, {value}, {{"axes", axes}, {"keepdims", keepdims}}, n.loc);
            continue;
        }
        // The last step to one value keeps its last axis as 1 for the GPU's block (after chunks
        // of a long one: the row sums of x.sum() over 8M x 16); a reshape drops it.
        const int64_t left = static_cast<int64_t>(out.node(value).ndim());
        std::vector<int64_t> all(left);
        for (int64_t a = 0; a < left; ++a) all[a] = a;
        value = left == 1 ? reducer.reduce(value, 0, 1)
                          : out.add_op(n.kind, {value}, {{"axes", all}, {"keepdims", int64_t{1}}}, n.loc);
        remap[n.id] = out.add_op(OpKind::Reshape, {value}, {{"shape", std::vector<int64_t>{}}}, n.loc);
    }
    copy_outputs(out, graph, remap);
    return out;
}

}  // namespace hc
