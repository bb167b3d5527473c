// The search: a beam over the regions in realization order, each state a partial decision
// list, ranked by the cost model. Each region's candidates are the products of its choices
// (placement as the partitioner fixed it; vector width none, native or double; parallel
// outer loop, chunks or none; reduction strategy; register tile sizes; BLAS tiles).
//
// Today the regions' costs do not interact (placement is not searched yet), so the beam finds
// the sum of per-region optima; it is a beam so that compute_at choices, which couple a
// producer to its consumer, can join the space without a new search.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hcompile/analysis.h"
#include "hcompile/decisions.h"
#include "hcompile/machine.h"

namespace hc {

struct SearchResult {
    Schedule schedule;
    double predicted_seconds = 0;
    double baseline_predicted_seconds = 0;   // the baseline heuristic's list under the same model
    int candidates_ranked = 0;
    std::vector<double> region_seconds;      // the chosen decisions' prediction, by region
    std::string print() const;
};

// The model's best list; a region keeps the baseline's decisions unless the model predicts
// its own best at least `kMinPredictedGain` faster and by more than one parallel loop's launch
// (the model is analytical and uncalibrated: a small predicted gain is within its error).
constexpr double kMinPredictedGain = 1.10;

SearchResult search_schedule(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                             const MachineModel &machine, const Halide::Target &target, int beam_width = 8);

// Which of the variants schedule_variants keeps when there are more than asked for.
enum class VariantPick {
    Spread,           // spread over the range of predictions: a check of the model against times
    BestPerRegion,    // each region's best alternative, then each one's second best, ...: what
                      // max-autotune measures, so that every region's likeliest fixes come first
};

// Up to `limit` whole lists that differ from `chosen` in one region's decisions (every
// candidate of every region), each with its predicted seconds, picked by `pick`.
std::vector<std::pair<Schedule, double>> schedule_variants(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                                                          const MachineModel &machine, const Halide::Target &target,
                                                          const Schedule &chosen, int limit,
                                                          VariantPick pick = VariantPick::Spread);

}  // namespace hc
