// Schedule decisions as values: one choice for one region of a lowered pipeline, small,
// immutable, printable, hashable and comparable. A schedule is a list of them; producers (the
// baseline heuristic, later the cost-model search and tuning records) only ever build lists,
// and apply_schedule() (apply_schedule.h) is the one place that turns a list into Halide
// scheduling directives.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hc {

struct LoweredPipeline;

enum class Choice : uint8_t {
    // Where a region is computed (each region has exactly one).
    ComputeRoot,      // stored and computed once, at the root
    ComputeAtRow,     // value: the region it is computed inside, per row (that region's outer axis)
    // Loops of the region's pure definition (a reduction's read-out and its accumulator's init).
    Vectorize,        // axis, value: vector width (tails guarded)
    Parallel,         // axis: run in parallel (a matrix product: that axis's outer tile loop);
                      // value: iterations per task (0 or 1: one each; parallel_tasks.h)
    ParallelChunks,   // axis 0 of a 1-D region split into `value` chunks run in parallel
    StageOperand,     // the region's staged operand (lowering.h) computed per vector of it
    // A reduction's update.
    ReduceAcrossOutputs,  // axis 0, value: width: vector across neighbouring outputs
    ReduceInLanes,        // value: width: the innermost reduced axis split into vector lanes (rfactor)
    ParallelUpdate,       // axis: the update's loop over that output axis in parallel; value:
                          // iterations per task, as for Parallel
    SumVector,            // a blocked float sum: value: width of its lanes or outputs vector
    // A matrix product.
    RegisterTile,     // value, value2: a tile of value x value2 outputs accumulated in registers
    // The product is BLAS calls (library_calls.h), one per tile of `axis` (0: columns, 1: rows)
    // split into value2 tiles run in parallel (value2 1: one call); value: vector width of the
    // operands it stores.
    CallLibrary,
    // Stencil fusion (Halide's compute_at a tile loop): a region split into tiles of rows
    // computes the regions placed in its tiles once per tile, over the rows the tile needs.
    TileRows,         // axis, value: rows per tile: `axis` split into tiles, the tile loop
                      // outermost and parallel (the region's own parallel loop); value2 1:
                      // the regions in a tile slide down its rows (each stored for the tile,
                      // computed row by row: Halide's sliding window; `axis` the outermost)
    ComputeAtTile,    // value: the tiled region in whose tile loop this one is computed (placement)
    Inline,           // an optional region (a stencil intermediate, or a store the partitioner
                      // left to the scheduler) computed inside each of its consumers'
                      // expressions, stored nowhere (placement)
    // The GPU (a CUDA target): every stored region is computed in a kernel of its own.
    GpuTile,          // value, value2: blocks of value x value2 threads over the region's two
                      // innermost axes (value2 0: blocks of value threads over axis 0); one thread
                      // per output point, which computes a separate accumulator (its reduction,
                      // serially) and the staged operand for its point. A region with no axes
                      // runs as one thread, and so does its accumulator's every stage.
    GpuVector,        // value: each GPU thread of a GpuTile region computes this many neighbouring
                      // points of axis 0 as one vector (wide loads and stores where aligned);
                      // value2 (0: one): and this many rows of axis 1, unrolled (a stencil's rows
                      // then share their loads)
    GpuRows,          // value: threads per block: the row root (ComputeRoot) runs one block per row
                      // (its outer axes fused), the threads across its innermost axis; the regions
                      // computed per row (ComputeAtRow + GpuTile of as many threads) run in the
                      // block: elementwise ones stored in shared memory, threads across the row;
                      // reductions over the row by the threads' partial results (rfactor), a
                      // blocked float sum by its lanes. value 1 (an elementwise root of short rows
                      // of a static length): a thread a row, value2 rows (threads) a block, each
                      // region computed per row in the thread, its row in registers
    GpuStageTransposed,  // each block of a GpuTile region of two axes first copies the tile of every
                         // array the region reads transposed (StageAnalysis::transposed_reads) into
                         // shared memory, its threads along the array's rows (coalesced), then
                         // reads it from there
    GpuWarpRows,      // value: a GpuRows root's threads a row (as its gpu_rows), 2 to 32 dividing a
                      // warp: those threads are lanes of one warp, each row's points striped over
                      // them (lane l: points l, l + value, ...); every region computed per row is
                      // computed in the row's thread, its row striped the same way in the lanes'
                      // registers, a reduction's partial results a lane each, combined by warp
                      // shuffles (Halide's gpu_lanes): no shared memory, no barrier
    GpuStageOperands,  // each block of a register-tiled batched product (GpuTile x by y, GpuVector
                       // points x rows) first copies its operands' tiles, the whole contraction of
                       // its rows of a and its columns of b (RegionFunc::product_operands), into
                       // shared memory, its threads along each operand's rows, then reads them there
    GpuRegisters,      // value: the most registers a thread of the region's kernel may use. CUDA
                       // compiles a pipeline's kernels as one module under one cap (Halide's 64
                       // by default): the pipeline takes the most its kernels ask for, 64 where
                       // one asks for nothing (gpu_register_cap)
};

struct Decision {
    int region = -1;        // index in LoweredPipeline::regions
    Choice choice = Choice::ComputeRoot;
    int axis = -1;          // Halide order (0 innermost); -1 where the choice has none
    int64_t value = 0;
    int64_t value2 = 0;

    bool operator==(const Decision &o) const {
        return region == o.region && choice == o.choice && axis == o.axis && value == o.value && value2 == o.value2;
    }
    bool operator!=(const Decision &o) const { return !(*this == o); }
    bool operator<(const Decision &o) const;
};

using Schedule = std::vector<Decision>;

const char *choice_name(Choice c);
// The choice a name names; throws std::invalid_argument for an unknown one.
Choice choice_from_name(const std::string &name);

// "region 2 (sum_4$1): vectorize axis 0 by 8": the region's Func named where `lowered` is given.
std::string to_string(const Decision &d, const LoweredPipeline *lowered = nullptr);
// One decision per line.
std::string print_schedule(const Schedule &schedule, const LoweredPipeline *lowered = nullptr);

size_t hash_value(const Decision &d);
size_t hash_value(const Schedule &s);

}  // namespace hc

template <>
struct std::hash<hc::Decision> {
    size_t operator()(const hc::Decision &d) const { return hc::hash_value(d); }
};
