// A schedule's decisions gathered per region: what apply_schedule() and the cost model read.
#pragma once

#include <optional>
#include <vector>

#include "hcompile/decisions.h"
#include "hcompile/lowering.h"

namespace hc {

// The most rows of a GpuRows root one block computes (GpuRows' value2), where a row has threads of
// its own.
constexpr int64_t kMaxRowsPerBlock = 32;
// A row group run a thread a row (GpuRows of one thread: the root and each member computed in the
// thread's registers, a row at a time): its rows of a static length up to this, and up to
// kMaxThreadRowsPerBlock rows (threads) a block, at least a warp's.
constexpr int64_t kMaxThreadRow = 64;
constexpr int64_t kMaxThreadRowsPerBlock = 256;
// A thread's registers a GpuRegisters decision may cap (CUDA's range, as the JIT takes it).
constexpr int64_t kMinGpuRegisters = 24;
constexpr int64_t kMaxGpuRegisters = 255;
// Shared memory a GPU block may take without asking for more (every CUDA device's static limit).
constexpr int64_t kSharedBytesPerBlock = 48 * 1024;

// One region's decisions (each field is set by at most one decision).
struct RegionPlan {
    bool placed = false;
    int row_of = -1;              // ComputeAtRow: the region whose row loop holds this one
    int vector_axis = -1;
    int64_t vector_width = 0;
    int parallel_axis = -1;
    int64_t parallel_grain = 0;   // iterations per task of the parallel loop (0: one)
    int64_t chunks = 0;
    bool stage_operand = false;
    int64_t across_outputs = 0;   // ReduceAcrossOutputs width
    int64_t lanes = 0;            // ReduceInLanes width
    int parallel_update_axis = -1;
    int64_t parallel_update_grain = 0;
    int64_t sum_vector = 0;
    int64_t tile_n = 0, tile_m = 0;
    int64_t library = 0;          // CallLibrary: vector width of the stored operands
    int library_axis = -1;
    int64_t library_tiles = 0;
    bool inlined = false;         // Inline: computed inside its consumers, no loops of its own
    int tile_of = -1;             // ComputeAtTile: the tiled region whose tile loop holds this one
    int tile_axis = -1;           // TileRows: the axis split into tiles
    int64_t tile_rows = 0;        //   and the tile's extent along it
    bool tile_slides = false;     //   and whether the regions in a tile slide down its rows
    int64_t gpu_threads_x = 0;    // GpuTile: threads per block along axis 0 (0: not on the GPU)
    int64_t gpu_threads_y = 0;    //   and along axis 1 (0: blocks of one axis)
    int64_t gpu_vector = 0;       // GpuVector: points of axis 0 per GPU thread (0: one)
    int64_t gpu_rows_per_thread = 0;  // GpuVector's value2: rows of axis 1 per thread (0: one)
    int64_t gpu_rows = 0;         // GpuRows: threads per block of the row root's blocks of rows
                                  //   (1: a thread a row, thread_rows)
    int64_t gpu_rows_per_block = 0;  //   and the root's rows a block (value2; 0: one)
    bool gpu_stage_transposed = false;  // GpuStageTransposed
    int64_t gpu_warp_rows = 0;    // GpuWarpRows: a GpuRows root's threads a row, a warp's lanes (0: none)
    bool gpu_stage_operands = false;  // GpuStageOperands
    int64_t gpu_registers = 0;    // GpuRegisters: a thread's register cap (0: none asked)
};

// Whether a GpuRows root runs a thread a row (its rows' axes fused, a thread each, its members
// computed in the thread), where other row roots run a block's threads across each row.
inline bool thread_rows(const RegionPlan &root_plan) { return root_plan.gpu_rows == 1; }

// The points of a row of `member` (of a row group): its reduction's, or its axis 0's.
int64_t thread_row_length(const RegionFunc &member);

// The most points of a row a lane of a GpuWarpRows group holds (of each Func stored per row, in
// its registers).
constexpr int64_t kMaxWarpRowSteps = 32;

// Whether a row of `length` points fits `lanes` lanes' steps: kMaxWarpRowSteps or fewer, whole,
// or a last step of kMinLastStepLanes lanes or more. In a last step of lane 0 alone, an rfactored reduction's update
// read its lane's running value by a warp shuffle inside lane 0's branch, which the other lanes
// never join (PTX of softmax over rows of 17, 21, 25 in 4 lanes and 33 in 8): softmax over rows of
// 17 came out NaN on an H200. Last steps of 2 lanes showed no such shuffle; of 4 and 8 lanes they
// gave NumPy's answers on the GPU (2 and 3 were not run there).
constexpr int64_t kMinLastStepLanes = 4;
inline bool fits_lane_steps(int64_t length, int64_t lanes) {
    return (length + lanes - 1) / lanes <= kMaxWarpRowSteps &&
           (length % lanes == 0 || length % lanes >= kMinLastStepLanes);
}

// Whether member `r` of a row group may run in a warp's lanes (GpuWarpRows, `lanes` a row):
// elementwise, or a reduction over the row (max, min, prod, any, all, integer sums: rfactored
// into a lane's partial results; a float sum whose lanes are the row's lanes; an arg reduction
// whose lanes are the row's, combined as a butterfly). Not one computing with 64-bit values,
// nor one whose extents are estimates (a Halide pipeline's).
bool warp_row_member(const RegionFunc &r, int64_t lanes);

// A plain elementwise region: no update, no library call, not fused into rows. Only such
// regions take part in stencil fusion (tiles and the regions computed in them).
bool plain_elementwise(const RegionFunc &r);

// Whether `f` computes with any 64-bit value (its definitions, or a Func inlined into it): LLVM's
// NVPTX back end aborts the process on some vectors of doubles, so GPU vectors are narrower.
bool computes_64_bit(const Halide::Func &f);

// The shared memory a block of a GpuStageOperands product takes: its tile's rows of a and columns
// of b (threads times points or rows a thread), each over the whole contraction (static).
// kMaxStagedOperandBytes bounds it (48 KiB is every CUDA device's static limit).
int64_t staged_operand_bytes(const RegionFunc &r, int64_t tile_columns, int64_t tile_rows);
int64_t staged_operand_bytes(const RegionFunc &r, const RegionPlan &p);   // p's tiles (GpuTile, GpuVector)
constexpr int64_t kMaxStagedOperandBytes = 40 * 1024;

// Whether `r` is its own accumulator: a Halide pipeline's reduction, whose Func holds its update
// (halide_pipeline.h), where hcompile's lowering reads a separate accumulator Func.
bool own_accumulator(const RegionFunc &r);

// A region that may be computed per tile of another (stencil fusion): a plain elementwise one, or
// a Halide pipeline's reduction over a window whose update reads and writes only its own output
// point (a box sum written with sum() over an RDom, halide_pipeline.h).
bool tile_member(const RegionFunc &r);

// A reduction over its innermost axis alone, with a separate accumulator: on the GPU one block
// per output can reduce it (GpuRows), or one block per row of a row root. Not an arg reduction
// whose lanes are stored (few long rows: kernels of their own, then a thread per output).
bool gpu_block_reduction(const RegionFunc &r);

// The axis of `member`, computed per row of row root `root`, that walks the root's rows (its axis
// 1): `member`'s axis 1 where it has the root's axes (elementwise, or a reduction keeping its
// reduced axis), axis 0 where it is a reduction dropping it; none otherwise (its rows are not the
// root's one to one: such a group runs one row a block). A point-rows root's member: its row_axis,
// its points from there the root's.
std::optional<size_t> member_row_axis(const RegionFunc &member, const RegionFunc &root);

// The lanes of a GPU float sum or arg reduction (threads of a block's row), or 0 for none.
int64_t reduction_lanes(const RegionFunc &r);

// Whether a thread reducing a whole short row of `r` on the GPU (a thread an output) reads it
// kVectorReadLanes (a float sum: its 2 or 4 lanes) neighbouring 32-bit elements a step, one
// vector load: a row of a known length, a multiple of them, over the innermost axis. A block's
// threads reducing a long row read kVectorReadLanes neighbours a step too.
constexpr int64_t kVectorReadLanes = 4;
bool thread_reads_row_in_vectors(const RegionFunc &r);

// Threads a block of the kernels of an arg reduction's stored lanes (LaneParts::stored), a thread
// a lane and output.
constexpr int kLaneKernelThreads = 256;

// The axis of a GpuRows root that walks its rows: an elementwise root's axis 1 (a block's rows of
// its axis 0), a reduction's or a point-rows root's axis 0 (its outputs, the rows it reduces), or
// 1 where axis 0 is the reduced one kept as 1 (keepdims).
size_t row_axis(const RegionFunc &root);

// Whether `r`'s extents are static but for, maybe, its axis `axis` (a batch of rows of any count,
// each row of a static length).
bool symbolic_only_along(const RegionFunc &r, size_t axis);

// Whether GPU blocks of several rows of `r` (along row_axis) may run: every extent static but,
// maybe, the rows' axis, which then must be allowed them (LoweredPipeline::symbolic_row_blocks;
// the entry's guard asks for a block's rows: least_symbol_sizes), or axes past it (a batch: the
// rows' count static, a block's rows never more than it).
bool rows_may_share_blocks(const LoweredPipeline &lowered, const RegionFunc &r);

// The row of point-rows root `root_region` (RegionFunc::point_rows): the length its reductions
// (its members', its own) reduce; 0 where one's length is not static, they differ (the lanes of a
// row hold the same points of each), or the root has no point rows.
int64_t point_row_length(const LoweredPipeline &lowered, int root_region);

// A CUDA grid's y and z stop at this many blocks (its x at 2^31 - 1).
constexpr int64_t kGridLimit = 65535;

// Whether an axis of `r` past `first` has a symbolic extent (a batch of any size over rows:
// (batch, tokens, features) row-wise).
bool symbolic_past(const RegionFunc &r, size_t first);

// Whether a block loop per axis of `r` from `first` on fits a CUDA grid: x, y, z, the axes past
// the third fused into the z loop (y and z of at most kGridLimit blocks, so of static sizes); or,
// where an axis past `first` is symbolic (symbolic_past), all fused into x (gpu_directives.cpp's
// schedule_gpu_rows_root).
bool block_loops_fit_grid(const RegionFunc &r, size_t first);

// The axis of GpuRows root `root`'s first block loop, of `rows_a_block` rows a block (GpuRows'
// value2): its rows' (a reduction's kept axis of 1, keepdims, is then a thread's loop of one
// step), a point-rows root's always (its rows' count may be symbolic, which only the grid's x
// took), or of one row a block, a reduction's axis 0 (its outputs), an elementwise root's 1.
size_t first_block_axis(const RegionFunc &root, int64_t rows_a_block);

// Whether `r`'s symbolic extents, if any, are along its rows' axis (row_axis) or past it: a batch
// of rows of any count, each row of a static length (its block loops fitting a grid).
bool symbolic_only_in_grid(const RegionFunc &r);

// Whether reduction `r` runs as one block per output (GpuRows, not a row root's member): over its
// innermost axis alone, its block loops fitting a grid, or, where its extents are symbolic (any
// size), all fused into the grid's x (2^31 - 1 blocks).
bool gpu_rows_reduction(const RegionFunc &r);
// Whether the update of `r` must keep its loop over output `axis` serial (serial_update_axes).
bool update_axis_serial(const RegionFunc &r, int axis);

// Whether region `region` is one of the pipeline's outputs (stored whole, never per tile).
bool is_output(const LoweredPipeline &lowered, int region);

// The plans of every region; throws std::invalid_argument for a list that does not fit the
// pipeline (apply_schedule.h says what is refused). `whole_pipeline` false: the list holds some
// regions' decisions only (the search ranks one region at a time), each of them complete.
std::vector<RegionPlan> plan_regions(const LoweredPipeline &lowered, const Schedule &schedule,
                                     bool whole_pipeline = true);

}  // namespace hc
