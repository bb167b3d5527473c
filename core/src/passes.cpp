#include "hcompile/passes.h"

#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "graph_copy.h"

namespace hc {

namespace {

// A constant's value as NumPy would hold it: floats rounded to their dtype, integers exact (as a
// two's complement bit pattern in 64 bits, so uint64 fits too).
struct Scalar {
    double f = 0;
    uint64_t bits = 0;
};

Scalar read_constant(const Node &c) {
    Scalar s;
    const AttrValue &v = c.attrs.at("value");
    if (auto *i = std::get_if<int64_t>(&v)) {
        s.bits = static_cast<uint64_t>(*i);
        s.f = is_unsigned_int(c.dtype) ? static_cast<double>(s.bits) : static_cast<double>(*i);
    } else {
        s.f = std::get<double>(v);
        s.f = round_to_float(s.f, c.dtype);
        s.bits = static_cast<uint64_t>(static_cast<int64_t>(std::isfinite(s.f) ? s.f : 0));
    }
    if (is_bool(c.dtype)) s.bits = s.bits != 0;
    return s;
}

// Wraps a 64-bit pattern to `t`'s width, sign-extending signed types, as NumPy's integers do.
int64_t wrap_to(uint64_t bits, DType t) {
    if (is_bool(t)) return bits != 0;
    int width = dtype_bits(t);
    if (width < 64) {
        uint64_t mask = (uint64_t{1} << width) - 1;
        bits &= mask;
        if (is_signed_int(t) && (bits >> (width - 1))) bits |= ~mask;
    }
    return static_cast<int64_t>(bits);
}

// Folds the few ops whose exact NumPy result is plain to compute: float ops in double, rounded
// to the result dtype (float32 a+b computed in double and rounded once is exactly float32 a+b);
// integer ops in wrapping 64-bit arithmetic. Returns the constant node to add, if folded.
std::optional<Node> fold_scalar(const Node &n, const std::vector<const Node *> &operands) {
    std::vector<Scalar> a;
    for (const Node *c : operands) a.push_back(read_constant(*c));
    DType in = operands[0]->dtype, out = n.dtype;
    Node result;
    result.kind = OpKind::Constant;
    result.dtype = out;
    result.loc = n.loc;
    if (is_float(out)) {
        double r;
        switch (n.kind) {
        case OpKind::Cast: r = a[0].f; break;
        case OpKind::Neg: r = -a[0].f; break;
        case OpKind::Add: r = a[0].f + a[1].f; break;
        case OpKind::Sub: r = a[0].f - a[1].f; break;
        case OpKind::Mul: r = a[0].f * a[1].f; break;
        case OpKind::Div: r = a[0].f / a[1].f; break;
        case OpKind::Reciprocal: r = 1.0 / a[0].f; break;
        default: return std::nullopt;
        }
        result.attrs["value"] = round_to_float(r, out);
        return result;
    }
    uint64_t r;
    switch (n.kind) {
    case OpKind::Cast:
        if (is_float(in)) {
            // In-range conversions truncate toward zero; out-of-range ones are left to the
            // kernel, which gives x86's (and so NumPy's) "integer indefinite" value.
            double t = std::trunc(a[0].f);
            int width = dtype_bits(out);
            double lo = is_signed_int(out) ? -std::ldexp(1.0, width - 1) : 0.0;
            double hi = is_signed_int(out) ? std::ldexp(1.0, width - 1) : std::ldexp(1.0, width);
            if (is_bool(out)) {
                r = a[0].f != 0;
            } else if (!(t >= lo && t < hi)) {
                return std::nullopt;
            } else {
                r = is_unsigned_int(out) ? static_cast<uint64_t>(t) : static_cast<uint64_t>(static_cast<int64_t>(t));
            }
        } else {
            r = is_bool(out) ? (a[0].bits != 0) : a[0].bits;
        }
        break;
    case OpKind::Neg: r = uint64_t{0} - a[0].bits; break;
    case OpKind::Add: r = is_bool(out) ? (a[0].bits | a[1].bits) : a[0].bits + a[1].bits; break;
    case OpKind::Sub: r = a[0].bits - a[1].bits; break;
    case OpKind::Mul: r = is_bool(out) ? (a[0].bits & a[1].bits) : a[0].bits * a[1].bits; break;
    default: return std::nullopt;
    }
    result.attrs["value"] = wrap_to(r, out);
    return result;
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

// The operand a node passes through unchanged, if any: `where` with a constant condition and
// `maximum`/`minimum` of one value with itself (NumPy gives that value, NaN and -0.0 included).
// Folded here, both sides of a later `x - x` or `x <= x` are one node, which lowering spells
// NaN-safely; left to Halide, its simplifier found them equal and folded them assuming no NaN
// (device fuzz, seed 3, program 1419296: `(np.where(s, b, s) <= b).prod()` was 1 with a NaN in b).
std::optional<NodeId> passed_through(const Graph &out, const Node &n, const std::vector<NodeId> &inputs) {
    auto same_type = [&](NodeId id) { return out.node(id).dtype == n.dtype && out.node(id).shape == n.shape; };
    if (n.kind == OpKind::Where) {
        const Node *c = &out.node(inputs[0]);
        if (c->kind == OpKind::Broadcast) c = &out.node(c->inputs[0]);
        if (c->kind != OpKind::Constant) return std::nullopt;
        Scalar v = read_constant(*c);
        bool truth = is_float(c->dtype) ? v.f != 0 : v.bits != 0;  // NaN is true, -0.0 false
        NodeId chosen = inputs[truth ? 1 : 2];
        if (same_type(chosen)) return chosen;
    }
    if ((n.kind == OpKind::Maximum || n.kind == OpKind::Minimum) && inputs[0] == inputs[1] && same_type(inputs[0])) {
        return inputs[0];
    }
    return std::nullopt;
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
        bool all_constant = op_class(n.kind) == OpClass::Elementwise && !n.inputs.empty() && n.shape.empty();
        std::vector<const Node *> operands;
        for (NodeId in : n.inputs) {
            const Node &x = out.node(remap[in]);
            all_constant = all_constant && x.kind == OpKind::Constant;
            operands.push_back(&x);
        }
        if (all_constant) {
            if (auto folded = fold_scalar(n, operands)) {
                remap[n.id] = out.append(std::move(*folded));
                continue;
            }
        }
        std::vector<NodeId> inputs;
        for (NodeId in : n.inputs) inputs.push_back(remap[in]);
        if (auto through = passed_through(out, n, inputs)) {
            remap[n.id] = *through;
            continue;
        }
        remap[n.id] = copy_node(out, n, remap);
    }
    copy_outputs(out, graph, remap);
    return out;
}

namespace {

// What makes two nodes the same computation. Attributes compare by their bits (attrs_less): a
// NaN constant must not merge with another constant, nor -0.0 with 0.0.
struct CseKey {
    OpKind kind;
    DType dtype;
    Shape shape;
    std::vector<NodeId> inputs;
    Attrs attrs;

    bool operator<(const CseKey &o) const {
        auto head = std::tie(kind, dtype, shape, inputs), other = std::tie(o.kind, o.dtype, o.shape, o.inputs);
        if (head != other) return head < other;
        return attrs_less(attrs, o.attrs);
    }
};

}  // namespace

Graph eliminate_common_subexpressions(const Graph &graph) {
    using Key = CseKey;
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
