// Internal to lowering: the rule tables that turn one node into Halide.
#pragma once

#include <Halide.h>

#include <functional>
#include <map>
#include <set>
#include <optional>
#include <vector>

#include "hcompile/fusion.h"
#include "hcompile/graph.h"
#include "hcompile/lowering.h"
#include "hcompile/symbols.h"

namespace hc::lowering {

// What a rule can ask about the graph being lowered. Implemented in lower.cpp.
// A float kernel scalar is declared as an unsigned integer Param holding its bits, read through a
// reinterpret. Halide's interval analysis treats a reinterpret as the whole type, so it never
// reasons with the value: its intervals assume ordered values, and a NaN (an immediate, or a
// Param at run time) made a select's interval [NaN, NaN], from which skip_stages derived that a
// stage was never used and skipped it (fuzz seed 3, program 167992). The scalar's storage is
// the float's bits either way (KernelScalar).
Halide::Param<> float_scalar_param(DType dtype, const std::string &name);
Halide::Expr float_scalar_value(DType dtype, const Halide::Param<> &param);

// fast_math: node `n`'s float32 exp, tanh, division or reciprocal (1 / x included) as one
// marked call, which a lowering pass makes approximate inside GPU kernels and exact on the host
// (gpu_fast_math.cpp); an undefined Expr for every other operation.
Halide::Expr fast_math_marker(const Graph &graph, const Node &n, const std::vector<Halide::Expr> &operands);

// On a GPU: node `n`'s float32 division by a 0-d value as one marked call, which a lowering pass
// computes with the divisor's reciprocal once inside GPU kernels, NumPy-exact
// (gpu_scalar_division.cpp); an undefined Expr for every other operation.
Halide::Expr scalar_division_marker(const Graph &graph, const Node &n, const std::vector<Halide::Expr> &operands);

// On a GPU: node `n`'s float32 tanh as one marked call, which a lowering pass computes inside GPU
// kernels with a refined reciprocal estimate and on the host as math::tanh (gpu_tanh.cpp); an
// undefined Expr for every other operation.
Halide::Expr gpu_tanh_marker(const Node &n, const std::vector<Halide::Expr> &operands);

class LowerContext {
public:
    LowerContext(const Graph &graph, const Partition &partition, const std::vector<Halide::Func> &funcs,
                 std::vector<LoweredScalar> &scalars, const SymbolicExtents &symbols)
        : graph(graph), symbols(symbols), partition_(partition), funcs_(funcs), scalars_(scalars),
          inputs_(graph.num_nodes()), constants_(graph.num_nodes()), built_(graph.num_nodes()) {}

    const Graph &graph;
    const SymbolicExtents &symbols;

    // The extent of a node's NumPy axis: a constant, or for a symbolic extent (symbols.h) the
    // call argument's extent it is read from. Every input is set before any other node asks.
    Halide::Expr extent(const Node &node, int axis) const;
    // Symbol k's value at run time (int32: Halide's extents).
    Halide::Expr symbol_value(int k) const;

    // Value of node `id` at a NumPy-order index (one Expr per axis of that node): a call of its
    // Func for a region root, a load or constant for a leaf, else the node's own expression
    // built in place (fused).
    Halide::Expr at(NodeId id, const std::vector<Halide::Expr> &index) const;

    // The expression of a non-leaf elementwise or layout node at `index`, its operands read
    // through at(): a region root's definition, or a fused node's inlined value.
    Halide::Expr compute(const Node &node, const std::vector<Halide::Expr> &index) const;

    // Leaves are read directly, not through a Func: an input's ImageParam, a constant's value.
    void set_input(NodeId id, int arg, const Halide::ImageParam &param, InputLayout layout) {
        inputs_[id] = param;
        params_by_arg_.emplace(arg, param);
        if (layout != InputLayout::Strided) dense_inputs_.insert(id);
        if (layout == InputLayout::CContiguous) contiguous_inputs_.insert(id);
    }
    // The ImageParam of an input whose innermost stride is one element (a BLAS operand as it
    // is), or null.
    const Halide::ImageParam *dense_input(NodeId id) const { return dense_inputs_.count(id) ? &inputs_[id] : nullptr; }
    // The ImageParam of a C-contiguous input (any row-major reshape of it is the same memory), or
    // null.
    const Halide::ImageParam *contiguous_input(NodeId id) const {
        return contiguous_inputs_.count(id) ? &inputs_[id] : nullptr;
    }

    // The Func of a region root computed at the root (not per row of another region), or null.
    const Halide::Func *stored_region(NodeId id) const {
        const bool per_row = row_root_of(partition_, id) >= 0;
        return partition_.materialized[id] && op_class(graph.node(id).kind) != OpClass::Leaf && !per_row
                   ? &funcs_[id] : nullptr;
    }

    // Whether node `id` is stored (a region's root), not fused into its readers.
    bool stored(NodeId id) const { return partition_.materialized[id]; }

    // Claims `order` (the region's axes, outermost first, axes of one element left out) as the
    // memory layout of region `id`, read whole as a matrix by a library call (reduction_rules'
    // operand_view). True where unclaimed or claimed the same: a region has one layout, and a
    // call reading it as a matrix relies on it.
    bool claim_layout(NodeId id, const std::vector<int> &order) const {
        return layouts_.emplace(id, order).first->second == order;
    }

    // Matrix products lowered as library calls (lower_matmul; decided before lowering).
    std::set<NodeId> library_calls;
    // Lowering for a GPU target (lower_to_halide's for_gpu).
    bool for_gpu = false;
    // float32 exp, tanh and division marked for the GPU's approximate instructions
    // (fast_math_marker; lower_to_halide's fast_math).
    bool fast_math = false;
    // The pipeline's user context, as the cuBLAS extern stages take it: one Expr for all of them
    // (each user_context_value() is a parameter of its own, and Halide refuses two of one name).
    Halide::Expr user_context = Halide::user_context_value();
    void set_constant(NodeId id, const Halide::Expr &value) { constants_[id] = value; }

    // A float constant as a kernel scalar argument (see LoweredScalar): Halide never sees its
    // value, so it cannot fold it into a division by a constant zero, which its code generator
    // refuses although IEEE (and NumPy) define it.
    Halide::Expr scalar_argument(DType dtype, double value) const;

    // `value` with every NaN immediate replaced by a kernel scalar (see float_scalar_param).
    Halide::Expr without_nan_immediates(const Halide::Expr &value) const;

    // Op units of fused expressions built so far (each distinct (node, index) counted once).
    int64_t inlined_units() const { return inlined_units_; }

private:
    const Partition &partition_;
    const std::vector<Halide::Func> &funcs_;  // region roots, by node id
    std::vector<LoweredScalar> &scalars_;     // the kernel's scalar arguments
    std::vector<Halide::ImageParam> inputs_;  // by node id
    std::map<int, Halide::ImageParam> params_by_arg_;
    std::set<NodeId> dense_inputs_;
    std::set<NodeId> contiguous_inputs_;
    mutable std::map<NodeId, std::vector<int>> layouts_;   // claim_layout's
    std::vector<Halide::Expr> constants_;     // by node id
    // Fused values already built, by node: (index, value). An elementwise consumer passes its
    // own index on, so a value read twice at one index is built once and shared (Halide's CSE
    // then names it); reads at distinct indices (slices, transposes) are distinct copies, whose
    // number the partitioner bounds.
    mutable std::vector<std::vector<std::pair<std::vector<Halide::Expr>, Halide::Expr>>> built_;

    // A load at a constant index (every load of a 0-d input; a[i, j] with constant i, j) is a
    // single point to Halide's bounds inference, which then carries every value computed from
    // it as a whole expression (a tree) instead of an interval: a let chain reusing its values
    // (repeated squaring, x = x*x + x) grows exponentially and a long one quadratically. Such
    // loads are read from one Func per input instead, computed first, whose update definition
    // leaves it without value bounds: bounds inference then sees only the type's range. Halide
    // wants a Func defined before it is called, so the Func is defined at the first such load
    // over a table of indices filled in as loads come (read when the pipeline is compiled).
    struct PointLoads {
        std::vector<std::vector<int64_t>> indices;  // by slot, NumPy order
        Halide::Buffer<int32_t> table;              // (slot, axis), kMaxPointLoads slots
        Halide::Func func;
    };
    Halide::Expr point_load(NodeId input, const std::vector<int64_t> &index) const;
    mutable std::map<NodeId, PointLoads> point_loads_;

public:
    // The point-load Funcs, which every schedule computes at root, first (LoweredPipeline).
    std::vector<Halide::Func> point_load_funcs() const {
        std::vector<Halide::Func> funcs;
        for (const auto &[input, loads] : point_loads_) funcs.push_back(loads.func);
        return funcs;
    }

private:
    mutable int64_t inlined_units_ = 0;
};

// Scalar rule for an elementwise op: operand values in, result value out.
using ElementwiseRule = std::function<Halide::Expr(const Node &, const std::vector<Halide::Expr> &)>;
const ElementwiseRule *find_elementwise_rule(OpKind kind);

// Index rule for a layout op: output index (NumPy order) in, input index out.
using LayoutRule = std::function<std::vector<Halide::Expr>(const Graph &, const Node &,
                                                           const std::vector<Halide::Expr> &)>;
const LayoutRule *find_layout_rule(OpKind kind);

// slice_update's value at `index` (update_rules.cpp).
Halide::Expr slice_update(const LowerContext &ctx, const Node &node, const std::vector<Halide::Expr> &index);

// An integer power defines `f` from its base's own Func, returned for the scheduler
// (elementwise_rules.cpp).
Halide::Func define_integer_power(const LowerContext &ctx, const Node &node, Halide::Func &f,
                          const std::vector<Halide::Expr> &index, const std::vector<Halide::Expr> &lhs);

// Reductions and matmul define `func` (pure + update) over `axes` (NumPy order), returning the
// reduction domain they used and whether the update is safe to reassociate.
struct ReductionLowering {
    Halide::RDom rdom;
    std::vector<int64_t> rextents;  // innermost first
    std::vector<Halide::RDom> product_rdoms;  // matmul: each product's domain (update i of accumulator)
    bool reduces_innermost = false;
    bool associative = false;
    Halide::Func accumulator;  // matmul: the Func holding the update (f itself is a pure copy)
    std::optional<BlockedSum> blocked_sum;  // float sums
    std::optional<LaneParts> lane_parts;    // GPU arg reductions
    bool library_call = false;                     // matmul: `accumulator` is a BLAS extern stage
    std::vector<Halide::Func> library_operands;    // its operands stored for it
    std::vector<Halide::Func> product_operands;    // matmul on the GPU, batched: a and b as Funcs
};
ReductionLowering lower_reduction(const LowerContext &ctx, const Node &node, Halide::Func &func,
                                  const std::vector<Halide::Var> &axes);
ReductionLowering lower_matmul(const LowerContext &ctx, const Node &node, Halide::Func &func,
                               const std::vector<Halide::Var> &axes);

// Helpers shared by the rule files.
Halide::Expr halide_constant(const Node &constant);
std::vector<Halide::Expr> halide_order(const std::vector<Halide::Expr> &numpy_order);

}  // namespace hc::lowering
