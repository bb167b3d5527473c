#include "hcompile/baseline_schedule.h"

#include "hcompile/analysis.h"

#include "associativity.h"
#include "parallel_tasks.h"
#include "region_plan.h"

#include <algorithm>
#include <thread>

namespace hc {

namespace {

// Below this many elements a region runs on one thread: waking the pool costs more than it saves.
constexpr int64_t kMinParallelElements = 1 << 15;

// A 1-D region long enough to run in parallel is split into this many chunks.
constexpr int64_t kParallelChunks = 64;

// Rows of a register tile: 2 x tm vector accumulators plus 2 loads of B fit AVX2's 16 registers.
constexpr int64_t kMatmulTileRows = 6;

// The least rows (else columns) of a product's tile for one BLAS call each.
constexpr int64_t kMinLibraryTileRows = 8;
constexpr int64_t kMinLibraryTileColumns = 64;

int64_t product(const std::vector<int64_t> &v) {
    int64_t p = 1;
    for (int64_t x : v) p *= x;
    return p;
}

class BaselineChooser {
public:
    BaselineChooser(const LoweredPipeline &lowered, const Halide::Target &target) : lowered_(lowered), target_(target) {}

    Schedule choose() {
        for (size_t i = 0; i < lowered_.regions.size(); ++i) choose_region(static_cast<int>(i));
        return std::move(schedule_);
    }

private:
    void add(int region, Choice c, int axis = -1, int64_t value = 0, int64_t value2 = 0) {
        schedule_.push_back(Decision{region, c, axis, value, value2});
    }

    void choose_region(int i) {
        const RegionFunc &r = lowered_.regions[i];
        if (r.optional && !r.stored_by_default) {
            add(i, Choice::Inline);  // what the fusion partitioner's cost rule chose for it
            return;
        }
        const int width = natural_lanes(r, target_);
        if (r.row_fused()) {
            add(i, Choice::ComputeAtRow, -1, r.row_root);
        } else {
            add(i, Choice::ComputeRoot);
        }
        if (r.library_call) {
            choose_library_call(i, r, width);
            return;
        }
        if (r.op_class == OpClass::Matmul && r.vars.size() >= 2) {
            choose_matmul(i, r, width);
            return;
        }
        choose_pure_loops(i, r, width);
        if (r.blocked_sum) {
            choose_blocked_sum(i, r, width);
        } else if (r.accumulator.defined()) {
            choose_reduction(i, r, width);
        } else if (r.staged_operand.defined()) {
            add(i, Choice::StageOperand);
        }
    }

    // Vectorize the innermost dimension and parallelize the outermost one, or, for one long
    // dimension, chunks in parallel with vectors inside each. A row-fused region runs inside its
    // root's parallel row loop already.
    void choose_pure_loops(int i, const RegionFunc &r, int width) {
        if (r.vars.empty()) return;
        const bool parallel = product(r.extents) >= kMinParallelElements && !r.row_fused();
        if (r.vars.size() == 1 && parallel) {
            add(i, Choice::ParallelChunks, 0, kParallelChunks);
            add(i, Choice::Vectorize, 0, width);
            return;
        }
        if (r.extents[0] >= width) add(i, Choice::Vectorize, 0, width);
        if (parallel && r.vars.size() > 1) {
            add(i, Choice::Parallel, static_cast<int>(r.vars.size()) - 1, parallel_grain(r.extents.back(), cores()));
        }
    }

    static int64_t cores() { return std::max(1u, std::thread::hardware_concurrency()); }

    // The update's parallel loop over the last output axis, in tasks of several iterations
    // (over vectors, where that axis is 0 and vectorized `width` wide across outputs).
    void add_parallel_update(int i, const RegionFunc &r, int64_t width) {
        const int axis = static_cast<int>(r.vars.size()) - 1;
        add(i, Choice::ParallelUpdate, axis, parallel_grain(parallel_iterations(r.extents[axis], axis, width), cores()));
    }

    void choose_reduction(int i, const RegionFunc &r, int width) {
        if (r.rextents.empty()) return;
        int64_t across = 1;
        if (!r.reduces_innermost && !r.vars.empty() && r.extents[0] >= width) {
            // Neighbouring outputs reduce neighbouring inputs.
            add(i, Choice::ReduceAcrossOutputs, 0, width);
            across = width;
        } else if (r.reduces_innermost && r.associative_vectorizable && r.rextents[0] >= 2 * width &&
                   update_provably_associative(r.accumulator)) {
            add(i, Choice::ReduceInLanes, -1, width);
        }
        const bool parallel = product(r.extents) * product(r.rextents) >= kMinParallelElements && !r.vars.empty();
        if (parallel && !r.row_fused() && r.extents.back() > 1 && !update_axis_serial(r, static_cast<int>(r.vars.size()) - 1)) add_parallel_update(i, r, across);
    }

    // A float sum (BlockedSum, lowering.h): the accumulator's lanes are the vector, or, with one
    // lane, its outputs.
    void choose_blocked_sum(int i, const RegionFunc &r, int width) {
        const BlockedSum &b = *r.blocked_sum;
        int64_t across = 1;
        if (b.lanes > 1) {
            add(i, Choice::SumVector, -1, b.lanes);
        } else if (!r.vars.empty() && r.extents[0] >= width) {
            add(i, Choice::SumVector, -1, width);
            across = width;
        }
        const bool parallel = product(r.extents) * product(r.rextents) >= kMinParallelElements && !r.vars.empty() &&
                              !r.row_fused() && r.extents.back() > 1;
        if (parallel) add_parallel_update(i, r, across);
    }

    // BLAS calls in parallel, one per core: tiles of rows where each has a few (BLAS's kernels
    // work in blocks of rows), else of columns; the copy out vectorized.
    void choose_library_call(int i, const RegionFunc &r, int width) {
        const int64_t cores = this->cores();
        const int64_t columns = r.extents[0], rows = r.extents[1];
        int axis = 1;
        int64_t tiles = 1;
        if (rows >= kMinLibraryTileRows * cores) {
            tiles = cores;
        } else if (columns >= kMinLibraryTileColumns * cores) {
            axis = 0;
            tiles = cores;
        }
        add(i, Choice::CallLibrary, axis, width, tiles);
        if (columns >= width) add(i, Choice::Vectorize, 0, width);
    }

    // Tiles of 2 vectors x 6 rows in registers (smaller products: what fits); column tiles in
    // parallel, or the batch axis of a batched product.
    void choose_matmul(int i, const RegionFunc &r, int width) {
        const int64_t n = r.extents[0], m = r.extents[1];
        const int64_t tn = n >= 2 * width ? 2 * width : n >= width ? width : std::max<int64_t>(n, 1);
        const int64_t tm = std::min<int64_t>(std::max<int64_t>(m, 1), kMatmulTileRows);
        add(i, Choice::RegisterTile, -1, tn, tm);
        if (product(r.extents) * r.rextents[0] >= kMinParallelElements) {
            add(i, Choice::Parallel, r.vars.size() > 2 ? static_cast<int>(r.vars.size()) - 1 : 0);
        }
    }

    const LoweredPipeline &lowered_;
    const Halide::Target &target_;
    Schedule schedule_;
};

}  // namespace

Schedule baseline_schedule(const LoweredPipeline &lowered, const Halide::Target &target) {
    return BaselineChooser(lowered, target).choose();
}

}  // namespace hc
