// Halide's own CPU autoschedulers (Adams2019, Mullapudi2016, Li2018), run on exactly the
// pipeline hcompile lowered, so that every comparison with them is like for like.
#pragma once

#include <string>
#include <vector>

#include "hcompile/lowering.h"

namespace hc {

// Whether `name` is one of Halide's CPU autoschedulers that hcompile runs as a peer.
bool is_halide_autoscheduler(const std::string &name);

// The plugin for `name` (libautoschedule_<name>.so from the Halide that hcompile links),
// loaded once per process; throws std::runtime_error when it is missing.
void load_halide_autoscheduler(const std::string &name);

// Estimates for the autoscheduler: the extents of each input (by its call argument) and of each
// output, NumPy order.
struct PipelineEstimates {
    std::vector<std::vector<int64_t>> input_shapes;   // by LoweredPipeline::inputs index
    std::vector<std::vector<int64_t>> output_shapes;  // by LoweredPipeline::outputs index
};

// Sets the estimates, runs Halide's autoscheduler `name` on the unscheduled pipeline with this
// machine's core count as its parallelism, and returns the schedule source it wrote.
std::string apply_halide_autoscheduler(LoweredPipeline &lowered, const Halide::Target &target, const std::string &name,
                                       const PipelineEstimates &estimates);

}  // namespace hc
