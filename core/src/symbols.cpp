#include "hcompile/symbols.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "hcompile/printer.h"

namespace hc {

int SymbolicExtents::symbol_of(int64_t extent) const {
    for (size_t k = 0; k < values.size(); ++k) {
        if (extent >= values[k] - kMaxSymbolOffset && extent <= values[k] + kMaxSymbolOffset) return static_cast<int>(k);
    }
    return -1;
}

bool SymbolicExtents::any_symbolic(const std::vector<int64_t> &shape) const {
    return std::any_of(shape.begin(), shape.end(), [&](int64_t extent) { return symbol_of(extent) >= 0; });
}

int64_t SymbolicExtents::offset_of(int64_t extent) const {
    int k = symbol_of(extent);
    return k < 0 ? 0 : extent - values[k];
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

// A slice (or a slice update) along a symbolic axis runs in order from a static start, and its
// length is the symbol's plus a fixed offset (`x[1:-1]`): the frontend checked that the offset
// is the same at every size it captured, so the part ends a fixed distance before the whole.
// A slice of fixed length (`x[:5]`) or with a step is refused: its length is no such thing.
void require_offset_slices_of_symbols(const SymbolicExtents &s, const Node &n, const Shape &whole, const Shape &part) {
    const auto &starts = n.ints_attr("starts");
    const auto &steps = n.ints_attr("steps");
    for (size_t d = 0; d < whole.size(); ++d) {
        int k = s.symbol_of(whole[d]);
        if (k < 0 && s.symbol_of(part[d]) < 0) continue;
        if (k < 0 || s.symbol_of(part[d]) != k || steps[d] != 1 || s.symbol_of(starts[d]) >= 0 ||
            starts[d] < 0 || starts[d] + s.offset_of(part[d]) > s.offset_of(whole[d])) {
            not_generic(n, "takes part of a dynamic axis " + std::to_string(d) + " other than from a fixed start to a fixed distance from its end");
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
        require_offset_slices_of_symbols(s, n, in(0).shape, n.shape);
        return;
    case OpKind::SliceUpdate:
        require_offset_slices_of_symbols(s, n, in(0).shape, in(1).shape);
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
    for (size_t i = 0; i < values.size(); ++i) {
        if (values[i] <= 2 * kMaxSymbolOffset) throw GraphError("symbolic extents: a placeholder value is too small");
        for (size_t j = 0; j < i; ++j) {
            if (std::abs(values[i] - values[j]) <= 2 * kMaxSymbolOffset) {
                throw GraphError("symbolic extents: placeholder values closer than their offsets");
            }
        }
    }
    for (const Node &n : graph.nodes()) {
        if (n.kind == OpKind::Input) {
            for (int d = 0; d < n.ndim(); ++d) {
                int k = s.symbol_of(n.shape[d]);
                if (k >= 0 && s.offset_of(n.shape[d]) != 0) not_generic(n, "an argument's size is a placeholder plus an offset");
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
