// Index rules for layout ops: each maps an output index to the input index it reads.
#include <unordered_map>

#include "rules.h"

namespace hc::lowering {

namespace {

using Halide::Expr;
using Index = std::vector<Expr>;
using Table = std::unordered_map<OpKind, LayoutRule>;

Index broadcast_index(const Graph &g, const Node &n, const Index &out) {
    const Node &x = g.node(n.inputs[0]);
    size_t offset = n.shape.size() - x.shape.size();
    Index in;
    for (size_t i = 0; i < x.shape.size(); ++i) {
        // A size-1 input axis is stretched: every output position reads element 0.
        in.push_back(x.shape[i] == 1 && n.shape[offset + i] != 1 ? Expr(0) : out[offset + i]);
    }
    return in;
}

Index transpose_index(const Graph &g, const Node &n, const Index &out) {
    const auto &perm = n.ints_attr("perm");
    Index in(out.size());
    for (size_t i = 0; i < perm.size(); ++i) in[perm[i]] = out[i];
    (void)g;
    return in;
}

Index slice_index(const Graph &g, const Node &n, const Index &out) {
    const auto &starts = n.ints_attr("starts");
    const auto &steps = n.ints_attr("steps");
    Index in;
    for (size_t i = 0; i < out.size(); ++i) {
        in.push_back(Expr(static_cast<int>(starts[i])) + out[i] * static_cast<int>(steps[i]));
    }
    (void)g;
    return in;
}

// Row-major reshape. Axes are grouped into the shortest runs whose element counts agree in both
// shapes, so a reshape that only splits, merges, adds or drops axes divides only inside a group.
Index reshape_index(const Graph &g, const Node &n, const Index &out) {
    const Shape &from = g.node(n.inputs[0]).shape;
    const Shape &to = n.shape;
    Index in(from.size(), Expr(0));
    if (n.size() == 0) return in;  // an empty array: no element is ever read
    size_t i = 0, o = 0;
    while (i < from.size() || o < to.size()) {
        if (i < from.size() && from[i] == 1) {
            ++i;  // its index stays 0
            continue;
        }
        if (o < to.size() && to[o] == 1) {
            ++o;  // its index is always 0
            continue;
        }
        size_t i0 = i, o0 = o;
        int64_t in_count = from[i++], out_count = to[o++];
        while (in_count != out_count) {
            if (in_count < out_count) {
                in_count *= from[i++];
            } else {
                out_count *= to[o++];
            }
        }
        Expr linear = 0;
        for (size_t k = o0; k < o; ++k) linear = linear * static_cast<int>(to[k]) + out[k];
        int64_t stride = in_count;
        for (size_t k = i0; k < i; ++k) {
            stride /= from[k];
            Expr q = stride == 1 ? linear : linear / static_cast<int>(stride);
            in[k] = k == i0 ? q : q % static_cast<int>(from[k]);
        }
    }
    return in;
}

Table make_table() {
    Table t;
    t[OpKind::Broadcast] = broadcast_index;
    t[OpKind::Transpose] = transpose_index;
    t[OpKind::Slice] = slice_index;
    t[OpKind::Reshape] = reshape_index;
    return t;
}

}  // namespace

const LayoutRule *find_layout_rule(OpKind kind) {
    static const Table table = make_table();
    auto it = table.find(kind);
    return it == table.end() ? nullptr : &it->second;
}

}  // namespace hc::lowering
