#include "hcompile/passes.h"

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace hc {

namespace {

// Copies `node` into `out` with its inputs renamed through `remap`.
NodeId copy_node(Graph &out, const Node &node, const std::vector<NodeId> &remap) {
    Node copy = node;
    for (NodeId &in : copy.inputs) in = remap[in];
    return out.append(std::move(copy));
}

void copy_outputs(Graph &out, const Graph &in, const std::vector<NodeId> &remap) {
    std::vector<NodeId> outs;
    for (NodeId id : in.outputs()) outs.push_back(remap[id]);
    out.set_outputs(outs);
}

// Rounds a double to what `dtype` would store (wrapping integers as NumPy does).
double store_as(double v, DType t) {
    switch (t) {
    case DType::Bool: return v != 0 ? 1 : 0;
    case DType::Float32: return static_cast<double>(static_cast<float>(v));
    case DType::Float64: return v;
    default: break;
    }
    if (!std::isfinite(v)) return v;  // caller refuses to fold these
    int bits = dtype_bits(t);
    auto wrapped = static_cast<uint64_t>(static_cast<int64_t>(v));
    if (bits < 64) wrapped &= (uint64_t{1} << bits) - 1;
    if (is_signed_int(t) && bits < 64 && (wrapped >> (bits - 1))) wrapped |= ~((uint64_t{1} << bits) - 1);
    return is_signed_int(t) ? static_cast<double>(static_cast<int64_t>(wrapped)) : static_cast<double>(wrapped);
}

// Folds the few ops whose exact NumPy result we can compute in double without surprises.
// Integer results are only folded while they stay below 2^53 (exact in a double).
std::optional<double> fold_scalar(OpKind kind, DType t, const std::vector<double> &a) {
    double r;
    switch (kind) {
    case OpKind::Cast: r = a[0]; break;
    case OpKind::Neg: r = -a[0]; break;
    case OpKind::Add: r = a[0] + a[1]; break;
    case OpKind::Sub: r = a[0] - a[1]; break;
    case OpKind::Mul: r = a[0] * a[1]; break;
    case OpKind::Div: r = a[0] / a[1]; break;
    case OpKind::Reciprocal:
        if (!is_float(t)) return std::nullopt;
        r = 1.0 / a[0];
        break;
    default: return std::nullopt;
    }
    if (!is_float(t)) {
        if (std::fabs(r) > 9007199254740992.0 || r != std::trunc(r) || (kind == OpKind::Cast && !std::isfinite(r))) {
            return std::nullopt;
        }
    }
    return store_as(r, t);
}

bool is_noop(const Graph &g, const Node &n) {
    if (n.inputs.size() != 1) return false;
    const Node &x = g.node(n.inputs[0]);
    switch (n.kind) {
    case OpKind::Cast:
    case OpKind::Reshape:
    case OpKind::Broadcast:
        return x.dtype == n.dtype && x.shape == n.shape;
    case OpKind::Transpose: {
        const auto &perm = n.ints_attr("perm");
        for (size_t i = 0; i < perm.size(); ++i) {
            if (perm[i] != static_cast<int64_t>(i)) return false;
        }
        return true;
    }
    default:
        return false;
    }
}

}  // namespace

Graph fold_constants(const Graph &graph) {
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes());
    for (const Node &n : graph.nodes()) {
        if (is_noop(graph, n)) {
            remap[n.id] = remap[n.inputs[0]];
            continue;
        }
        bool all_constant = op_class(n.kind) == OpClass::Elementwise && !n.inputs.empty();
        std::vector<double> values;
        for (NodeId in : n.inputs) {
            const Node &x = out.node(remap[in]);
            all_constant = all_constant && x.kind == OpKind::Constant;
            if (x.kind == OpKind::Constant) values.push_back(constant_value(x));
        }
        if (all_constant && n.shape.empty()) {
            if (auto v = fold_scalar(n.kind, n.dtype, values)) {
                remap[n.id] = is_float(n.dtype) ? out.add_constant(*v, n.dtype, n.loc)
                                                : out.add_constant_int(static_cast<int64_t>(*v), n.dtype, n.loc);
                continue;
            }
        }
        remap[n.id] = copy_node(out, n, remap);
    }
    copy_outputs(out, graph, remap);
    return out;
}

Graph eliminate_common_subexpressions(const Graph &graph) {
    using Key = std::tuple<OpKind, DType, Shape, std::vector<NodeId>, Attrs>;
    std::map<Key, NodeId> seen;
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes());
    for (const Node &n : graph.nodes()) {
        std::vector<NodeId> inputs;
        for (NodeId in : n.inputs) inputs.push_back(remap[in]);
        Key key{n.kind, n.dtype, n.shape, inputs, n.attrs};
        auto it = seen.find(key);
        if (it != seen.end()) {
            remap[n.id] = it->second;
            continue;
        }
        remap[n.id] = copy_node(out, n, remap);
        seen.emplace(std::move(key), remap[n.id]);
    }
    copy_outputs(out, graph, remap);
    return out;
}

Graph eliminate_dead_code(const Graph &graph) {
    std::vector<bool> live(graph.num_nodes(), false);
    for (NodeId id : graph.outputs()) live[id] = true;
    for (int id = graph.num_nodes() - 1; id >= 0; --id) {
        if (!live[id]) continue;
        for (NodeId in : graph.node(id).inputs) live[in] = true;
    }
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes(), -1);
    for (const Node &n : graph.nodes()) {
        if (live[n.id]) remap[n.id] = copy_node(out, n, remap);
    }
    copy_outputs(out, graph, remap);
    return out;
}

}  // namespace hc
