#include "stencil_fusion.h"

#include <algorithm>
#include <set>

#include "hcompile/cost_model.h"
#include "hcompile/search.h"
#include "region_plan.h"

namespace hc {

namespace {

// The axis to tile: the outermost with rows enough for two tiles per core of the smallest tile.
int tile_axis(const StageAnalysis &s, const RegionPlan &p, int cores) {
    for (int a = static_cast<int>(s.extents.size()) - 1; a >= 1; --a) {
        if (a != p.vector_axis && s.extents[a] >= 2 * cores * kTileRows[0]) return a;
    }
    return -1;
}

// `schedule` without the placement and parallel loops of `regions` (their vectors stay).
Schedule without_loops(const Schedule &schedule, const std::set<int> &regions) {
    Schedule out;
    for (const Decision &d : schedule) {
        const bool loop = d.choice == Choice::ComputeRoot || d.choice == Choice::Parallel ||
                          d.choice == Choice::ParallelChunks || d.choice == Choice::ParallelUpdate ||
                          d.choice == Choice::Inline;
        if (!(regions.count(d.region) && loop)) out.push_back(d);
    }
    return out;
}

// The regions the group of `root` can hold: producers, nearest first, each read only by the
// group and through windows of rows, that are placed at the root.
std::vector<int> grow_group(const LoweredPipeline &lowered, const PipelineAnalysis &a, const std::vector<RegionPlan> &plans,
                            const std::set<int> &taken, int root, int axis) {
    std::vector<int> members;
    std::set<int> candidates(a.stages[root].producers.begin(), a.stages[root].producers.end());
    while (!candidates.empty()) {
        const int p = *candidates.rbegin();
        candidates.erase(p);
        const RegionFunc &r = lowered.regions[p];
        if (taken.count(p) || !tile_member(r) || plans[p].row_of >= 0 || is_output(lowered, p)) continue;
        members.push_back(p);
        if (!tile_spans(a, root, axis, members)) {
            members.pop_back();
            continue;
        }
        candidates.insert(a.stages[p].producers.begin(), a.stages[p].producers.end());
    }
    return members;
}

// For a pipeline written in Halide (halide_pipeline.h): each optional member (a pure Func, not an
// output) is inlined inside the group instead (computed in its consumers' expressions, as
// Halide's own autoschedulers leave cheap stages) where the model predicts that cheaper than
// storing its rows per tile. hcompile's own pipelines keep every member stored: their partitioner already
// fused what is cheap to recompute.
Schedule keep_cheap_members_inlined(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                                    const MachineModel &machine, const std::vector<int> &members, int root,
                                    Schedule best) {
    std::set<int> inlined;
    auto cost = [&](const Schedule &s) {
        double seconds = predict_group_seconds(lowered, analysis, s, root, machine) / kTileLocality;
        for (int t : inlined) seconds += inline_seconds(analysis, t, machine);
        return seconds;
    };
    double best_seconds = cost(best);
    for (int m : members) {
        if (!lowered.regions[m].estimated || !lowered.regions[m].optional) continue;
        Schedule trial;
        for (const Decision &d : best) {
            if (d.region != m) trial.push_back(d);
        }
        trial.push_back({m, Choice::Inline});
        inlined.insert(m);
        const double seconds = cost(trial);
        if (seconds < best_seconds) {
            best = std::move(trial);
            best_seconds = seconds;
        } else {
            inlined.erase(m);
        }
    }
    return best;
}

}  // namespace

Schedule fuse_stencils(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const MachineModel &machine,
                       const Halide::Target &target, Schedule schedule) {
    std::set<int> taken;  // regions in a group, as root or member
    for (int root = static_cast<int>(lowered.regions.size()) - 1; root >= 0; --root) {
        const std::vector<RegionPlan> plans = plan_regions(lowered, schedule);
        if (taken.count(root) || !plain_elementwise(lowered.regions[root]) || plans[root].row_of >= 0 ||
            plans[root].inlined) {
            continue;
        }
        const int axis = tile_axis(analysis.stages[root], plans[root], machine.cores);
        if (axis < 0) continue;
        std::vector<int> members = grow_group(lowered, analysis, plans, taken, root, axis);
        if (members.empty()) continue;
        std::set<int> group(members.begin(), members.end());
        group.insert(root);
        double apart = 0;
        for (int g : group) {
            Schedule own;
            for (const Decision &d : schedule) {
                if (d.region == g) own.push_back(d);
            }
            // An inlined member costs its consumers its arithmetic at every place they read it.
            apart += predict_region_seconds(lowered, analysis, g, own, machine);
        }
        const Schedule rest = without_loops(schedule, group);
        Schedule best;
        double best_seconds = apart;
        // (Sliding down each tile's rows, TileRows' value2, is not proposed: against the best
        // fixed tiles of the same groups, 256-row sliding tiles ran 0.82-0.87x on Harris, 0.75x
        // on the camera pipe and 0.9-1.0x on box blur and the max filter (apps/RESULTS.md); it
        // gained 1.2x only on a 16-stage chain. Lists from elsewhere may use it.)
        for (int64_t rows : kTileRows) {
            if (analysis.stages[root].extents[axis] < 2 * machine.cores * rows) break;
            Schedule trial = rest;
            trial.push_back({root, Choice::ComputeRoot});
            trial.push_back({root, Choice::TileRows, axis, rows});
            for (int m : members) {
                trial.push_back({m, Choice::ComputeAtTile, -1, root});
                // A member that was inlined has no loops yet: vectors along its rows.
                const int lanes = natural_lanes(lowered.regions[m], target);
                if (plans[m].vector_axis < 0 && analysis.stages[m].extents[0] >= lanes) {
                    trial.push_back({m, Choice::Vectorize, 0, lanes});
                }
            }
            const double seconds = predict_group_seconds(lowered, analysis, trial, root, machine) / kTileLocality;
            if (seconds * kMinPredictedGain < best_seconds) {
                best = std::move(trial);
                best_seconds = seconds * kMinPredictedGain;
            }
        }
        if (best.empty()) continue;
        best = keep_cheap_members_inlined(lowered, analysis, machine, members, root, std::move(best));
        schedule = std::move(best);
        taken.insert(group.begin(), group.end());
    }
    return schedule;
}

}  // namespace hc
