// The baseline schedule: every region computed at root, innermost dimension vectorized, outer
// dimension parallel, row reductions vectorized through rfactor, matmuls register-tiled.
// The cost-model autoscheduler (a later issue) plugs in beside it with the same signature.
#pragma once

#include <string>

#include "hcompile/lowering.h"

namespace hc {

// Schedules every region of `lowered` for `target`; returns a readable account of the decisions.
std::string apply_baseline_schedule(LoweredPipeline &lowered, const Halide::Target &target);

}  // namespace hc
