// widen_float16: float16 and bfloat16 arithmetic as NumPy does float16's, in float32 rounded back
// after every step.
#include <optional>

#include "graph_copy.h"
#include "hcompile/passes.h"

namespace hc {

namespace {

// Ops that only move or hold values: exact in any dtype, so float16 data stays float16 there
// (half the bytes of a float32 copy).
bool moves_values_only(OpKind kind) {
    if (kind == OpKind::Input || kind == OpKind::Constant || kind == OpKind::Extent || kind == OpKind::Cast) return true;
    return op_class(kind) == OpClass::Layout;
}

}  // namespace

Graph widen_float16(const Graph &graph) {
    Graph out;
    std::vector<NodeId> remap(graph.num_nodes());
    // The float32 value of each float16 node of `out`, made once however many ops read it.
    std::vector<std::optional<NodeId>> widened;
    auto as_float32 = [&](NodeId id) {
        if (static_cast<size_t>(id) >= widened.size()) widened.resize(out.num_nodes());
        if (!widened[id]) {
            const Node &x = out.node(id);
            widened[id] = out.add_op(OpKind::Cast, {id}, Attrs{{"dtype", std::string("float32")}}, x.loc);
        }
        return *widened[id];
    };
    for (const Node &n : graph.nodes()) {
        bool reads_half = false;
        for (NodeId in : n.inputs) reads_half = reads_half || is_narrow_float(graph.node(in).dtype);
        if (moves_values_only(n.kind) || (!reads_half && !is_narrow_float(n.dtype))) {
            remap[n.id] = copy_node(out, n, remap);
            continue;
        }
        // Every float16 operand is read as float32 (exact), the op computes in float32, and a
        // float16 result is rounded once: for + - * / and sqrt that is the float16 operation
        // itself (float32 has more than twice float16's precision, so the double rounding is
        // harmless); for the other functions it is what NumPy's float16 loops compute. Sums and
        // products accumulate in float32 (NumPy does so along a contiguous axis, and rounds
        // every step along others; this is the more accurate of the two). bfloat16 (8 bits of
        // precision) follows the same rules: ml_dtypes' elementwise loops compute in float32 too,
        // but its sums round every step (4096 ones sum to 256), where torch and this pass
        // accumulate in float32 and round once.
        Node copy = n;
        for (NodeId &in : copy.inputs) {
            in = remap[in];
            if (is_narrow_float(out.node(in).dtype)) in = as_float32(in);
        }
        if (is_narrow_float(copy.dtype)) copy.dtype = DType::Float32;
        NodeId id = out.append(std::move(copy));
        if (is_narrow_float(n.dtype)) {
            id = out.add_op(OpKind::Cast, {id}, Attrs{{"dtype", std::string(dtype_name(n.dtype))}}, n.loc);
        }
        remap[n.id] = id;
    }
    copy_outputs(out, graph, remap);
    return out;
}

NodeId widened_float16_source(const Graph &graph, NodeId id) {
    const Node &n = graph.node(id);
    const bool widens = n.kind == OpKind::Cast && n.dtype == DType::Float32 &&
                        is_narrow_float(graph.node(n.inputs[0]).dtype);
    return widens ? n.inputs[0] : -1;
}

}  // namespace hc
