#include "gpu_directives.h"

#include "hcompile/analysis.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hc {

namespace {

// Guarded tails, as on the CPU (apply_schedule.cpp): a last partial tile computes only its own
// points.
constexpr Halide::TailStrategy kTail = Halide::TailStrategy::GuardWithIf;

// A thread's serial steps along a row (its columns a block width apart; its share of a
// reduction) are unrolled by this much, so that the thread has that many loads in flight instead
// of one: measured on an H200, softmax over rows of 8192 went 0.365 -> 0.325 ms, layer norm 0.111
// -> 0.100 ms (unrolled by 1, 2, 4, 8: softmax 0.365, 0.335, 0.330, 0.325).
constexpr int kUnrollSteps = 8;

// A block's partial results of a reduction are combined by this many threads, each reducing
// every kCombineLanes-th, before one thread reduces theirs: 16 + 16 serial steps instead of one
// thread's 256, while the other threads of the block wait.
constexpr int64_t kCombineLanes = 16;

// A stage run by one GPU thread (of one block): a region with no axes, and what it reads.
void single_gpu_thread(ScheduleWriter &w, const Halide::Func &f) {
    w.gpu_single_thread(ScheduleWriter::pure(f));
    for (int u = 0; u < f.num_update_definitions(); ++u) w.gpu_single_thread(ScheduleWriter::update(f, u));
}

// Each array `r` reads transposed (GpuStageTransposed), copied per block into shared memory
// before the block's threads read it: the array's tile (its axis 0 walked by r's tiled axis k, its
// axis j by r's axis 0) by the block's threads along the array's rows, each thread its rows a
// block's height apart. The tile's rows are padded by one element: the block's threads then read
// a column of it from 32 different banks of shared memory, where rows of 32 put the column in one
// bank.
void stage_transposed_tiles(ScheduleWriter &w, const std::vector<TransposedRead> &reads, const RegionFunc &r,
                            const RegionPlan &p, const Halide::VarOrRVar &block) {
    const int64_t tile_rows = p.gpu_threads_y * std::max<int64_t>(p.gpu_rows_per_thread, 1);   // r's axis k
    for (const TransposedRead &read : reads) {
        // An array also read along its rows (a + a.T): the copy serves the reads across only (a
        // wrapper of every read would stage the bounding box of both tiles).
        const std::pair<int, int> across{read.region_axis, read.array_axis};
        Halide::Func staged = read.also_straight
                                  ? w.rerouted_copy(read.array, r.func, [&](const std::vector<Halide::Expr> &args) {
                                        return transposed_axes(args, r) == across;
                                    })
                                  : w.in_wrapper(read.array, r.func);
        w.compute_at(staged, r.func, &block);
        const std::vector<Halide::Var> axes = staged.args();
        StageRef s = ScheduleWriter::pure(staged);
        Halide::Var column("stage_column"), row("stage_row");
        w.split(s, axes[read.array_axis], column, row, static_cast<int>(p.gpu_threads_y), kTail);
        // A thread's rows innermost (no barrier between them), then the tile's other axes (one
        // point each: the block's), then the threads. (A tile narrower than a warp along the
        // array's axis 0, 16 channels, leaves half of each warp idle in this copy; folding rows
        // of axis j into the warp (split and fuse) read the array out of its bounds on an H100,
        // even where the tiles covered the region exactly.)
        std::vector<Halide::VarOrRVar> order{column};
        for (size_t a = 1; a < axes.size(); ++a) {
            if (static_cast<int>(a) != read.array_axis) order.push_back(axes[a]);
        }
        order.push_back(axes[0]);
        order.push_back(row);
        w.reorder(s, order);
        w.unroll(s, column);
        w.gpu_threads(s, axes[0]);
        w.gpu_threads(s, row);
        w.bound_storage(staged, axes[0], Halide::Expr(static_cast<int>(tile_rows + 1)));
    }
}

// Each operand of a product (GpuStageOperands) copied per block into shared memory before the
// block's threads read it in their register tiles: a's rows of the block's tile and b's columns,
// over the whole contraction, by the block's threads along the operand's axis 0 (neighbouring
// elements: coalesced loads; a transposed k of an attention's q @ k^T is read along its rows
// here, where a thread per output read it a row apart per thread), each thread's points of the
// tile a block's width or height apart, unrolled (their loads in flight together). a's rows are
// padded by one element: the threads of a warp then store a column of it in different banks of
// shared memory. Measured on an H200 (a prototype: 16x8 heads of 64x64x64 read from one product's
// rows with its bias): 6.2 us in 64x64 tiles of 16x16 threads staged, 10.7 a thread per output,
// against 18.4 for PyTorch's bias add, copies and batched cuBLAS call.
void stage_product_operands(ScheduleWriter &w, const RegionFunc &r, const RegionPlan &p, const Halide::VarOrRVar &block) {
    const int64_t contraction = r.rextents[0];
    const int64_t tile_columns = p.gpu_threads_x * std::max<int64_t>(p.gpu_vector, 1);
    const int64_t tile_rows = p.gpu_threads_y * std::max<int64_t>(p.gpu_rows_per_thread, 1);
    for (size_t i = 0; i < r.product_operands.size(); ++i) {
        // a[..., m, k] is (k, m, ...) in Halide's order, b[..., k, n] (n, k, ...).
        const bool is_a = i == 0;
        Halide::Func staged = w.in_wrapper(r.product_operands[i], r.accumulator);
        w.compute_at(staged, r.func, &block);
        const std::vector<Halide::Var> axes = staged.args();
        StageRef s = ScheduleWriter::pure(staged);
        Halide::Var outer_x("stage_outer_x"), outer_y("stage_outer_y"), thread_x("stage_thread_x"), thread_y("stage_thread_y");
        w.split(s, axes[0], outer_x, thread_x, static_cast<int>(p.gpu_threads_x), kTail);
        w.split(s, axes[1], outer_y, thread_y, static_cast<int>(p.gpu_threads_y), kTail);
        std::vector<Halide::VarOrRVar> order{outer_x, outer_y};
        for (size_t a = 2; a < axes.size(); ++a) order.push_back(axes[a]);   // the block's batch: one point
        order.push_back(thread_x);
        order.push_back(thread_y);
        w.reorder(s, order);
        w.unroll(s, outer_x);
        w.unroll(s, outer_y);
        w.gpu_threads(s, thread_x);
        w.gpu_threads(s, thread_y);
        w.bound_storage(staged, axes[0], Halide::Expr(static_cast<int>(is_a ? contraction + 1 : tile_columns)));
        w.bound_storage(staged, axes[1], Halide::Expr(static_cast<int>(is_a ? tile_rows : contraction)));
    }
}

// A GpuRows root's block loops fused into one, named so, the grid's x (its y and z stop at 65535
// blocks): where an axis past the rows is symbolic (a batch of any size), and a reduction's of
// symbolic extents (gpu_rows_reduction; the sizes are known only at run time). Measured on an
// H200 (64M float32 elements as (batch, tokens, features), the batch of any size, CUDA events),
// fused against the batch as the grid's x and the rows' blocks its y: layer norm over 64 features
// 134.0 us against 148.1 (the static kernel's 136.4), sums 67.7 against 76.5 (68.1), softmax
// over 1024 135.7 against 145.5 (134.9); softmax over 64 159.0 against 149.5 (146.8).
constexpr const char *kFusedRows = "gpu_rows_fused";
bool fuses_block_loops(const RegionFunc &root, const RegionPlan &p) {
    const size_t first = first_block_axis(root, p.gpu_rows_per_block);
    return symbolic_past(root, first) ||
           (root.accumulator.defined() && !root.point_rows && !block_loops_fit_grid(root, first));
}

// Whether GpuRows root `root` computes a point a row: a reduction's outputs, a point-rows root's
// points (RegionFunc::point_rows).
bool point_a_row(const RegionFunc &root) { return root.accumulator.defined() || root.point_rows; }

// The block loop of a GpuRows root of several rows a block (GpuRows' value2): its axis 1 split
// into blocks of rows.
constexpr const char *kRowBlocks = "gpu_row_block";
// ... and its thread loop over the block's rows (the threads' y).
constexpr const char *kBlockRow = "gpu_block_row";

// Where a region computed per row of a GpuRows root is computed: the loop over rows of the root,
// the innermost of its block loops (an elementwise root's axes past the innermost, a reduction's
// every axis: one block per output). With several rows a block (GpuRows' value2), the loop over
// those blocks: each Func computed there holds the block's rows, its axis `row` (by name) on the
// block's second thread dimension, y (empty: one row a block).
struct RowBlock {
    Halide::VarOrRVar loop;
    std::string row;
};

// (plan_regions has checked that each member of a root of several rows a block has a row axis.)
RowBlock row_block_of(const RegionFunc &r, const RegionFunc &root, const RegionPlan &root_plan) {
    const std::string row = root_plan.gpu_rows_per_block > 1
                                ? r.vars[&r == &root ? row_axis(root) : *member_row_axis(r, root)].name()
                                : std::string();
    if (fuses_block_loops(root, root_plan)) return {Halide::Var(kFusedRows), row};
    if (root_plan.gpu_rows_per_block > 1) return {Halide::Var(kRowBlocks), row};
    return {root.vars[point_a_row(root) ? 0 : 1], ""};
}

// Stage `s` of `f`, computed at a block of rows, with its threads (x, along `x`) for each of the
// block's rows: f's row axis the threads' y, outside x. Nothing where a block has one row, or
// where x is the row axis itself (a reduction's value, a thread per row).
void threads_over_rows(ScheduleWriter &w, const StageRef &s, const Halide::Func &f, const Halide::VarOrRVar &x,
                       const RowBlock &at) {
    if (at.row.empty() || x.name() == at.row) return;
    for (const Halide::Var &v : f.args()) {
        if (v.name() != at.row) continue;
        w.reorder(s, {x, v});
        w.gpu_threads(s, v);
        return;
    }
    throw std::invalid_argument("schedule: " + f.name() + " is computed per block of rows and has no row axis " + at.row);
}

// The points of axis 0 a GPU thread computes as one vector (GpuVector; one without it).
int thread_vector(const RegionPlan &p) { return static_cast<int>(std::max<int64_t>(p.gpu_vector, 1)); }

// How many of a thread's `steps` serial steps are unrolled: kUnrollSteps, or fewer where the
// thread has fewer steps (a power of two: the unrolled loop then runs whole, where the guarded
// tail of a longer unroll computed everything: layer norm over rows of 4096, four steps a thread,
// ran every load and store behind a condition; unrolled by four, 0.103 -> 0.095 ms on an H100,
// 96% of a copy's bandwidth). A symbolic extent's steps are not known: 0.
int unroll_factor(int64_t steps) {
    if (steps <= 0) return kUnrollSteps;
    int factor = 1;
    while (factor * 2 <= kUnrollSteps && factor * 2 <= steps) factor *= 2;
    return factor;
}

// A thread's steps over `extent` points, `per_step` points a step (0 where the extent is symbolic).
int64_t steps_of(int64_t extent, bool symbolic, int64_t per_step) {
    return symbolic ? 0 : (extent + per_step - 1) / per_step;
}

// The thread loop of threads_across.
constexpr const char *kThreadAcross = "gpu_thread_x";

// Axis `v` of stage `s` in vectors of `vector` neighbours (wide loads and stores where aligned),
// where `vector` > 1: the loop over the vectors, or `v` itself.
Halide::VarOrRVar in_vectors(ScheduleWriter &w, const StageRef &s, const Halide::VarOrRVar &v, int vector) {
    if (vector <= 1) return v;
    Halide::Var vectors("gpu_vectors"), lanes("gpu_vector");
    w.split(s, v, vectors, lanes, vector, kTail);
    w.vectorize(s, lanes);
    return vectors;
}

// `s`'s innermost axis `v` across `threads` GPU threads, each thread walking its columns a block
// width apart (coalesced: neighbouring threads read neighbouring elements), the walk innermost so
// that the block's threads need no barrier between its steps. `vector` > 1: a thread's columns
// are vectors of that many neighbours (wide loads and stores where aligned). `steps`: each
// thread's (steps_of), for its unroll.
void threads_across(ScheduleWriter &w, const StageRef &s, const Halide::VarOrRVar &v, int64_t threads, int vector,
                    int64_t steps) {
    Halide::Var step("gpu_step"), thread(kThreadAcross);
    const Halide::VarOrRVar columns = in_vectors(w, s, v, vector);
    w.split(s, columns, step, thread, static_cast<int>(threads), kTail);
    w.reorder(s, {step, thread});
    w.gpu_threads(s, thread);
    const int unroll = unroll_factor(steps);
    if (unroll > 1) w.unroll(s, step, unroll, kTail);
}

// `f` computed per thread in registers: inside the thread loop (over `thread`) of a wrapper
// that `consumer` reads instead, the wrapper computed at `root`'s row (in shared memory).
void per_thread_in_wrapper(ScheduleWriter &w, const Halide::Func &f, const Halide::Func &consumer,
                           const Halide::Func &root, const RowBlock &at, const Halide::VarOrRVar &thread) {
    Halide::Func staged = w.in_wrapper(f, consumer);
    w.compute_at(staged, root, &at.loop);
    w.gpu_threads(ScheduleWriter::pure(staged), thread);
    threads_over_rows(w, ScheduleWriter::pure(staged), staged, thread, at);
    w.compute_at(f, staged, &thread);
}

// Partial results of a block's reduction (an rfactor intermediate, one per thread) that
// `consumer` reads: each thread accumulates its own in a register (the intermediate computed
// inside the thread loop of a wrapper), the wrapper then stores the block's partial results in
// shared memory for the next step. Computed at the block itself, the accumulator lived in shared
// memory, a load and a store each step (softmax over rows of 8192 on an H100, its max reduced
// this way: 0.252 -> 0.243 ms). Its `unroll` steps a time are unrolled.
void accumulate_per_thread(ScheduleWriter &w, const Halide::Func &partial, const Halide::Func &consumer,
                           const Halide::Func &root, const RowBlock &at, const Halide::Var &thread,
                           const Halide::RVar &step, int unroll) {
    per_thread_in_wrapper(w, partial, consumer, root, at, thread);
    StageRef partial_update = ScheduleWriter::update(partial);
    w.reorder(partial_update, {step, thread});
    if (unroll > 1) w.unroll(partial_update, step, unroll, kTail);
}

// As accumulate_per_thread, a thread reading `vector` neighbouring elements a step (one wide
// load where aligned): `partial` holds them side by side in one vector register (its pure
// variable `lanes`), and `folded` (a result a thread, over `lane_steps`) reduces them in the
// thread before the block's threads combine theirs. Handed on unfolded, a block's max over rows
// of 8192 had four times the partial results to combine, 64 serial steps for each of 16 threads.
void accumulate_vectors_per_thread(ScheduleWriter &w, const Halide::Func &partial, const Halide::Func &folded,
                                   const Halide::Func &consumer, const Halide::Func &root,
                                   const RowBlock &at, const Halide::Var &thread, const Halide::Var &lanes,
                                   const Halide::RVar &step, const Halide::RVar &lane_steps, int unroll, int vector) {
    per_thread_in_wrapper(w, folded, consumer, root, at, thread);
    w.unroll(ScheduleWriter::update(folded), lane_steps);
    const Halide::VarOrRVar per_thread = thread;
    w.compute_at(partial, folded, &per_thread);
    w.vectorize(ScheduleWriter::pure(partial), lanes, vector, kTail);
    StageRef partial_update = ScheduleWriter::update(partial);
    w.reorder(partial_update, {lanes, step});
    w.vectorize(partial_update, lanes, vector, kTail);
    if (unroll > 1) w.unroll(partial_update, step, unroll, kTail);
}

// An arg reduction's lanes (LaneParts), a thread each of a block of `root` (at `at`): each lane's
// running best in its thread's registers, computed per thread of a copy in shared memory, which
// the levels read, a thread a lane of theirs. Each lane's steps unrolled as a row's are. The
// running best kept in shared memory, a load and a store of it every element, kept L1 88% busy and
// DRAM 35% (argmax over rows of 1024 on an H200: 318 us, torch.compile 131).
void lanes_as_threads(ScheduleWriter &w, const LaneParts &lanes, const RegionFunc &r, const RegionFunc &root,
                      const RowBlock &at) {
    const Halide::Func first_reader = lanes.levels.empty() ? r.accumulator : lanes.levels.front();
    const Halide::Func staged = w.in_wrapper(lanes.func, first_reader);
    std::vector<std::pair<Halide::Func, Halide::Var>> shared{{staged, lanes.lane}};
    for (const Halide::Func &level : lanes.levels) shared.emplace_back(level, level.args()[0]);
    for (const auto &[f, lane] : shared) {
        w.compute_at(f, root.func, &at.loop);
        w.gpu_threads(ScheduleWriter::pure(f), lane);
        threads_over_rows(w, ScheduleWriter::pure(f), f, lane, at);
    }
    const Halide::VarOrRVar per_lane = lanes.lane;
    w.compute_at(lanes.func, staged, &per_lane);
    const int unroll = unroll_factor(steps_of(r.rextents[0], r.symbolic, lanes.lanes));
    if (unroll > 1) w.unroll(ScheduleWriter::update(lanes.func), lanes.steps, unroll, kTail);
}

// Update `index` - 1 of blocked sum `b`'s accumulator `acc` (its stage over `domain`, undefined
// for a stage over the lanes alone), its loops over the domain inside its loop over the lanes
// (each lane, a thread, walks its parts).
StageRef lanes_outside_parts(ScheduleWriter &w, const Halide::Func &acc, const BlockedSum &b, int index,
                             const Halide::RDom &domain) {
    StageRef update = ScheduleWriter::update(acc, index - 1);
    std::vector<Halide::VarOrRVar> order;
    if (domain.defined()) {
        for (int i = 0; i < domain.dimensions(); ++i) order.push_back(domain[i]);
    }
    order.push_back(b.lane);
    if (order.size() > 1) w.reorder(update, order);
    return update;
}

// The loop of a blocked sum's accumulator stage over `domain` where its part is computed: a part
// per step of the domain, or per lane.
Halide::VarOrRVar part_loop(const BlockedSum &b, const Halide::RDom &domain) {
    return domain.defined() ? Halide::VarOrRVar(domain[0]) : Halide::VarOrRVar(b.lane);
}

// The accumulator of reduction `r`, computed per block of `root` (r's row there, or r's own
// output when `r` is the root) by the block's threads: a blocked sum by its lanes, another
// reduction over the row by `threads` partial results (rfactor), then one thread.
void schedule_gpu_block_reduction(ScheduleWriter &w, const RegionFunc &r, const RegionFunc &root,
                                  const RegionPlan &root_plan, int64_t threads) {
    const RowBlock at = row_block_of(r, root, root_plan);
    Halide::Func acc = r.accumulator;
    if (r.lane_parts) lanes_as_threads(w, *r.lane_parts, r, root, at);   // then their best by one thread
    if (r.blocked_sum) {
        w.compute_at(acc, root.func, &at.loop);
        // The sum's lanes are the threads; each walks its blocks (inner stages computed per block).
        const BlockedSum &b = *r.blocked_sum;
        w.gpu_threads(ScheduleWriter::pure(acc), b.lane);
        threads_over_rows(w, ScheduleWriter::pure(acc), acc, b.lane, at);
        auto stage = [&](int index, const Halide::RDom &domain, const Halide::Func &part) {
            if (index < 0) return;
            if (part.num_update_definitions() > 0 && !part.rvars(0).empty()) {   // a lane's block
                const Halide::RVar step = part.rvars(0)[0];
                const std::optional<int64_t> steps = Halide::Internal::as_const_int(Halide::Internal::simplify(step.extent()));
                const int unroll = unroll_factor(steps.value_or(0));
                if (unroll > 1) {
                    w.unroll(ScheduleWriter::update(part), step, unroll, kTail);
                    // A tail's second update (a gather of the last elements) keeps its loops.
                    for (int u = 1; u < part.num_update_definitions(); ++u) w.unscheduled(ScheduleWriter::update(part, u));
                }
            }
            const StageRef update = lanes_outside_parts(w, acc, b, index, domain);
            w.gpu_threads(update, b.lane);
            threads_over_rows(w, update, acc, b.lane, at);
            const Halide::VarOrRVar per_part = part_loop(b, domain);
            w.compute_at(part, acc, &per_part);
        };
        stage(b.block_stage, b.block_domain, b.blocks);
        stage(b.tail_stage, b.tail_domain, b.tail);
        if (b.groups.defined()) {   // the lanes' sums, a group a thread
            w.compute_at(b.groups, root.func, &at.loop);
            w.gpu_threads(ScheduleWriter::pure(b.groups), b.group);
            threads_over_rows(w, ScheduleWriter::pure(b.groups), b.groups, b.group, at);
        }
        return;
    }
    StageRef update = ScheduleWriter::update(acc);
    bool in_register = false;   // the last step's one thread accumulates in a register
    if (r.associative_vectorizable && r.rdom.defined()) {
        // Each thread reduces every `threads`-th element of the row; kCombineLanes threads then
        // reduce the threads' partial results, each every kCombineLanes-th; one thread reduces
        // theirs.
        //
        // Rows of a known length, a multiple of four and at least two steps of four a thread:
        // a thread's step reads four neighbouring elements (a 16-byte load). One element a step,
        // a block of softmax's rows of 8192 had 8 KB of loads in flight, too few to keep the
        // memory busy at four blocks a multiprocessor.
        // Not for 64-bit values: LLVM's NVPTX back end takes no vectors of them (a float64 row
        // min's vector NaN test was a call of the wrong signature, an abort in an LLVM built
        // with assertions). Not for a row whose length is only known at run time either.
        const int64_t extent = r.rextents[0];
        const std::optional<int64_t> known = Halide::Internal::as_const_int(Halide::Internal::simplify(r.rdom[0].extent()));
        const std::vector<Halide::Type> types = acc.types();
        const bool narrow = std::all_of(types.begin(), types.end(), [](const Halide::Type &t) { return t.bits() <= 32; });
        const int vector = narrow && !r.symbolic && known && *known == extent && extent % kVectorReadLanes == 0 &&
                                   extent >= 2 * kVectorReadLanes * threads
                               ? static_cast<int>(kVectorReadLanes) : 1;
        Halide::RVar outer("r_step"), inner("r_thread"), group("r_group"), member("r_member");
        Halide::RVar vectors("r_vectors"), lane_steps("r_lane");
        Halide::Var thread("gpu_thread_x"), lane("gpu_combine_x"), lanes("gpu_vector_lane");
        // After these, the accumulator's update reduces over `inner`, one partial result a thread.
        Halide::Func partial, folded;
        if (vector > 1) {
            partial = w.split_and_rfactor(update, r.rdom[0], outer, vectors, static_cast<int>(threads * vector), lanes);
            folded = w.split_and_rfactor(update, vectors, inner, lane_steps, vector, thread, /*rfactor_outer=*/true);
        } else {
            partial = w.split_and_rfactor(update, r.rdom[0], outer, inner, static_cast<int>(threads), thread);
        }
        Halide::Func combined;
        if (threads % kCombineLanes == 0 && threads > kCombineLanes) {
            combined = w.split_and_rfactor(update, inner, group, member, kCombineLanes, lane);
        }
        const Halide::Func &next = combined.defined() ? combined : acc;
        const int unroll = unroll_factor(steps_of(extent, r.symbolic, threads * vector));
        if (vector > 1) {
            accumulate_vectors_per_thread(w, partial, folded, next, root.func, at, thread, lanes, outer, lane_steps,
                                          unroll, vector);
        } else {
            accumulate_per_thread(w, partial, next, root.func, at, thread, outer, unroll);
        }
        // Each combining thread's steps unrolled: their loads issue together, and only the
        // reduction's own chain is serial.
        if (combined.defined()) {
            accumulate_per_thread(w, combined, acc, root.func, at, lane, group, unroll_factor(threads / kCombineLanes));
        }
        // The last step, one thread's: in a register (computed in the thread loop of a wrapper
        // its consumer reads), its steps unrolled. Computed at the block, the accumulator was in
        // shared memory, a load and a store a step, while the block's other threads waited.
        in_register = r.func.name() != acc.name();
        if (in_register) {
            per_thread_in_wrapper(w, acc, r.func, root.func, at, r.vars[0]);
            const Halide::RVar &last = combined.defined() ? member : inner;   // (an rfactor leaves its variable's name)
            w.unroll(update, last, unroll_factor(combined.defined() ? kCombineLanes : threads), kTail);
        }
    }
    if (!in_register) {   // the rest serially, by one thread
        w.compute_at(acc, root.func, &at.loop);
        w.gpu_threads(ScheduleWriter::pure(acc), r.vars[0]);
        threads_over_rows(w, ScheduleWriter::pure(acc), acc, r.vars[0], at);
        w.gpu_threads(update, r.vars[0]);
        threads_over_rows(w, update, acc, r.vars[0], at);
    }
}

// Every stage of `f` with its whole loop over `lane` one vector (innermost), each update's first
// reduction loop unrolled by `unroll`.
void lanes_in_one_vector(ScheduleWriter &w, const Halide::Func &f, const Halide::Var &lane, int unroll) {
    w.vectorize(ScheduleWriter::pure(f), lane);
    for (int u = 0; u < f.num_update_definitions(); ++u) {
        StageRef update = ScheduleWriter::update(f, u);
        std::vector<Halide::VarOrRVar> order{lane};
        for (const Halide::RVar &v : f.rvars(u)) order.push_back(v);
        if (order.size() > 1) w.reorder(update, order);
        w.vectorize(update, lane);
        if (unroll > 1 && order.size() > 1) w.unroll(update, order[1], unroll, kTail);
    }
}

// A thread's reduction over a short row (thread_reads_row_in_vectors; max, min, prod, any, all,
// integer sums: no blocked lanes of their own) reads kVectorReadLanes neighbouring elements a
// step (a 16-byte load; device arrays are 16-byte aligned), reduced side by side in one vector
// register (rfactor), its steps unrolled, then the vector's lanes folded. One element a step, a
// warp's loads over rows of 16 touched 32 rows' cache lines each (a float sum that way: L1 95%
// busy, DRAM 28% on an H200).
// `whole_row`: every step unrolled (a row read from a Func stored per thread: constant indices).
void reduce_row_in_vector(ScheduleWriter &w, const RegionFunc &r, bool whole_row) {
    StageRef update = ScheduleWriter::update(r.accumulator);
    Halide::RVar steps("r_step"), lanes_of("r_lane");
    Halide::Var lane("gpu_vector_lane");
    const Halide::Func partial =
        w.split_and_rfactor(update, r.rdom[0], steps, lanes_of, static_cast<int>(kVectorReadLanes), lane);
    w.compute_at(partial, r.accumulator, nullptr);
    const int64_t step_count = r.rextents[0] / kVectorReadLanes;
    lanes_in_one_vector(w, partial, lane, whole_row ? static_cast<int>(step_count) : unroll_factor(step_count));
    w.unroll(update, lanes_of);
}

// Every reduction loop of `f`'s updates unrolled whole (none of them split; static extents), and
// its loops over pure variable `lanes` (a blocked sum's lanes that no vector holds) where given.
void unroll_reductions(ScheduleWriter &w, const Halide::Func &f, const Halide::Var *lanes = nullptr) {
    if (lanes) w.unroll(ScheduleWriter::pure(f), *lanes);
    for (int u = 0; u < f.num_update_definitions(); ++u) {
        for (const Halide::RVar &v : f.rvars(u)) w.unroll(ScheduleWriter::update(f, u), v);
        if (lanes) w.unroll(ScheduleWriter::update(f, u), *lanes);
    }
}

// The accumulator of a thread's tile of `vector` x `rows` points (gpu_vector on a matrix product):
// its points innermost, vectorized and unrolled, and its reduction loops outside them (Halide's
// default puts them inside), so that a step of the contraction loads each operand's values once
// for the whole tile, kept in registers.
void schedule_register_tile(ScheduleWriter &w, const Halide::Func &acc, int vector, int rows) {
    const std::vector<Halide::Var> vars = acc.args();
    auto tile = [&](const StageRef &s, const std::vector<Halide::RVar> &rvars) {
        std::vector<Halide::VarOrRVar> order{vars[0]};
        if (vars.size() > 1) order.push_back(vars[1]);
        order.insert(order.end(), rvars.begin(), rvars.end());
        if (!rvars.empty()) w.reorder(s, order);
        if (vector > 1) w.vectorize(s, vars[0], vector, kTail);
        if (rows > 1 && vars.size() > 1) w.unroll(s, vars[1], rows, kTail);
    };
    tile(ScheduleWriter::pure(acc), {});
    for (int u = 0; u < acc.num_update_definitions(); ++u) tile(ScheduleWriter::update(acc, u), acc.rvars(u));
    // One size for every thread's tile (a last, partial tile computes fewer points): sized by its
    // bounds alone, the tile varied per thread, and Halide kept it in shared memory instead of
    // registers, sizing that on the host at each call by a loop over every thread of the grid.
    if (vector > 1) w.bound_storage(acc, vars[0], Halide::Expr(vector));
    if (rows > 1 && vars.size() > 1) w.bound_storage(acc, vars[1], Halide::Expr(rows));
}

// Stage `s` a thread per point of `axes` (its pure variables), fused into one loop named after
// `name` (axes[0] innermost: neighbouring threads compute neighbouring points) in blocks of
// `threads`: one grid dimension, no limit on the points.
void thread_per_point(ScheduleWriter &w, const StageRef &s, const std::vector<Halide::Var> &axes, const std::string &name,
                      int threads) {
    Halide::VarOrRVar point = axes[0];
    for (size_t i = 1; i < axes.size(); ++i) {
        Halide::Var fused(name + (i > 1 ? std::to_string(i) : std::string()));
        w.fuse(s, point, axes[i], fused);
        point = fused;
    }
    Halide::Var block("gpu_block_x"), thread("gpu_thread_x");
    w.split(s, point, block, thread, threads, kTail);
    w.gpu_threads(s, thread);
    w.gpu_blocks(s, block);
}

// The stored lanes of an arg reduction (LaneParts::stored: down columns, or along few rows): a
// kernel of a thread per lane and output, their axes fused (the lowering put the axis along the
// array's rows innermost: a warp reads neighbouring elements), each thread's steps unrolled; then
// a kernel per level of lanes, the same way.
void schedule_gpu_stored_lanes(ScheduleWriter &w, const LaneParts &lanes, const RegionFunc &r) {
    for (const Halide::Func &kernel : lanes.stages()) {
        w.compute_root(kernel);
        thread_per_point(w, ScheduleWriter::pure(kernel), kernel.args(), "gpu_lane_point", kLaneKernelThreads);
        for (int u = 0; u < kernel.num_update_definitions(); ++u) {
            thread_per_point(w, ScheduleWriter::update(kernel, u), kernel.args(), "gpu_lane_point", kLaneKernelThreads);
        }
    }
    const int unroll = unroll_factor(steps_of(r.rextents[0], r.symbolic, lanes.lanes));
    if (unroll > 1) w.unroll(ScheduleWriter::update(lanes.func), lanes.steps, unroll, kTail);
}

// The reduction of `r` by the thread that computes its output point (its accumulator placed there
// already): its parts (an arg reduction's lanes, a blocked sum's blocks) inside the accumulator's
// loops, a short row read a vector a step (thread_reads_row_in_vectors) where `vector_reads` (not
// a register tile of several points, nor a one-thread kernel's 0-d output, whose accumulator has
// no loop of the thread's to compute the vector's partial results in). `whole_row` (a row of a
// static length that Funcs stored per thread hold, thread_rows): every loop over the row
// unrolled, so that each read of them has a constant index. A loop left (a sum's tail over a row of 4) put the stored row in the thread's
// local memory, whose vector stores Halide's CUDA back end left misaligned (an error at run time).
void reduce_in_output_thread(ScheduleWriter &w, const RegionFunc &r, bool vector_reads, bool whole_row) {
    const Halide::Func &acc = r.accumulator;
    const bool row_vector = vector_reads && !r.blocked_sum && thread_reads_row_in_vectors(r);
    if (row_vector) {
        reduce_row_in_vector(w, r, whole_row);   // (a float sum's lanes: below)
    } else if (whole_row && !r.blocked_sum) {
        unroll_reductions(w, acc);
    } else if (!r.blocked_sum && !r.lane_parts && !r.symbolic && r.rdom.defined() && r.rextents.size() == 1) {
        // Its steps unrolled, their loads in flight together (as a float sum's blocks below):
        // max down 8M x 16 columns 179.7 -> 155.8 us on an H200, integer sums 173.3 -> 150.3.
        const int unroll = unroll_factor(r.rextents[0]);
        if (unroll > 1) w.unroll(ScheduleWriter::update(acc), r.rdom[0], unroll, kTail);
    }
    const LaneParts *parts = r.lane_parts ? &*r.lane_parts : nullptr;
    if (parts && parts->levels.empty() && !parts->stored && r.reduces_innermost && !r.symbolic && !whole_row &&
        parts->lanes <= kVectorReadLanes && !r.rextents.empty() && r.rextents[0] % parts->lanes == 0 &&
        parts->func.types()[0].bits() == 32) {
        // An arg reduction over a short row (2 or 4 lanes, a thread a row): the lanes as one
        // vector, their step's neighbouring elements one load, its steps unrolled; then the
        // accumulator takes their best. A lane at a time, each walking the row in strides,
        // argmax over 5.6M rows of 24 float32 took 767 us on an H100 (torch.compile 221). Only
        // 32-bit values: LLVM's NVPTX back end compared int8 vectors' lanes zero-extended, as
        // unsigned (argmax over int8 rows of 16 on an H200 gave a negative value's index), also
        // where they were widened first (it folds the widening into the comparison).
        const StageRef walk = ScheduleWriter::update(parts->func);
        w.compute_at(parts->func, acc, nullptr);
        w.bound(parts->func, parts->lane, 0, parts->lanes);
        w.vectorize(ScheduleWriter::pure(parts->func), parts->lane);
        w.reorder(walk, {parts->lane, parts->steps});
        w.vectorize(walk, parts->lane);
        w.unroll(walk, parts->steps);   // (at most 8 steps: 4 lanes are rows of fewer than 32)
        w.unroll(ScheduleWriter::update(acc), acc.rvars(0)[0]);   // the lanes in registers
    } else if (parts && parts->levels.empty()) {
        // An arg reduction's lanes in the thread computing its output, each where the
        // accumulator takes its best (a lane at a time: no array of them per thread).
        const Halide::VarOrRVar each_lane = acc.rvars(0)[0];
        w.compute_at(parts->func, acc, &each_lane);
        if (whole_row) unroll_reductions(w, parts->func);
    } else if (parts) {
        // Lanes combined in levels (meant for a block's threads), here all in the output's thread:
        // each level whole before the next reads it (a level per lane of the next would be
        // recomputed for each). One index (no axes): the accumulator is a one-thread kernel with
        // no loop of its own to compute them in (at its root they ran on the host, which has no
        // copy of the arrays), so each is a one-thread kernel too.
        for (const Halide::Func &stage : parts->stages()) {
            if (r.vars.empty()) {
                w.compute_root(stage);
                single_gpu_thread(w, stage);
            } else {
                w.compute_at(stage, acc, nullptr);
            }
            if (parts->butterfly && !r.vars.empty()) {
                // A butterfly's levels over every lane, each lane's value in a register (unrolled:
                // a constant index), as a warp's lanes would hold them.
                const Halide::Var lane = stage.args()[0];
                w.bound(stage, lane, 0, parts->lanes);
                w.unroll(ScheduleWriter::pure(stage), lane);
                if (stage.has_update_definition()) w.unroll(ScheduleWriter::update(stage), lane);
            }
            if (whole_row) unroll_reductions(w, stage);
        }
    }
    if (!r.blocked_sum) return;
    const BlockedSum &b = *r.blocked_sum;
    // A thread a sum over a short row (its lanes a few neighbouring elements a step): the lanes
    // as one vector, where an 8- or 16-byte load takes them (2 or 4 32-bit lanes, a row of a
    // known length, a multiple of them). A thread's 16 scalar loads over a row of 16 float32
    // touched 32 rows' cache lines a warp each: L1 95% busy, DRAM 28%, 460 us on an H200 for
    // 8M rows (torch.compile 132).
    const bool lane_vectors = thread_reads_row_in_vectors(r);
    auto place_part = [&](const Halide::RDom &domain, const Halide::Func &part) {
        if (!part.defined()) return;
        if (!domain.defined() && r.vars.empty()) {
            // One value from a few elements (a trace, a short gather): the accumulator's stages
            // are one-thread kernels with no loop of theirs to compute the part in, and placed
            // at the accumulator it ran on the host, reading arrays that live on the device
            // (torch's tensors have no host memory). A one-thread kernel of its own.
            w.compute_root(part);
            single_gpu_thread(w, part);
            return;
        }
        Halide::VarOrRVar at = domain.defined() ? Halide::VarOrRVar(domain[0])
                               : !r.vars.empty() ? Halide::VarOrRVar(r.vars.back())
                                                 : Halide::VarOrRVar(Halide::Var::outermost());
        w.compute_at(part, acc, domain.defined() || !r.vars.empty() ? &at : nullptr);
        if (!lane_vectors) {
            if (whole_row) {
                unroll_reductions(w, part, &b.lane);
            } else if (!r.symbolic) {
                // A block's elements unrolled: their loads issue together. One at a time, each
                // waited out a load's latency: the last steps of a column sum (64 outputs, a
                // thread each, 64 partial sums down a column) took 27 us of std over 2M x 64 on
                // an H200, and sums down 8M x 16 columns went 167.2 -> 143.7 us unrolled (the
                // same bits).
                unroll_reductions(w, part);
            }
            return;
        }
        // Each step reads the lanes' neighbouring elements: one vector load (device arrays are
        // 16-byte aligned, frontend/hcompile/cuda.py), the steps unrolled (loads in flight).
        const int64_t steps = steps_of(r.rextents[0], r.symbolic, b.lanes);
        lanes_in_one_vector(w, part, b.lane, whole_row ? static_cast<int>(steps) : unroll_factor(steps));
    };
    place_part(b.block_domain, b.blocks);
    place_part(b.tail_domain, b.tail);
    // The lanes' sums (each a compensated pair) in one vector register too, not an array in the
    // thread's local memory.
    if (lane_vectors) lanes_in_one_vector(w, acc, b.lane, 1);
    if (whole_row) unroll_reductions(w, acc, lane_vectors ? nullptr : &b.lane);
}

// A row group run a thread a row (thread_rows): the thread loop of its root, where every member
// is computed (its row's points in the thread's registers).
constexpr const char *kThreadRow = "gpu_thread_row";

// Axis `x` of stage `s` (a row's points), all of it in one thread: vectors of `vector`
// neighbours (a 16-byte load or store each, where aligned), every step unrolled, so that each
// point of a row held per thread has a constant index (a register, not the thread's local memory).
void row_in_thread(ScheduleWriter &w, const StageRef &s, const Halide::Var &x, int vector) {
    w.unroll(s, in_vectors(w, s, x, vector));
}

// A GpuRows root of one thread a row: its rows' axes (1 and past) fused, in blocks of
// gpu_rows_per_block rows, a thread each (a last block's threads past the rows compute nothing);
// its row in the thread (row_in_thread). Its members run in that thread (schedule_gpu_row_member):
// no barrier, no shared memory, no combining across threads. A block's threads across each short
// row left most of them idle in every combining step (softmax over rows of 16: 41% of a copy's
// bandwidth in blocks of 32 rows of 4 threads).
void schedule_gpu_thread_rows_root(ScheduleWriter &w, const RegionFunc &root, const RegionPlan &p) {
    StageRef s = ScheduleWriter::pure(root.func);
    w.compute_root(root.func);
    // The row's length stated (static): its steps are then whole, unrolled without guards.
    if (!root.estimated) w.bound(root.func, root.vars[0], 0, root.extent_exprs[0]);
    row_in_thread(w, s, root.vars[0], thread_vector(p));
    Halide::VarOrRVar rows = root.vars[1];
    for (size_t i = 2; i < root.vars.size(); ++i) {
        Halide::Var fused("gpu_thread_rows_" + std::to_string(i));
        w.fuse(s, rows, root.vars[i], fused);
        rows = fused;
    }
    Halide::Var block(kRowBlocks), thread(kThreadRow);
    w.split(s, rows, block, thread, static_cast<int>(p.gpu_rows_per_block), kTail);
    w.gpu_threads(s, thread);
    w.gpu_blocks(s, block);
}

// A member of a row group run a thread a row: computed in the root's thread for its row, its own
// row's points in that thread too (an elementwise member's as its root's, a reduction's steps by
// reduce_in_output_thread, as a thread per output reduces a short row).
void schedule_gpu_thread_row_member(ScheduleWriter &w, const RegionFunc &r, const RegionFunc &root,
                                    const RegionPlan &p) {
    const Halide::VarOrRVar at = Halide::Var(kThreadRow);
    w.compute_at(r.func, root.func, &at);
    if (!r.accumulator.defined()) {
        row_in_thread(w, ScheduleWriter::pure(r.func), r.vars[0], thread_vector(p));
        return;
    }
    w.compute_at(r.accumulator, root.func, &at);
    reduce_in_output_thread(w, r, /*vector_reads=*/true, /*whole_row=*/true);
}

// Axis `x` of stage `s` (a row's points) over `lanes` lanes of a warp, lane l computing points
// l, l + lanes, ... (neighbouring lanes neighbouring points: coalesced), every step unrolled: a
// row stored per row lies in the lanes' registers, each lane's points at constant indices.
void row_in_lanes(ScheduleWriter &w, const StageRef &s, const Halide::VarOrRVar &x, int64_t lanes) {
    Halide::Var step("gpu_lane_step"), lane("gpu_row_lane");
    w.split(s, x, step, lane, static_cast<int>(lanes), kTail);
    w.reorder(s, {step, lane});
    w.gpu_lanes(s, lane);
    w.unroll(s, step);
}

// Stage `s`, a row's one value (its axis `v` one point there), computed by lane 0 alone: a loop
// of one lane. Every lane computing it stored the same value to one place, which Halide's warp
// shuffles refuse; its readers take it from lane 0 by a shuffle.
constexpr const char *kFirstLane = "gpu_first_lane";
void in_first_lane(ScheduleWriter &w, const StageRef &s, const Halide::Var &v) {
    Halide::Var lane(kFirstLane);
    w.split(s, v, v, lane, 1, kTail);
    w.gpu_lanes(s, lane);
}

// The reduction of `r` over a row in a warp's `lanes` lanes (GpuWarpRows), its value (r.func)
// placed already and computed by lane 0 (in_first_lane), per row of `root` at its loop `at`:
// the partial results a lane each over the row's points l, l + lanes, ... (a float sum's lanes
// are the row's lanes; another reduction rfactored over them), each lane's steps unrolled, then
// combined by lane 0, reading the other lanes' by warp shuffles. Whatever lane 0 alone computes
// is computed inside its loop: a Func stored outside a loop of lanes lies striped over them, and
// lane 0 alone reading its own (an accumulator's update reads its running value) is a warp
// shuffle the other lanes never join (undefined: a softmax's max came out garbage). Reads of the
// lanes' partial results are shuffles before lane 0's branch, which every lane runs.
void reduce_in_warp_lanes(ScheduleWriter &w, const RegionFunc &r, const Halide::Func &root, const Halide::VarOrRVar &at,
                          int64_t lanes) {
    Halide::Func acc = r.accumulator;
    const Halide::VarOrRVar first_lane = Halide::Var(kFirstLane);
    if (r.blocked_sum) {
        w.compute_at(acc, root, &at);
        const BlockedSum &b = *r.blocked_sum;
        w.gpu_lanes(ScheduleWriter::pure(acc), b.lane);
        auto stage = [&](int index, const Halide::RDom &domain, const Halide::Func &part) {
            if (index < 0) return;
            const StageRef update = lanes_outside_parts(w, acc, b, index, domain);
            w.gpu_lanes(update, b.lane);
            if (domain.defined()) {
                for (int i = 0; i < domain.dimensions(); ++i) w.unroll(update, domain[i]);
            }
            const Halide::VarOrRVar per_part = part_loop(b, domain);
            w.compute_at(part, acc, &per_part);
            unroll_reductions(w, part);
            // (A row the lanes do not divide: its tail's gather of the last points, a point a
            // lane, has no loop.)
            for (int u = 0; u < part.num_update_definitions(); ++u) {
                if (part.rvars(u).empty()) w.unscheduled(ScheduleWriter::update(part, u));
            }
        };
        stage(b.block_stage, b.block_domain, b.blocks);
        stage(b.tail_stage, b.tail_domain, b.tail);
        // The lanes' sums added as levels in every lane, each one shuffle and one add (lane 0
        // reading every lane's compensated pair took 2 shuffles a lane and a serial pairwise
        // add: a third of softmax's instructions over rows of 32). Each level over all the
        // lanes (stated: lane 0 alone reads the last, and Halide would compute it there alone).
        for (const Halide::Func &level : b.levels) {
            w.compute_at(level, root, &at);
            w.bound(level, b.lane, 0, b.lanes);
            w.gpu_lanes(ScheduleWriter::pure(level), b.lane);
        }
        if (b.groups.defined()) {   // the lanes' sums in groups, each in a register
            w.compute_at(b.groups, r.func, &first_lane);
            w.unroll(ScheduleWriter::pure(b.groups), b.group);
        }
        return;
    }
    if (r.lane_parts) {   // an arg reduction's butterfly (warp_row_member)
        // Each lane's best of its points, its steps unrolled; the levels over every lane (stated:
        // lane 0 alone reads the last); the accumulator by lane 0.
        const LaneParts &parts = *r.lane_parts;
        w.compute_at(parts.func, root, &at);
        w.gpu_lanes(ScheduleWriter::pure(parts.func), parts.lane);
        const StageRef walk = ScheduleWriter::update(parts.func);
        w.gpu_lanes(walk, parts.lane);
        w.unroll(walk, parts.steps);
        for (const Halide::Func &level : parts.levels) {
            const Halide::Var lane = level.args()[0];
            w.compute_at(level, root, &at);
            w.bound(level, lane, 0, parts.lanes);
            w.gpu_lanes(ScheduleWriter::pure(level), lane);
        }
        w.compute_at(acc, r.func, &first_lane);
        return;
    }
    StageRef update = ScheduleWriter::update(acc);
    Halide::RVar step("r_lane_step"), lane_of("r_lane");
    Halide::Var lane("gpu_reduce_lane");
    const Halide::Func partial = w.split_and_rfactor(update, r.rdom[0], step, lane_of, static_cast<int>(lanes), lane);
    w.compute_at(acc, r.func, &first_lane);
    w.compute_at(partial, root, &at);
    w.gpu_lanes(ScheduleWriter::pure(partial), lane);
    StageRef partial_update = ScheduleWriter::update(partial);
    w.reorder(partial_update, {step, lane});
    w.gpu_lanes(partial_update, lane);
    w.unroll(partial_update, step);
    // The lanes' partial results combined as a tree: level by level, lane h of the first `half`
    // combines its own with lane h + half's (one shuffle down), rfactored out of the update until
    // two are left, which lane 0 combines (a level of one lane would be lane 0's alone, and its
    // reads of its own running value shuffles the other lanes never join). Lane 0 reading every
    // lane's in turn took a shuffle a lane (two for a float max, its NaN flag beside) and a
    // serial chain of combining steps.
    Halide::RVar across = lane_of;
    for (int64_t half = lanes / 2, level = 1; half >= 2; half /= 2, ++level) {
        const std::string n = std::to_string(level);
        Halide::RVar pair("r_pair" + n), kept("r_half" + n);
        Halide::Var half_lane("gpu_half_lane" + n);
        const Halide::Func combined = w.split_and_rfactor(update, across, pair, kept, static_cast<int>(half), half_lane);
        w.compute_at(combined, root, &at);
        w.gpu_lanes(ScheduleWriter::pure(combined), half_lane);
        const StageRef combine = ScheduleWriter::update(combined);
        w.gpu_lanes(combine, half_lane);
        w.unroll(combine, pair);
        across = kept;
    }
    w.unroll(update, across);
}

// A member of a row group in a warp's lanes (GpuWarpRows): computed per row, in the root's thread
// loop over its block's rows (GpuWarpRows takes several rows a block: plan_regions), an
// elementwise member's row striped over the lanes as its root's, a reduction's value by lane 0
// (reduce_in_warp_lanes). No shared memory, no barrier: a block's combining steps over shared
// memory took half of softmax's instructions over rows of 64, one thread's serial steps while its
// warp waited.
void schedule_gpu_warp_row_member(ScheduleWriter &w, const RegionFunc &r, const RegionFunc &root,
                                  const RegionPlan &root_plan) {
    const Halide::VarOrRVar at = Halide::Var(kBlockRow);
    w.compute_at(r.func, root.func, &at);
    if (!r.accumulator.defined()) {
        row_in_lanes(w, ScheduleWriter::pure(r.func), r.vars[0], root_plan.gpu_warp_rows);
        return;
    }
    in_first_lane(w, ScheduleWriter::pure(r.func), r.vars[0]);
    reduce_in_warp_lanes(w, r, root.func, at, root_plan.gpu_warp_rows);
}

// A matrix operand a cuBLAS call needs stored (lowering's library_operands, (column, row, batch
// ...)): a thread per element, its axes fused into one grid dimension (no limit on its rows).
void schedule_gpu_operand(ScheduleWriter &w, const Halide::Func &operand) {
    w.compute_root(operand);
    thread_per_point(w, ScheduleWriter::pure(operand), operand.args(), "gpu_element", 256);
}

// Whether a root's axis `i` can have its extent stated, from 0, by its schedule: a static extent
// that is not an estimate. A root read only by other kernels or a library call (not an output,
// whose buffer says so) is otherwise computed over a region Halide sizes per call, its rows at a
// symbolic offset, and every load of a vector of points from it is split into single loads: no
// alignment can be proven.
bool extent_stated(const RegionFunc &r, size_t i) { return !r.estimated && !r.symbolic_axis(i); }

}  // namespace

// The row root (GpuRows): one block per row, threads across it; a reduction root, one block per
// output, its reduction by the block's threads.
void schedule_gpu_rows_root(ScheduleWriter &w, const RegionFunc &root, const RegionPlan &p) {
    // Static extents stated (extent_stated): unstated, the transformer layer's first layer norm
    // ran 168 single loads and no vector one, the same kernel as a function's output 108 and 20.
    auto stated = [&](size_t i) { return extent_stated(root, i); };
    for (size_t i = 0; i < root.vars.size(); ++i) {
        if (stated(i) && !(i == 0 && thread_rows(p))) w.bound(root.func, root.vars[i], 0, root.extent_exprs[i]);   // (a thread's row states its own)
    }
    if (thread_rows(p)) {
        schedule_gpu_thread_rows_root(w, root, p);
        return;
    }
    StageRef s = ScheduleWriter::pure(root.func);
    w.compute_root(root.func);
    const bool reduction = root.accumulator.defined();
    // A point a row (a reduction's outputs; a point-rows root's, its members' reductions per row).
    const bool per_point = point_a_row(root);
    // Several rows a block: the block's threads a row across (x) times its rows (y); the regions
    // computed per row hold the block's rows, each on its y. A block's steps that wait on each
    // other (its barriers between regions, a reduction's combining steps) then serve that many
    // rows, where short rows took a block's whole wait each (softmax over rows of 64 on an H200:
    // 0.5 TB/s in blocks of one row). A reduction's rows are its outputs.
    const bool row_blocks = p.gpu_rows_per_block > 1;
    const size_t first = first_block_axis(root, p.gpu_rows_per_block);
    if (per_point && !row_blocks) {
        // The output's value, read out of the accumulator: one thread of its block.
        Halide::Var lane("gpu_lane");
        w.split(s, root.vars[0], root.vars[0], lane, 1, kTail);
        w.gpu_threads(s, lane);
    } else if (!per_point && p.gpu_warp_rows) {
        // The row's length stated (static, never an estimate: plan_regions): each lane's steps
        // whole, unrolled without guards.
        if (!stated(0)) w.bound(root.func, root.vars[0], 0, root.extent_exprs[0]);
        row_in_lanes(w, s, root.vars[0], p.gpu_warp_rows);
    } else if (!per_point) {
        threads_across(w, s, root.vars[0], p.gpu_rows, thread_vector(p),
                       steps_of(root.extents[0], root.symbolic_axis(0), p.gpu_rows * thread_vector(p)));
    }
    if (row_blocks) {
        Halide::Var block_row(kBlockRow);
        // A last block the rows do not fill ends at the last row, recomputing some of the block
        // before (guarded, its rows past the end would be idle lanes missing the warp's shuffles,
        // threads missing the block's barriers, and rows its members read past the arrays' ends).
        w.split(s, root.vars[first], Halide::Var(kRowBlocks), block_row, static_cast<int>(p.gpu_rows_per_block),
                Halide::TailStrategy::ShiftInwards);
        // A reduction's rows in a warp's lanes: each output by its row's lane 0. Its axes stated
        // (static): a block's rows then whole, each lane's partial result one point a row (in
        // its registers); unstated, Halide sized them per call, in global memory, not striped
        // over the lanes (garbage, and illegal addresses).
        if (per_point && p.gpu_warp_rows) {
            for (size_t i = 0; i < root.vars.size(); ++i) {
                if (!stated(i)) w.bound(root.func, root.vars[i], 0, root.extent_exprs[i]);
            }
            in_first_lane(w, s, block_row);
        }
        w.gpu_threads(s, block_row);
    }
    const Halide::VarOrRVar rows = row_blocks ? Halide::VarOrRVar(Halide::Var(kRowBlocks)) : root.vars[first];
    if (fuses_block_loops(root, p)) {
        // All block loops in the grid's x, the rows' (their blocks') innermost.
        Halide::VarOrRVar fused = rows;
        for (size_t i = first + 1; i < root.vars.size(); ++i) {
            Halide::Var next(i + 1 == root.vars.size() ? std::string(kFusedRows) : "gpu_rows_" + std::to_string(i));
            w.fuse(s, fused, root.vars[i], next);
            fused = next;
        }
        w.gpu_blocks(s, fused);
    } else {
        // A block loop per axis, those past the third fused into the grid's z (CUDA grids have
        // three; block_loops_fit_grid checks the sizes). Not all fused into one where the sizes
        // are static: the rows' footprints in Halide's bounds grew to whole axes (526 KB of
        // shared memory).
        Halide::VarOrRVar z = first + 2 < root.vars.size() ? root.vars[first + 2] : Halide::VarOrRVar(Halide::Var());
        for (size_t i = first + 3; i < root.vars.size(); ++i) {
            Halide::Var fused("gpu_outer_" + std::to_string(i));
            w.fuse(s, z, root.vars[i], fused);
            z = fused;
        }
        w.gpu_blocks(s, rows);
        if (first + 1 < root.vars.size()) w.gpu_blocks(s, root.vars[first + 1]);
        if (first + 2 < root.vars.size()) w.gpu_blocks(s, z);
    }
    if (reduction && p.gpu_warp_rows) {
        reduce_in_warp_lanes(w, root, root.func, Halide::Var(kBlockRow), p.gpu_warp_rows);
    } else if (reduction) {
        schedule_gpu_block_reduction(w, root, root, p, p.gpu_rows);
    }
}

// A region computed per row of a GpuRows root, inside its block (see Choice::GpuRows).
void schedule_gpu_row_member(ScheduleWriter &w, const RegionFunc &r, const RegionFunc &root, const RegionPlan &root_plan,
                             const RegionPlan &p) {
    if (thread_rows(root_plan)) {
        schedule_gpu_thread_row_member(w, r, root, p);
        return;
    }
    if (root_plan.gpu_warp_rows) {
        schedule_gpu_warp_row_member(w, r, root, root_plan);
        return;
    }
    const RowBlock at = row_block_of(r, root, root_plan);
    w.compute_at(r.func, root.func, &at.loop);
    if (!r.accumulator.defined()) {
        threads_across(w, ScheduleWriter::pure(r.func), r.vars[0], p.gpu_threads_x, thread_vector(p),
                       steps_of(r.extents[0], r.symbolic_axis(0), p.gpu_threads_x * thread_vector(p)));
        threads_over_rows(w, ScheduleWriter::pure(r.func), r.func, Halide::Var(kThreadAcross), at);
        return;
    }
    // The reduction's value: one point per block (its row), one thread.
    w.gpu_threads(ScheduleWriter::pure(r.func), r.vars[0]);
    threads_over_rows(w, ScheduleWriter::pure(r.func), r.func, r.vars[0], at);
    schedule_gpu_block_reduction(w, r, root, root_plan, p.gpu_threads_x);
}

// A region on the GPU (GpuTile): its pure loops in blocks of threads, one thread per output
// point; a separate accumulator (a reduction's, a matrix product's) is computed per point inside
// that thread, its reduction loops serial, and a blocked sum's parts inside the accumulator's
// loops as on the CPU. The axes past the tiled ones are fused into one loop of blocks (CUDA
// grids have three dimensions), and all of them into one where the grid's y or z could overflow.
void schedule_gpu_region(ScheduleWriter &w, const LoweredPipeline &lowered, const RegionFunc &r, const RegionPlan &p) {
    const Halide::Func &f = r.func;
    Halide::Func acc = r.accumulator;
    const bool separate_acc = acc.defined() && !own_accumulator(r);
    w.compute_root(f);
    if (r.vars.empty()) {
        single_gpu_thread(w, f);
        if (separate_acc) {
            w.compute_root(acc);
            single_gpu_thread(w, acc);
        }
    } else {
        StageRef s = ScheduleWriter::pure(f);
        Halide::Var bx("gpu_block_x"), tx("gpu_thread_x"), by("gpu_block_y"), ty("gpu_thread_y");
        const bool two_axes = p.gpu_threads_y > 0;
        // Static extents stated: Halide then knows which tiles are whole (every one, where the
        // tiles divide the shape) and drops their guards. Unstated, a staged tile's copy ran each
        // load behind its own branch, one load in flight a thread (x.T * 2 + 1: 120 SASS
        // instructions, four branches; 64 and one, the four loads issued together, stated).
        if (!r.symbolic && !r.estimated) {
            for (size_t i = 0; i < r.vars.size(); ++i) w.bound(f, r.vars[i], 0, r.extent_exprs[i]);
        }
        // The tile's axes: 0 and 1, or 0 and the axis k that walks the rows of the arrays staged
        // (TransposedRead::region_axis), moved next to axis 0; `axis[i]` is r's axis at place i.
        const std::vector<TransposedRead> staged = p.gpu_stage_transposed ? transposed_read_arrays(lowered, r)
                                                                          : std::vector<TransposedRead>{};
        std::vector<size_t> axis(r.vars.size());
        for (size_t i = 0; i < axis.size(); ++i) axis[i] = i;
        if (!staged.empty() && staged[0].region_axis > 1) {
            axis.erase(axis.begin() + staged[0].region_axis);
            axis.insert(axis.begin() + 1, static_cast<size_t>(staged[0].region_axis));
        }
        std::vector<Halide::Var> vars;
        std::vector<int64_t> extents;
        uint64_t symbolic_axes = 0;
        for (size_t i = 0; i < axis.size(); ++i) {
            vars.push_back(r.vars[axis[i]]);
            extents.push_back(r.extents[axis[i]]);
            if (r.symbolic_axis(axis[i])) symbolic_axes |= uint64_t{1} << std::min<size_t>(i, 63);
        }
        if (axis.size() > 1 && axis[1] != 1) w.reorder(s, std::vector<Halide::VarOrRVar>(vars.begin(), vars.end()));
        const int vector = thread_vector(p);
        const int rows = two_axes ? static_cast<int>(std::max<int64_t>(p.gpu_rows_per_thread, 1)) : 1;
        // A staged product's last tiles shifted inwards where the tiles fit the axes: every tile
        // whole, its outputs along the edge computed twice. Guarded instead, the 77x77 scores of
        // an attention over 77 tokens (tiles of 64) took 53.3 us on an H200, their 77x64
        // product with v 16.9.
        const int64_t tile_x = p.gpu_threads_x * vector, tile_y = p.gpu_threads_y * rows;
        const bool whole_tiles = p.gpu_stage_operands && two_axes && extents[0] >= tile_x && extents[1] >= tile_y;
        if (two_axes) {
            w.tile(s, vars[0], vars[1], bx, by, tx, ty, static_cast<int>(tile_x), static_cast<int>(tile_y),
                   whole_tiles ? Halide::TailStrategy::ShiftInwards : kTail);
        } else {
            w.split(s, vars[0], bx, tx, static_cast<int>(p.gpu_threads_x) * vector, kTail);
        }
        std::vector<Halide::VarOrRVar> inner;   // a thread's own loops, innermost first
        if (vector > 1) {
            // Each thread's points are neighbours: one vector load or store where aligned.
            Halide::Var lanes("gpu_vector");
            w.split(s, tx, tx, lanes, vector, kTail);
            w.vectorize(s, lanes);
            inner.push_back(lanes);
        }
        if (rows > 1) {
            // Neighbouring rows in one thread, unrolled: the rows a stencil reads for them are
            // loaded once (LLVM merges the unrolled rows' identical loads).
            Halide::Var row("gpu_row");
            w.split(s, ty, ty, row, rows, kTail);
            w.unroll(s, row);
            inner.push_back(row);
            inner.insert(inner.end(), {tx, ty, bx, by});
            w.reorder(s, inner);
        }
        // The block loops: axis 0's tiles, axis 1's, the other axes fused, as the grid's x, y and z.
        // A grid's y and z stop at 65535 blocks: where they could pass that (a tall array, or
        // sizes known only at run time), every block loop is fused into x instead (it costs a
        // division per thread: tinyops 0.27 -> 0.33 ms on the H100).
        std::vector<Halide::VarOrRVar> outer;
        int64_t outer_blocks = 1;
        for (size_t i = two_axes ? 2 : 1; i < vars.size(); ++i) {
            outer.push_back(vars[i]);
            outer_blocks *= std::max<int64_t>(extents[i], 1);
        }
        const int64_t y_blocks = two_axes ? (extents[1] + p.gpu_threads_y - 1) / p.gpu_threads_y : 1;
        // Rows of any number under static columns (a batch): axis 1's tiles are the grid's x,
        // which holds 2^31 - 1 blocks, and axis 0's its y. Fused instead, tinyops for any batch
        // took 0.321 ms on an H200 against the static kernel's 0.273 (a division and a remainder
        // by the block count, a run-time value, per thread).
        const int64_t x_blocks = (extents[0] + p.gpu_threads_x * vector - 1) / (p.gpu_threads_x * vector);
        const bool any_rows = two_axes && (symbolic_axes & 2) && !(symbolic_axes & 1) && (symbolic_axes >> 2) == 0 &&
                              x_blocks <= kGridLimit && outer_blocks <= kGridLimit;
        const bool one_dimension = !any_rows && (r.symbolic || y_blocks > kGridLimit || outer_blocks > kGridLimit);
        std::vector<Halide::VarOrRVar> loops{bx};
        if (two_axes) loops.push_back(by);
        Halide::VarOrRVar innermost_block = any_rows ? by : bx;   // the kernel's block, inside its other loops
        if (one_dimension) loops.insert(loops.end(), outer.begin(), outer.end());
        auto fuse_all = [&](std::vector<Halide::VarOrRVar> to_fuse, const std::string &name) {
            Halide::VarOrRVar fused = to_fuse[0];
            for (size_t i = 1; i < to_fuse.size(); ++i) {
                Halide::Var next(name + std::to_string(i));
                w.fuse(s, fused, to_fuse[i], next);
                fused = next;
            }
            return fused;
        };
        w.gpu_threads(s, tx);
        if (two_axes) w.gpu_threads(s, ty);
        if (any_rows) w.reorder(s, {by, bx});   // the innermost block loop is the grid's x
        if (one_dimension) {
            innermost_block = fuse_all(loops, "gpu_blocks_");
            w.gpu_blocks(s, innermost_block);
        } else {
            for (const Halide::VarOrRVar &v : loops) w.gpu_blocks(s, v);
            if (!outer.empty()) w.gpu_blocks(s, fuse_all(outer, "gpu_outer_"));
        }
        if (p.gpu_stage_transposed) stage_transposed_tiles(w, staged, r, p, innermost_block);
        if (p.gpu_stage_operands) stage_product_operands(w, r, p, innermost_block);
        if (r.library_call) {
            schedule_gpu_library_call(w, r);
        } else if (separate_acc) {
            Halide::VarOrRVar thread = tx;
            w.compute_at(acc, f, &thread);
            if (vector > 1 || rows > 1) schedule_register_tile(w, acc, vector, rows);
        }
    }
    if (r.lane_parts && r.lane_parts->stored) {
        schedule_gpu_stored_lanes(w, *r.lane_parts, r);
    } else if (separate_acc && !r.library_call) {
        const bool register_tile = thread_vector(p) > 1 || p.gpu_rows_per_thread > 1;
        reduce_in_output_thread(w, r, /*vector_reads=*/!register_tile && !r.vars.empty(), /*whole_row=*/false);
    }
}

// The cuBLAS call runs once, at the root; the operands it needs stored are kernels of their own.
void schedule_gpu_library_call(ScheduleWriter &w, const RegionFunc &r) {
    w.compute_root(r.accumulator);
    // Its static extents stated (extent_stated): unstated, each kernel reading the result split
    // its vector loads (the transformer layer's GELU after x @ w1: four single loads for each
    // vector of four points). The call's axes are the region's, in its order (f(axes) = call(axes)).
    const std::vector<Halide::Var> axes = r.accumulator.args();
    for (size_t i = 0; i < axes.size(); ++i) {
        if (extent_stated(r, i)) w.bound(r.accumulator, axes[i], 0, r.extent_exprs.at(i));
    }
    for (const Halide::Func &operand : r.library_operands) schedule_gpu_operand(w, operand);
}

// Loads at constant indices (LoweredPipeline::point_load_funcs), on the GPU: a kernel each.
void schedule_gpu_point_loads(ScheduleWriter &w, const Halide::Func &f) {
    w.compute_root(f);
    if (f.dimensions() == 0) {
        single_gpu_thread(w, f);
        return;
    }
    // Its update too (the lowering's f(slot) = f(slot), which hides the loaded values' bounds):
    // left unscheduled, it ran on the host, and every call copied the loads there and back.
    Halide::Var block("gpu_block_x"), thread("gpu_thread_x");
    for (int stage = 0; stage <= f.num_update_definitions(); ++stage) {
        StageRef s = stage == 0 ? ScheduleWriter::pure(f) : ScheduleWriter::update(f, stage - 1);
        w.split(s, f.args()[0], block, thread, 64, kTail);
        w.gpu_threads(s, thread);
        w.gpu_blocks(s, block);
    }
}

}  // namespace hc
