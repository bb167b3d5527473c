// The read-only analysis the cost model reads: one record per region of a lowered pipeline
// (its extents, points, arithmetic and bytes per point, the regions it reads), built once per
// pipeline and printable (explain shows it).
#pragma once

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
    bool library_call = false;      // a BLAS call (its work is the library's)
};

struct PipelineAnalysis {
    std::vector<StageAnalysis> stages;  // by region
    std::string print() const;
};

PipelineAnalysis analyze_pipeline(const LoweredPipeline &lowered);

// The bits of the widest value region `r` computes or loads (its own type at least).
int widest_value_bits(const RegionFunc &r);

// Lanes of one native vector of `r`'s widest values: the vector width schedules start from.
int natural_lanes(const RegionFunc &r, const Halide::Target &target);

}  // namespace hc
