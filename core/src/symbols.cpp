#include "hcompile/symbols.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "hcompile/printer.h"

namespace hc {

int SymbolicExtents::symbol_of(int64_t extent) const {
    auto it = std::find(values.begin(), values.end(), extent);
    return it == values.end() ? -1 : static_cast<int>(it - values.begin());
}

namespace {

[[noreturn]] void not_generic(const Node &n, const std::string &why) {
    throw GraphError("node %" + std::to_string(n.id) + " (" + op_name(n.kind) + "): " + why);
}

bool has_symbol(const SymbolicExtents &s, const Shape &shape) {
    return std::any_of(shape.begin(), shape.end(), [&](int64_t e) { return s.symbol_of(e) >= 0; });
}

Shape without_unit_axes(const Shape &shape) {
    Shape out;
    for (int64_t e : shape) {
        if (e != 1) out.push_back(e);
    }
    return out;
}

// A slice (or a slice update) along a symbolic axis must take all of it, in order: any other
// slice's length depends on the extent in a way the graph does not carry.
void require_full_along_symbols(const SymbolicExtents &s, const Node &n, const Shape &whole, const Shape &part) {
    const auto &starts = n.ints_attr("starts");
    const auto &steps = n.ints_attr("steps");
    for (size_t d = 0; d < whole.size(); ++d) {
        bool symbolic = s.symbol_of(whole[d]) >= 0 || s.symbol_of(part[d]) >= 0;
        if (symbolic && (starts[d] != 0 || steps[d] != 1 || whole[d] != part[d])) {
            not_generic(n, "takes part of a dynamic axis " + std::to_string(d));
        }
    }
}

void check_node(const Graph &g, const SymbolicExtents &s, const Node &n) {
    auto in = [&](int i) -> const Node & { return g.node(n.inputs[i]); };
    bool touches = has_symbol(s, n.shape);
    for (NodeId i : n.inputs) touches = touches || has_symbol(s, g.node(i).shape);
    if (!touches) return;
    switch (n.kind) {
    case OpKind::Reshape:
        if (without_unit_axes(in(0).shape) != without_unit_axes(n.shape)) {
            not_generic(n, "reshapes a dynamic axis together with others");
        }
        return;
    case OpKind::Slice:
        require_full_along_symbols(s, n, in(0).shape, n.shape);
        return;
    case OpKind::SliceUpdate:
        require_full_along_symbols(s, n, in(0).shape, in(1).shape);
        return;
    default:
        break;
    }
    switch (op_class(n.kind)) {
    case OpClass::Leaf:
    case OpClass::Elementwise:   // equal shapes, or a broadcast: aligned extents are 1 or equal
    case OpClass::Layout:        // transpose permutes; slice and reshape are handled above
        return;
    case OpClass::Reduction:  // over any axes: the domain's extents are read from the call
    case OpClass::Matmul:
        return;
    }
}

}  // namespace

SymbolicExtents resolve_symbolic_extents(const Graph &graph, const std::vector<int64_t> &values,
                                         const std::vector<SymbolSource> &sources) {
    SymbolicExtents s;
    s.values = values;
    s.sources = sources;
    s.loaded.resize(values.size());
    if (sources.size() != values.size()) throw GraphError("symbolic extents: one source per symbol");
    if (std::set<int64_t>(values.begin(), values.end()).size() != values.size()) {
        throw GraphError("symbolic extents: placeholder values repeat");
    }
    for (int64_t v : values) {
        if (v < 2) throw GraphError("symbolic extents: a placeholder value is below 2");
    }
    for (const Node &n : graph.nodes()) {
        if (n.kind == OpKind::Input) {
            for (int d = 0; d < n.ndim(); ++d) {
                int k = s.symbol_of(n.shape[d]);
                if (k >= 0 && s.loaded[k].arg < 0) s.loaded[k] = {static_cast<int>(n.int_attr("arg")), d};
            }
        }
        check_node(graph, s, n);
    }
    for (const Node &n : graph.nodes()) {
        if (n.kind != OpKind::Extent) continue;
        int64_t k = n.int_attr("symbol");
        if (k < 0 || k >= static_cast<int64_t>(values.size()) || s.loaded[k].arg < 0) {
            not_generic(n, "a size of no argument the graph loads");
        }
    }
    for (const Node &n : graph.nodes()) {
        if (n.size() == 0) continue;  // its extents are only ever the output's size
        for (int64_t e : n.shape) {
            int k = s.symbol_of(e);
            if (k >= 0 && s.loaded[k].arg < 0) {
                throw GraphError("dynamic extent " + std::to_string(e) + " is read from no argument the graph loads");
            }
        }
    }
    return s;
}

Graph bind_extent_values(const Graph &graph, const std::vector<ExtentValue> &extents) {
    Graph out;
    std::map<NodeId, const ExtentValue *> by_node;
    for (const ExtentValue &e : extents) by_node[e.node] = &e;
    for (const Node &n : graph.nodes()) {
        Node copy = n;
        auto it = by_node.find(n.id);
        if (it != by_node.end()) {
            if (n.kind != OpKind::Constant) throw GraphError("an extent value names a node that is no constant");
            copy.kind = OpKind::Extent;
            copy.attrs = {{"symbol", int64_t{it->second->symbol}}, {"scale", it->second->scale}, {"offset", it->second->offset}};
        }
        out.append(std::move(copy));
    }
    out.set_outputs(graph.outputs());
    return out;
}

}  // namespace hc
