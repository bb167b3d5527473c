// Lowering driver: walks the graph in order and gives every region root (and leaf) a Halide Func
// through the rule tables (elementwise, layout, reduction/matmul); a fused node gets no Func of
// its own: its expression is built in place inside the Funcs that read it (LowerContext::at).
// One Func per node would leave Halide to inline them one at a time, each a pass over the whole
// pipeline: quadratic in the length of a chain. Inputs become ImageParams specialised on the
// static shapes and layouts the runtime guards.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>

#include "hcompile/lowering.h"
#include "rules.h"

namespace hc {

namespace lowering {

std::vector<Halide::Expr> halide_order(const std::vector<Halide::Expr> &numpy_order) {
    return {numpy_order.rbegin(), numpy_order.rend()};
}

namespace {

// Whether `e` computes something (as opposed to naming a value: a variable, a constant, a
// parameter, a load).
bool is_computation(const Halide::Expr &e) {
    if (Halide::Internal::is_const(e) || e.as<Halide::Internal::Variable>()) return false;
    if (const auto *call = e.as<Halide::Internal::Call>()) {
        return !(call->call_type == Halide::Internal::Call::Halide || call->call_type == Halide::Internal::Call::Image);
    }
    return true;
}

bool same_index(const std::vector<Halide::Expr> &a, const std::vector<Halide::Expr> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (!a[i].same_as(b[i]) && !Halide::Internal::equal(a[i], b[i])) return false;
    }
    return true;
}

// The reads in `e`: loads of inputs and Funcs (name and index), and parameters (no index).
std::vector<std::pair<std::string, std::vector<Halide::Expr>>> reads_of(const Halide::Expr &e) {
    struct Collect : Halide::Internal::IRGraphVisitor {
        std::vector<std::pair<std::string, std::vector<Halide::Expr>>> reads;
        using IRGraphVisitor::visit;
        void visit(const Halide::Internal::Call *op) override {
            if (op->call_type == Halide::Internal::Call::Halide || op->call_type == Halide::Internal::Call::Image) {
                reads.emplace_back(op->name, op->args);
            }
            IRGraphVisitor::visit(op);
        }
        void visit(const Halide::Internal::Variable *op) override {
            if (op->param.defined()) reads.emplace_back(op->name, std::vector<Halide::Expr>{});
        }
    } collect;
    e.accept(&collect);
    return collect.reads;
}

// Whether two reads are of different elements: one name, indices a nonzero constant apart.
bool apart(const std::vector<Halide::Expr> &a, const std::vector<Halide::Expr> &b) {
    for (size_t d = 0; d < a.size() && d < b.size(); ++d) {
        Halide::Expr gap = Halide::Internal::simplify(a[d] - b[d]);
        if (Halide::Internal::is_const(gap) && !Halide::Internal::is_const_zero(gap)) return true;
    }
    return false;
}

// Whether `a` reads something `b` cannot: an element no read in `b` might be.
bool reads_something_else(const Halide::Expr &a, const Halide::Expr &b) {
    auto in_b = reads_of(b);
    for (const auto &[name, index] : reads_of(a)) {
        bool maybe_in_b = std::any_of(in_b.begin(), in_b.end(), [&](const auto &read) {
            return read.first == name && read.second.size() == index.size() && !apart(read.second, index);
        });
        if (!maybe_in_b) return true;
    }
    return false;
}

// Whether Halide's simplifier might find two float operands of a subtraction equal, and fold
// their difference to 0 for NaN and inf too (float_subtract, which costs a few instructions, is
// then needed): not when one reads an element the other cannot (different inputs, or one input
// at indices a constant apart: a stencil's u[i + 1] - 2 * u[i]).
bool may_fold_equal(const Halide::Expr &a, const Halide::Expr &b) {
    return !reads_something_else(a, b) && !reads_something_else(b, a);
}

}  // namespace

Halide::Expr LowerContext::at(NodeId id, const std::vector<Halide::Expr> &index) const {
    const Node &n = graph.node(id);
    if (n.kind == OpKind::Input) {
        // An axis of extent 1 is read at 0 whatever the index says (a valid read is at 0, and
        // Halide would fold the loop to that point anyway): an input of one element is then a
        // point load like a 0-d one, not a point Halide's bounds inference carries as a tree.
        std::vector<int64_t> constant;
        for (size_t d = 0; d < index.size(); ++d) {
            auto c = n.shape[d] == 1 ? std::optional<int64_t>(0)
                                     : Halide::Internal::as_const_int(Halide::Internal::simplify(index[d]));
            if (!c) return inputs_[id](halide_order(index));
            constant.push_back(*c);
        }
        return point_load(id, constant);
    }
    if (op_class(n.kind) == OpClass::Leaf) return constants_[id];
    if (partition_.materialized[id]) return funcs_[id](halide_order(index));
    for (const auto &[seen, value] : built_[id]) {
        if (same_index(seen, index)) return value;
    }
    Halide::Expr value = compute(n, index);
    built_[id].emplace_back(index, value);
    inlined_units_ += op_units(n);
    return value;
}

Halide::Expr LowerContext::extent(const Node &node, int axis) const {
    const int k = symbols.symbol_of(node.shape[axis]);
    if (k < 0) return Halide::Expr(static_cast<int>(node.shape[axis]));
    const int64_t offset = symbols.offset_of(node.shape[axis]);
    return offset == 0 ? symbol_value(k) : symbol_value(k) + static_cast<int>(offset);
}

Halide::Expr LowerContext::symbol_value(int k) const {
    const SymbolSource &source = symbols.loaded.at(k);
    auto it = params_by_arg_.find(source.arg);
    if (it == params_by_arg_.end()) throw GraphError("symbolic extent " + std::to_string(k) + " is not loaded");
    const Halide::ImageParam &param = it->second;
    return param.dim(param.dimensions() - 1 - source.axis).extent();
}

namespace {
// Slots of one input's table of constant-index loads; past them, loads are direct.
constexpr int kMaxPointLoads = 4096;
}  // namespace

Halide::Expr LowerContext::point_load(NodeId input, const std::vector<int64_t> &index) const {
    const Node &n = graph.node(input);
    PointLoads &loads = point_loads_[input];
    if (!loads.func.defined()) {
        loads.func = Halide::Func("points_" + std::to_string(input));
        Halide::Var slot("slot");
        std::vector<Halide::Expr> at;  // NumPy order
        if (n.ndim() > 0) {
            loads.table = Halide::Buffer<int32_t>(kMaxPointLoads, n.ndim(), "point_indices_" + std::to_string(input));
            for (int d = 0; d < n.ndim(); ++d) {
                // Clamped into the array, so that bounds inference asks for no more than it.
                at.push_back(Halide::clamp(loads.table(slot, d), 0, Halide::max(extent(n, d), 1) - 1));
            }
        }
        loads.func(slot) = inputs_[input](halide_order(at));
        loads.func(slot) = loads.func(slot);  // an update: no value bounds (see PointLoads)
    }
    auto it = std::find(loads.indices.begin(), loads.indices.end(), index);
    if (it == loads.indices.end()) {
        if (loads.indices.size() >= static_cast<size_t>(kMaxPointLoads)) {
            std::vector<Halide::Expr> direct(index.begin(), index.end());
            return inputs_[input](halide_order(direct));
        }
        for (int d = 0; d < n.ndim(); ++d) loads.table(static_cast<int>(loads.indices.size()), d) = static_cast<int32_t>(index[d]);
        loads.indices.push_back(index);
        it = loads.indices.end() - 1;
    }
    return loads.func(static_cast<int>(it - loads.indices.begin()));
}

Halide::Expr LowerContext::compute(const Node &n, const std::vector<Halide::Expr> &index) const {
    if (op_class(n.kind) == OpClass::Layout) {
        // Simplified so that equal indices reached through different layout ops compare equal.
        std::vector<Halide::Expr> in = (*find_layout_rule(n.kind))(graph, n, index);
        for (Halide::Expr &e : in) e = Halide::Internal::simplify(e);
        return at(n.inputs[0], in);
    }
    if (n.kind == OpKind::SliceUpdate) return slice_update(*this, n, index);
    const auto *rule = find_elementwise_rule(n.kind);
    if (op_class(n.kind) != OpClass::Elementwise || !rule) {
        throw GraphError(std::string("no lowering rule for ") + op_name(n.kind));
    }
    // Each operand that is itself a computation is bound to a name first. Rules use an operand
    // several times (a float -> uint32 cast reads it 8 times, max/min and where twice), and
    // Halide's passes that substitute lets walk such reuse as a tree: a chain of a few
    // multi-use rules over a math function compiled for minutes (arctan2(x ** -2.5, x) cast to
    // uint32). Named, every operand is one variable however often a rule reads it.
    //
    // The lets stay one flat chain: an operand's own lets are lifted into this node's chain (its
    // names are unique, so one it shares with another operand is bound once). Nested, a value
    // read by two operands sat inside two let values, and Halide's let removal (in its CSE, run
    // by every Func definition) starts afresh inside each let: a chain of `x = x - x // 3`
    // steps took twice as long per step (24 steps compiled for minutes).
    std::vector<Halide::Expr> operands, values;
    std::vector<std::pair<std::string, Halide::Expr>> lets;
    std::set<std::string> bound;
    bool constant_operands = true;
    for (NodeId in : n.inputs) {
        Halide::Expr e = at(in, index);
        values.push_back(e);  // with its lets, whose values name what it reads
        while (const auto *let = e.as<Halide::Internal::Let>()) {
            if (bound.insert(let->name).second) lets.emplace_back(let->name, let->value);
            e = let->body;
        }
        constant_operands = constant_operands && Halide::Internal::is_const(e);
        if (is_computation(e)) {
            // An operand read twice (x == x) keeps one name, so a rule still sees it is one value.
            auto same = std::find_if(lets.begin(), lets.end(), [&](const auto &let) { return let.second.same_as(e); });
            if (same == lets.end()) {
                lets.emplace_back(Halide::Internal::unique_name('v'), e);
                bound.insert(lets.back().first);
                same = lets.end() - 1;
            }
            e = Halide::Internal::Variable::make(e.type(), same->first);
        }
        operands.push_back(e);
    }
    // The Sub rule spells a float subtraction NaN-safely (float_subtract); where the operands
    // read different elements, Halide cannot fold them equal and the plain instruction is exact.
    bool plain_float_subtraction = n.kind == OpKind::Sub && values[0].type().is_float() &&
                                   !may_fold_equal(values[0], values[1]);
    Halide::Expr marked = fast_math ? fast_math_marker(graph, n, operands) : Halide::Expr();
    if (!marked.defined() && for_gpu) marked = scalar_division_marker(graph, n, operands);
    if (!marked.defined() && for_gpu) marked = gpu_tanh_marker(n, operands);
    Halide::Expr value = without_nan_immediates(plain_float_subtraction ? operands[0] - operands[1]
                                                : marked.defined()       ? marked
                                                                         : (*rule)(n, operands));
    // Halide folds operations on immediates as it builds them (the cast of an integer array's
    // constant isnan to float64 is 0.0), and its simplifier folds the rest later; a float constant
    // that reached a division would then be a division by a constant zero, which Halide's code
    // generator refuses (`a / np.isnan(int_array)`: NumPy gives inf and nan). A float value that
    // is constant (built from constants, or by a rule that ignores its operand) is therefore
    // passed as a kernel scalar, as the graph's own float constants are. Only bool and integer
    // values stay immediates, and operations on them fold exactly.
    if (constant_operands || Halide::Internal::is_const(value)) {  // (a constant reads no named operand)
        value = Halide::Internal::simplify(value);
        if (value.type().is_float()) {
            if (auto c = Halide::Internal::as_const_float(value)) {
                return scalar_argument(float_dtype(value.type()), *c);
            }
        }
        return value;
    }
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) {
        value = Halide::Internal::Let::make(it->first, it->second, value);
    }
    return value;
}

Halide::Param<> float_scalar_param(DType dtype, const std::string &name) {
    return Halide::Param<>(Halide::UInt(halide_type(dtype).bits()), name);
}

Halide::Expr float_scalar_value(DType dtype, const Halide::Param<> &param) {
    return Halide::reinterpret(halide_type(dtype), param);
}

Halide::Expr LowerContext::scalar_argument(DType dtype, double value) const {
    for (const LoweredScalar &s : scalars_) {
        if (s.dtype == dtype && std::memcmp(&s.value, &value, sizeof value) == 0) return float_scalar_value(dtype, s.param);
    }
    LoweredScalar scalar{dtype, value, float_scalar_param(dtype, "folded" + std::to_string(scalars_.size()))};
    scalars_.push_back(scalar);
    return float_scalar_value(dtype, scalar.param);
}

Halide::Expr LowerContext::without_nan_immediates(const Halide::Expr &value) const {
    // A graph mutator: each shared node once. The math rules build DAGs whose trees are huge
    // (float64 pow's double-double steps: lowering `a ** a` walked it for 7 s, 0.01 s now).
    class ReplaceNaNs : public Halide::Internal::IRGraphMutator {
    public:
        explicit ReplaceNaNs(const LowerContext &ctx) : ctx_(ctx) {}
        using IRGraphMutator::visit;
        Halide::Expr visit(const Halide::Internal::FloatImm *op) override {
            if (!std::isnan(op->value)) return op;
            return ctx_.scalar_argument(float_dtype(op->type), op->value);
        }

    private:
        const LowerContext &ctx_;
    };
    ReplaceNaNs replace(*this);
    return replace.mutate(value);
}

Halide::Expr halide_constant(const Node &c) {
    Halide::Type t = halide_type(c.dtype);
    const AttrValue &v = c.attrs.at("value");
    if (auto *i = std::get_if<int64_t>(&v)) {
        if (t.is_bool()) return Halide::cast(t, *i != 0);
        // make_const takes int64 exactly; wider unsigned values arrive as their two's complement.
        return t.is_uint() && t.bits() == 64 ? Halide::Expr(static_cast<uint64_t>(*i)) : Halide::Internal::make_const(t, *i);
    }
    double d = std::get<double>(v);
    if (t.is_bool()) return Halide::cast(t, d != 0);
    return Halide::Internal::make_const(t, d);
}

}  // namespace lowering

namespace {

using lowering::LowerContext;

std::vector<Halide::Var> make_axes(const Node &n) {
    std::vector<Halide::Var> axes;
    for (int i = 0; i < n.ndim(); ++i) axes.emplace_back("n" + std::to_string(n.id) + "_a" + std::to_string(i));
    return axes;
}

std::vector<Halide::Expr> as_exprs(const std::vector<Halide::Var> &axes) { return {axes.begin(), axes.end()}; }

// The index a Func's definition reads its operands at: an axis of extent 1 is at 0. Halide folds
// such a loop to its one point, and a value read at a point is carried through bounds inference
// as a whole expression (a tree, exponential in a squaring chain); read at a constant here, the
// inputs go through point_load, whose values have no bounds.
std::vector<Halide::Expr> definition_index(const Node &n, const std::vector<Halide::Var> &axes) {
    std::vector<Halide::Expr> index = as_exprs(axes);
    for (size_t d = 0; d < index.size(); ++d) {
        if (n.shape[d] == 1) index[d] = 0;
    }
    return index;
}

// The scheduler's view of a materialized Func: its dimensions in Halide order.
RegionFunc region_of(const LowerContext &ctx, const Node &n, Halide::Func f, const std::vector<Halide::Var> &axes) {
    RegionFunc region;
    region.node = n.id;
    region.op_class = op_class(n.kind);
    region.func = f;
    region.vars.assign(axes.rbegin(), axes.rend());
    for (int d = n.ndim() - 1; d >= 0; --d) {
        const int symbol = ctx.symbols.symbol_of(n.shape[d]);
        const bool symbolic = symbol >= 0;
        region.extent_symbols.emplace_back(symbol, symbolic ? ctx.symbols.offset_of(n.shape[d]) : 0);
        region.extents.push_back(symbolic ? kScheduledSymbolicExtent : n.shape[d]);
        region.extent_exprs.push_back(ctx.extent(n, d));
        region.symbolic = region.symbolic || symbolic;
        if (symbolic && region.extents.size() <= 64) region.symbolic_axes |= uint64_t{1} << (region.extents.size() - 1);
    }
    return region;
}

// Says what every caller's buffer for `n` looks like (the dispatcher's NumPy arrays, run_on_cuda's
// device arrays): coordinates from 0 and, for C-contiguous ones, dense strides (a size-1 or empty
// axis counted as 1, as the callers describe them); `exact_extents`: the static extents too.
// Halide then knows a vector's alignment from its index: the GPU's 128-bit loads and stores need
// that (with an unknown output min or stride every access was a 4-byte one). Outputs leave their
// extents free: with them constant too, a reversed read in a vector loop's last partial step
// has a constant index, which Halide's code generator refuses (`np.negative(x[::-1])` of 20).
void describe_buffer(Halide::OutputImageParam p, const Node &n, InputLayout layout, const SymbolicExtents &symbols,
                     bool exact_extents) {
    // Halide dim d is NumPy axis ndim-1-d. Shapes are static per compiled entry, but for
    // symbolic extents (symbols.h), which the call's array supplies.
    Halide::Expr stride = 1;
    for (int d = 0; d < n.ndim(); ++d) {
        int64_t extent = n.shape[n.ndim() - 1 - d];
        bool symbolic = symbols.symbol_of(extent) >= 0;
        if (symbolic || !exact_extents) {
            p.dim(d).set_min(0);
        } else {
            p.dim(d).set_bounds(0, static_cast<int>(extent));
        }
        if (layout == InputLayout::CContiguous) {
            p.dim(d).set_stride(Halide::Internal::simplify(stride));
        } else if (d == 0 && layout == InputLayout::Strided) {
            p.dim(d).set_stride(Halide::Expr());  // lift Halide's default dense-innermost rule
        }
        stride = stride * (symbolic ? Halide::max(p.dim(d).extent(), 1)
                                    : Halide::Expr(static_cast<int>(std::max<int64_t>(extent, 1))));
    }
}

Halide::ImageParam make_input(const Node &n, InputLayout layout, const SymbolicExtents &symbols) {
    int arg = static_cast<int>(n.int_attr("arg"));
    Halide::ImageParam p(halide_type(n.dtype), n.ndim(), "arg" + std::to_string(arg));
    describe_buffer(p, n, layout, symbols, /*exact_extents=*/true);
    return p;
}

// Halide clamps a stored Func's value to the interval its bounds analysis gives when the value
// feeds an index (its clamp_unsafe_accesses pass; our math lowering indexes tables by values).
// For floats that interval can hold NaN (a select with a NaN arm, inf - inf), and clamping a
// value to it turns every element into NaN. A float's bit pattern round trip is free after
// simplification but opaque to the value-bounds analysis, which then sees the whole type.
Halide::Expr without_value_bounds(const Halide::Expr &value) {
    if (!value.type().is_float()) return value;
    const Halide::Type bits = Halide::UInt(value.type().bits(), value.type().lanes());
    return Halide::reinterpret(value.type(), Halide::reinterpret(bits, value));
}

}  // namespace

Halide::Target ieee_target(const Halide::Target &target) {
    return target.with_feature(Halide::Target::StrictFloat);
}

namespace {

// Row groups (Partition) by region index: each member's root.
void link_row_groups(const Partition &partition, LoweredPipeline &out) {
    std::vector<int> region_of_node(partition.materialized.size(), -1);
    for (size_t i = 0; i < out.regions.size(); ++i) region_of_node[out.regions[i].node] = static_cast<int>(i);
    for (RegionFunc &r : out.regions) {
        const NodeId root = row_root_of(partition, r.node);
        if (root >= 0) r.row_root = region_of_node[root];
        r.point_rows = marks(partition.point_rows, r.node);
    }
}

}  // namespace

LoweredPipeline lower_to_halide(const Graph &graph, const Partition &partition,
                                const std::vector<InputLayout> &layouts, const SymbolicExtents &symbols,
                                const std::vector<NodeId> &library_calls, bool for_gpu, bool fast_math) {
    LoweredPipeline out;
    out.node_funcs.resize(graph.num_nodes());
    LowerContext ctx(graph, partition, out.node_funcs, out.scalars, symbols);
    ctx.library_calls.insert(library_calls.begin(), library_calls.end());
    ctx.for_gpu = for_gpu;
    ctx.fast_math = for_gpu && fast_math;
    // Inputs first: any node may need a symbolic extent read from one (LowerContext::extent).
    for (const Node &n : graph.nodes()) {
        if (n.kind != OpKind::Input) continue;
        int arg = static_cast<int>(n.int_attr("arg"));
        InputLayout layout = arg < static_cast<int>(layouts.size()) ? layouts[arg] : InputLayout::CContiguous;
        LoweredInput input{arg, n.dtype, make_input(n, layout, symbols)};
        ctx.set_input(n.id, arg, input.param, layout);
        out.inputs.push_back(input);
    }
    for (const Node &n : graph.nodes()) {
        if (!partition.materialized[n.id] && op_class(n.kind) != OpClass::Leaf) continue;  // fused
        Halide::Func f(std::string(op_name(n.kind)) + "_" + std::to_string(n.id));
        std::vector<Halide::Var> axes = make_axes(n);
        std::vector<Halide::Expr> lhs = lowering::halide_order(as_exprs(axes));
        RegionFunc region = region_of(ctx, n, f, axes);
        switch (op_class(n.kind)) {
        case OpClass::Leaf:
            // Its Func only serves a leaf returned as an output; readers use ctx's direct value.
            if (n.kind == OpKind::Input) {
                // Set up before this loop.
            } else if (n.kind == OpKind::Extent) {
                Halide::Expr size = Halide::cast(Halide::Int(64), ctx.symbol_value(static_cast<int>(n.int_attr("symbol"))));
                ctx.set_constant(n.id, Halide::cast(halide_type(n.dtype), size * Halide::Expr(n.int_attr("scale")) +
                                                                           Halide::Expr(n.int_attr("offset"))));
            } else if (is_float(n.dtype)) {
                LoweredScalar scalar{n.dtype, constant_value(n),
                                     lowering::float_scalar_param(n.dtype, "c" + std::to_string(n.id))};
                ctx.set_constant(n.id, lowering::float_scalar_value(n.dtype, scalar.param));
                out.scalars.push_back(scalar);
            } else {
                ctx.set_constant(n.id, lowering::halide_constant(n));
            }
            f(lhs) = ctx.at(n.id, as_exprs(axes));
            break;
        case OpClass::Elementwise:
        case OpClass::Layout:
            if (n.kind == OpKind::Pow && !is_float(n.dtype)) {
                region.staged_operand = lowering::define_integer_power(ctx, n, f, definition_index(n, axes), lhs);
            } else {
                f(lhs) = without_value_bounds(ctx.compute(n, definition_index(n, axes)));
            }
            break;
        case OpClass::Reduction:
        case OpClass::Matmul: {
            auto r = op_class(n.kind) == OpClass::Matmul ? lowering::lower_matmul(ctx, n, f, axes)
                                              : lowering::lower_reduction(ctx, n, f, axes);
            region.rdom = r.rdom;
            region.rextents = r.rextents;
            region.product_rdoms = r.product_rdoms;
            region.reduces_innermost = r.reduces_innermost;
            region.associative_vectorizable = r.associative;
            region.accumulator = r.accumulator;
            region.blocked_sum = r.blocked_sum;
            region.lane_parts = r.lane_parts;
            region.library_call = r.library_call;
            region.library_operands = r.library_operands;
            region.product_operands = r.product_operands;
            for (const Halide::Func &operand : r.product_operands) out.see_through.push_back(operand.function());
            break;
        }
        }
        out.node_funcs[n.id] = f;
        if (partition.materialized[n.id]) {
            region.optional = marks(partition.optional, n.id);
            region.stored_by_default = marks(partition.stored_by_default, n.id);
            if (op_class(n.kind) != OpClass::Leaf) out.regions.push_back(region);
        }
    }
    link_row_groups(partition, out);

    // Outputs: a node's own Func, or a copy where Halide needs a distinct Func (an input or
    // constant returned as is, or the same node returned twice), or where other nodes read the
    // node: Halide reads an output buffer inside the pipeline as it reads its own allocations,
    // with aligned vector loads, and an output array (NumPy's, 16-byte aligned; an argument
    // written in place) need not be aligned so (a segfault, fuzz seed 3 program 86016). The
    // readers then read the node's own Func, and the output is written once, at the end.
    // A node returned twice is two copies of it, neither the node itself: the second copy would
    // read the first output's buffer, with loads Halide takes as aligned once it knows the
    // buffer's min and strides (describe_buffer; a segfault on `np.deg2rad(a), np.radians(a)`).
    std::vector<bool> read_inside(graph.num_nodes(), false);
    std::vector<int> times_returned(graph.num_nodes(), 0);
    for (const Node &m : graph.nodes()) {
        for (NodeId in : m.inputs) read_inside[in] = true;
    }
    for (NodeId id : graph.outputs()) ++times_returned[id];
    for (NodeId id : graph.outputs()) {
        const Node &n = graph.node(id);
        Halide::Func f = out.node_funcs[id];
        if (times_returned[id] > 1 || read_inside[id] || op_class(n.kind) == OpClass::Leaf) {
            Halide::Func copy("output_copy_" + std::to_string(out.outputs.size()));
            std::vector<Halide::Var> axes = make_axes(n);
            std::vector<Halide::Expr> lhs = lowering::halide_order(as_exprs(axes));
            copy(lhs) = f(lhs);
            RegionFunc region = region_of(ctx, n, copy, axes);
            region.op_class = OpClass::Elementwise;  // a plain copy, whatever `n` is
            out.regions.push_back(region);
            f = copy;
        } else if (for_gpu) {
            // A cuBLAS product returned as it is: the call writes the output array itself. Its
            // region's Func, a copy of the call's result, would be a kernel reading and writing
            // the whole product again (about 45 us for a 64 MB output on an H100); it is then
            // read by nothing (the schedule inlines it, as it does where kernels read the call).
            auto call = std::find_if(out.regions.begin(), out.regions.end(), [&](const RegionFunc &r) {
                return r.library_call && r.func.name() == f.name();
            });
            if (call != out.regions.end()) f = call->accumulator;
        }
        // Outputs are C-contiguous: new arrays, or arguments of that layout written in place.
        for (Halide::OutputImageParam buffer : f.output_buffers()) {
            describe_buffer(buffer, n, InputLayout::CContiguous, ctx.symbols, /*exact_extents=*/false);
        }
        out.outputs.push_back(f);
    }
    out.point_load_funcs = ctx.point_load_funcs();
    out.pipeline = Halide::Pipeline(out.outputs);
    add_ieee_zero_division_pass(out.pipeline);
    add_bfloat16_widening_pass(out.pipeline);
    out.for_gpu = for_gpu;
    if (for_gpu) {
        if (fast_math) add_gpu_fast_math_pass(out.pipeline);  // before the rounding pass fences its products
        add_gpu_scalar_division_pass(out.pipeline);
        add_gpu_tanh_pass(out.pipeline);
        add_gpu_rounding_pass(out.pipeline);
        add_gpu_libm_calls_pass(out.pipeline);
        add_gpu_narrow_vectors_pass(out.pipeline);
    }
    return out;
}

}  // namespace hc
