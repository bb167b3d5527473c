// The baseline schedule: one producer of decision lists (decisions.h), a fixed heuristic. Every
// region computed at root (or per row where the partitioner found row fusion), innermost
// dimension vectorized, outer dimension parallel above a size, row reductions in vector lanes
// (rfactor), float sums through their blocked lanes, matmuls register-tiled.
#pragma once

#include "hcompile/decisions.h"
#include "hcompile/lowering.h"

namespace hc {

Schedule baseline_schedule(const LoweredPipeline &lowered, const Halide::Target &target);

}  // namespace hc
