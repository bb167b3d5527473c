// The Halide directives of the GPU's decisions (gpu_tile, gpu_vector, gpu_rows, decisions.h):
// part of apply_schedule(), the one place decision lists become directives, kept in a file of
// their own. Each schedules one region (or a pipeline's point loads) through the writer.
#pragma once

#include "hcompile/lowering.h"

#include "region_plan.h"
#include "schedule_writer.h"

namespace hc {

// A GpuTile region: blocks of threads over its two innermost axes, one thread per point.
void schedule_gpu_region(ScheduleWriter &w, const LoweredPipeline &lowered, const RegionFunc &r, const RegionPlan &p);
// A GpuRows root: one block per row, or per block of rows (a reduction root: per output).
void schedule_gpu_rows_root(ScheduleWriter &w, const RegionFunc &root, const RegionPlan &p);
// A region computed per row of a GpuRows root, inside its block.
void schedule_gpu_row_member(ScheduleWriter &w, const RegionFunc &r, const RegionFunc &root, const RegionPlan &root_plan,
                             const RegionPlan &p);
// A cuBLAS call's extern stage and the operands it needs stored (its region's Func, the copy out
// of the call, is scheduled or inlined apart).
void schedule_gpu_library_call(ScheduleWriter &w, const RegionFunc &r);
// Loads at constant indices (LoweredPipeline::point_load_funcs) of a pipeline on the GPU.
void schedule_gpu_point_loads(ScheduleWriter &w, const Halide::Func &f);

}  // namespace hc
