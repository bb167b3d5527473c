// Any Halide pipeline as the regions the analysis, the search and apply_schedule() read, so that
// hcompile's autoscheduler schedules pipelines it did not lower: Halide generators and pipelines
// built with Halide's Python bindings, through the HCompile plugin (autoscheduler/plugin/).
#pragma once

#include <Halide.h>

#include <string>

#include "hcompile/lowering.h"

namespace hc {

// One region per Func of `pipeline` (its outputs and every Func they call, in an order where
// producers come first), with the extents bounds inference gives from the outputs' estimates
// (Func::set_estimates) and the inputs' and parameters' estimates. A Func without update
// definitions that is not an output is optional (inlined or stored, as the search decides; Halide
// inlines it by default); a Func with updates is a reduction whose update may vectorize or run in
// parallel over an output axis only where it reads and writes its own values at that axis's
// index alone. The regions' Funcs are the pipeline's own: apply_schedule() schedules them in place.
// Throws std::invalid_argument for what cannot be scheduled this way: an output without
// estimates, a Func whose required region does not reduce to constants, an extern stage, a Func
// already scheduled.
LoweredPipeline adapt_halide_pipeline(const Halide::Pipeline &pipeline);

// Declarations that make apply_schedule()'s source for such a pipeline compile where Halide puts
// an autoscheduler's schedule (a function of `pipeline`): each region's Func by its index
// (Pipeline::get_func) and each pure variable by name.
std::string halide_schedule_prelude(const LoweredPipeline &lowered);

}  // namespace hc
