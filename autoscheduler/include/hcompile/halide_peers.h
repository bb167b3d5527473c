// Halide's own autoschedulers (Adams2019, Mullapudi2016, Li2018 for CPUs; Anderson2021,
// Mullapudi2016's GPU mode and Li2018 for CUDA), run on exactly the pipeline hcompile lowered,
// so that every comparison with them is like for like.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hcompile/lowering.h"

namespace hc {

// Whether `name` is one of Halide's autoschedulers that hcompile runs as a peer.
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

// Sets the estimates, runs Halide's autoscheduler `name` on the unscheduled pipeline and returns
// the schedule source it wrote. Its parameters: this machine's core count as its parallelism on
// a CPU; on a GPU target, Mullapudi2016's GPU mode and Anderson2021's limits of a recent NVIDIA
// GPU (48 KiB of shared memory a block, 32 blocks and 64 warps an SM); `params` overrides any
// (on a GPU, the caller gives the device's SM count as "parallelism"). Throws
// std::invalid_argument for an autoscheduler that does not schedule for `target` (Adams2019 on
// a GPU, Anderson2021 on a CPU).
std::string apply_halide_autoscheduler(LoweredPipeline &lowered, const Halide::Target &target, const std::string &name,
                                       const PipelineEstimates &estimates,
                                       const std::vector<std::pair<std::string, std::string>> &params = {});

}  // namespace hc
