#include "hcompile/gpu_schedule.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "hcompile/gpu_cost_model.h"

#include "region_plan.h"

namespace hc {

namespace {

// `base` with region `region`'s decisions replaced by `replacement`.
Schedule with_region(const Schedule &base, int region, const Schedule &replacement) {
    Schedule out;
    for (const Decision &d : base) {
        if (d.region != region) out.push_back(d);
    }
    out.insert(out.end(), replacement.begin(), replacement.end());
    return out;
}

// The alternatives to one region's GPU decisions `own` (gpu_schedule's), each a whole list of
// that region's decisions.
std::vector<Schedule> region_alternatives(const LoweredPipeline &lowered, int region, const Schedule &own) {
    const RegionFunc &r = lowered.regions[region];
    std::vector<Schedule> out;
    auto changed = [&](Choice choice, auto &&edit) {
        Schedule s = own;
        bool found = false;
        for (Decision &d : s) {
            if (d.choice == choice) found = edit(d) || found;
        }
        if (found) out.push_back(s);
    };
    // A row member recomputed where it is read instead of stored per row: shared memory freed
    // (more blocks resident on a multiprocessor) for the work of computing it twice.
    for (const Decision &d : own) {
        if (d.choice == Choice::ComputeAtRow && !r.accumulator.defined() && !is_output(lowered, region)) {
            out.push_back({{region, Choice::Inline}});
        }
    }
    // `own` without its decision of kind `choice`, where it has one.
    auto dropped = [&](Choice choice) {
        if (std::none_of(own.begin(), own.end(), [&](const Decision &d) { return d.choice == choice; })) return;
        Schedule rest;
        for (const Decision &d : own) {
            if (d.choice != choice) rest.push_back(d);
        }
        out.push_back(rest);
    };
    // A transposed array read where it lies instead of staged (the same tiles): what the stage
    // is worth, measured where max-autotune runs.
    dropped(Choice::GpuStageTransposed);
    // A product's operands read where they lie instead of staged (the same register tiles).
    dropped(Choice::GpuStageOperands);
    // A row root's rows in a warp's lanes, or its threads combining in shared memory instead.
    dropped(Choice::GpuWarpRows);
    // Threads of a block per output of a reduction over rows (a row root's members take its
    // threads: changing them is several regions' change; a reduction with lanes, a float sum's or
    // an arg reduction's, runs a thread a lane whatever the value).
    const bool own_threads = !is_row_root(lowered, region) && reduction_lanes(lowered.regions[region]) == 0;
    for (int64_t threads : own_threads ? std::vector<int64_t>{128, 512} : std::vector<int64_t>{}) {
        changed(Choice::GpuRows, [&](Decision &d) { return d.value != threads && (d.value = threads, true); });
    }
    // A row root's rows a block, or a reduction's of several: twice as many, or half (a row's
    // threads stay: its members' too).
    for (const bool more : {true, false}) {
        changed(Choice::GpuRows, [&](Decision &d) {
            if (!is_row_root(lowered, region) && d.value2 == 0) return false;
            const int64_t rows = std::max<int64_t>(d.value2, 1);
            const int64_t next = more ? rows * 2 : rows / 2;
            if (next < 1 || next == rows || d.value * next < 32) return false;
            d.value2 = next > 1 ? next : 0;
            return true;
        });
    }
    // Block shapes of a tile of two axes.
    for (auto [x, y] : {std::pair<int64_t, int64_t>{32, 4}, {32, 8}, {32, 16}, {64, 4}}) {
        changed(Choice::GpuTile, [&](Decision &d) {
            if (d.value2 == 0 || (d.value == x && d.value2 == y)) return false;
            d.value = x;
            d.value2 = y;
            return true;
        });
    }
    // Points a thread: two instead of four neighbours, or one; rows a thread: two instead of four.
    for (int64_t points : {int64_t{2}, int64_t{1}}) {
        changed(Choice::GpuVector, [&](Decision &d) { return d.value > points && (d.value = points, true); });
    }
    changed(Choice::GpuVector, [&](Decision &d) { return d.value2 == 4 && (d.value2 = 2, true); });
    // A kernel of several rows a thread (a stencil's) under fewer registers than Halide's 64, or
    // without a cap given. ptxas sizes a kernel for its costliest path, here the guarded edge
    // tiles, and takes all 64 where its full tiles need fewer; a block of 128 threads at 64 leaves
    // a multiprocessor half the threads it could hold, and a cap may spill instead. Measured on an
    // H200 (apps/RESULTS.md gpu-stencils), at 64 and 40: 3x3 blur over 8192² 0.166 and 0.149 ms,
    // a Jacobi step 0.194 and 0.231, an unsharp mask over 3001x4099 0.036 and 0.041. No rule:
    // max-autotune measures.
    const bool rows_a_thread = std::any_of(own.begin(), own.end(), [](const Decision &d) {
        return d.choice == Choice::GpuVector && d.value2 > 1;
    });
    dropped(Choice::GpuRegisters);
    Schedule uncapped;
    int64_t own_cap = 0;
    for (const Decision &d : own) {
        if (d.choice == Choice::GpuRegisters) {
            own_cap = d.value;
        } else {
            uncapped.push_back(d);
        }
    }
    for (int64_t cap : rows_a_thread ? std::vector<int64_t>{40, 48} : std::vector<int64_t>{}) {
        if (cap == own_cap) continue;
        out.push_back(uncapped);
        out.back().push_back({region, Choice::GpuRegisters, -1, cap, 0});
    }
    return out;
}

}  // namespace

std::vector<std::pair<Schedule, double>> gpu_schedule_candidates(const LoweredPipeline &lowered, const Schedule &base,
                                                                 int limit, const PipelineAnalysis &analysis,
                                                                 const GpuDevice &device) {
    std::vector<std::pair<Schedule, double>> out;
    for (size_t i = 0; i < lowered.regions.size(); ++i) {
        const int region = static_cast<int>(i);
        Schedule own;
        for (const Decision &d : base) {
            if (d.region == region) own.push_back(d);
        }
        for (const Schedule &alternative : region_alternatives(lowered, region, own)) {
            Schedule candidate = with_region(base, region, alternative);
            try {
                const double seconds = predict_gpu(lowered, analysis, candidate, device).seconds;  // plan_regions' check too
                out.emplace_back(std::move(candidate), seconds);
            } catch (const std::invalid_argument &) {
                continue;   // a list the directives refuse
            }
        }
    }
    // The model's favourites first (stable: region order among equals).
    std::stable_sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.second < b.second; });
    if (static_cast<int>(out.size()) > limit) out.resize(std::max(limit, 0));
    return out;
}

}  // namespace hc
