#include "hcompile/gpu_schedule.h"

#include <algorithm>
#include <set>
#include <string>

#include "hcompile/analysis.h"

#include "region_plan.h"

namespace hc {

namespace {

// Threads of a block: 32 along the innermost axis (a warp reads 32 neighbouring elements: one
// coalesced transaction), 8 rows of them where the region has a second axis; 256 along one axis.
constexpr int64_t kWarp = 32;
constexpr int64_t kRowsPerBlock = 8;
constexpr int64_t kThreadsPerBlock = kWarp * kRowsPerBlock;
constexpr int64_t kVectorPoints = 4;
// Rows of axis 1 a thread computes, unrolled, where they share loads: a stencil over rows, a
// register-tiled matrix product.
constexpr int64_t kRowsPerThread = 4;
// Rows of threads in a block of a stencil over rows (each thread computing kRowsPerThread rows):
// blocks of 16 rows instead of 32 measured faster on an H100, 3x3 blur of 8192² 0.219 -> 0.211 ms
// (32 x 2 threads of 4 vectors: 0.211 ms too; tinyops, no stencil, was unchanged by 4 rows).
constexpr int64_t kStencilRowsPerBlock = 4;
// The fewest blocks a register-tiled matrix product may have: about two per multiprocessor of a
// large GPU (an H100 or H200 has 132).
constexpr int64_t kMinTiledBlocks = 256;
// A row group's threads a block, where its rows are short enough to run several a block.
constexpr int64_t kRowBlockThreads = 128;
// The shortest rows a reduction alone runs several a block on (shorter: a thread a row). Measured
// on an H200, sums over 128M float32 elements as rows of 16: 365 us a thread a row, 1007 in blocks
// of 32 rows of 4 threads (rows of 64: 156 us in blocks of 16 rows of 8 threads, 1268 in a block
// of 64 threads a row).
constexpr int64_t kMinShortRow = 32;
// The fewest rows of a static length that run a block each with their members recomputed
// (row_blocks): the same two blocks per multiprocessor.
constexpr int64_t kMinRecomputedRows = kMinTiledBlocks;

// Shared memory a block's row members may take (48 KiB is every CUDA device's static limit;
// some left for the reductions' partial results).
constexpr int64_t kRowSharedBytes = 40 * 1024;

// Threads of a block per row of `length` (GpuRows: a reduction, or a row root and its members):
// a block's threads (kThreadsPerBlock), or for a shorter row the most whole warps it fills (a row
// of 64: two warps, a point each, where 256 threads left three quarters of them idle).
// A thread per output of rows of 64 (softmax's denominators in an attention of 16x8 heads of 64
// tokens), its serial loop reading a row a warp's 32 rows apart, took 214 us on an H200.
int64_t block_reduction_threads(int64_t length) {
    int64_t threads = kWarp;
    while (threads * 2 <= std::min(length, kThreadsPerBlock)) threads *= 2;
    return threads;
}

// The most lanes a row in a warp's lanes takes: a warp. With lane 0 combining the lanes' partial
// results one by one, rows of 512 in 32 lanes took 280 us for softmax against 192 in the block's
// threads in shared memory (H200, 64M float32 elements); combined as a tree (a sum's levels,
// another reduction's rfactored halves), rows of 1024 in 32 lanes took 135.9 us against 174.5
// (torch.compile 140.1), layer norm 148.2 against 152.7.
constexpr int64_t kMaxWarpRowLanes = kWarp;
// The fewest: rows of 16 in 4 lanes of a warp, 32 rows a block, took 186 us for softmax against
// 200 a thread a row (layer norm 192 against 233); rows of 8 in 2 lanes 209 against 177 (layer
// norm 311 against 175).
constexpr int64_t kMinWarpRowLanes = 4;

// How the partitioner's row fusion (Partition: regions computed per row of a root) maps onto GPU
// blocks: not at all, or one block per row with the root's elementwise members stored per row in
// shared memory, or recomputed where they are read.
enum class RowBlocks { None, Stored, Recomputed };

// One block per row where the root is elementwise over two axes or more and its members are
// elementwise over the root's axes or reduce the innermost axis alone. The elementwise members
// are stored per row where a row of each fits in shared memory; otherwise (rows of a symbolic
// length, which no block's shared memory can be sized for, or longer than it holds) they are
// recomputed where read, if none is an output and, for a static length, the rows are enough
// blocks to fill the GPU (kMinRecomputedRows: a few long rows keep a kernel per region, whose
// elementwise kernels spread over the whole GPU). Recomputed, softmax over rows of any length
// ran 0.243 ms for 8192² on an H200, where a kernel per reduction took 0.438 (layer norm 0.090
// against 0.275).
// The points of `r`'s axes from axis `from` outwards (its rows, from 1; a reduction's kept axes
// with its innermost reduced, from 0).
int64_t rows_from(const RegionFunc &r, size_t from) {
    int64_t n = 1;
    for (size_t i = from; i < r.extents.size(); ++i) n *= r.extents[i];
    return n;
}

// Whether row root `root`'s rows are short enough to run a thread each (runs_a_thread_a_row).
bool short_static_rows(const RegionFunc &root) {
    return !root.point_rows && !root.symbolic_axis(0) && root.extents[0] < kMinShortRow;
}

// A point-rows group (RegionFunc::point_rows) runs in blocks of rows where its rows have one static
// length (point_row_length), its points' block loops fit a grid, and every member reduces rows
// of its points (member_row_axis). Rows shorter than kMinShortRow only for a chain of reductions
// (two or more) that may each run in a warp's lanes (warp_row_member; of 16 points or more: 4
// lanes): a block's threads would idle over them, and a reduction alone reads them faster a thread
// a row (its own kernel; a mean's division another). The rows' count may be symbolic (a batch of
// any size: row_group_rows). Measured on an H200 (64M float32 elements,
// CUDA events; apps/RESULTS.md, gpu-row-chains): x.var(axis=-1) over rows of 1024 in 63.5 us
// against 129.7 in three kernels (torch.compile 66.3), rows of 16 in 84.9 against 608.5; argmax of
// a softmax over rows of 1024 124.2 against 278.6.
RowBlocks point_row_blocks(const LoweredPipeline &lowered, int root_region) {
    const RegionFunc &root = lowered.regions[root_region];
    const int64_t length = point_row_length(lowered, root_region);
    const int64_t lanes = gpu_sum_lanes(length);
    const bool short_rows = length < kMinShortRow;
    if (root.estimated || root.library_call || length < kMinWarpRowLanes * kMinWarpRowLanes ||
        !block_loops_fit_grid(root, row_axis(root)) || (root.accumulator.defined() && !gpu_block_reduction(root)) ||
        (short_rows && root.accumulator.defined() && !warp_row_member(root, lanes))) {
        return RowBlocks::None;
    }
    int reductions = root.accumulator.defined() ? 1 : 0;
    for (const RegionFunc &r : lowered.regions) {
        if (r.row_root != root_region || (r.optional && !r.stored_by_default)) continue;
        if (!gpu_block_reduction(r) || !member_row_axis(r, root) ||
            (short_rows && !warp_row_member(r, lanes))) {
            return RowBlocks::None;
        }
        ++reductions;
    }
    return short_rows && reductions < 2 ? RowBlocks::None : RowBlocks::Stored;
}

RowBlocks row_blocks(const LoweredPipeline &lowered, int root_region) {
    const RegionFunc &root = lowered.regions[root_region];
    if (root.point_rows) return point_row_blocks(lowered, root_region);
    // The rows themselves may be any number (the grid's x), as a batch of varying size is; a
    // thread a row, any number of them along any axes (all fused into the grid's x).
    if (root.vars.size() < 2 || root.accumulator.defined() || root.library_call ||
        !(block_loops_fit_grid(root, 1) || short_static_rows(root))) {
        return RowBlocks::None;
    }
    int64_t shared = 0;
    bool members = false, output_member = false;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &r = lowered.regions[i];
        if (r.row_root != root_region || (r.optional && !r.stored_by_default)) continue;
        members = true;
        if (r.library_call || r.op_class == OpClass::Matmul || own_accumulator(r) || r.staged_operand.defined()) {
            return RowBlocks::None;
        }
        // A reshape root's members have its input's axes: static rows as many as the root's.
        const bool static_rows = !r.symbolic && !root.symbolic && rows_from(r, r.accumulator.defined() ? 0 : 1) == rows_from(root, 1);
        if (r.accumulator.defined()) {
            if (!gpu_block_reduction(r)) return RowBlocks::None;
            // The row's own axes, the reduced one dropped or kept as 1 (keepdims).
            const bool keeps_rows = r.vars.size() + 1 == root.vars.size() ||
                                    (r.vars.size() == root.vars.size() && r.extents[0] == 1);
            if (!keeps_rows && !static_rows) return RowBlocks::None;
        } else {
            if (r.vars.size() != root.vars.size() && !(static_rows && r.extents[0] == root.extents[0])) return RowBlocks::None;
            output_member = output_member || is_output(lowered, static_cast<int>(i));
            shared += r.extents[0] * point_bytes(r.func);
        }
    }
    if (!members) return RowBlocks::None;
    if (!root.symbolic_axis(0) && shared <= kRowSharedBytes) return RowBlocks::Stored;
    const bool enough_rows = root.symbolic || rows_from(root, 1) >= kMinRecomputedRows;
    return !output_member && enough_rows ? RowBlocks::Recomputed : RowBlocks::None;
}

// Threads of a staged product's block along an axis of `extent` outputs (GpuStageOperands): a
// power of two up to 16, four outputs each, the tile no longer than the axis (its last tile is
// then shifted inwards, whole: schedule_gpu_region).
int64_t staged_product_threads(int64_t extent) {
    int64_t threads = 1;
    while (threads < 16 && threads * 2 * kVectorPoints <= extent) threads *= 2;
    return threads;
}

// A row group's threads a row: as many as a float sum over the row has lanes (gpu_sum_lanes: about
// the row's square root for short rows, up to 256); a row of a length only known at run time,
// block_reduction_threads. Measured on an H200 (softmax and layer norm over 16M elements as rows
// of 16 to 1024, every power of two of threads and rows a block): a warp or more a row (32
// threads per row of 16, 256 per row of 512) ran the block's fixed steps (loop bounds, guards,
// barriers, a reduction's combining) for idle threads, 2-8x the time; a thread a lane was the best
// or within 10% of it everywhere.
int64_t row_group_threads(const LoweredPipeline &lowered, int root_region) {
    const RegionFunc &root = lowered.regions[root_region];
    if (root.point_rows) return gpu_sum_lanes(point_row_length(lowered, root_region));
    if (root.symbolic_axis(0)) return block_reduction_threads(root.extents[0]);
    return gpu_sum_lanes(root.extents[0]);
}

// The most rows a block, a power of two up to kMaxRowsPerBlock, of `threads` each within
// kRowBlockThreads, up to `axis_rows` (the rows' axis: a last block that the rows do not fill is
// shifted inwards) and leaving kMinTiledBlocks blocks of all `rows`. Dividing the rows, 699050 rows
// of 96 took 2 a block, too few threads for a row's 4 lanes a warp: 341.9 us on an H200, a block's
// threads combining in shared memory (torch.compile 136.7).
int64_t rows_a_block(int64_t threads, int64_t axis_rows, int64_t rows) {
    int64_t per_block = 1;
    while (per_block * 2 <= kMaxRowsPerBlock && threads * per_block * 2 <= kRowBlockThreads &&
           axis_rows >= per_block * 2 && rows / (per_block * 2) >= kMinTiledBlocks) {
        per_block *= 2;
    }
    return per_block;
}

// Rows of a row group a block (GpuRows' value2): as many as make kRowBlockThreads threads with the
// row's, up to the root's axis 1 (rows_a_block) and leave kMinTiledBlocks blocks; one where a
// member's axes are not the root's rows. Measured on an H200, softmax over 262144 rows of 16:
// 159.6 us in blocks of a row of 32 threads, 20.6 in blocks of 32 rows of 4 threads (kernel times;
// torch.compile 6.0). The rows' axis may be symbolic (a batch of any size, the rest static): its
// entry then serves a block's rows or more (least_symbol_sizes), the one for fewer runs a row a
// block (LoweredPipeline::symbolic_row_blocks). Measured on an H200 (64M float32 elements, CUDA
// events, apps/RESULTS.md gpu-dynamic-rows), a batch of any size in blocks of rows against a row a
// block: softmax over rows of 64 144.7 us against 644.1 (the static kernel's 147.0), of 1024 134.1
// against 170.1; var over rows of 64 69.2 against 642.8; a softmax's argmax over rows of 64 150.3
// against 1042.2.
int64_t row_group_rows(const LoweredPipeline &lowered, int root_region, int64_t threads) {
    const RegionFunc &root = lowered.regions[root_region];
    const size_t axis = row_axis(root);
    if (!rows_may_share_blocks(lowered, root) || root.vars.size() <= axis) return 1;
    for (const RegionFunc &r : lowered.regions) {
        if (r.row_root != root_region || (r.optional && !r.stored_by_default)) continue;
        if (!member_row_axis(r, root)) return 1;
    }
    return rows_a_block(threads, root.extents[axis], rows_from(root, axis));
}

// A reduction's threads a row where a block has several (reduction_rows_a_block): a float sum's
// lanes or an arg reduction's, as many for other reductions (gpu_sum_lanes).
int64_t reduction_threads(const RegionFunc &r) {
    const int64_t lanes = reduction_lanes(r);
    return lanes > 0 ? lanes : gpu_sum_lanes(r.rextents[0]);
}

// Rows of a reduction over short rows (its outputs) a block, as for a row group's (row_group_rows):
// up to kRowBlockThreads threads, up to its static outputs' innermost axis, kMinTiledBlocks
// blocks left; one for rows of more than a warp's points a thread, or where rows may not share
// blocks (rows_may_share_blocks: symbolic extents).
// Measured on an H200 (128M float32 elements, python -m apps.gpu_reductions_bench): sums over
// rows of 64 156 us (85% of a copy's bandwidth) in blocks of 16 rows of 8 threads, 1268 us in a
// block of 64 threads a row; rows of 256 124 against 321.
int64_t reduction_rows_a_block(const LoweredPipeline &lowered, const RegionFunc &r) {
    if (!rows_may_share_blocks(lowered, r) || !gpu_block_reduction(r) || !block_loops_fit_grid(r, row_axis(r))) return 1;
    const int64_t length = r.rextents[0];
    const int64_t threads = reduction_threads(r);
    if (length < kMinShortRow || length / threads > kWarp) return 1;
    // A block of fewer than a warp's threads is no block (1000 rows of 32: 2 rows of 8 threads,
    // a decision the plan refused, and the compile failed): one row a block then.
    const int64_t rows = rows_a_block(threads, r.extents[row_axis(r)], rows_from(r, 0));
    return threads * rows >= kWarp ? rows : 1;
}

// Whether row group `root_region` runs a thread a row (thread_rows): rows shorter than
// kMinShortRow, as a reduction alone over them, of a static length, each member's axes the root's
// rows (its row then a constant number of points: in registers). Measured on an H200 (64M float32
// elements as rows of 16, python -m apps.gpu_rows_bench): softmax 325 us in blocks of 32 rows of 4
// threads, layer norm 248 (torch.compile 133 and 141).
// Each member's own row short too: a root of rows of one point (x.mean(axis=-1, keepdims=True))
// may read a reduction over rows of 8192, which a thread a row unrolled whole (a 15 s compile).
bool runs_a_thread_a_row(const LoweredPipeline &lowered, int root_region) {
    const RegionFunc &root = lowered.regions[root_region];
    if (!short_static_rows(root)) return false;   // (a point-rows group's never are)
    for (const RegionFunc &r : lowered.regions) {
        if (r.row_root != root_region || (r.optional && !r.stored_by_default)) continue;
        if (!member_row_axis(r, root) || thread_row_length(r) >= kMinShortRow) return false;
    }
    return true;
}

// Rows a block of a row group run a thread a row: kRowBlockThreads, halved down to a warp while
// that leaves fewer than kMinTiledBlocks blocks (a last block may be partial).
int64_t thread_rows_a_block(const RegionFunc &root) {
    const int64_t rows = rows_from(root, 1);
    int64_t per_block = kRowBlockThreads;
    while (per_block > kWarp && rows / per_block < kMinTiledBlocks) per_block /= 2;
    return per_block;
}

// Whether a row of `length` points fits `threads` lanes of a warp: kMinWarpRowLanes to
// kMaxWarpRowLanes of them, dividing the warp, in steps the row fits (fits_lane_steps).
bool fits_warp_lanes(int64_t threads, int64_t length) {
    return threads >= kMinWarpRowLanes && threads <= kMaxWarpRowLanes && kWarp % threads == 0 &&
           fits_lane_steps(length, threads);
}

// Whether row group `root_region`, of `threads` a row and `block_rows` rows a block, runs each
// row in a warp's lanes (GpuWarpRows): a row of a static length, several rows a block (a last
// block shifted inwards: no partial block whose idle lanes would miss the warp's shuffles; of a
// symbolic count, a block's rows or more: row_group_rows), up to
// kMaxWarpRowLanes threads dividing a warp, in steps the row fits (fits_lane_steps), every member
// stored per row either elementwise or a reduction that rfactors over the lanes or whose float
// sum has them, its rows the root's. Measured on an H200 (64M float32
// elements, the same decisions without GpuWarpRows, CUDA events): softmax over rows of 32, 64,
// 128 and 256 in 205, 160, 191 and 153 us against 347, 256, 247 and 188 (torch.compile 133-135);
// layer norm 204, 150, 179 and 140 against 267, 204, 204 and 152.
bool runs_in_warp_lanes(const LoweredPipeline &lowered, int root_region, int64_t threads, int64_t block_rows) {
    const RegionFunc &root = lowered.regions[root_region];
    // (A point-rows root's row: its members' reductions', and its own where it is one.)
    const int64_t length = root.point_rows ? point_row_length(lowered, root_region) : root.extents[0];
    if (!symbolic_only_in_grid(root) || root.estimated || root.vars.size() < (root.point_rows ? 1 : 2) ||
        block_rows < 2 ||
        !fits_warp_lanes(threads, length) || !block_loops_fit_grid(root, row_axis(root)) ||
        (root.point_rows && root.accumulator.defined() && !warp_row_member(root, threads))) {
        return false;
    }
    for (const RegionFunc &r : lowered.regions) {
        if (r.row_root != root_region || (r.optional && !r.stored_by_default)) continue;
        // (Each row of it one of the root's, as long: the lanes hold the same points of each.)
        if (!warp_row_member(r, threads) || !member_row_axis(r, root) || thread_row_length(r) != length) {
            return false;
        }
    }
    return true;
}

// Whether row group `root_region`'s root reads inputs along its rows that none of its members
// reads (a layer norm's weight and bias, w(x) at out(x, y)): loads a row's thread issues only
// after the row's reductions, one point after another (ptxas does not move a load across the
// branch of the previous point's IEEE division).
bool loads_after_reductions(const LoweredPipeline &lowered, int root_region) {
    std::set<std::string> read_before;
    for (const RegionFunc &r : lowered.regions) {
        if (r.row_root != root_region || (r.optional && !r.stored_by_default)) continue;
        const std::set<std::string> arrays = arrays_read(lowered, r);
        read_before.insert(arrays.begin(), arrays.end());
    }
    for (const Halide::Func &input : inputs_read_along_rows(lowered, lowered.regions[root_region])) {
        if (!read_before.count(input.name())) return true;
    }
    return false;
}

// The fewest threads (rows times lanes) a row group whose root loads inputs after its reductions
// (loads_after_reductions) runs in a warp's lanes with; fewer take the block's threads across each
// row (late_loads_threads). In a warp's lanes each lane's 16 to 32 points then wait a load's
// latency each. Measured on an H200 (apps/RESULTS.md gpu-late-loads), layer norm over rows of 512
// in 16 lanes against 64 threads of two vectors of four points, two rows a block: 1024 rows 7.2
// against 3.2 us, 4096 rows 8.3 against 7.1 (65536 threads); over rows of 768 in 32 lanes against
// 64 threads: 2048 rows 6.8 against 5.7, 4096 rows (131072 threads) 7.5 against 9.7. Rows of 512
// in 32 lanes (gpu_sum_lanes since): 1024 rows 4.7 against 3.4, 4096 rows (131072 threads) 5.6
// against 7.9. A softmax of the same rows reads nothing after its reductions: 3.1 us in 16 lanes
// over 1024 rows of 512.
constexpr int64_t kMinLaneThreadsLoadingLate = 131072;

// Threads a row of a row group that loads inputs after its reductions over too few rows for a
// warp's lanes: a power of two from 64 (fewer measured slower: 32 threads over rows of 256 3.6
// us against 2.6 for 64, 1024 rows), up to 128 threads while each keeps two vectors of four
// points (rows of 512 and 768: 64; of 1024: 128, 4.1 us against 4.4 for 64, 1024 rows).
int64_t late_loads_threads(int64_t length) {
    int64_t threads = 2 * kWarp;
    while (threads < kRowBlockThreads && threads * 2 * 2 * kVectorPoints <= length) threads *= 2;
    return threads;
}

// Whether row group `root_region`, `threads` a row, loads inputs after its reductions
// (loads_after_reductions) over rows of a static count too few for its threads
// (kMinLaneThreadsLoadingLate), rows of a vector a thread or more of late_loads_threads, which
// are more threads a row than `threads`. (Rows of 2048 points and more take 128 threads a row or
// more already; over 512 rows of 4096, 256 threads measured faster than 128: 5.5 us against 6.1.)
bool loads_late_over_few_rows(const LoweredPipeline &lowered, int root_region, int64_t threads) {
    const RegionFunc &root = lowered.regions[root_region];
    if (root.symbolic || root.point_rows || root.accumulator.defined() || root.vars.size() < 2) return false;
    const int64_t length = root.extents[0];
    return length >= 2 * kWarp * kVectorPoints && threads < late_loads_threads(length) &&
           rows_from(root, 1) * threads < kMinLaneThreadsLoadingLate && loads_after_reductions(lowered, root_region);
}

// Whether reduction `r`, alone over short rows several a block (reduction_rows_a_block), `threads`
// a row, reduces each row in a warp's lanes (GpuWarpRows), as a row group's members do
// (runs_in_warp_lanes).
bool reduces_in_warp_lanes(const RegionFunc &r, int64_t threads) {
    return symbolic_only_in_grid(r) && warp_row_member(r, threads) && fits_warp_lanes(threads, r.rextents[0]);
}

// Whether row group `root_region`, in `blocks`, stores an elementwise member per row (in shared
// memory; recomputed members are inlined).
bool group_stores_rows(const LoweredPipeline &lowered, int root_region, RowBlocks blocks) {
    if (blocks != RowBlocks::Stored) return false;
    for (const RegionFunc &r : lowered.regions) {
        if (r.row_root == root_region && !r.accumulator.defined() && (!r.optional || r.stored_by_default)) return true;
    }
    return false;
}

// Blocks of `x` x `y` points over a region's two innermost axes, times its other axes' extents.
int64_t tiled_blocks(const RegionFunc &r, int64_t x, int64_t y) {
    int64_t blocks = (r.extents[0] + x - 1) / x * ((r.extents[1] + y - 1) / y);
    for (size_t i = 2; i < r.extents.size(); ++i) blocks *= std::max<int64_t>(r.extents[i], 1);
    return blocks;
}

// Whether the region reads some array (a region or an input) at several rows of its axis 1 per
// row of its own (a stencil: neighbouring rows in one thread share those loads).
bool reads_row_window(const StageAnalysis &a) {
    for (const StageAnalysis::Reach &reach : a.reaches) {
        if (reach.axis == 1 && reach.hi > reach.lo) return true;
    }
    return a.input_row_window > 1;
}

// Whether another cuBLAS call takes `r`'s Func as an operand (an extern stage reads a stored
// Func: the copy cannot be inlined there).
bool read_by_library_call(const LoweredPipeline &lowered, const RegionFunc &r) {
    for (const RegionFunc &other : lowered.regions) {
        if (!other.library_call) continue;
        for (const Halide::ExternFuncArgument &arg : other.accumulator.function().extern_arguments()) {
            if (arg.is_func() && Halide::Internal::Function(arg.func).name() == r.func.name()) return true;
        }
    }
    return false;
}

}  // namespace

Schedule gpu_schedule(const LoweredPipeline &lowered, const PipelineAnalysis &analysis) {
    Schedule schedule;
    // Each row group's blocks, by its root's region.
    std::vector<RowBlocks> group_blocks(lowered.regions.size(), RowBlocks::None);
    for (int root = 0; root < static_cast<int>(lowered.regions.size()); ++root) {
        if (is_row_root(lowered, root)) group_blocks[root] = row_blocks(lowered, root);
    }
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const RegionFunc &r = lowered.regions[i];
        const int region = static_cast<int>(i);
        // The region's row group (its root's region; -1 for none) and how it maps onto blocks.
        const int group = is_row_root(lowered, region) ? region : r.row_root;
        const RowBlocks blocks = group >= 0 ? group_blocks[group] : RowBlocks::None;
        const bool in_row_blocks = blocks != RowBlocks::None;
        // The threads of a row root's blocks a row, which its members' loops across the row share,
        // and its rows a block (a warp of threads or more in all).
        // A row in a warp's lanes where it may (runs_in_warp_lanes), else rows shorter than a
        // warp a thread each, else the block's threads across each row.
        int64_t row_threads = in_row_blocks ? row_group_threads(lowered, group) : 0;
        int64_t block_rows = in_row_blocks ? row_group_rows(lowered, group, row_threads) : 0;
        if (in_row_blocks) row_threads = std::max(row_threads, kWarp / block_rows);
        // (Rows shorter than a warp whose blocks are too few to take their sums' lanes a row: a
        // thread a row, not a block of a warp.)
        bool warp_lanes = in_row_blocks && blocks == RowBlocks::Stored &&
                          !(short_static_rows(lowered.regions[group]) &&
                            row_threads != row_group_threads(lowered, group)) &&
                          runs_in_warp_lanes(lowered, group, row_threads, block_rows);
        // (A root that loads inputs after its reductions, over too few rows to fill the GPU with
        // the rows' lanes: more threads across each row, in vectors.)
        const bool late_loads = in_row_blocks && blocks == RowBlocks::Stored &&
                                loads_late_over_few_rows(lowered, group, row_threads);
        if (late_loads) {
            warp_lanes = false;
            row_threads = late_loads_threads(lowered.regions[group].extents[0]);
            block_rows = row_group_rows(lowered, group, row_threads);
        }
        const bool thread_a_row = in_row_blocks && !warp_lanes && runs_a_thread_a_row(lowered, group);
        if (thread_a_row) {
            row_threads = 1;
            block_rows = thread_rows_a_block(lowered.regions[group]);
        }
        if (r.optional && !r.stored_by_default) {
            schedule.push_back({region, Choice::Inline});
            continue;
        }
        // Elementwise work over rows of two steps of a row's vectors or more: four neighbours a
        // thread; eight steps where the group stores elementwise members per row. Measured on an
        // H200 (64M float32 elements, the rule against no vectors): layer norm (reductions only)
        // faster by 2-5% at every length from 64; softmax (exp stored per row) slower by 7-11%
        // from rows of 256 to 4096 (four steps), faster at 8192 (eight: 155.6 against 183.4 us).
        // A thread a row: vectors wherever they divide the row (whole 16-byte loads and stores).
        // (Threads across rows that load inputs after their reductions: a vector a thread or more.)
        const int64_t vector_steps = late_loads ? 1 : in_row_blocks && group_stores_rows(lowered, group, blocks) ? 8 : 2;
        // (A warp's lanes a row: a point a lane a step, the lanes' points striped as the sums' are.)
        // (A point-rows root computes a point a row, its members reductions: no vectors.)
        const bool row_vector = !r.accumulator.defined() && !r.vars.empty() && in_row_blocks && !warp_lanes &&
                                !lowered.regions[group].point_rows &&
                                !computes_64_bit(r.func) &&
                                (thread_a_row ? r.extents[0] % kVectorPoints == 0
                                              : r.extents[0] >= vector_steps * row_threads * kVectorPoints);
        if (in_row_blocks && region == group) {
            schedule.push_back({region, Choice::ComputeRoot});
            schedule.push_back({region, Choice::GpuRows, -1, row_threads, block_rows > 1 ? block_rows : 0});
            if (warp_lanes) schedule.push_back({region, Choice::GpuWarpRows, -1, row_threads, 0});
            if (row_vector) schedule.push_back({region, Choice::GpuVector, -1, kVectorPoints, 0});
            continue;
        }
        if (blocks == RowBlocks::Recomputed && r.row_fused() && !r.accumulator.defined()) {
            schedule.push_back({region, Choice::Inline});
            continue;
        }
        if (in_row_blocks && r.row_fused()) {
            schedule.push_back({region, Choice::ComputeAtRow, -1, group});
            schedule.push_back({region, Choice::GpuTile, -1, row_threads, 0});
            if (row_vector) schedule.push_back({region, Choice::GpuVector, -1, kVectorPoints, 0});
            continue;
        }
        if (r.library_call && !is_output(lowered, region) && !read_by_library_call(lowered, r)) {
            // A cuBLAS call (choose_library_calls) computes the product; its readers' kernels read
            // the call's result (the region's Func, a copy of it, is inlined: no kernel of its own).
            schedule.push_back({region, Choice::Inline});
            schedule.push_back({region, Choice::CallLibrary, 1, 1, 1});
            continue;
        }
        schedule.push_back({region, Choice::ComputeRoot});
        // A cuBLAS call whose result is another call's operand: a kernel copies it. (One returned as
        // it is writes the output itself: lower_to_halide makes the call the pipeline's output.)
        if (r.library_call) schedule.push_back({region, Choice::CallLibrary, 1, 1, 1});
        // (A reduction that combines no partial results, a scan's, would be one thread of the
        // block while the others wait: a thread per output instead, below.)
        const bool combines = r.blocked_sum || r.associative_vectorizable || r.lane_parts;
        const int64_t rows = reduction_rows_a_block(lowered, r);
        if (combines && ((gpu_rows_reduction(r) && r.rextents[0] >= kWarp) || rows > 1)) {
            // A reduction over rows of a warp or more: a block per output, its threads reading the
            // row together (a symbolic row is assumed long: shorter ones leave threads idle, where
            // a thread per row of the 2-D tiles took 13x as long over rows of 8192 on an H200).
            // Short rows of a static length: several a block, as row groups' (row_group_rows).
            schedule.push_back({region, Choice::GpuRows, -1, rows > 1 ? reduction_threads(r) : block_reduction_threads(r.rextents[0]),
                                rows > 1 ? rows : 0});
            if (rows > 1 && reduces_in_warp_lanes(r, reduction_threads(r))) {
                schedule.push_back({region, Choice::GpuWarpRows, -1, reduction_threads(r), 0});
            }
            continue;
        }
        // A batched product lowered as Halide loops (a short contraction: library_calls.h), its
        // operands Funcs of their own: tiles of up to 64x64 outputs in blocks of up to 16x16
        // threads, a thread four points of four rows (a register tile), each block's tiles of
        // the operands copied into shared memory first (GpuStageOperands). Where the tiles would
        // hold fewer than a warp's threads, or their operands' tiles not fit in shared memory,
        // the tiles below.
        const bool product_tiles = r.product_operands.size() == 2 && !r.library_call && r.vars.size() >= 2;
        const int64_t stage_x = product_tiles ? staged_product_threads(r.extents[0]) : 0;
        const int64_t stage_y = product_tiles ? staged_product_threads(r.extents[1]) : 0;
        // (float32 only: what the GPU tests check; integer products keep the tiles below.)
        if (product_tiles && !r.symbolic && r.func.types()[0] == Halide::Float(32) && !computes_64_bit(r.func) &&
            stage_x * stage_y >= kWarp &&
            staged_operand_bytes(r, stage_x * kVectorPoints, stage_y * kRowsPerThread) <= kMaxStagedOperandBytes) {
            schedule.push_back({region, Choice::GpuTile, -1, stage_x, stage_y});
            schedule.push_back({region, Choice::GpuVector, -1, kVectorPoints, kRowsPerThread});
            schedule.push_back({region, Choice::GpuStageOperands});
            continue;
        }
        // An array read transposed (x.T, swapaxes of the two innermost axes; a permutation that
        // moves its innermost axis outwards, axis k of the region): tiles of 32 points of axis 0
        // by up to 32 of axis k, 32x8 threads of up to four rows each, the array's tile copied
        // into shared memory along its rows first. Read where it lies, a warp's loads are a row
        // apart each: on an H200, x.T * 2 + 1 over 8192² took 0.302 ms in these tiles unstaged,
        // 0.188 staged (70% of a copy's bandwidth; swapaxes of 64x1024x1024 0.286 -> 0.173).
        // Where axis k is too short for four rows a thread (16 channels), two rows of two points
        // each: four loads in flight a thread either way (on an H100, a channels-last image of
        // 2048x2048x16 made channels-first: 0.206 ms in one point of two rows, 0.186 so, 98% of
        // a copy's bandwidth; x.T's one point of four rows stays its best, 0.192 against 0.198).
        const StageAnalysis &stage = analysis.stages[i];
        const size_t k = static_cast<size_t>(stage.transposed_axis);
        if (!stage.transposed_reads.empty() && k < r.vars.size() && !r.symbolic_axis(0) && !r.symbolic_axis(k) &&
            r.extents[0] >= kWarp && r.extents[k] >= 2 * kRowsPerBlock) {
            const int64_t rows = r.extents[k] >= kRowsPerBlock * kRowsPerThread ? kRowsPerThread : 2;
            const int64_t points = rows == 2 && r.extents[0] >= 2 * kWarp && !computes_64_bit(r.func) ? 2 : 1;
            schedule.push_back({region, Choice::GpuTile, -1, kWarp, kRowsPerBlock});
            schedule.push_back({region, Choice::GpuVector, -1, points, rows});
            schedule.push_back({region, Choice::GpuStageTransposed});
            continue;
        }
        // A stencil over rows: four rows a thread (below), a block of fewer rows of threads.
        const bool stencil_rows = r.vars.size() >= 2 && !r.accumulator.defined() && (r.symbolic_axes & ~uint64_t{2}) == 0 &&
                                  r.extents[1] >= kStencilRowsPerBlock * kRowsPerThread &&
                                  reads_row_window(analysis.stages[i]);
        if (r.vars.empty()) {
            schedule.push_back({region, Choice::GpuTile, -1, 1, 0});
        } else if (r.vars.size() >= 2 && r.extents[1] > 1) {
            schedule.push_back({region, Choice::GpuTile, -1, kWarp, stencil_rows ? kStencilRowsPerBlock : kRowsPerBlock});
        } else {
            schedule.push_back({region, Choice::GpuTile, -1, kThreadsPerBlock, 0});
        }
        // Elementwise work on rows of a warp's vectors or more: four points a thread (128-bit
        // loads and stores where aligned; the launch has a quarter of the threads). A stencil
        // over rows: four rows a thread too. A matrix product: a 4x4 tile of outputs a thread (a
        // register tile), each step of the contraction loading 4 values of each operand for 16
        // products; only where the tiles still make kMinTiledBlocks blocks (gelu_mlp's 32x1024
        // product made 8 and ran 6x slower than torch's on an H200).
        const bool register_tile = r.op_class == OpClass::Matmul && r.accumulator.defined() && !own_accumulator(r) &&
                                   !r.library_call &&
                                   r.vars.size() >= 2 && !r.symbolic && r.extents[0] >= kWarp * kVectorPoints &&
                                   r.extents[1] >= kRowsPerBlock * kRowsPerThread &&
                                   tiled_blocks(r, kWarp * kVectorPoints, kRowsPerBlock * kRowsPerThread) >= kMinTiledBlocks;
        const bool vector = !r.vars.empty() && (!r.accumulator.defined() || register_tile || r.library_call) &&
                            r.extents[0] >= kWarp * kVectorPoints && !computes_64_bit(r.func);
        if (vector || stencil_rows || register_tile) {
            schedule.push_back({region, Choice::GpuVector, -1, vector ? kVectorPoints : 1,
                                stencil_rows || register_tile ? kRowsPerThread : 0});
        }
    }
    return schedule;
}

int gpu_register_cap(const LoweredPipeline &lowered, const Schedule &schedule) {
    if (!lowered.for_gpu) return 0;
    int64_t cap = 0;
    for (const RegionPlan &p : plan_regions(lowered, schedule)) {
        const bool kernel = p.placed && !p.inlined && p.row_of < 0 && p.tile_of < 0;
        if (kernel) cap = std::max(cap, p.gpu_registers > 0 ? p.gpu_registers : kHalideGpuRegisters);
    }
    return cap == kHalideGpuRegisters ? 0 : static_cast<int>(cap);
}

}  // namespace hc
