// The one place where a lowered pipeline's Funcs are scheduled: a list of decisions in,
// Halide scheduling directives applied, their C++ source out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hcompile/decisions.h"
#include "hcompile/lowering.h"

namespace hc {

// Applies `schedule` to `lowered`'s Funcs and returns the Halide C++ schedule source of what
// it did. Throws std::invalid_argument, naming the decision, for a list that does not fit the
// pipeline: a region or axis it lacks, a choice its op class has no use for, two choices of one
// kind for one region, a region placed twice, nowhere (the partitioner decided what is stored)
// or inside a region that is itself placed inside another.
std::string apply_schedule(LoweredPipeline &lowered, const Schedule &schedule);

// Per symbol of the pipeline (symbols.h; `symbols` of them), the least size a call must give it
// for `schedule` to be correct, 0 for any: a GPU block of several rows (GpuRows' value2) along a
// symbolic axis shifts the last block inwards to end at the last row, so that axis needs a
// block's rows (the frontend's guard then asks for them; smaller calls compile apart).
std::vector<int64_t> least_symbol_sizes(const LoweredPipeline &lowered, const Schedule &schedule, size_t symbols);

}  // namespace hc
