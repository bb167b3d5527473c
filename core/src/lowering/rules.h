// Internal to lowering: the rule tables that turn one node into Halide.
#pragma once

#include <Halide.h>

#include <functional>
#include <optional>
#include <vector>

#include "hcompile/graph.h"
#include "hcompile/lowering.h"

namespace hc::lowering {

// What a rule can ask about the graph being lowered.
struct LowerContext {
    const Graph &graph;
    const std::vector<Halide::Func> &funcs;  // already-lowered producers, by node id

    // Value of node `id` at a NumPy-order index (one Expr per axis of that node).
    Halide::Expr at(NodeId id, const std::vector<Halide::Expr> &index) const;
};

// Scalar rule for an elementwise op: operand values in, result value out.
using ElementwiseRule = std::function<Halide::Expr(const Node &, const std::vector<Halide::Expr> &)>;
const ElementwiseRule *find_elementwise_rule(OpKind kind);

// Index rule for a layout op: output index (NumPy order) in, input index out.
using LayoutRule = std::function<std::vector<Halide::Expr>(const Graph &, const Node &,
                                                           const std::vector<Halide::Expr> &)>;
const LayoutRule *find_layout_rule(OpKind kind);

// Reductions and matmul define `func` (pure + update) over `axes` (NumPy order), returning the
// reduction domain they used and whether the update is safe to reassociate.
struct ReductionLowering {
    Halide::RDom rdom;
    std::vector<int64_t> rextents;  // innermost first
    bool reduces_innermost = false;
    bool associative = false;
    Halide::Func accumulator;  // matmul: the Func holding the update (f itself is a pure copy)
    std::optional<BlockedSum> blocked_sum;  // float sums
};
ReductionLowering lower_reduction(const LowerContext &ctx, const Node &node, Halide::Func &func,
                                  const std::vector<Halide::Var> &axes);
ReductionLowering lower_matmul(const LowerContext &ctx, const Node &node, Halide::Func &func,
                               const std::vector<Halide::Var> &axes);

// Helpers shared by the rule files.
Halide::Expr halide_constant(const Node &constant);
std::vector<Halide::Expr> halide_order(const std::vector<Halide::Expr> &numpy_order);

}  // namespace hc::lowering
