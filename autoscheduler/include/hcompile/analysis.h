// The read-only analysis the cost model reads: one record per region of a lowered pipeline
// (its extents, points, arithmetic and bytes per point, the regions it reads), built once per
// pipeline and printable (explain shows it).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hcompile/lowering.h"

namespace hc {

struct StageAnalysis {
    int region = -1;
    std::string name;
    OpClass op_class = OpClass::Elementwise;
    std::vector<int64_t> extents;   // Halide order; a symbolic one is kScheduledSymbolicExtent
    bool symbolic = false;
    int type_bits = 32;             // of the region's stored values
    int widest_bits = 32;           // of any value it computes or loads: a vector's lanes are
                                    // as many as the widest type fits (a uint8 output computed
                                    // in float32 vectorises at float32's width)
    int64_t points = 1;             // outputs
    int64_t reduction_points = 1;   // per output: the product of the reduction extents
    // Work per point of the pure definition and per point of the reduction (update) domain,
    // in units of one vector arithmetic op (divisions and math library calls weigh more).
    double ops_per_point = 0, ops_per_reduction_point = 0;
    // Bytes read from other stored arrays (inputs and regions) per point and per reduction
    // point: each array once (a stencil's neighbours are in cache), and bytes stored per point.
    double load_bytes_per_point = 0, load_bytes_per_reduction_point = 0;
    double store_bytes_per_point = 0;
    std::vector<int> producers;     // regions this one reads
    std::vector<double> producer_bytes;  // bytes per point read from each of them (same order)
    std::vector<double> producer_reduction_bytes;  // ... and per reduction point
    std::vector<int> producer_calls;     // places per point each is read at (an inlined one is
                                         // computed at each)
    std::vector<int> producer_reduction_calls;  // places per reduction point (the update's reads)
    std::vector<int> consumers;     // regions that read this one
    bool library_call = false;      // a BLAS call (its work is the library's)
    // Stencil windows (plain elementwise regions only): at row y of its own `axis` this region
    // reads rows [y + lo, y + hi] of `producer`'s `producer_axis` (Halide's bounds inference on
    // the definition). An edge read through anything else (a transpose, a stride, a clamp)
    // has no entry for that axis.
    struct Reach {
        int producer, axis, producer_axis;
        int64_t lo, hi;
    };
    std::vector<Reach> reaches;
    // The most rows of one of the pipeline's inputs this region reads per row of its axis 1 (a
    // stencil read straight from an input: the windows above are of regions only); 0 for one.
    // Plain elementwise regions on the GPU.
    int64_t input_row_window = 0;
    // Stored arrays (the pipeline's inputs, or regions: Func names) that every read of this plain
    // elementwise region takes across their rows (TransposedRead): the array's axis 0 walked by
    // the region's axis `transposed_axis` (1 for a transpose of the two innermost axes), the
    // region's axis 0 by another of the array's. A warp of GPU threads along the region's axis 0
    // then reads elements a row apart, each its own memory transaction, unless a block stages a
    // tile of the array (GpuStageTransposed).
    std::vector<std::string> transposed_reads;
    double transposed_bytes_per_point = 0;   // of the loads per point, those from such arrays
    int transposed_axis = 1;
};

// The rows of a region computed per tile of rows of a tiled region: rows [t + lo, t + T - 1 + hi]
// of its `axis` for the tile [t, t + T) (the tiled region itself: axis, 0, 0).
struct TileSpan {
    int axis = -1;
    int64_t lo = 0, hi = 0;
};

struct PipelineAnalysis {
    std::vector<StageAnalysis> stages;  // by region
    std::string print() const;
};

PipelineAnalysis analyze_pipeline(const LoweredPipeline &lowered);

// The rows each of `members` computes per tile of `root` tiled along `axis`, through the
// windows of their consumers; nullopt when a member is read from outside the group or not
// through a window along the tiled rows.
std::optional<std::map<int, TileSpan>> tile_spans(const PipelineAnalysis &analysis, int root, int axis,
                                                 const std::vector<int> &members);

// The bits of the widest value region `r` computes or loads (its own type at least).
int widest_value_bits(const RegionFunc &r);

// Bytes of one point of a Func (all of a Tuple's values).
int point_bytes(const Halide::Func &f);

// A stored array (an input's Func, or a region's) that plain elementwise region `r` reads across
// its rows at every read, the same way each time: its innermost axis walked by the region's axis
// `region_axis` (not 0), and the region's axis 0 walking the array's axis `array_axis` (not 0).
// x.T and swapaxes of the two innermost axes: 1 and 1; a channels-last image made channels-first
// (img(c, w, h) read at out(w, h, c)): 2 and 1.
struct TransposedRead {
    Halide::Func array;
    int calls = 0;           // its reads across its rows
    int region_axis = 1;
    int array_axis = 1;
    bool also_straight = false;   // also read along its rows (a + a.T): a copy serves the reads across
};

// For a call of an array by region `r` at `args` (Halide order): the region axis that walks the
// array's axis 0 (-1 if none past 0) and the array's axis that region axis 0 walks (-1 if none).
// Both past 0: a read across the array's rows.
std::pair<int, int> transposed_axes(const std::vector<Halide::Expr> &args, const RegionFunc &r);

// The arrays plain elementwise region `r` reads transposed (StageAnalysis::transposed_reads):
// those that share the first one's region_axis (a block's tile spans one pair of axes).
std::vector<TransposedRead> transposed_read_arrays(const LoweredPipeline &lowered, const RegionFunc &r);

// The inputs `r`'s own definition reads at its own point along the row, each of their calls at
// the same arguments, the first `r`'s axis 0 itself (a layer norm's weight and bias, w(x) read at
// out(x, y)): loads of each point of a row where `r` computes it.
std::vector<Halide::Func> inputs_read_along_rows(const LoweredPipeline &lowered, const RegionFunc &r);

// The names of the stored arrays (inputs, other regions' Funcs) region `r` reads, through the
// Funcs it computes with (its accumulator, a float sum's blocks) but not through other regions.
std::set<std::string> arrays_read(const LoweredPipeline &lowered, const RegionFunc &r);

// Lanes of one native vector of `r`'s widest values: the vector width schedules start from.
int natural_lanes(const RegionFunc &r, const Halide::Target &target);

}  // namespace hc
