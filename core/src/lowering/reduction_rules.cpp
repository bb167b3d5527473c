// Reductions and matmul: a pure initial value plus an update over a reduction domain.
#include <algorithm>
#include <climits>
#include <iterator>
#include <set>

#include "hcompile/passes.h"
#include "numpy_math.h"
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

// A reduction domain over `reduced` axes of `x`, innermost axis first (Halide order); a
// symbolic extent (symbols.h) is read from the call, and `extents` gets its placeholder.
Halide::RDom make_rdom(const LowerContext &ctx, const Node &x, const std::set<int64_t> &reduced,
                       std::vector<int64_t> &extents, const std::string &name) {
    std::vector<Halide::Range> ranges;
    for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
        ranges.emplace_back(0, ctx.extent(x, static_cast<int>(*it)));
        extents.push_back(ctx.symbols.symbol_of(x.shape[*it]) >= 0 ? kScheduledSymbolicExtent : x.shape[*it]);
    }
    return Halide::RDom(ranges, name);
}

// Input index: reduced axes take `at` (one Expr per reduced axis, NumPy order), others follow
// the output.
std::vector<Expr> input_index(const Node &x, const std::set<int64_t> &reduced, const std::vector<Expr> &at,
                              const std::vector<Expr> &kept) {
    std::vector<Expr> index(x.ndim());
    size_t r = 0, k = 0;
    for (int i = 0; i < x.ndim(); ++i) index[i] = reduced.count(i) ? at[r++] : kept[k++];
    return index;
}

// Input index where the reduced axes walk the domain `r` (Halide order: r[0] is the innermost).
std::vector<Expr> input_index(const Node &x, const std::set<int64_t> &reduced, const Halide::RDom &r,
                              const std::vector<Expr> &kept) {
    std::vector<Expr> at;
    for (int d = static_cast<int>(reduced.size()) - 1; d >= 0; --d) at.push_back(r[d]);
    return input_index(x, reduced, at, kept);
}

std::vector<Expr> halide_vars(const std::vector<Halide::Var> &axes) {
    std::vector<Expr> v(axes.begin(), axes.end());
    std::reverse(v.begin(), v.end());
    return v;
}

Expr lowest(Halide::Type t) {
    return t.is_float() ? Halide::Internal::make_const(t, -std::numeric_limits<double>::infinity()) : t.min();
}
Expr highest(Halide::Type t) {
    return t.is_float() ? Halide::Internal::make_const(t, std::numeric_limits<double>::infinity()) : t.max();
}

// Float sums, blocked so that the rounding error does not grow with the number of terms
// (core/OPS.md, "Summation"). The innermost reduced axis is cut into lane-rows of kSumLanes
// consecutive elements (one lane each; a single lane when it is shorter, or not the input's
// innermost axis, where the vector runs across outputs instead) and blocks of kSumBlock
// lane-rows:
//   blocks(l, o, j, rows) = sum of block j's kSumBlock elements of lane l  (plain, in registers)
//   tail(l, o, rows)      = the same for the last partial block, plus the leftover element of
//                           lane l when n0 is not a multiple of the lane count
//   acc(l, o)             = (s, c): Neumaier's compensated sum of every block and tail of lane l
//   f(o)                  = the lanes' s + c, added pairwise
// Error: at most (kSumBlock + log2(2 kSumLanes) + 2) eps sum|x_i| (+ O(n eps^2)), for any n;
// extra work: one compensated step per lane and block, vectorized across lanes.
constexpr int kSumLanes = 16;
constexpr int kSumBlock = 32;
// On a GPU the lanes are a block's threads (gpu_directives.cpp): 256 of them, their sums added in
// groups of kGpuLaneGroup by a thread each. Measured on an H200 (8192 x 4096 layer norm): 16, 32,
// 64 lanes 0.155, 0.117, 0.102 ms with one thread adding the lanes' sums; 64, 128, 256 lanes
// 0.092, 0.082, 0.081 ms with the groups. The bound grows by 4u.
constexpr int kGpuSumLanes = 256;
// The lanes' sums are added in groups of this many by a GPU thread each (then the groups' by one).
constexpr int kGpuLaneGroup = 16;
// Up to a warp's lanes are added as levels instead (BlockedSum::levels): a row in a warp's lanes
// then adds them by shuffles (softmax over rows of 32 on an H200: 208.5 -> 161.4 us, layer norm
// 203.7 -> 140.6, with lane 0 adding them one by one before).
constexpr int kMaxLevelLanes = 32;

// One step of Neumaier's compensated summation of v into (s, c).
Halide::Tuple neumaier(const Expr &s, const Expr &c, const Expr &v) {
    Expr t = s + v;
    Expr lost = select(Halide::abs(s) >= Halide::abs(v), (s - t) + v, (v - t) + s);
    return {t, c + lost};
}

// s + c, except where s is inf or NaN (c is then meaningless: inf - inf).
Expr compensated_value(const Expr &s, const Expr &c) { return select(Halide::is_finite(s), s + c, s); }

Expr pairwise_sum(std::vector<Expr> terms) {
    while (terms.size() > 1) {
        std::vector<Expr> next;
        for (size_t i = 0; i + 1 < terms.size(); i += 2) next.push_back(terms[i] + terms[i + 1]);
        if (terms.size() % 2) next.push_back(terms.back());
        terms = std::move(next);
    }
    return terms[0];
}

// Lane l's partner in a butterfly's level over `lanes` (a power of two) where lanes `k` (a power
// of two) apart combine, l ^ k, written l + k - 2 (l & k), clamped to the lanes: Halide's bounds
// of an xor are unbounded, and the simplifier, which bounds it, drops a clamp around one.
Expr butterfly_partner(const Halide::Var &l, int k, int lanes) { return Halide::clamp(l + k - 2 * (l & k), 0, lanes - 1); }

// The levels of BlockedSum::levels over the `lanes` (a power of two) lanes `l` of the compensated
// sums `acc`; `args(lane, {})` indexes one lane's (butterfly_partner's pairs).
template <typename Args>
std::vector<Halide::Func> lane_sum_levels(const Halide::Func &acc, const Halide::Var &l, int lanes, const Args &args) {
    std::vector<Halide::Func> levels;
    const std::string name = acc.name() + "_lanes";
    levels.emplace_back(name + "0");
    levels.back()(args(l, {})) = compensated_value(acc(args(l, {}))[0], acc(args(l, {}))[1]);
    for (int k = 1; k < lanes; k *= 2) {
        const Halide::Func &below = levels.back();
        const Expr partner = butterfly_partner(l, k, lanes);
        Halide::Func level(name + std::to_string(levels.size()));
        level(args(l, {})) = below(args(l, {})) + below(args(partner, {}));
        levels.push_back(level);
    }
    return levels;
}

// The reduction variables an expression mentions, by name.
std::set<std::string> rvars_in(const Expr &e) {
    struct Collect : Halide::Internal::IRGraphVisitor {
        std::set<std::string> names;
        using IRGraphVisitor::visit;
        void visit(const Halide::Internal::Variable *v) override {
            if (v->reduction_domain.defined()) names.insert(v->name);
        }
    } collect;
    e.accept(&collect);
    return collect.names;
}

// Halide finds an update's reduction domain in the expressions that define it. A value that does
// not vary along a reduced axis (a constant, a broadcast, a size-1 axis read at 0) mentions no RVar
// once it is built in place, and the update would then run once instead of once per element
// (`np.full((2, 5), 3.0).sum(axis=1)` gave 3). Each reduction variable of the index that the value
// lost is kept as the ignored first operand of `return_second`, which costs nothing. (A dead let
// does not work: Halide's CSE drops it before the domain is collected.)
Expr read_over_domain(const LowerContext &ctx, NodeId id, const std::vector<Expr> &index) {
    // Its shared subexpressions bound to names first: the reductions' NaN tests (Halide's is_nan,
    // strict_float) walk their argument as a tree, and float64 pow's expression shares so much
    // that `(x ** 3).max()` never finished compiling.
    Expr v = Halide::Internal::common_subexpression_elimination(ctx.at(id, index));
    std::set<std::string> kept = rvars_in(v);
    for (const Expr &e : index) {
        for (const std::string &name : rvars_in(e)) {
            if (!kept.insert(name).second) continue;  // the value uses it, or it is kept already
            v = Halide::Internal::Call::make(v.type(), Halide::Internal::Call::return_second, {e, v},
                                             Halide::Internal::Call::PureIntrinsic);
        }
    }
    return v;
}

// An RDom over `leading` ranges and then the `rows` axes of x (the reduced axes other than the
// innermost one, Halide order); undefined when there are none.
Halide::RDom blocked_domain(const LowerContext &ctx, const Node &x, const std::vector<int64_t> &rows,
                            std::vector<Halide::Range> ranges, const std::string &name) {
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) ranges.emplace_back(0, ctx.extent(x, static_cast<int>(*it)));
    return ranges.empty() ? Halide::RDom() : Halide::RDom(ranges, name);
}

ReductionLowering lower_float_sum(const LowerContext &ctx, const Node &n, const Node &x, const std::set<int64_t> &reduced,
                                  const std::vector<Expr> &kept, const std::vector<Expr> &out_vars, Halide::Func &f) {
    const std::string id = std::to_string(n.id);
    // In the sum's own type: float32 accumulation in float64 would be exact but cost ~30% on
    // in-cache rows (half the lanes plus conversions).
    Halide::Type t = halide_type(n.dtype);
    int64_t inner = *reduced.rbegin();
    std::vector<int64_t> rows(reduced.begin(), std::prev(reduced.end()));  // NumPy order
    // A symbolic extent (symbols.h) may be any size from 2: its blocks, partial block and
    // leftover are counted at run time, and each stage exists whatever their counts (a stage
    // over an empty domain adds nothing).
    const bool symbolic = ctx.symbols.symbol_of(x.shape[inner]) >= 0;
    int64_t n0 = x.shape[inner];
    // On a GPU the lanes are threads: kGpuSumLanes over a row of any length, gpu_sum_lanes over
    // one of a known length.
    const int want = !ctx.for_gpu ? kSumLanes : symbolic ? kGpuSumLanes : gpu_sum_lanes(n0);
    int lanes = inner == x.ndim() - 1 && (symbolic || n0 >= want) ? want : 1;
    Expr n0_expr = ctx.extent(x, static_cast<int>(inner));
    Expr lane_rows = n0_expr / lanes, leftover = n0_expr % lanes;
    Expr full_blocks = lane_rows / kSumBlock, partial_rows = lane_rows % kSumBlock;
    auto may_be_positive = [&](const Expr &e) {
        return symbolic || Halide::Internal::can_prove(Halide::Internal::simplify(e > 0));
    };

    Halide::Var l("n" + id + "_lane");
    std::vector<Halide::Var> row_vars;
    for (size_t i = 0; i < rows.size(); ++i) row_vars.emplace_back("n" + id + "_row" + std::to_string(i));
    // Value of x at element `e` of the innermost reduced axis and rows `row_at` (NumPy order).
    auto value = [&](const std::vector<Expr> &row_at, const Expr &e) {
        std::vector<Expr> at(row_at);
        at.push_back(e);
        return read_over_domain(ctx, x.id, input_index(x, reduced, at, kept));
    };
    auto args = [&](const Expr &lane, std::vector<Expr> rest) {  // (lane, outputs..., rest...)
        std::vector<Expr> a{lane};
        a.insert(a.end(), out_vars.begin(), out_vars.end());
        a.insert(a.end(), rest.begin(), rest.end());
        return a;
    };
    std::vector<Expr> row_exprs(row_vars.begin(), row_vars.end());
    // NumPy starts from its identity +0.0 (a sum of -0.0s is +0.0), and so do the lanes.
    Expr zero = Halide::Internal::make_zero(t);

    ReductionLowering out;
    BlockedSum blocked;
    blocked.lane = l;
    blocked.lanes = lanes;
    Halide::Func acc("acc_" + id);
    acc(args(l, {})) = Halide::Tuple(zero, zero);
    auto accumulate = [&](Halide::Func &part, const std::vector<Expr> &part_args) {
        acc(args(l, {})) = neumaier(acc(args(l, {}))[0], acc(args(l, {}))[1], part(args(l, part_args)));
    };
    auto rows_of = [&](const Halide::RDom &d, int first) {  // the domain's row RVars, NumPy order
        std::vector<Expr> r;
        for (int i = static_cast<int>(rows.size()) - 1; i >= 0; --i) r.push_back(d[first + i]);
        return r;
    };
    int stage = 0;
    if (may_be_positive(full_blocks)) {
        Halide::Var j("n" + id + "_block");
        std::vector<Expr> block_args{j};
        block_args.insert(block_args.end(), row_exprs.begin(), row_exprs.end());
        Halide::Func blocks("blocks_" + id);
        Halide::RDom k(0, kSumBlock, "k" + id);
        blocks(args(l, block_args)) = zero;
        blocks(args(l, block_args)) += value(row_exprs, (j * kSumBlock + k) * lanes + l);
        // (all sizes fit in int: Halide indexes buffers with 32 bits)
        Halide::RDom d = blocked_domain(ctx, x, rows, {Halide::Range(0, full_blocks)}, "b" + id);
        std::vector<Expr> at{d[0]};
        for (const Expr &e : rows_of(d, 1)) at.push_back(e);
        accumulate(blocks, at);
        blocked.blocks = blocks;
        blocked.block_domain = d;
        blocked.block_stage = ++stage;
    }
    if (may_be_positive(partial_rows) || may_be_positive(leftover)) {
        Halide::Func tail("tail_" + id);
        tail(args(l, row_exprs)) = zero;
        if (may_be_positive(partial_rows)) {
            Halide::RDom k(0, partial_rows, "kt" + id);
            tail(args(l, row_exprs)) += value(row_exprs, (full_blocks * kSumBlock + k) * lanes + l);
        }
        if (may_be_positive(leftover)) {  // fewer than `lanes` elements, one per lane (a clamped gather)
            Expr e = lane_rows * lanes + l;
            Expr last = n0_expr - 1;
            tail(args(l, row_exprs)) += select(l < leftover, value(row_exprs, Halide::min(e, last)), zero);
        }
        Halide::RDom d = blocked_domain(ctx, x, rows, {}, "t" + id);
        accumulate(tail, rows.empty() ? std::vector<Expr>{} : rows_of(d, 0));
        blocked.tail = tail;
        blocked.tail_domain = d;
        blocked.tail_stage = ++stage;
    }
    auto lane_values = [&](const Expr &first, int count) {
        std::vector<Expr> values;
        for (int i = 0; i < count; ++i) {
            Expr lane = Halide::Internal::simplify(first + i);
            values.push_back(compensated_value(acc(args(lane, {}))[0], acc(args(lane, {}))[1]));
        }
        return values;
    };
    if (ctx.for_gpu && lanes > kMaxLevelLanes && lanes % kGpuLaneGroup == 0) {
        // The lanes' pairwise sum in groups of kGpuLaneGroup, a GPU thread each (the schedule's),
        // then the groups': the same tree of additions (lanes and groups are powers of two).
        Halide::Var g("n" + id + "_group");
        Halide::Func groups("groups_" + id);
        groups(args(g, {})) = pairwise_sum(lane_values(g * kGpuLaneGroup, kGpuLaneGroup));
        std::vector<Expr> group_sums;
        for (int j = 0; j < lanes / kGpuLaneGroup; ++j) group_sums.push_back(groups(args(Expr(j), {})));
        f(out_vars) = pairwise_sum(group_sums);
        blocked.groups = groups;
        blocked.group = g;
    } else if (ctx.for_gpu && lanes > 1) {
        blocked.levels = lane_sum_levels(acc, l, lanes, args);
        f(out_vars) = blocked.levels.back()(args(Expr(0), {}));
    } else {
        f(out_vars) = pairwise_sum(lane_values(Expr(0), lanes));
    }
    out.accumulator = acc;
    out.associative = false;
    out.blocked_sum = blocked;
    return out;
}

// Whether (b, ib) comes before (a, ia) in an arg reduction's order of (value, index): for argmax
// NaN first (the first NaN is NumPy's answer), then the larger value, then the smaller index
// among equal values (-0.0 equals 0.0); for argmin the smaller value.
Expr arg_better(bool is_max, const Expr &a, const Expr &ia, const Expr &b, const Expr &ib) {
    const Expr earlier = ib < ia;
    Expr better = (is_max ? b > a : b < a) || (b == a && earlier);
    if (a.type().is_float()) {
        const Expr nan_a = Halide::is_nan(a), nan_b = Halide::is_nan(b);
        better = (nan_b && (!nan_a || earlier)) || (!nan_a && !nan_b && better);
        better = Halide::strict_float(better);   // NaN comparisons must stay IEEE
    }
    return better;
}

// Lanes are combined at most kLaneFanIn at a time, a level at a time, until few are left for the
// accumulator's thread: kFewestStoredLanes of stored lanes (a kernel a level), kFewestBlockLanes
// of a block's (a level a step of the block's threads, in shared memory). argmax(axis=0) of 8M x
// 16 float32, one thread a column taking the best of its 8192 lanes one by one, took 1797 us on
// an H200 (torch 227); over rows of 1024, one thread a row took the best of 64 lanes while the
// block's other warps waited at the barrier.
constexpr int kLaneFanIn = 16;
constexpr int kFewestStoredLanes = 32;
constexpr int kFewestBlockLanes = 8;
// A block a row leaves most of a GPU idle below this many rows (an H200 holds 132 SMs of 8 blocks
// of 256 threads): argmax of 128M float32 elements as one row, one block of 256 lanes, took
// 49.7 ms (torch 0.15 ms). Fewer rows are reduced in stored lanes, as columns are.
constexpr int64_t kFewRows = 256;
// The fewest lanes of a row an arg reduction combines as a butterfly: rows of 32 points and
// more (gpu_sum_lanes). Shorter rows go a thread a row, where a butterfly's levels over every
// lane cost more than the accumulator's walk over the lanes (argmax over rows of 16 on an H100:
// 340 us against 282).
constexpr int kMinButterflyLanes = 8;

// How a GPU arg reduction is cut into lanes: how many an output, and whether they are stored.
struct ArgLanes {
    int64_t lanes = 1;
    bool stored = false;
};

// argmax or argmin on a GPU: in lanes (LaneParts), each the best of its elements (the first of
// equal ones: only a strictly better value moves it), then the lanes' best by arg_better. A row
// reduced by one thread, a block's other threads waiting, took 2959 us for argmax over 128M
// float32 elements as rows of 1024 on an H200. Stored lanes are a kernel of their own, then
// levels of kLaneFanIn lanes each (arg_better: any grouping gives the same best).
ReductionLowering lower_gpu_arg_reduction(const LowerContext &ctx, const Node &n, const Node &x,
                                          const std::set<int64_t> &reduced, const std::vector<Expr> &kept,
                                          const std::vector<Expr> &out_vars, ArgLanes layout, bool along_rows,
                                          Halide::Func &f) {
    const std::string id = std::to_string(n.id);
    const bool is_max = n.kind == OpKind::Argmax;
    const int lanes = static_cast<int>(layout.lanes);
    const Expr length = ctx.extent(x, static_cast<int>(*reduced.begin()));
    Halide::Var l("n" + id + "_lane");
    Halide::RDom k(0, (length + lanes - 1) / lanes, "k" + id);
    const Expr e = k * lanes + l;
    // The last lane's steps past the row read its last element, and take no part.
    Expr v = read_over_domain(ctx, x.id, input_index(x, reduced, std::vector<Expr>{Halide::min(e, length - 1)}, kept));
    if (v.type().is_bool()) v = Halide::cast(Halide::UInt(8), v);
    // A row's lanes that may be a warp's (8 to 32 of them, rows of 32 to 1024 points): combined
    // as a butterfly (LaneParts::butterfly), every value 32 bits wide, which warp shuffles take:
    // the index (an axis's extent is Halide's int32) and narrower values widened, which keeps
    // their order (a 64-bit value keeps the levels below, and its 64-bit index: a float64 value
    // beside a 32-bit index came out wrong on an H100 where the levels were in shared memory,
    // which Halide packs a block's buffers of mixed widths into; not looked into further).
    const bool butterfly = !layout.stored && along_rows && lanes >= kMinButterflyLanes &&
                           lanes <= kMaxLevelLanes && v.type().bits() <= 32;
    if (butterfly && v.type().bits() < 32) {
        v = Halide::cast(v.type().is_float() || v.type().is_bfloat() ? Halide::Float(32) : v.type().with_bits(32), v);
    }
    const Halide::Type vt = v.type();
    // (Stored down columns, the lane is the outermost axis: a kernel's neighbouring threads then
    // read neighbouring outputs' elements, a row of the array. Along rows it is the innermost.)
    const bool lane_last = layout.stored && !along_rows;
    auto args = [&](const Expr &lane) {
        std::vector<Expr> a{lane};
        a.insert(a.end(), out_vars.begin(), out_vars.end());
        if (lane_last) std::rotate(a.begin(), a.begin() + 1, a.end());
        return a;
    };
    const Expr worst = is_max ? lowest(vt) : highest(vt);
    const Halide::Type index_type = butterfly ? Halide::Int(32) : Halide::Int(64);
    Halide::Func part("lanes_" + id);
    // A lane that starts at the extreme keeps index 0: it wins only where every element is that
    // extreme, where 0 is NumPy's answer too.
    part(args(l)) = Halide::Tuple(worst, Halide::cast(index_type, 0));
    Expr better = is_max ? v > part(args(l))[0] : v < part(args(l))[0];
    if (vt.is_float()) better = Halide::strict_float(better || (Halide::is_nan(v) && !Halide::is_nan(part(args(l))[0])));
    better = e < length && better;
    part(args(l)) = Halide::Tuple(select(better, v, part(args(l))[0]),
                                  select(better, Halide::cast(index_type, e), part(args(l))[1]));
    const Halide::Tuple none(worst, index_type.max());
    // (best value, its index) and a candidate pair: the better of the two.
    auto better_of = [&](const Halide::Tuple &best, const Halide::Tuple &next) {
        const Expr take = arg_better(is_max, best[0], best[1], next[0], next[1]);
        return Halide::Tuple(select(take, next[0], best[0]), select(take, next[1], best[1]));
    };
    Halide::Func last = part;
    int left = lanes;
    std::vector<Halide::Func> levels;
    // Butterfly: a level's lane l the better of its own and its partner's at the level before,
    // every lane computing every level; each lane ends with the row's best, and the accumulator
    // reads lane 0's. arg_better is a total order, so any pairing gives NumPy's answer.
    for (int k = 1; butterfly && k < lanes; k *= 2) {
        const Expr partner = butterfly_partner(l, k, lanes);
        Halide::Func level("lanes_" + id + "_level" + std::to_string(levels.size() + 1));
        level(args(l)) = better_of(Halide::Tuple(last(args(l))), Halide::Tuple(last(args(partner))));
        levels.push_back(level);
        last = level;
        left = 1;
    }
    const int fewest = layout.stored ? kFewestStoredLanes : kFewestBlockLanes;
    while (!butterfly && left > fewest) {
        int fan_in = std::min(kLaneFanIn, left / fewest);
        while (left % fan_in != 0) fan_in /= 2;   // (lanes are powers of two)
        if (fan_in < 2) break;
        left /= fan_in;
        const std::string name = std::to_string(levels.size() + 1);
        Halide::Func level("lanes_" + id + "_level" + name);
        Halide::Var m("n" + id + "_lane" + name);
        // Lane m takes lanes m, m + left, ...: neighbouring threads read neighbouring lanes. A
        // pure definition, its fan-in unrolled pairwise (a chain would repeat each step's
        // expression in the next three times over): one kernel, no initial values stored first.
        std::vector<Halide::Tuple> pairs;
        for (int i = 0; i < fan_in; ++i) pairs.emplace_back(last(args(i * left + m)));
        for (size_t width = pairs.size(); width > 1; width /= 2) {
            for (size_t i = 0; i < width / 2; ++i) pairs[i] = better_of(pairs[2 * i], pairs[2 * i + 1]);
        }
        level(args(m)) = pairs[0];
        levels.push_back(level);
        last = level;
    }
    Halide::Func acc("acc_" + id);
    Halide::RDom j(0, left, "j" + id);
    acc(out_vars) = none;
    acc(out_vars) = better_of(Halide::Tuple(acc(out_vars)), Halide::Tuple(last(args(j))));
    f(out_vars) = Halide::cast(Halide::Int(64), acc(out_vars)[1]);
    ReductionLowering out;
    out.accumulator = acc;
    out.associative = false;
    out.lane_parts = LaneParts{part, l, lanes, Halide::RVar(k.x), layout.stored, levels, butterfly};
    return out;
}

// The lanes of a GPU arg reduction. Over a row: gpu_sum_lanes, threads of the row's block
// (kGpuSumLanes for a row of any length); stored (gpu_column_chunks) for fewer than kFewRows rows
// of a known shape. Down columns, stored, gpu_column_chunks (1, a thread per output, where any
// extent is symbolic). Measured on an H200 (python -m apps.gpu_reductions_bench): argmax(axis=0)
// of 262144 x 512 float32 239 us (torch 274).
ArgLanes gpu_arg_lanes(const LowerContext &ctx, const Node &n, const Node &x, int64_t axis, bool along_rows) {
    const bool symbolic = ctx.symbols.any_symbolic(x.shape);
    if (along_rows) {
        if (ctx.symbols.symbol_of(x.shape[axis]) >= 0) return {kGpuSumLanes, false};
        const ArgLanes rows{gpu_sum_lanes(x.shape[axis]), false};
        if (symbolic || n.size() >= kFewRows) return rows;
        const ArgLanes stored{gpu_column_chunks(n.size(), x.shape[axis]), true};
        return stored.lanes > rows.lanes ? stored : rows;
    }
    return {symbolic ? 1 : gpu_column_chunks(n.size(), x.shape[axis]), true};
}

}  // namespace

namespace {

// Signed integer overflow is undefined in Halide (its simplifier and LLVM assume it away: the
// int32 `v @ v` was assumed non-negative), while NumPy's sums, products and matrix products
// wrap. Signed accumulators therefore add and multiply in the unsigned type of the same width,
// which wraps by definition and is still associative for rfactor; `f` reinterprets the result.
Halide::Type accumulator_type(Halide::Type t) { return t.is_int() ? t.with_code(halide_type_uint) : t; }

Expr to_accumulator(const Expr &v) {
    return v.type().is_int() ? Halide::reinterpret(accumulator_type(v.type()), v) : v;
}

Expr from_accumulator(Halide::Type t, const Expr &acc) { return acc.type() == t ? acc : Halide::reinterpret(t, acc); }

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
    out.rdom = make_rdom(ctx, x, reduced, out.rextents, "r" + std::to_string(n.id));
    out.reduces_innermost = x.ndim() > 0 && reduced.count(x.ndim() - 1);
    std::vector<Expr> lhs = halide_vars(axes);
    std::vector<Expr> kept = kept_index(x, reduced, keepdims, axes);
    Halide::Type t = halide_type(n.dtype);
    if (n.kind == OpKind::Sum && t.is_float() && !reduced.empty() && n.size() > 0 && x.size() > 0) {
        ReductionLowering sum = lower_float_sum(ctx, n, x, reduced, kept, lhs, f);
        sum.rdom = out.rdom;
        sum.rextents = out.rextents;
        sum.reduces_innermost = out.reduces_innermost;
        return sum;
    }
    const bool arg = n.kind == OpKind::Argmax || n.kind == OpKind::Argmin;
    const ArgLanes lanes = arg && ctx.for_gpu && n.size() > 0 && x.size() > 0
                               ? gpu_arg_lanes(ctx, n, x, *reduced.begin(), out.reduces_innermost)
                               : ArgLanes{};
    if (lanes.lanes > 1) {
        ReductionLowering lanes_of =
            lower_gpu_arg_reduction(ctx, n, x, reduced, kept, lhs, lanes, out.reduces_innermost, f);
        lanes_of.rdom = out.rdom;
        lanes_of.rextents = out.rextents;
        lanes_of.reduces_innermost = out.reduces_innermost;
        return lanes_of;
    }
    Expr v = read_over_domain(ctx, x.id, input_index(x, reduced, out.rdom, kept));
    Halide::Type xt = v.type();

    // The update lives in its own Func (`acc`); `f` reads the answer out of it. The scheduler
    // places `acc` and may rfactor it when the update is associative.
    Halide::Func acc("acc_" + std::to_string(n.id));
    out.accumulator = acc;
    out.associative = true;
    switch (n.kind) {
    case OpKind::Sum:
        acc(lhs) = Halide::Internal::make_zero(accumulator_type(t));
        acc(lhs) = acc(lhs) + to_accumulator(v);
        f(lhs) = from_accumulator(t, acc(lhs));
        break;
    case OpKind::Prod:
        acc(lhs) = Halide::Internal::make_one(accumulator_type(t));
        acc(lhs) = acc(lhs) * to_accumulator(v);
        f(lhs) = from_accumulator(t, acc(lhs));
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
            // of the tuple associative, so the reduction still vectorizes through rfactor. On
            // the GPU the flag is a float (0 or 1, its own max): with a bool beside the float,
            // rows reduced by a block's threads came out NaN at random (H100, Halide 21).
            Expr no_nan = ctx.for_gpu ? Halide::Internal::make_zero(t) : Halide::cast(Halide::Bool(), false);
            acc(lhs) = Halide::Tuple(is_max ? lowest(t) : highest(t), no_nan);
            Expr saw_nan = ctx.for_gpu ? Halide::max(acc(lhs)[1], Halide::select(Halide::is_nan(v), Halide::Internal::make_one(t),
                                                                             Halide::Internal::make_zero(t)))
                                       : acc(lhs)[1] || Halide::is_nan(v);
            acc(lhs) = Halide::Tuple(is_max ? Halide::max(acc(lhs)[0], v) : Halide::min(acc(lhs)[0], v), saw_nan);
            Expr flagged = ctx.for_gpu ? acc(lhs)[1] > Halide::Internal::make_zero(t) : acc(lhs)[1];
            f(lhs) = select(flagged, ctx.scalar_argument(n.dtype, std::numeric_limits<double>::quiet_NaN()), acc(lhs)[0]);
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

namespace {

// The operand of a batched product that the call reads broadcast over the batch (a batch
// stride of 0): `id` itself, or the matrix a Broadcast node stretches over the batch axes only.
NodeId matrix_under_broadcast(const Graph &graph, NodeId id) {
    const Node &n = graph.node(id);
    if (n.kind != OpKind::Broadcast || n.ndim() < 3) return id;
    const Node &x = graph.node(n.inputs[0]);
    const bool matrix = x.ndim() == 2 && x.shape[0] == n.shape[n.ndim() - 2] && x.shape[1] == n.shape[n.ndim() - 1];
    return matrix ? x.id : id;
}

// A 2-D product's operand that is an array's own memory read as a matrix (runtime
// gemm::as_matrix): an input or a region stored whole, of three axes or more, seen through fused
// transposes and row-major reshapes that only merge its axes into the operand's rows and columns
// (`x.reshape(-1, k)`; `(p @ v).transpose(0, 2, 1, 3).reshape(rows, width)`, an attention's heads
// joined). `order` is the array's axes, outermost first, as the operand's rows then its columns
// walk them (axes of one element left out): its memory must be laid out so.
struct OperandView {
    NodeId array = -1;
    std::vector<int> order;
};

std::optional<OperandView> operand_view(const LowerContext &ctx, const Node &product, NodeId id) {
    const Graph &g = ctx.graph;
    if (product.ndim() != 2 || g.node(id).ndim() != 2) return std::nullopt;
    std::vector<NodeId> chain;   // the operand first
    NodeId at = id;
    while ((g.node(at).kind == OpKind::Reshape || g.node(at).kind == OpKind::Transpose) && !ctx.stored(at)) {
        chain.push_back(at);
        at = g.node(at).inputs[0];
    }
    const Node &array = g.node(at);
    // (A 2-D array is read as the matrix its own dims make: a reshape of it is no view there.)
    if (chain.empty() || array.ndim() < 3 || array.size() == 0) return std::nullopt;
    // Each axis of the value so far: the array's axes it merges, outermost first.
    std::vector<std::vector<int>> groups;
    std::vector<int64_t> extents(array.shape.begin(), array.shape.end());
    for (int a = 0; a < array.ndim(); ++a) groups.push_back({a});
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Node &n = g.node(*it);
        std::vector<std::vector<int>> next;
        std::vector<int64_t> next_extents;
        if (n.kind == OpKind::Transpose) {
            for (int64_t p : n.ints_attr("perm")) {
                next.push_back(groups[p]);
                next_extents.push_back(extents[p]);
            }
        } else {
            // Axes of one element go (they lie anywhere in memory); each new axis merges a run of
            // the others whose extents multiply to its own, or the reshape splits an axis: no view.
            size_t i = 0;
            auto skip_ones = [&] { while (i < groups.size() && extents[i] == 1) ++i; };
            for (int64_t want : n.shape) {
                std::vector<int> merged;
                int64_t have = 1;
                skip_ones();
                while (have < want && i < groups.size()) {
                    merged.insert(merged.end(), groups[i].begin(), groups[i].end());
                    have *= extents[i++];
                    skip_ones();
                }
                if (have != want) return std::nullopt;
                next.push_back(merged);
                next_extents.push_back(want);
            }
            skip_ones();
            if (i != groups.size()) return std::nullopt;
        }
        groups = std::move(next);
        extents = std::move(next_extents);
    }
    OperandView view{at, {}};
    for (const std::vector<int> &axes : groups) {
        for (int a : axes) {
            if (array.shape[a] != 1) view.order.push_back(a);
        }
    }
    const bool natural = std::is_sorted(view.order.begin(), view.order.end());
    if (ctx.contiguous_input(at)) return natural ? std::optional<OperandView>(view) : std::nullopt;
    // A region: stored at the root, of static extents (it is bounded whole below), not a call's
    // own output. Its storage is reordered only where it is no output (whose layout the caller's
    // array fixes) and its innermost axis stays innermost (its kernel's writes stay contiguous).
    const bool output = std::find(g.outputs().begin(), g.outputs().end(), at) != g.outputs().end();
    if (!ctx.stored_region(at) || ctx.library_calls.count(at) || ctx.symbols.any_symbolic(array.shape)) return std::nullopt;
    if (!natural && (output || view.order.back() != array.ndim() - 1)) return std::nullopt;
    return view;
}

// The array to pass for `view`: an input's ImageParam, or a region's Func, its storage laid out
// in the view's order and its extents bounded whole (the call's bounds query leaves it as it is:
// gemm::answer_bounds_query). Nothing where the region's layout is claimed otherwise already.
std::optional<Halide::ExternFuncArgument> pass_as_matrix(const LowerContext &ctx, const OperandView &view) {
    if (const Halide::ImageParam *param = ctx.contiguous_input(view.array)) return Halide::ExternFuncArgument(*param);
    if (!ctx.claim_layout(view.array, view.order)) return std::nullopt;
    const Node &array = ctx.graph.node(view.array);
    Halide::Func region = *ctx.stored_region(view.array);
    const std::vector<Halide::Var> vars = region.args();   // Halide's order: the last axis first
    auto var_of = [&](int axis) { return vars[array.ndim() - 1 - axis]; };
    std::vector<Halide::Var> storage;   // innermost first
    for (auto it = view.order.rbegin(); it != view.order.rend(); ++it) storage.push_back(var_of(*it));
    for (int a = 0; a < array.ndim(); ++a) {
        if (array.shape[a] == 1) storage.push_back(var_of(a));
    }
    if (!std::is_sorted(view.order.begin(), view.order.end())) region.reorder_storage(storage);
    for (int a = 0; a < array.ndim(); ++a) region.bound(var_of(a), 0, ctx.extent(array, a));
    return Halide::ExternFuncArgument(region);
}

// A float product through BLAS (runtime/blas.h: an extern stage, 2-D), or through cuBLAS on the
// device for a GPU pipeline (runtime/cublas.h: the stage's buffers in device memory, the call's
// user context first, for its stream; a batched product in one strided batched call): an operand
// that is an input with a unit inner stride, an array read as a matrix through layout ops
// (operand_view), or a region stored at the root, is passed as it is;
// any other (a fused expression, a strided input) is first stored, in the product's dtype (the
// schedule computes it at root). A matrix broadcast over a batch goes as the matrix alone. `f` is
// a copy of the stage: Halide then writes an output array once, through its own code (on the CPU,
// in parallel tiles; on the GPU a product returned as it is is the call itself: lower_to_halide).
ReductionLowering lower_matmul_as_library_call(const LowerContext &ctx, const Node &n, Halide::Func &f,
                                               const std::vector<Halide::Var> &axes) {
    const Node &a = ctx.graph.node(n.inputs[0]);
    const Halide::Type t = halide_type(n.dtype);
    const int nd = n.ndim();
    ReductionLowering out;
    std::vector<Halide::ExternFuncArgument> args;
    if (ctx.for_gpu) args.emplace_back(ctx.user_context);
    // A float32 product of two float16 (or two bfloat16) arrays widened (widen_float16) takes the
    // 16-bit arrays themselves on the GPU: cuBLAS multiplies them on the tensor cores,
    // accumulating in float32.
    const NodeId half_a = ctx.for_gpu && n.dtype == DType::Float32 ? widened_float16_source(ctx.graph, n.inputs[0]) : -1;
    const NodeId half_b = ctx.for_gpu && n.dtype == DType::Float32 ? widened_float16_source(ctx.graph, n.inputs[1]) : -1;
    const bool half_operands = half_a >= 0 && half_b >= 0 &&
                               ctx.graph.node(half_a).dtype == ctx.graph.node(half_b).dtype;
    const DType operand_dtype = half_operands ? ctx.graph.node(half_a).dtype : n.dtype;
    for (NodeId operand : n.inputs) {
        if (half_operands) operand = widened_float16_source(ctx.graph, operand);
        operand = matrix_under_broadcast(ctx.graph, operand);
        const Node &node = ctx.graph.node(operand);
        const bool same_dtype = node.dtype == operand_dtype;
        if (const Halide::ImageParam *param = ctx.dense_input(operand); param && same_dtype) {
            args.emplace_back(*param);
            continue;
        }
        if (const std::optional<OperandView> view = operand_view(ctx, n, operand); view && same_dtype) {
            if (std::optional<Halide::ExternFuncArgument> arg = pass_as_matrix(ctx, *view)) {
                args.push_back(*arg);
                continue;
            }
        }
        if (const Halide::Func *region = ctx.stored_region(operand); region && same_dtype) {
            args.emplace_back(*region);  // computed at root by the schedule: read where it is
            continue;
        }
        Halide::Func stored("blas_operand_" + std::to_string(operand) + "_of_" + std::to_string(n.id));
        std::vector<Halide::Var> vars;   // Halide's order: column, row, then the batch axes
        for (int i = 0; i < node.ndim(); ++i) vars.emplace_back(i == 0 ? "c" : i == 1 ? "r" : "b" + std::to_string(i - 2));
        std::vector<Expr> index(vars.rbegin(), vars.rend());
        stored(vars) = Halide::cast(halide_type(operand_dtype), ctx.at(operand, index));
        args.emplace_back(stored);
        out.library_operands.push_back(stored);
    }
    args.emplace_back(Halide::cast(Halide::Int(32), ctx.extent(a, nd - 1)));
    Halide::Func call("blas_" + std::to_string(n.id));
    if (ctx.for_gpu) {
        call.define_extern(kCublasGemmName, args, t, nd, Halide::NameMangling::Default, Halide::DeviceAPI::CUDA);
    } else {
        call.define_extern(kBlasGemmName, args, t, nd);
    }
    std::vector<Expr> lhs = halide_vars(axes);
    f(lhs) = call(lhs);
    out.rextents = {a.shape[nd - 1]};
    out.accumulator = call;
    out.library_call = true;
    return out;
}

}  // namespace

ReductionLowering lower_matmul(const LowerContext &ctx, const Node &n, Halide::Func &f,
                               const std::vector<Halide::Var> &axes) {
    if (ctx.library_calls.count(n.id)) return lower_matmul_as_library_call(ctx, n, f, axes);
    // matmul (a, b) sums one product; matmul_sum (c, a0, b0, a1, b1, ...) starts from c and
    // adds each product in an update of its own, all into the same accumulator.
    const bool from_addend = n.kind == OpKind::MatmulSum;
    const int nd = n.ndim();
    const Halide::Type t = halide_type(n.dtype);
    const std::vector<Expr> lhs = halide_vars(axes), index(axes.begin(), axes.end());
    ReductionLowering out;
    // The sum lives in its own Func so the scheduler can keep a tile of it in registers.
    Halide::Func acc("acc_" + std::to_string(n.id));
    if (t.is_bool()) {
        acc(lhs) = Halide::cast(Halide::Bool(), false);
    } else if (from_addend) {
        acc(lhs) = to_accumulator(ctx.at(n.inputs[0], index));
    } else {
        acc(lhs) = Halide::Internal::make_zero(accumulator_type(t));
    }
    int64_t contracted = 0;
    // A batched product on the GPU reads its operands through Funcs of their own, which the
    // schedule may stage a block's tile of in shared memory (RegionFunc::product_operands).
    const bool operand_funcs = ctx.for_gpu && nd >= 3 && !from_addend && !t.is_bool();
    for (size_t i = from_addend ? 1 : 0; i < n.inputs.size(); i += 2) {
        const Node &a = ctx.graph.node(n.inputs[i]);
        const Node &b = ctx.graph.node(n.inputs[i + 1]);
        const std::string name = "k" + std::to_string(n.id) + (from_addend ? "_" + std::to_string(i / 2) : "");
        Halide::RDom k(0, ctx.extent(a, nd - 1), name);
        std::vector<Expr> ai = index, bi = index;
        ai[nd - 1] = k.x;  // a[..., m, k]
        bi[nd - 2] = k.x;  // b[..., k, n]
        Expr av, bv;
        if (!operand_funcs) {
            av = read_over_domain(ctx, a.id, ai);
            bv = read_over_domain(ctx, b.id, bi);
        } else {
            std::vector<Halide::Var> at;
            for (int d = 0; d < nd; ++d) at.emplace_back("operand_axis_" + std::to_string(d));
            const std::vector<Expr> point(at.begin(), at.end());
            Halide::Func fa("operand_a_" + std::to_string(n.id)), fb("operand_b_" + std::to_string(n.id));
            fa(halide_vars(at)) = ctx.at(a.id, point);
            fb(halide_vars(at)) = ctx.at(b.id, point);
            av = fa(halide_order(ai));
            bv = fb(halide_order(bi));
            out.product_operands = {fa, fb};
        }
        if (t.is_bool()) {
            acc(lhs) = acc(lhs) || (av && bv);
        } else {
            acc(lhs) = t.is_float() ? math::fused_multiply_add(av, bv, acc(lhs))
                                    : acc(lhs) + to_accumulator(av) * to_accumulator(bv);
        }
        out.product_rdoms.push_back(k);
        contracted += a.shape[nd - 1];
    }
    out.rdom = out.product_rdoms[0];
    out.rextents = {contracted};
    // NumPy adds rounded products into a sum that starts at +0.0, so a zero result is +0.0; a
    // fused multiply-add rounds an underflowing product's sum to -0.0 instead (fuzz seed 3,
    // program 71705, seen through arctan2). Adding +0.0 (kept under strict_float) maps it back.
    // (A sum with an addend: NumPy's last addition is of such a product, never -0.0 either.)
    f(lhs) = t.is_float() ? acc(lhs) + Halide::Internal::make_zero(t) : from_accumulator(t, acc(lhs));
    out.accumulator = acc;
    out.associative = true;
    return out;
}

}  // namespace hc::lowering

namespace hc {

// Measured on an H200 (softmax and layer norm over 16M elements as rows of 16 to 1024, kernel
// times): a lane's elements 4, 8, 16 and 32 against the row's threads; fewest lanes won where a
// lane's serial sum in registers replaced the per-lane steps (a compensated add, a shared-memory
// store, the last thread's pairwise add of every lane): rows of 256 82.4 us with 64 lanes of 4,
// 49.1 with 16 of 16; rows of 64 96.4 (16 of 4), 64.4 (8 of 8); rows of 16 best at 4 of 4.
// Rows of 128 to 255 take 8 lanes (of 16 points or more), where the square root gives 16 of 8:
// measured again on an H200 with each row in a warp's lanes (GpuWarpRows; 64M float32 elements,
// CUDA events), softmax over rows of 128 190.7 -> 141.4 us, layer norm 178.3 -> 142.0, sums alone
// 71.2 -> 66.9. Shorter rows were slower with fewer lanes (rows of 32 in 4 lanes of 8: softmax
// 208 -> 263 us; rows of 64 in 4 of 16: 164 -> 273; sums alone over rows of 32 faster, 98 -> 82).
// Rows of 512 take the square root's 32 lanes of 16 (16 of 32 when a warp's 32 lanes combined one
// by one; with the lanes' tree, measured on an H200, 16 -> 32 lanes, CUDA events over 131072 rows:
// layer norm 150.3 -> 138.1 us, a residual layer norm 237.2 -> 194.2, softmax 132.4 -> 134.9, sums
// alone 64.1 -> 63.8; kernel times over 1024 rows: softmax 3.11 -> 2.59 us, over 4096 rows layer
// norm 7.10 -> 5.58 (its rows then in a warp's lanes: gpu_schedule.cpp's late loads), over 8192
// rows 9.41 -> 10.09).
// Rows of 1024 take 32 lanes of 32, where the square root gives 64 of 16 (too many for a warp):
// softmax over them 174.5 -> 135.9 us in a warp's 32 lanes (the lanes combined as a tree), layer
// norm 152.7 -> 148.2, sums alone 63.3 -> 64.2.
int gpu_sum_lanes(int64_t length) {
    constexpr int64_t kEightLanesFrom = 128, kEightLanesBelow = 256, kWarpLanesAt = 1024;
    if (length >= kEightLanesFrom && length < kEightLanesBelow) return 8;
    if (length == kWarpLanesAt) return 32;
    constexpr int kMinLaneElements = 4, kMaxLaneElements = 16;
    int64_t elements = kMinLaneElements;
    while (elements < kMaxLaneElements && (elements * 2) * (elements * 2) <= length) elements *= 2;
    int lanes = 1;
    while (lanes < lowering::kGpuSumLanes && length >= 2 * lanes * elements) lanes *= 2;
    return lanes;
}

}  // namespace hc
