#include "hcompile/search.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "hcompile/analysis.h"
#include "hcompile/baseline_schedule.h"
#include "hcompile/cost_model.h"
#include "associativity.h"
#include "parallel_tasks.h"
#include "region_plan.h"
#include "stencil_fusion.h"

namespace hc {

namespace {

constexpr int64_t kMatmulTiles[][2] = {{2, 6}, {1, 6}, {2, 4}, {1, 8}};  // (vectors, rows)

// Every combination of the lists of alternatives (each alternative a few decisions).
std::vector<Schedule> product(const std::vector<std::vector<Schedule>> &choices) {
    std::vector<Schedule> out{Schedule{}};
    for (const auto &alternatives : choices) {
        std::vector<Schedule> next;
        for (const Schedule &prefix : out) {
            for (const Schedule &alt : alternatives) {
                Schedule s = prefix;
                s.insert(s.end(), alt.begin(), alt.end());
                next.push_back(std::move(s));
            }
        }
        out = std::move(next);
    }
    return out;
}

// A store the partitioner left to the scheduler may be inlined unless a producer or consumer may
// be inlined too: copies would then multiply along the chain, past the size the partitioner
// allowed (it counted every place with this region stored).
bool may_inline_store(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, int i) {
    const RegionFunc &r = lowered.regions[i];
    if (!r.optional || !r.stored_by_default) return false;
    auto optional = [&](int j) { return lowered.regions[j].optional; };
    const StageAnalysis &s = analysis.stages[i];
    return std::none_of(s.consumers.begin(), s.consumers.end(), optional) &&
           std::none_of(s.producers.begin(), s.producers.end(), optional);
}

// The alternatives for a region that is stored: where, its loops, its reduction's strategy.
std::vector<Schedule> stored_candidates(const LoweredPipeline &lowered, int i, const MachineModel &machine,
                                        const Halide::Target &target) {
    const RegionFunc &r = lowered.regions[i];
    const int w = natural_lanes(r, target);
    const int64_t cores = machine.cores;
    const int last = static_cast<int>(r.vars.size()) - 1;
    std::vector<std::vector<Schedule>> choices;
    choices.push_back({r.row_fused() ? Schedule{{i, Choice::ComputeAtRow, -1, r.row_root}} : Schedule{{i, Choice::ComputeRoot}}});
    // Vectors first: where the model ties (a memory-bound region) the search keeps the first,
    // and scalar loops cost more than the model's bandwidth bound says.
    auto vector_options = [&](int64_t extent) {
        std::vector<Schedule> v;
        for (int64_t width : {int64_t(w), int64_t(2 * w)}) {
            if (extent >= width) v.push_back({{i, Choice::Vectorize, 0, width}});
        }
        v.push_back({});
        return v;
    };
    if (r.library_call) {
        std::vector<Schedule> calls{{{i, Choice::CallLibrary, 1, w, 1}}};
        if (r.extents[1] >= 2 * cores) calls.push_back({{i, Choice::CallLibrary, 1, w, cores}});
        if (r.extents[0] >= 2 * cores) calls.push_back({{i, Choice::CallLibrary, 0, w, cores}});
        choices.push_back(calls);
        choices.push_back(vector_options(r.extents[0]));
        return product(choices);
    }
    if (r.op_class == OpClass::Matmul && r.vars.size() >= 2) {
        std::vector<Schedule> tiles;
        for (const auto &t : kMatmulTiles) {
            int64_t tn = std::min<int64_t>(t[0] * w, std::max<int64_t>(r.extents[0], 1));
            int64_t tm = std::min<int64_t>(t[1], std::max<int64_t>(r.extents[1], 1));
            Schedule s{{i, Choice::RegisterTile, -1, tn, tm}};
            if (std::find(tiles.begin(), tiles.end(), s) == tiles.end()) tiles.push_back(s);
        }
        choices.push_back(tiles);
        choices.push_back({{}, {{i, Choice::Parallel, r.vars.size() > 2 ? last : 0}}, {{i, Choice::Parallel, 1}}});
        return product(choices);
    }
    if (!r.vars.empty()) {
        // Pure loops: a vector, and a parallel outer loop (chunks of a single dimension).
        std::vector<Schedule> loops;
        for (const Schedule &v : vector_options(r.extents[0])) {
            loops.push_back(v);
            if (r.row_fused()) continue;
            if (r.vars.size() == 1) {
                for (int64_t chunks : {2 * cores, int64_t(64)}) {
                    if (r.extents[0] < 4 * chunks * std::max<int64_t>(w, 1)) continue;
                    Schedule s = v;
                    s.push_back({i, Choice::ParallelChunks, 0, chunks});
                    loops.push_back(s);
                }
            } else if (r.extents[last] > 1) {
                Schedule s = v;
                s.push_back({i, Choice::Parallel, last, parallel_grain(r.extents[last], cores)});
                loops.push_back(s);
            }
        }
        choices.push_back(loops);
    }
    if (r.staged_operand.defined() && !r.accumulator.defined()) choices.push_back({{{i, Choice::StageOperand}}});
    if (r.accumulator.defined() && !r.rextents.empty()) {
        std::vector<Schedule> strategy{{}};
        if (r.blocked_sum) {
            if (r.blocked_sum->lanes > 1) {
                strategy = {{{i, Choice::SumVector, -1, r.blocked_sum->lanes}}};
            } else if (!r.vars.empty() && r.extents[0] >= w) {
                strategy.push_back({{i, Choice::SumVector, -1, w}});
            }
        } else if (!r.reduces_innermost && !r.vars.empty()) {
            for (int64_t width : {int64_t(w), int64_t(2 * w)}) {
                if (r.extents[0] >= width) strategy.push_back({{i, Choice::ReduceAcrossOutputs, 0, width}});
            }
        } else if (r.reduces_innermost && r.associative_vectorizable && r.rextents[0] >= 2 * w &&
                   update_provably_associative(r.accumulator)) {
            for (int64_t width : {int64_t(w), int64_t(2 * w)}) {
                if (r.rextents[0] >= 2 * width) strategy.push_back({{i, Choice::ReduceInLanes, -1, width}});
            }
        }
        // Each strategy serial, or with its update's loop over the last output axis in parallel
        // (over vectors where that axis is 0 and the strategy vectorizes across outputs).
        std::vector<Schedule> updates;
        for (const Schedule &st : strategy) {
            updates.push_back(st);
            if (r.row_fused() || r.vars.empty() || r.extents[last] <= 1 || update_axis_serial(r, last)) continue;
            int64_t across = 1;
            for (const Decision &d : st) {
                if (d.choice == Choice::ReduceAcrossOutputs || (d.choice == Choice::SumVector && r.blocked_sum->lanes == 1)) {
                    across = d.value;
                }
            }
            Schedule with = st;
            with.push_back({i, Choice::ParallelUpdate, last,
                            parallel_grain(parallel_iterations(r.extents[last], last, across), cores)});
            updates.push_back(with);
        }
        choices.push_back(updates);
    }
    return product(choices);
}

std::vector<Schedule> region_candidates(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, int i,
                                        const MachineModel &machine, const Halide::Target &target) {
    const RegionFunc &r = lowered.regions[i];
    std::vector<Schedule> out = stored_candidates(lowered, i, machine, target);
    // An optional region the partitioner inlined may be stored (and stencil fusion may then
    // compute it per tile); one it stored may be inlined where copies cannot multiply.
    if ((r.optional && !r.stored_by_default) || may_inline_store(lowered, analysis, i)) out.push_back({{i, Choice::Inline}});
    return out;
}

Schedule decisions_of(const Schedule &s, int region) {
    Schedule out;
    for (const Decision &d : s) {
        if (d.region == region) out.push_back(d);
    }
    return out;
}

struct State {
    Schedule schedule;
    double seconds = 0;
};

}  // namespace

SearchResult search_schedule(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                             const MachineModel &machine, const Halide::Target &target, int beam_width) {
    SearchResult result;
    const Schedule baseline = baseline_schedule(lowered, target);
    std::vector<State> beam{State{}};
    for (const StageAnalysis &stage : analysis.stages) {
        const Schedule base = decisions_of(baseline, stage.region);
        // Ranked by the model times the learned correction, where one is given.
        const double base_seconds =
            predict_region_seconds(lowered, analysis, stage.region, base, machine) * correction_factor(machine, base);
        result.baseline_predicted_seconds += base_seconds;
        // The region's alternatives, best first; the baseline's unless one is clearly better.
        std::vector<State> options;
        for (Schedule &c : region_candidates(lowered, analysis, stage.region, machine, target)) {
            double seconds = predict_region_seconds(lowered, analysis, stage.region, c, machine) * correction_factor(machine, c);
            ++result.candidates_ranked;
            if (seconds * kMinPredictedGain + machine.parallel_launch_seconds < base_seconds) {
                options.push_back({std::move(c), seconds});
            }
        }
        options.push_back({base, base_seconds});
        std::stable_sort(options.begin(), options.end(), [](const State &a, const State &b) { return a.seconds < b.seconds; });
        std::vector<State> next;
        for (const State &prefix : beam) {
            for (const State &option : options) {
                State s = prefix;
                s.schedule.insert(s.schedule.end(), option.schedule.begin(), option.schedule.end());
                s.seconds += option.seconds;
                next.push_back(std::move(s));
            }
        }
        std::stable_sort(next.begin(), next.end(), [](const State &a, const State &b) { return a.seconds < b.seconds; });
        if (static_cast<int>(next.size()) > beam_width) next.resize(beam_width);
        beam = std::move(next);
    }
    result.schedule = fuse_stencils(lowered, analysis, machine, target, beam.front().schedule);
    result.predicted_seconds = predict_seconds(lowered, analysis, {result.schedule}, machine)[0];
    for (const StageAnalysis &stage : analysis.stages) {
        result.region_seconds.push_back(
            predict_region_seconds(lowered, analysis, stage.region, decisions_of(result.schedule, stage.region), machine));
    }
    return result;
}

std::vector<std::pair<Schedule, double>> schedule_variants(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                                                          const MachineModel &machine, const Halide::Target &target,
                                                          const Schedule &chosen, int limit, VariantPick pick) {
    std::vector<std::pair<Schedule, double>> all;
    std::vector<int> region_of;  // all[i]'s region
    std::vector<double> chosen_seconds;
    double total = 0;
    for (const StageAnalysis &stage : analysis.stages) {
        chosen_seconds.push_back(predict_region_seconds(lowered, analysis, stage.region, decisions_of(chosen, stage.region), machine));
        total += chosen_seconds.back();
    }
    for (const StageAnalysis &stage : analysis.stages) {
        // A region of a stencil-fusion group changes with its group, not alone: its root's
        // tile rows (each size stencil fusion tries, and sliding down the tile), its members
        // not at all.
        const Schedule own = decisions_of(chosen, stage.region);
        auto tiles = std::find_if(own.begin(), own.end(), [](const Decision &d) { return d.choice == Choice::TileRows; });
        if (tiles != own.end()) {
            const double group = predict_group_seconds(lowered, analysis, chosen, stage.region, machine) / kTileLocality;
            std::vector<std::pair<int64_t, int64_t>> shapes;  // (rows, sliding)
            if (tiles->axis == static_cast<int>(stage.extents.size()) - 1) shapes.push_back({tiles->value, tiles->value2 ? 0 : 1});
            for (int64_t rows : kTileRows) {
                if (rows != tiles->value && stage.extents[tiles->axis] >= 2 * machine.cores * rows) shapes.push_back({rows, tiles->value2});
            }
            for (const auto &[rows, sliding] : shapes) {
                Schedule whole = chosen;
                for (Decision &d : whole) {
                    if (d.region == stage.region && d.choice == Choice::TileRows) d = {d.region, d.choice, d.axis, rows, sliding};
                }
                const double seconds = predict_group_seconds(lowered, analysis, whole, stage.region, machine) / kTileLocality;
                all.emplace_back(std::move(whole), total - group + seconds);
                region_of.push_back(stage.region);
            }
            continue;
        }
        if (std::any_of(own.begin(), own.end(), [](const Decision &d) { return d.choice == Choice::ComputeAtTile; })) continue;
        for (Schedule &c : region_candidates(lowered, analysis, stage.region, machine, target)) {
            if (c == own) continue;
            double seconds = total - chosen_seconds[stage.region] + predict_region_seconds(lowered, analysis, stage.region, c, machine);
            Schedule whole;
            for (const Decision &d : chosen) {
                if (d.region != stage.region) whole.push_back(d);
            }
            whole.insert(whole.end(), c.begin(), c.end());
            all.emplace_back(std::move(whole), seconds);
            region_of.push_back(stage.region);
        }
    }
    std::vector<size_t> order(all.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return all[a].second < all[b].second; });
    if (pick == VariantPick::BestPerRegion) {
        // The rank of each variant within its region, then by prediction within a rank.
        std::map<int, int> seen;
        std::vector<int> rank(all.size());
        for (size_t i : order) rank[i] = seen[region_of[i]]++;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
    }
    const size_t keep = limit <= 0 ? all.size() : std::min(all.size(), static_cast<size_t>(limit));
    std::vector<std::pair<Schedule, double>> picked;
    for (size_t i = 0; i < keep; ++i) {
        const size_t at = pick == VariantPick::Spread && keep < all.size() ? i * (all.size() - 1) / std::max<size_t>(1, keep - 1) : i;
        picked.push_back(all[order[at]]);
    }
    return picked;
}

std::string SearchResult::print() const {
    std::ostringstream os;
    os.precision(3);
    os << "cost model: " << predicted_seconds * 1e3 << " ms predicted (the baseline's list: "
       << baseline_predicted_seconds * 1e3 << " ms), " << candidates_ranked << " candidates ranked; by region:";
    for (size_t i = 0; i < region_seconds.size(); ++i) os << " " << i << ": " << region_seconds[i] * 1e3 << " ms";
    return os.str();
}

}  // namespace hc
