// Reductions and matmul: a pure initial value plus an update over a reduction domain.
#include <algorithm>
#include <set>

#include "rules.h"

namespace hc::lowering {

namespace {

using Halide::Expr;
using Halide::select;

// Output index (NumPy order) of a reduction: the axes it keeps, in order.
std::vector<Expr> kept_index(const Node &x, const std::set<int64_t> &reduced, bool keepdims,
                             const std::vector<Halide::Var> &axes) {
    std::vector<Expr> kept;
    size_t a = 0;
    for (int i = 0; i < x.ndim(); ++i) {
        if (!reduced.count(i)) {
            kept.push_back(axes[a++]);
        } else if (keepdims) {
            ++a;  // the kept size-1 axis: its index is always 0 and plays no part
        }
    }
    return kept;
}

// A reduction domain over `reduced` axes of `x`, innermost axis first (Halide order).
Halide::RDom make_rdom(const Node &x, const std::set<int64_t> &reduced, std::vector<int64_t> &extents,
                       const std::string &name) {
    std::vector<Halide::Range> ranges;
    for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
        ranges.emplace_back(0, static_cast<int>(x.shape[*it]));
        extents.push_back(x.shape[*it]);
    }
    return Halide::RDom(ranges, name);
}

// Input index: reduced axes walk the domain, others follow the output.
std::vector<Expr> input_index(const Node &x, const std::set<int64_t> &reduced, const Halide::RDom &r,
                              const std::vector<Expr> &kept) {
    std::vector<Expr> index(x.ndim());
    int rdim = static_cast<int>(reduced.size()) - 1;  // reduced axes in NumPy order map to r[rdim..0]
    size_t k = 0;
    for (int i = 0; i < x.ndim(); ++i) {
        index[i] = reduced.count(i) ? Expr(r[rdim--]) : kept[k++];
    }
    return index;
}

std::vector<Expr> halide_vars(const std::vector<Halide::Var> &axes) {
    std::vector<Expr> v(axes.begin(), axes.end());
    std::reverse(v.begin(), v.end());
    return v;
}

// a * b + c with one rounding where the target has FMA instructions (NumPy's BLAS uses them
// too), else a * b + c. Pipelines compile in strict float mode (ieee_target), in which LLVM
// contracts nothing itself; Halide has no fma operator, so this calls LLVM's intrinsic, which
// Halide scalarizes and LLVM's SLP vectorizer puts back together into vector FMAs.
Expr fused_multiply_add(const Expr &a, const Expr &b, const Expr &c) {
    Halide::Type t = a.type();
    using Halide::Internal::Call;
    Expr fma = Call::make(t, t.bits() == 32 ? "llvm.fma.f32" : "llvm.fma.f64", {a, b, c}, Call::PureExtern);
    Expr has_fma = Call::make(Halide::Bool(), Call::target_has_feature,
                              {Halide::Internal::make_const(Halide::Int(32), Halide::Target::FMA)}, Call::PureIntrinsic);
    return select(has_fma, fma, a * b + c);
}

Expr lowest(Halide::Type t) {
    return t.is_float() ? Halide::Internal::make_const(t, -std::numeric_limits<double>::infinity()) : t.min();
}
Expr highest(Halide::Type t) {
    return t.is_float() ? Halide::Internal::make_const(t, std::numeric_limits<double>::infinity()) : t.max();
}

}  // namespace

ReductionLowering lower_reduction(const LowerContext &ctx, const Node &n, Halide::Func &f,
                                  const std::vector<Halide::Var> &axes) {
    const Node &x = ctx.graph.node(n.inputs[0]);
    std::set<int64_t> reduced;
    if (n.kind == OpKind::Argmax || n.kind == OpKind::Argmin) {
        reduced.insert(n.int_attr("axis"));
    } else {
        const auto &list = n.ints_attr("axes");
        reduced.insert(list.begin(), list.end());
    }
    bool keepdims = n.int_attr("keepdims") != 0;
    ReductionLowering out;
    out.rdom = make_rdom(x, reduced, out.rextents, "r" + std::to_string(n.id));
    out.reduces_innermost = x.ndim() > 0 && reduced.count(x.ndim() - 1);
    std::vector<Expr> lhs = halide_vars(axes);
    std::vector<Expr> kept = kept_index(x, reduced, keepdims, axes);
    Expr v = ctx.at(x.id, input_index(x, reduced, out.rdom, kept));
    Halide::Type t = halide_type(n.dtype);
    Halide::Type xt = v.type();

    // The update lives in its own Func (`acc`); `f` reads the answer out of it. The scheduler
    // places `acc` and may rfactor it when the update is associative.
    Halide::Func acc("acc_" + std::to_string(n.id));
    out.accumulator = acc;
    out.associative = true;
    switch (n.kind) {
    case OpKind::Sum:
        acc(lhs) = Halide::Internal::make_zero(t);
        acc(lhs) = acc(lhs) + v;
        f(lhs) = acc(lhs);
        break;
    case OpKind::Prod:
        acc(lhs) = Halide::Internal::make_one(t);
        acc(lhs) = acc(lhs) * v;
        f(lhs) = acc(lhs);
        break;
    case OpKind::Any:
        acc(lhs) = Halide::cast(Halide::Bool(), false);
        acc(lhs) = acc(lhs) || v;
        f(lhs) = acc(lhs);
        break;
    case OpKind::All:
        acc(lhs) = Halide::cast(Halide::Bool(), true);
        acc(lhs) = acc(lhs) && v;
        f(lhs) = acc(lhs);
        break;
    case OpKind::Max:
    case OpKind::Min: {
        bool is_max = n.kind == OpKind::Max;
        if (t.is_float()) {
            // NaN propagates. A plain max/min plus a separate "saw a NaN" flag keeps both halves
            // of the tuple associative, so the reduction still vectorizes through rfactor.
            acc(lhs) = Halide::Tuple(is_max ? lowest(t) : highest(t), Halide::cast(Halide::Bool(), false));
            acc(lhs) = Halide::Tuple(is_max ? Halide::max(acc(lhs)[0], v) : Halide::min(acc(lhs)[0], v),
                                     acc(lhs)[1] || Halide::is_nan(v));
            f(lhs) = select(acc(lhs)[1], Halide::Internal::make_const(t, std::numeric_limits<double>::quiet_NaN()),
                            acc(lhs)[0]);
        } else if (t.is_bool()) {
            acc(lhs) = Halide::cast(Halide::Bool(), !is_max);
            acc(lhs) = is_max ? (acc(lhs) || v) : (acc(lhs) && v);
            f(lhs) = acc(lhs);
        } else {
            acc(lhs) = is_max ? lowest(t) : highest(t);
            acc(lhs) = is_max ? Halide::max(acc(lhs), v) : Halide::min(acc(lhs), v);
            f(lhs) = acc(lhs);
        }
        break;
    }
    case OpKind::Argmax:
    case OpKind::Argmin: {
        bool is_max = n.kind == OpKind::Argmax;
        Expr value = xt.is_bool() ? Halide::cast(Halide::UInt(8), v) : v;
        Halide::Type vt = value.type();
        acc(lhs) = Halide::Tuple(is_max ? lowest(vt) : highest(vt), Halide::cast(Halide::Int(64), 0));
        Expr better = is_max ? value > acc(lhs)[0] : value < acc(lhs)[0];
        if (vt.is_float()) better = better || (Halide::is_nan(value) && !Halide::is_nan(acc(lhs)[0]));
        // The first occurrence wins: only a strictly better value moves the index.
        Expr position = Halide::cast(Halide::Int(64), out.rdom.x);
        if (vt.is_float()) better = Halide::strict_float(better);  // NaN comparisons must stay IEEE
        acc(lhs) = Halide::Tuple(select(better, value, acc(lhs)[0]), select(better, position, acc(lhs)[1]));
        f(lhs) = acc(lhs)[1];
        out.associative = false;
        break;
    }
    default:
        throw GraphError(std::string("no reduction rule for ") + op_name(n.kind));
    }
    return out;
}

ReductionLowering lower_matmul(const LowerContext &ctx, const Node &n, Halide::Func &f,
                               const std::vector<Halide::Var> &axes) {
    const Node &a = ctx.graph.node(n.inputs[0]);
    const Node &b = ctx.graph.node(n.inputs[1]);
    int nd = n.ndim();
    int64_t k_extent = a.shape[nd - 1];
    ReductionLowering out;
    out.rdom = Halide::RDom(0, static_cast<int>(k_extent), "k" + std::to_string(n.id));
    out.rextents = {k_extent};
    std::vector<Expr> ai(axes.begin(), axes.end()), bi(axes.begin(), axes.end());
    ai[nd - 1] = out.rdom.x;  // a[..., m, k]
    bi[nd - 2] = out.rdom.x;  // b[..., k, n]
    std::vector<Expr> lhs = halide_vars(axes);
    Expr av = ctx.at(a.id, ai), bv = ctx.at(b.id, bi);
    Halide::Type t = halide_type(n.dtype);
    // The sum lives in its own Func so the scheduler can keep a tile of it in registers.
    Halide::Func acc("acc_" + std::to_string(n.id));
    if (t.is_bool()) {
        acc(lhs) = Halide::cast(Halide::Bool(), false);
        acc(lhs) = acc(lhs) || (av && bv);
    } else {
        acc(lhs) = Halide::Internal::make_zero(t);
        acc(lhs) = t.is_float() ? fused_multiply_add(av, bv, acc(lhs)) : acc(lhs) + av * bv;
    }
    f(lhs) = acc(lhs);
    out.accumulator = acc;
    out.associative = true;
    return out;
}

}  // namespace hc::lowering
