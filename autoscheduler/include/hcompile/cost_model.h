// The analytical cost model: predicted seconds of a schedule from the pipeline analysis and the
// machine model. Per region: vector arithmetic against the core's rate (tails and lanes wider
// than a register counted), bytes against one core's or all cores' bandwidth, parallel loops
// against the core count (imbalance of the last wave) plus a launch each; the region takes the
// larger of arithmetic and memory time. Learned corrections plug in behind `predict_seconds`.
#pragma once

#include <vector>

#include "hcompile/analysis.h"
#include "hcompile/decisions.h"
#include "hcompile/machine.h"

namespace hc {

// Predicted seconds per schedule (a batch; each list must fit the pipeline, plan_regions).
std::vector<double> predict_seconds(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                                    const std::vector<Schedule> &schedules, const MachineModel &machine);

// A tiled region with the regions computed in its tiles, under `schedule`'s decisions for all
// of them (stencil fusion; infinite where the tiles cannot hold them).
double predict_group_seconds(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const Schedule &schedule,
                             int root, const MachineModel &machine);

// What inlining a region costs its consumers: its arithmetic at every place each of them reads it
// (in a reduction's update, at every reduced point), vectorized and spread over the cores, less
// the time their reads of the stored copy took beyond reads of its own inputs; at least 0.
double inline_seconds(const PipelineAnalysis &analysis, int region, const MachineModel &machine);

// The learned correction's factor for `decisions` (MachineModel::choice_weights): exp of the sum
// of their choices' weights; 1 without weights.
double correction_factor(const MachineModel &machine, const Schedule &decisions);

// One region's predicted seconds under its own decisions (the search ranks per region); for an
// inlined region, inline_seconds.
double predict_region_seconds(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, int region,
                              const Schedule &decisions, const MachineModel &machine);

}  // namespace hc
