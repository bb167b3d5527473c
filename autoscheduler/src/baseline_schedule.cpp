#include "hcompile/baseline_schedule.h"

#include <algorithm>

namespace hc {

namespace {

// Below this many elements a region runs on one thread: waking the pool costs more than it saves.
constexpr int64_t kMinParallelElements = 1 << 15;

int64_t product(const std::vector<int64_t> &v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

struct ScheduleLog {
    std::string text;
    void add(const Halide::Func &f, const std::string &what) { text += f.name() + ": " + what + "\n"; }
};

// Tails are guarded rather than shifted inwards: a consumer may need fewer elements of an
// intermediate than one vector (a reversed 2-element slice of a reduction), and a shifted vector
// would then read its producers, and the inputs, out of bounds (fuzz seed 3).
constexpr Halide::TailStrategy kTail = Halide::TailStrategy::GuardWithIf;

// Vectorize the innermost dimension and parallelize the outermost non-trivial one. Returns the
// loop that runs once per vector (or per element, unvectorized) of the innermost dimension.
Halide::LoopLevel schedule_pure(Halide::Func f, const RegionFunc &r, int width, ScheduleLog &log) {
    f.compute_root();
    const auto &vars = r.vars;
    const auto &ext = r.extents;
    if (vars.empty()) {
        log.add(f, "compute_root (0-d)");
        return Halide::LoopLevel::root();
    }
    std::string what = "compute_root";
    // A row-fused region runs inside its root's parallel row loop already.
    bool parallel = product(ext) >= kMinParallelElements && !r.row_fused;
    if (vars.size() == 1 && parallel) {
        // One long dimension: chunks in parallel, vectors inside each chunk.
        Halide::Var outer("chunk"), inner("x_in");
        int chunk = static_cast<int>(std::max<int64_t>(width, ext[0] / 64 / width * width));
        // A symbolic extent (symbols.h): 64 chunks of whatever size the call has.
        Halide::Expr chunk_size = r.symbolic ? Halide::max(width, r.extent_exprs[0] / 64 / width * width) : Halide::Expr(chunk);
        f.split(vars[0], outer, inner, chunk_size, kTail).parallel(outer).vectorize(inner, width, kTail);
        log.add(f, what + ", split x by " + (r.symbolic ? "1/64 of its extent" : std::to_string(chunk)) +
                       ", parallel chunks, vectorize " + std::to_string(width));
        return Halide::LoopLevel(f, inner);
    }
    if (ext[0] >= width) {
        f.vectorize(vars[0], width, kTail);
        what += ", vectorize " + vars[0].name() + " by " + std::to_string(width);
    }
    if (parallel && vars.size() > 1) {
        f.parallel(vars.back());
        what += ", parallel " + vars.back().name();
    }
    log.add(f, what);
    return Halide::LoopLevel(f, vars[0]);
}

// An elementwise region; its staged operand (lowering.h) is computed per vector of it (per
// element where it is not vectorized), inside whatever loop the region itself runs in.
void schedule_elementwise(const RegionFunc &r, int width, ScheduleLog &log) {
    Halide::LoopLevel per_vector = schedule_pure(r.func, r, width, log);
    if (!r.staged_operand.defined()) return;
    Halide::Func operand = r.staged_operand;
    operand.compute_at(per_vector);
    if (!r.vars.empty() && r.extents[0] >= width) operand.vectorize(r.vars[0], width, kTail);
    log.add(operand, "compute_at " + r.func.name() + ", per vector");
}

// Whether Halide's rfactor will accept the accumulator's update. The lowering builds plain
// sums, products, min/max and any/all, but Halide sees the update after simplifying it: a
// product of a constant (np.prod(a > a): acc * 0) is no longer an operator it can prove
// associative, and rfactor would stop the compile (fuzz seed 3, program 73987).
bool update_provably_associative(Halide::Func acc) {
    const Halide::Internal::Definition &update = acc.function().update(0);
    std::vector<Halide::Expr> values;
    for (const Halide::Expr &v : update.values()) values.push_back(Halide::Internal::simplify(v));
    return Halide::Internal::prove_associativity(acc.name(), update.args(), values).associative();
}

// `acc` holds the update; `func` (the region's value) reads the answer out of it.
void schedule_reduction(const RegionFunc &r, int width, ScheduleLog &log) {
    schedule_pure(r.func, r, width, log);
    Halide::Func acc = r.accumulator;
    schedule_pure(acc, r, width, log);
    if (r.rextents.empty()) {
        acc.update().unscheduled();
        return;
    }
    bool parallel = product(r.extents) * product(r.rextents) >= kMinParallelElements && !r.vars.empty();
    Halide::Stage update = acc.update();
    std::string what = "update:";
    if (!r.reduces_innermost && !r.vars.empty() && r.extents[0] >= width) {
        // Neighbouring outputs reduce neighbouring inputs: vectorize across outputs.
        update.vectorize(r.vars[0], width, Halide::TailStrategy::GuardWithIf);
        what += " vectorize " + r.vars[0].name();
    } else if (r.reduces_innermost && r.associative_vectorizable && r.rextents[0] >= 2 * width &&
               update_provably_associative(acc)) {
        // Row reduction: split the innermost reduced axis into vector lanes and reduce those
        // lanes in an intermediate Func (reassociates the sum; within float tolerance).
        Halide::RVar outer("r_out"), inner("r_lane");
        Halide::Var lane("lane");
        Halide::Func lanes = update.split(r.rdom[0], outer, inner, width).rfactor(inner, lane);
        if (r.vars.empty()) {
            lanes.compute_root();
        } else {
            lanes.compute_at(acc, r.vars[0]);
        }
        lanes.vectorize(lane);
        lanes.update().vectorize(lane);
        what += " rfactor lanes of " + std::to_string(width) + " over the innermost reduced axis";
    }
    if (parallel && !r.row_fused && r.vars.size() >= 1 && r.extents.back() > 1) {
        update.parallel(r.vars.back());
        what += ", parallel " + r.vars.back().name();
    }
    if (what == "update:") {
        update.unscheduled();  // serial loops are the plan here, not an oversight
        what += " serial";
    }
    log.add(acc, what);
}

// A float sum (BlockedSum, lowering.h): the accumulator's lanes (or, with one lane, its
// outputs) are the vector; each block sum is computed in registers inside the accumulator's
// loop over blocks; the outermost output runs in parallel.
void schedule_blocked_sum(const RegionFunc &r, int width, ScheduleLog &log) {
    schedule_pure(r.func, r, width, log);
    const BlockedSum &b = *r.blocked_sum;
    Halide::Func acc = r.accumulator;
    acc.compute_root();
    std::string what = "compute_root";
    bool across_outputs = b.lanes == 1 && !r.vars.empty() && r.extents[0] >= width;
    Halide::VarOrRVar vec = across_outputs ? Halide::VarOrRVar(r.vars[0]) : Halide::VarOrRVar(b.lane);
    bool vectorize = b.lanes > 1 || across_outputs;
    int vec_width = b.lanes > 1 ? b.lanes : width;
    bool parallel = product(r.extents) * product(r.rextents) >= kMinParallelElements && !r.vars.empty() &&
                    !r.row_fused && r.extents.back() > 1;
    if (vectorize) acc.vectorize(vec, vec_width, Halide::TailStrategy::GuardWithIf);
    // The vector innermost in each update stage, then the stage's reduction loops.
    auto schedule_stage = [&](int stage, const Halide::RDom &domain, Halide::Func part) {
        if (stage < 0) return;
        Halide::Stage update = acc.update(stage - 1);
        std::vector<Halide::VarOrRVar> order{vec};
        if (domain.defined()) {
            for (int i = 0; i < domain.dimensions(); ++i) order.push_back(domain[i]);
        }
        if (order.size() > 1) update.reorder(order);
        if (vectorize) update.vectorize(vec, vec_width, Halide::TailStrategy::GuardWithIf);
        if (parallel) update.parallel(r.vars.back());
        if (order.size() == 1 && !vectorize && !parallel) update.unscheduled();  // one serial pass
        // A part is needed for all lanes of one iteration of the domain's innermost loop (or,
        // without a domain, of one output row). (The tail's stage is the last one, which a
        // LoopLevel of a pure var names.)
        Halide::LoopLevel at = domain.defined() ? Halide::LoopLevel(acc, domain[0])
                               : !r.vars.empty() ? Halide::LoopLevel(acc, r.vars.back())
                                                 : Halide::LoopLevel(acc, Halide::Var::outermost());
        part.compute_at(at);
        if (vectorize) {
            part.vectorize(vec.var, vec_width, Halide::TailStrategy::GuardWithIf);
            for (int u = 0; u < part.num_update_definitions(); ++u) {
                part.update(u).vectorize(vec.var, vec_width, Halide::TailStrategy::GuardWithIf);
            }
        }
    };
    schedule_stage(b.block_stage, b.block_domain, b.blocks);
    schedule_stage(b.tail_stage, b.tail_domain, b.tail);
    if (parallel) {
        acc.parallel(r.vars.back());
        what += ", parallel " + r.vars.back().name();
    }
    log.add(acc, what + ", blocked compensated sum: " + std::to_string(b.lanes) + " lanes" +
                     (across_outputs ? ", vectorize " + r.vars[0].name() : ""));
}

// Rows of a register tile: 2 x tm vector accumulators plus 2 loads of B fit AVX2's 16 registers.
constexpr int64_t kMatmulTileRows = 6;

// Register-tiled matmul: each tile of TN x TM outputs accumulates in registers over all of K.
void schedule_matmul(const RegionFunc &r, int width, ScheduleLog &log) {
    Halide::Func f = r.func, acc = r.accumulator;
    f.compute_root();
    const auto &v = r.vars;
    int64_t n = r.extents[0], m = r.extents[1];
    int tn = n >= 2 * width ? 2 * width : n >= width ? width : static_cast<int>(std::max<int64_t>(n, 1));
    int tm = static_cast<int>(std::min<int64_t>(std::max<int64_t>(m, 1), kMatmulTileRows));
    // The tiles fit the whole product, not whatever part a consumer reads: a slice such as
    // (a @ b)[:, :-1] asks for 7 of 8 columns, and a tile of 8 shifted inward to cover 7 would
    // start at column -1. Computing the full (static) shape costs at most one tile.
    for (size_t i = 0; i < v.size(); ++i) f.bound(v[i], 0, r.extent_exprs[i]);
    Halide::Var no("no"), mo("mo"), ni("ni"), mi("mi");
    // Vectorizing by the whole tile width (several native vectors) unrolls it fully, so the
    // tn x tm accumulators stay in registers across the k loop.
    // Column tiles outermost: one tn-wide panel of B stays in cache while every row tile of A
    // streams past it.
    bool parallel = product(r.extents) * r.rextents[0] >= kMinParallelElements;
    auto tiles = [&](Halide::Stage s, Halide::TailStrategy tail) {
        s.tile(v[0], v[1], no, mo, ni, mi, tn, tm, tail).reorder(ni, mi, mo, no).vectorize(ni, tn, tail).unroll(mi, tm, tail);
        if (parallel) s.parallel(v.size() > 2 ? v.back() : no);
    };
    auto accumulate = [&](Halide::Stage s, Halide::TailStrategy tail) {
        s.vectorize(v[0], tn, tail).unroll(v[1], tm, tail);
    };
    std::string what = "tile " + std::to_string(tn) + "x" + std::to_string(tm) + " in registers";
    if (r.symbolic) {
        // A symbolic extent may be smaller than a tile. Once both fit, the static schedule
        // runs; below, the tiles are guarded, and so is the accumulator (it covers exactly
        // what its tile needs, or it would read the operands past their ends).
        Halide::Expr fits = r.extent_exprs[0] >= tn && r.extent_exprs[1] >= tm;
        tiles(f.specialize(fits), Halide::TailStrategy::Auto);
        tiles(f, kTail);
        acc.compute_at(f, mo);
        accumulate(acc.specialize(fits), Halide::TailStrategy::Auto);
        accumulate(acc, kTail);
        Halide::Stage update = acc.update();
        update.reorder(v[0], v[1], r.rdom.x);
        accumulate(update.specialize(fits), Halide::TailStrategy::Auto);
        accumulate(update, kTail);
        what += " (guarded while the symbolic extents are below a tile)";
    } else {
        f.tile(v[0], v[1], no, mo, ni, mi, tn, tm).reorder(ni, mi, mo, no).vectorize(ni, tn).unroll(mi);
        if (parallel) f.parallel(v.size() > 2 ? v.back() : no);
        acc.compute_at(f, mo).vectorize(v[0], tn).unroll(v[1]);
        acc.update().reorder(v[0], v[1], r.rdom.x).vectorize(v[0], tn).unroll(v[1]);
    }
    if (parallel) what += v.size() > 2 ? ", parallel " + v.back().name() : ", parallel column tiles";
    log.add(f, what);
}

}  // namespace

// Places each row-fused reduction (and its read-out) inside the row loop of the root, so a row
// is reduced and consumed while it is in cache; the root's own parallel row loop covers it.
void schedule_row_fusion(LoweredPipeline &lowered, ScheduleLog &log) {
    const RegionFunc &root = lowered.regions[lowered.row_root];
    const Halide::Var &row = root.vars.back();
    for (RegionFunc &r : lowered.regions) {
        if (!r.row_fused) continue;
        r.func.compute_at(root.func, row);
        if (r.accumulator.defined()) r.accumulator.compute_at(root.func, row);
        log.add(r.func, "compute_at " + root.func.name() + " row " + row.name() + " (row fusion)");
    }
}

std::string apply_baseline_schedule(LoweredPipeline &lowered, const Halide::Target &target) {
    ScheduleLog log;
    for (const RegionFunc &r : lowered.regions) {
        int width = std::max(1, target.natural_vector_size(r.func.type()));
        switch (r.op_class) {
        case OpClass::Matmul:
            if (r.vars.size() >= 2) {
                schedule_matmul(r, width, log);
                break;
            }
            [[fallthrough]];
        case OpClass::Reduction:
            if (r.blocked_sum) {
                schedule_blocked_sum(r, width, log);
            } else {
                schedule_reduction(r, width, log);
            }
            break;
        default:
            schedule_elementwise(r, width, log);
        }
    }
    if (lowered.row_root >= 0) schedule_row_fusion(lowered, log);
    return log.text;
}

}  // namespace hc
