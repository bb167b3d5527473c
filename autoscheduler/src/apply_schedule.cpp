#include "hcompile/apply_schedule.h"

#include <algorithm>
#include <stdexcept>

#include "gpu_directives.h"
#include "region_plan.h"
#include "schedule_writer.h"

namespace hc {

namespace {

// Tails are guarded rather than shifted inwards: a consumer may need fewer elements of an
// intermediate than one vector (a reversed 2-element slice of a reduction), and a shifted vector
// would then read its producers, and the inputs, out of bounds (fuzz seed 3).
constexpr Halide::TailStrategy kTail = Halide::TailStrategy::GuardWithIf;

// The tile loop of a Func tiled by TileRows, where the regions in its tiles are computed (or,
// sliding, stored), and its loop over one tile's rows.
Halide::Var tile_loop(const Halide::Func &tiled) { return Halide::Var("tile_" + ScheduleWriter::cpp_name(tiled.name())); }
Halide::Var row_loop(const Halide::Func &tiled) { return Halide::Var("row_in_" + ScheduleWriter::cpp_name(tiled.name())); }

// Loop `v` of stage `s` in parallel, `grain` iterations a task (parallel_tasks.h): `v` is split
// into a task loop and `v` again, so `v` still names the loop of single iterations (where row-fused
// regions are computed, say). Applied after any vectorize of `v`: the grain counts vectors then.
void parallel_loop(ScheduleWriter &w, const StageRef &s, const Halide::Var &v, int64_t grain) {
    if (grain <= 1) {
        w.parallel(s, v);
        return;
    }
    Halide::Var task(v.name() + "_task");
    w.split(s, v, task, v, static_cast<int>(grain), kTail);
    w.parallel(s, task);
}

// The pure definition's loops: vectorized and parallel as planned. Returns the loop that runs
// once per vector of the innermost dimension (per element where it is not vectorized).
Halide::VarOrRVar schedule_pure_loops(ScheduleWriter &w, const Halide::Func &f, const RegionFunc &r, const RegionPlan &p) {
    StageRef s = ScheduleWriter::pure(f);
    if (r.vars.empty()) return Halide::Var::outermost();
    if (p.tile_axis >= 0) {
        // Tiles of rows, the tile loop outermost (so the regions computed per tile are computed
        // once for all of the tile's other outer loops, channels say) and parallel. Guarded
        // tails: a last, short tile asks its producers for its own rows only.
        Halide::Var tile = tile_loop(f), row = row_loop(f);
        w.split(s, r.vars[p.tile_axis], tile, row, static_cast<int>(p.tile_rows), kTail);
        std::vector<Halide::VarOrRVar> order;
        for (size_t i = 0; i < r.vars.size(); ++i) {
            order.push_back(static_cast<int>(i) == p.tile_axis ? Halide::VarOrRVar(row) : Halide::VarOrRVar(r.vars[i]));
        }
        order.push_back(tile);
        w.reorder(s, order);
        w.parallel(s, tile);
        if (p.vector_axis >= 0) w.vectorize(s, r.vars[p.vector_axis], static_cast<int>(p.vector_width), kTail);
        return r.vars[0];
    }
    if (p.chunks) {
        // One long dimension: chunks in parallel, vectors inside each chunk.
        Halide::Var outer("chunk"), inner("x_in");
        int64_t width = std::max<int64_t>(p.vector_width, 1);
        // A symbolic extent (symbols.h): the chunks of whatever size the call has.
        Halide::Expr chunk = r.symbolic ? Halide::max(static_cast<int>(width), r.extent_exprs[0] / static_cast<int>(p.chunks) /
                                                                                   static_cast<int>(width) * static_cast<int>(width))
                                        : Halide::Expr(static_cast<int>(std::max<int64_t>(width, r.extents[0] / p.chunks / width * width)));
        w.split(s, r.vars[0], outer, inner, chunk, kTail);
        w.parallel(s, outer);
        if (p.vector_width) w.vectorize(s, inner, static_cast<int>(p.vector_width), kTail);
        return inner;
    }
    if (p.vector_axis >= 0) w.vectorize(s, r.vars[p.vector_axis], static_cast<int>(p.vector_width), kTail);
    if (p.parallel_axis >= 0) parallel_loop(w, s, r.vars[p.parallel_axis], p.parallel_grain);
    return r.vars[0];
}

void place(ScheduleWriter &w, const Halide::Func &f, const LoweredPipeline &lowered, const std::vector<RegionPlan> &plans,
           const RegionPlan &p) {
    if (p.tile_of >= 0) {
        // Per tile of the tiled region: Halide's bounds inference computes the rows the tile
        // needs (its own plus the stencils' reach), which stay in cache for their consumers.
        const Halide::Func &tiled = lowered.regions[p.tile_of].func;
        Halide::VarOrRVar tile = tile_loop(tiled);
        if (plans[p.tile_of].tile_slides) {
            // Stored for the whole tile, computed a row at a time as the tile's rows need them:
            // Halide computes only the rows not yet computed (a sliding window) and folds the
            // storage to the rows still read.
            Halide::VarOrRVar row = row_loop(tiled);
            w.store_at(f, tiled, tile.var);
            w.compute_at(f, tiled, &row);
            return;
        }
        w.compute_at(f, tiled, &tile);
        return;
    }
    if (p.row_of < 0) {
        w.compute_root(f);
        return;
    }
    // Inside the row loop of the row root, so a row is reduced and consumed while it is in
    // cache; the root's own parallel row loop covers it.
    const RegionFunc &root = lowered.regions[p.row_of];
    Halide::VarOrRVar row = root.vars.back();
    w.compute_at(f, root.func, &row);
}

// An elementwise region; its staged operand (lowering.h) is computed per vector of it (per
// element where it is not vectorized), inside whatever loop the region itself runs in.
void schedule_elementwise(ScheduleWriter &w, const RegionFunc &r, const RegionPlan &p) {
    Halide::VarOrRVar per_vector = schedule_pure_loops(w, r.func, r, p);
    if (!p.stage_operand) return;
    if (r.vars.empty()) {
        w.compute_root(r.staged_operand);
    } else {
        w.compute_at(r.staged_operand, r.func, &per_vector);
    }
    if (p.vector_axis == 0) w.vectorize(ScheduleWriter::pure(r.staged_operand), r.vars[0], static_cast<int>(p.vector_width), kTail);
}

// `acc` holds the update; `func` (the region's value) reads the answer out of it.
// (A Halide pipeline's reduction is its own accumulator, halide_pipeline.h.)
void schedule_reduction(ScheduleWriter &w, const RegionFunc &r, const RegionPlan &p) {
    schedule_pure_loops(w, r.func, r, p);
    Halide::Func acc = r.accumulator;
    if (!own_accumulator(r)) schedule_pure_loops(w, acc, r, p);
    StageRef update = ScheduleWriter::update(acc);
    if (r.rextents.empty()) {
        w.unscheduled(update);
        return;
    }
    bool scheduled = false;
    if (p.across_outputs) {
        // Neighbouring outputs reduce neighbouring inputs: vectorize across outputs.
        w.vectorize(update, r.vars[0], static_cast<int>(p.across_outputs), kTail);
        scheduled = true;
    } else if (p.lanes) {
        // Row reduction: split the innermost reduced axis into vector lanes and reduce those
        // lanes in an intermediate Func (reassociates the sum; within float tolerance).
        Halide::RVar outer("r_out"), inner("r_lane");
        Halide::Var lane("lane");
        Halide::Func lanes = w.split_and_rfactor(update, r.rdom[0], outer, inner, static_cast<int>(p.lanes), lane);
        if (r.vars.empty()) {
            w.compute_root(lanes);
        } else {
            Halide::VarOrRVar at = r.vars[0];
            w.compute_at(lanes, acc, &at);
        }
        w.vectorize(ScheduleWriter::pure(lanes), lane);
        w.vectorize(ScheduleWriter::update(lanes), lane);
        scheduled = true;
    }
    if (p.parallel_update_axis >= 0) {
        parallel_loop(w, update, r.vars[p.parallel_update_axis], p.parallel_update_grain);
        scheduled = true;
    }
    if (!scheduled) w.unscheduled(update);  // serial loops are the plan here, not an oversight
}

// A float sum (BlockedSum, lowering.h): the accumulator's lanes (or, with one lane, its
// outputs) are the vector; each block sum is computed in registers inside the accumulator's
// loop over blocks; the planned output axis runs in parallel.
void schedule_blocked_sum(ScheduleWriter &w, const RegionFunc &r, const RegionPlan &p) {
    schedule_pure_loops(w, r.func, r, p);
    const BlockedSum &b = *r.blocked_sum;
    Halide::Func acc = r.accumulator;
    w.compute_root(acc);   // a row-fused sum moves into the row loop with its region, last
    const bool vectorize = p.sum_vector > 0;
    const bool across_outputs = vectorize && b.lanes == 1;
    // The innermost loop of each update: the vector's (with no vector, the single lane's).
    Halide::VarOrRVar vec = across_outputs ? Halide::VarOrRVar(r.vars[0]) : Halide::VarOrRVar(b.lane);
    const int width = static_cast<int>(p.sum_vector);
    const bool parallel = p.parallel_update_axis >= 0;
    if (vectorize) w.vectorize(ScheduleWriter::pure(acc), vec, width, kTail);
    // The vector innermost in each update stage, then the stage's reduction loops.
    auto schedule_stage = [&](int stage, const Halide::RDom &domain, const Halide::Func &part) {
        if (stage < 0) return;
        StageRef update = ScheduleWriter::update(acc, stage - 1);
        std::vector<Halide::VarOrRVar> order{vec};
        if (domain.defined()) {
            for (int i = 0; i < domain.dimensions(); ++i) order.push_back(domain[i]);
        }
        if (order.size() > 1) w.reorder(update, order);
        if (vectorize) w.vectorize(update, vec, width, kTail);
        if (parallel) parallel_loop(w, update, r.vars[p.parallel_update_axis], p.parallel_update_grain);
        if (order.size() == 1 && !vectorize && !parallel) w.unscheduled(update);  // one serial pass
        // A part is needed for all lanes of one iteration of the domain's innermost loop (or,
        // without a domain, of one output row). (The tail's stage is the last one, which a
        // loop of a pure var names.)
        Halide::VarOrRVar at = domain.defined() ? Halide::VarOrRVar(domain[0])
                               : !r.vars.empty() ? Halide::VarOrRVar(r.vars.back())
                                                 : Halide::VarOrRVar(Halide::Var::outermost());
        w.compute_at(part, acc, domain.defined() || !r.vars.empty() ? &at : nullptr);
        if (vectorize) {
            w.vectorize(ScheduleWriter::pure(part), vec.var, width, kTail);
            for (int u = 0; u < part.num_update_definitions(); ++u) {
                w.vectorize(ScheduleWriter::update(part, u), vec.var, width, kTail);
            }
        }
    };
    schedule_stage(b.block_stage, b.block_domain, b.blocks);
    schedule_stage(b.tail_stage, b.tail_domain, b.tail);
    if (parallel) parallel_loop(w, ScheduleWriter::pure(acc), r.vars[p.parallel_update_axis], p.parallel_update_grain);
}

// A product through BLAS: the region's Func (a copy of the extern stage) split into tiles run
// in parallel, the stage computed per tile (one BLAS call on each thread, for that tile's rows
// or columns); the operands it needs stored at the root, vectorized.
void schedule_library_call(ScheduleWriter &w, const RegionFunc &r, const RegionPlan &p) {
    StageRef s = ScheduleWriter::pure(r.func);
    if (p.vector_axis >= 0) w.vectorize(s, r.vars[p.vector_axis], static_cast<int>(p.vector_width), kTail);
    if (p.library_tiles > 1) {
        Halide::Var tile("tile"), within("within");
        const int tiles = static_cast<int>(p.library_tiles);
        Halide::Expr size = (r.extent_exprs[p.library_axis] + (tiles - 1)) / tiles;
        w.split(s, r.vars[p.library_axis], tile, within, Halide::max(size, 1), kTail);
        w.parallel(s, tile);
        Halide::VarOrRVar at = tile;
        w.compute_at(r.accumulator, r.func, &at);
    } else {
        w.compute_root(r.accumulator);
    }
    for (const Halide::Func &operand : r.library_operands) {
        w.compute_root(operand);
        w.vectorize(ScheduleWriter::pure(operand), operand.args()[0], static_cast<int>(p.library), kTail);
    }
}

// Register-tiled matmul: each tile of TN x TM outputs accumulates in registers over all of K.
void schedule_matmul(ScheduleWriter &w, const RegionFunc &r, const RegionPlan &p) {
    Halide::Func f = r.func, acc = r.accumulator;
    const auto &v = r.vars;
    const int tn = static_cast<int>(p.tile_n), tm = static_cast<int>(p.tile_m);
    // The tiles fit the whole product, not whatever part a consumer reads: a slice such as
    // (a @ b)[:, :-1] asks for 7 of 8 columns, and a tile of 8 shifted inward to cover 7 would
    // start at column -1. Computing the full (static) shape costs at most one tile. (Not where
    // the extents are a Halide pipeline's estimates: its caller picks the size.)
    if (!r.estimated) {
        for (size_t i = 0; i < v.size(); ++i) w.bound(f, v[i], 0, r.extent_exprs[i]);
    }
    Halide::Var no("no"), mo("mo"), ni("ni"), mi("mi");
    // The parallel loop: a tile loop of axis 0 or 1, or a batch axis.
    const Halide::VarOrRVar parallel = p.parallel_axis == 0 ? Halide::VarOrRVar(no)
                                       : p.parallel_axis == 1 ? Halide::VarOrRVar(mo)
                                                              : Halide::VarOrRVar(v[std::max(p.parallel_axis, 0)]);
    // Vectorizing by the whole tile width (several native vectors) unrolls it fully, so the
    // tn x tm accumulators stay in registers across the k loop.
    // Column tiles outermost: one tn-wide panel of B stays in cache while every row tile of A
    // streams past it.
    auto tiles = [&](const StageRef &s, Halide::TailStrategy tail) {
        w.tile(s, v[0], v[1], no, mo, ni, mi, tn, tm, tail);
        w.reorder(s, {ni, mi, mo, no});
        w.vectorize(s, ni, tn, tail);
        w.unroll(s, mi, tm, tail);
        if (p.parallel_axis >= 0) w.parallel(s, parallel);
    };
    auto accumulate = [&](const StageRef &s, Halide::TailStrategy tail) {
        w.vectorize(s, v[0], tn, tail);
        w.unroll(s, v[1], tm, tail);
    };
    // Each update's loops: the tile's outputs inside its whole reduction domain.
    auto update_order = [&](size_t u) {
        std::vector<Halide::VarOrRVar> order{v[0], v[1]};
        for (int d = 0; d < r.product_rdoms[u].dimensions(); ++d) order.push_back(r.product_rdoms[u][d]);
        return order;
    };
    Halide::VarOrRVar tile_row = mo;
    if (r.symbolic || r.estimated) {
        // A symbolic extent may be smaller than a tile. Once both fit, the static schedule
        // runs; below, the tiles are guarded, and so is the accumulator (it covers exactly
        // what its tile needs, or it would read the operands past their ends). Estimated
        // extents (halide_pipeline.h): the same where they are an output's, read from its
        // buffer; guarded tiles only where they are not known at run time.
        const bool specialize = r.symbolic || !Halide::Internal::is_const(r.extent_exprs[0]);
        Halide::Expr fits = r.extent_exprs[0] >= tn && r.extent_exprs[1] >= tm;
        StageRef out = ScheduleWriter::pure(f);
        if (specialize) tiles(w.specialize(out, fits), Halide::TailStrategy::Auto);
        tiles(out, kTail);
        w.compute_at(acc, f, &tile_row);
        StageRef init = ScheduleWriter::pure(acc);
        if (specialize) accumulate(w.specialize(init, fits), Halide::TailStrategy::Auto);
        accumulate(init, kTail);
        for (size_t u = 0; u < r.product_rdoms.size(); ++u) {
            StageRef update = ScheduleWriter::update(acc, static_cast<int>(u));
            w.reorder(update, update_order(u));
            if (specialize) accumulate(w.specialize(update, fits), Halide::TailStrategy::Auto);
            accumulate(update, kTail);
        }
    } else {
        StageRef out = ScheduleWriter::pure(f);
        w.tile(out, v[0], v[1], no, mo, ni, mi, tn, tm, Halide::TailStrategy::Auto);
        w.reorder(out, {ni, mi, mo, no});
        w.vectorize(out, ni, tn, Halide::TailStrategy::Auto);
        w.unroll(out, mi);
        if (p.parallel_axis >= 0) w.parallel(out, parallel);
        w.compute_at(acc, f, &tile_row);
        StageRef init = ScheduleWriter::pure(acc);
        w.vectorize(init, v[0], tn, Halide::TailStrategy::Auto);
        w.unroll(init, v[1]);
        for (size_t u = 0; u < r.product_rdoms.size(); ++u) {  // matmul_sum: one update per product
            StageRef update = ScheduleWriter::update(acc, static_cast<int>(u));
            w.reorder(update, update_order(u));
            w.vectorize(update, v[0], tn, Halide::TailStrategy::Auto);
            w.unroll(update, v[1]);
        }
    }
}

}  // namespace

std::string apply_schedule(LoweredPipeline &lowered, const Schedule &schedule) {
    std::vector<RegionPlan> plans = plan_regions(lowered, schedule);
    ScheduleWriter w;
    const bool on_gpu =
        std::any_of(plans.begin(), plans.end(), [](const RegionPlan &p) { return p.gpu_threads_x > 0 || p.gpu_rows > 0; });
    for (const Halide::Func &f : lowered.point_load_funcs) {  // not regions: no choices
        if (on_gpu) {
            schedule_gpu_point_loads(w, f);
        } else {
            w.compute_root(f);
        }
    }
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &r = lowered.regions[i];
        const RegionPlan &p = plans[i];
        if (p.inlined) {
            w.compute_inline(r.func);
            if (r.library_call) schedule_gpu_library_call(w, r);  // its readers read the call's result
            continue;
        }
        if (p.gpu_rows) {
            schedule_gpu_rows_root(w, r, p);
            continue;
        }
        if (p.gpu_threads_x && p.row_of >= 0) {
            schedule_gpu_row_member(w, r, lowered.regions[p.row_of], plans[p.row_of], p);
            continue;
        }
        if (p.gpu_threads_x) {
            schedule_gpu_region(w, lowered, r, p);
            continue;
        }
        place(w, r.func, lowered, plans, p);
        if (r.library_call) {
            schedule_library_call(w, r, p);
        } else if (r.op_class == OpClass::Matmul && r.vars.size() >= 2) {
            schedule_matmul(w, r, p);
        } else if (r.blocked_sum) {
            schedule_blocked_sum(w, r, p);
        } else if (r.accumulator.defined()) {
            if (p.row_of < 0 && !own_accumulator(r)) w.compute_root(r.accumulator);
            schedule_reduction(w, r, p);
        } else {
            schedule_elementwise(w, r, p);
        }
        // A row-fused region's accumulator moves into the row loop with it (last, as the
        // accumulator's own placement above is the root's or its tile's).
        if (p.row_of >= 0 && r.accumulator.defined() && !own_accumulator(r)) place(w, r.accumulator, lowered, plans, p);
    }
    return w.source();
}

std::vector<int64_t> least_symbol_sizes(const LoweredPipeline &lowered, const Schedule &schedule, size_t symbols) {
    std::vector<int64_t> least(symbols, 0);
    for (const Decision &d : schedule) {
        if (d.choice != Choice::GpuRows || d.value == 1 || d.value2 <= 1 || d.region < 0 ||
            d.region >= static_cast<int>(lowered.regions.size())) {
            continue;
        }
        const auto [symbol, offset] = lowered.regions[d.region].extent_symbol(row_axis(lowered.regions[d.region]));
        if (symbol >= 0 && static_cast<size_t>(symbol) < symbols) {
            least[symbol] = std::max(least[symbol], d.value2 - offset);
        }
    }
    return least;
}

}  // namespace hc
