#include "hcompile/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "parallel_tasks.h"
#include "region_plan.h"

namespace hc {

namespace {

// A point's arithmetic from which one vector per loop iteration leaves its dependency chains'
// latency exposed, and what that costs: two registers per iteration give the core independent
// work. Calibrated on 2 cores (AVX2), one register against two per iteration: tinyops (137 ops a
// point) 1.19x, tanh(x) * x (82) 1.21x, sin(x) * cos(x) (67) 1.08x slower; exp(x) * 2 (33) 1.03x,
// and memory-bound regions lose with the wider vector (float64 exp + 1, 44 ops: 0.88x).
constexpr double kLatencyExposedOps = 64;
constexpr double kOneRegisterSlowdown = 1.2;

// Lanes of one native vector of the stage's widest values.
int native_lanes(const StageAnalysis &s, const MachineModel &m) {
    return std::max(1, m.vector_bits / std::max(8, s.widest_bits));
}

// Vector instructions for `points` points of `ops` each, `lanes` at a time over an innermost
// extent `inner` (guarded tails pay whole vectors), with `native` lanes per register.
double vector_ops(double points, double ops, int64_t lanes, int64_t inner, int native) {
    lanes = std::max<int64_t>(lanes, 1);
    const double registers = std::ceil(double(lanes) / native);
    const double tail = inner > 0 ? std::ceil(double(inner) / lanes) * lanes / double(inner) : 1.0;
    const double latency = registers < 2 && ops >= kLatencyExposedOps ? kOneRegisterSlowdown : 1.0;
    return points / lanes * registers * tail * std::max(ops, 1.0) * latency;
}

// The probe times parallel loops back to back, with the pool still warm; inside kernels a
// parallel loop costs about twice that (measured: two parallel loops added 13 us to the 40 us
// matmul_softmax_100 kernel, against the probe's 3.4 us each). The learned correction's job,
// until it exists.
constexpr double kLaunchCalibration = 2.0;

// Seconds of `work` vector ops and `bytes` of traffic spread over `tasks` parallel tasks (1:
// serial).
double run_seconds(double work, double bytes, int64_t tasks, const MachineModel &m) {
    const double compute = work / m.vector_ops_per_second;
    const double workers = tasks <= 1 ? 1.0 : double(std::min<int64_t>(tasks, m.cores));
    const bool cached = bytes <= m.cache_bytes_per_core * workers;
    const double bandwidth = (tasks <= 1 ? m.core_bandwidth : m.machine_bandwidth) *
                             (cached ? MachineModel::kCacheBandwidthFactor : 1.0);
    if (tasks <= 1) return std::max(compute, bytes / bandwidth);
    const double waves = std::ceil(double(tasks) / workers);
    const double imbalance = waves * workers / double(tasks);
    return std::max(compute * imbalance / workers, bytes / bandwidth) + kLaunchCalibration * m.parallel_launch_seconds +
           double(tasks) * kTaskClaimSeconds;
}

// Load and store instructions per point: one per array read (each is one vector load where the
// loop is vectorized) and one store.
double memory_ops(double load_bytes, double store_bytes, int type_bits) {
    const double item = std::max(1, type_bits / 8);
    return (load_bytes + store_bytes) / item;
}

double region_seconds(const LoweredPipeline &lowered, const StageAnalysis &s, const RegionPlan &p, const MachineModel &m) {
    const RegionFunc &r = lowered.regions[s.region];
    if (p.inlined) return 0;  // its work is its consumers' (inline_seconds)
    if (p.row_of >= 0) {
        // Inside the root's row loop: its parallel rows share this work, with no launch of its own.
        RegionPlan alone = p;
        alone.row_of = -1;
        const double serial = region_seconds(lowered, s, alone, m);
        const int64_t rows = lowered.regions[p.row_of].extents.back();
        return serial / double(std::max<int64_t>(1, std::min<int64_t>(rows, m.cores)));
    }
    const int native = native_lanes(s, m);
    const int64_t inner = s.extents.empty() ? 1 : s.extents[0];
    const double points = double(s.points), reduced = double(s.points) * double(s.reduction_points);
    // The tasks of a parallel loop over `axis` (none: 1), `grain` iterations each; a loop over
    // the vectorized axis 0 iterates over vectors of `width`.
    auto tasks_of = [&](int axis, int64_t grain, int64_t width) -> int64_t {
        return axis < 0 ? 1 : parallel_tasks(parallel_iterations(s.extents[axis], axis, width), grain);
    };
    if (s.library_call) {
        // BLAS at about two fused multiply-adds per cycle per native vector.
        const double work = reduced / native / 2.0;
        const double bytes = points * s.store_bytes_per_point * 2;
        return run_seconds(work, bytes, std::max<int64_t>(p.library_tiles, 1), m);
    }
    if (p.tile_n) {
        // Register tiles: per k step, tn/native vector FMAs per row plus the loads that feed them.
        const double fmas = reduced / native;
        const double per_fma = 1.0 + (double(p.tile_m) + double(p.tile_n) / native) / (double(p.tile_m) * p.tile_n / native);
        const int64_t rows = s.extents.size() > 1 ? std::max<int64_t>(s.extents[1], 1) : 1;
        const double tail = std::ceil(double(inner) / p.tile_n) * p.tile_n / double(std::max<int64_t>(inner, 1)) *
                            std::ceil(double(rows) / p.tile_m) * p.tile_m / double(rows);
        const double bytes = points * s.store_bytes_per_point + reduced * s.load_bytes_per_reduction_point / p.tile_m;
        const int64_t tasks = p.parallel_axis == 0   ? (inner + p.tile_n - 1) / p.tile_n
                              : p.parallel_axis == 1 ? (s.extents[1] + p.tile_m - 1) / p.tile_m
                                                     : tasks_of(p.parallel_axis, 1, 1);
        return run_seconds(fmas * per_fma * tail, bytes, tasks, m);
    }
    // The pure definition (a reduction's read-out and its accumulator's init run the same loops).
    const int64_t pure_lanes = p.vector_axis == 0 || p.chunks ? p.vector_width : 1;
    const int64_t pure_tasks = p.chunks ? p.chunks : tasks_of(p.parallel_axis, p.parallel_grain, p.vector_axis == 0 ? p.vector_width : 1);
    double work = vector_ops(points, s.ops_per_point + memory_ops(s.load_bytes_per_point, s.store_bytes_per_point, s.type_bits),
                             pure_lanes, inner, native);
    double bytes = points * (s.load_bytes_per_point + s.store_bytes_per_point);
    if (r.accumulator.defined()) work *= 2;
    double seconds = run_seconds(work, bytes, pure_tasks, m);
    if (s.reduction_points > 1 || !r.rextents.empty()) {
        const int64_t lanes = p.lanes ? p.lanes : p.across_outputs ? p.across_outputs : p.sum_vector ? p.sum_vector : 1;
        // Lanes of the reduced axis (rfactor lanes, a blocked sum's own lanes) or of the outputs.
        const bool reduced_lanes = p.lanes || (p.sum_vector && r.blocked_sum && r.blocked_sum->lanes > 1);
        const int64_t lane_extent = reduced_lanes && !r.rextents.empty() ? r.rextents[0] : inner;
        double rwork = vector_ops(reduced, s.ops_per_reduction_point + memory_ops(s.load_bytes_per_reduction_point, 0, s.type_bits),
                                  lanes, lane_extent, native);
        double rbytes = reduced * s.load_bytes_per_reduction_point;
        if (p.parallel_update_axis == 0 && r.blocked_sum && !r.reduces_innermost) {
            // A column sum parallel over its innermost (only) output axis: each task sums a strip
            // one vector wide down every row, block by block, using part of each cache line it
            // loads. Measured on 2 cores, serial against parallel: 2048^2 floats 2.1 against 2.6
            // ms, 4096 x 512 0.48 against 0.82 ms, 100000 x 64 2.5 against 3.4 ms. (A column max,
            // a plain update, gains from the same parallel loop: 3.1 against 6.3 ms at 100000 x 64.)
            const double line = 64, strip = double(std::max<int64_t>(lanes, 1)) * std::max(1, s.type_bits / 8);
            rbytes *= std::max(1.0, line / strip) * 2;
        }
        const int64_t across = p.across_outputs ? p.across_outputs : p.sum_vector && !reduced_lanes ? p.sum_vector : 1;
        seconds += run_seconds(rwork, rbytes, tasks_of(p.parallel_update_axis, p.parallel_update_grain, across), m);
    }
    return seconds;
}

// A tiled region and the regions computed in its tiles (stencil fusion), as one parallel loop
// over tiles: each member computes the rows its tile needs (more than the tile by its stencils'
// reach, recomputed by neighbouring tiles) and keeps them in cache for its consumers, so only
// the tiled region's stores and the group's reads of other arrays reach memory, as long as a
// tile's rows of every member fit in one core's cache. Sliding down the tile's rows, a member
// keeps only the rows its consumers' windows still read (Halide folds its storage), so a tall
// tile fits too.
double group_seconds(const PipelineAnalysis &a, const std::vector<RegionPlan> &plans, int root, const MachineModel &m) {
    const RegionPlan &rp = plans[root];
    std::vector<int> members;
    for (size_t i = 0; i < plans.size(); ++i) {
        if (plans[i].tile_of == root) members.push_back(static_cast<int>(i));
    }
    // Inlined regions between members (a member feeds one, which feeds the group): computed inside
    // their consumers' expressions, so the windows pass through them, but they store nothing
    // here; their cost is their own (inline_seconds).
    std::set<int> in_group(members.begin(), members.end());
    in_group.insert(root);
    std::vector<int> through = members;
    for (int i = static_cast<int>(plans.size()) - 1; i >= 0; --i) {
        if (!plans[i].inlined) continue;
        const StageAnalysis &s = a.stages[i];
        const bool consumed_inside = !s.consumers.empty() && std::all_of(s.consumers.begin(), s.consumers.end(),
                                                                          [&](int c) { return in_group.count(c) > 0; });
        const bool fed_by_member = std::any_of(s.producers.begin(), s.producers.end(),
                                               [&](int p) { return plans[p].tile_of == root; });
        if (consumed_inside && fed_by_member) {
            in_group.insert(i);
            through.push_back(i);
        }
    }
    auto spans = tile_spans(a, root, rp.tile_axis, through);
    if (!spans) return std::numeric_limits<double>::infinity();
    const int64_t rows = std::max<int64_t>(a.stages[root].extents[rp.tile_axis], 1);
    const int64_t tile = std::min<int64_t>(rp.tile_rows, rows);
    const int64_t tiles = (rows + tile - 1) / tile;
    double work = 0, bytes = 0, tile_bytes = 0, member_traffic = 0;
    for (const auto &[g, span] : *spans) {
        const StageAnalysis &s = a.stages[g];
        const RegionPlan &p = plans[g];
        if (p.inlined) continue;   // (read through: their consumers' reads of them come from cache)
        const int64_t extent = std::max<int64_t>(s.extents[span.axis], 1);
        const int64_t per_tile = std::min<int64_t>(extent, tile + span.hi - span.lo);
        const double points = double(s.points) * double(per_tile * tiles) / double(extent);
        const int native = native_lanes(s, m);
        const int64_t lanes = p.vector_axis == 0 ? p.vector_width : 1;
        work += vector_ops(points, s.ops_per_point + memory_ops(s.load_bytes_per_point, s.store_bytes_per_point, s.type_bits),
                           lanes, s.extents[0], native);
        // Reads of arrays outside the group come from memory; reads of members from cache.
        auto outside = [&](double load_bytes, const std::vector<double> &from_producer) {
            for (size_t k = 0; k < s.producers.size(); ++k) {
                if (spans->count(s.producers[k])) load_bytes -= from_producer[k];
            }
            return std::max(load_bytes, 0.0);
        };
        bytes += points * outside(s.load_bytes_per_point, s.producer_bytes);
        if (s.reduction_points > 1) {
            // A window reduction in the tile (tile_member): its update's work and outside reads.
            const double reduced = points * double(s.reduction_points);
            const int64_t across = p.across_outputs ? p.across_outputs : 1;
            work += vector_ops(reduced, s.ops_per_reduction_point + memory_ops(s.load_bytes_per_reduction_point, 0, s.type_bits),
                               across, s.extents[0], native);
            bytes += reduced * outside(s.load_bytes_per_reduction_point, s.producer_reduction_bytes);
        }
        if (g == root) {
            bytes += double(s.points) * s.store_bytes_per_point;
        } else {
            const int64_t kept = rp.tile_slides ? std::min<int64_t>(per_tile, span.hi - span.lo + 1) : per_tile;
            tile_bytes += double(s.points) / double(extent) * double(kept) * s.store_bytes_per_point;
            member_traffic += points * s.store_bytes_per_point * 2;
        }
    }
    if (tile_bytes > m.cache_bytes_per_core) bytes += member_traffic;  // the tile's rows spill
    return run_seconds(work, bytes, tiles, m);
}

}  // namespace

double inline_seconds(const PipelineAnalysis &a, int region, const MachineModel &m) {
    const StageAnalysis &s = a.stages[region];
    const int native = native_lanes(s, m);
    double work = 0, saved_bytes = 0;
    for (int c : s.consumers) {
        const StageAnalysis &consumer = a.stages[c];
        auto at = std::find(consumer.producers.begin(), consumer.producers.end(), region);
        double evaluations = double(consumer.points);
        if (at != consumer.producers.end()) {
            // Read in a reduction's update, it is computed at every point of the reduction domain.
            const size_t k = at - consumer.producers.begin();
            const double reduced = double(consumer.points) * double(consumer.reduction_points);
            evaluations = double(consumer.producer_calls[k]) * double(consumer.points) +
                          double(consumer.producer_reduction_calls[k]) * reduced;
            // The consumer no longer reads the stored values, but this region's own inputs: once
            // per point it is read at (several reads of a point's neighbours hit the cache).
            saved_bytes += consumer.producer_bytes[k] * double(consumer.points) +
                           consumer.producer_reduction_bytes[k] * reduced;
            saved_bytes -= ((consumer.producer_calls[k] > 0 ? double(consumer.points) : 0.0) +
                            (consumer.producer_reduction_calls[k] > 0 ? reduced : 0.0)) *
                           s.load_bytes_per_point;
        }
        work += evaluations * std::max(s.ops_per_point, 1.0) / native;
    }
    // Recomputing costs its arithmetic and saves the consumers' traffic to the stored copy
    // (counted in their own time): the net, and never less than nothing.
    const double compute = work / m.vector_ops_per_second / std::max(1, m.cores);
    return std::max(0.0, compute - saved_bytes / m.machine_bandwidth);
}

namespace {

// A region's seconds under its own plan, outside any tile group; inlined, its cost to its consumers.
double plan_seconds(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const RegionPlan &p, int region,
                    const MachineModel &machine) {
    return p.inlined ? inline_seconds(analysis, region, machine) : region_seconds(lowered, analysis.stages[region], p, machine);
}

}  // namespace

double predict_group_seconds(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, const Schedule &schedule,
                             int root, const MachineModel &machine) {
    std::vector<RegionPlan> plans = plan_regions(lowered, schedule, /*whole_pipeline=*/false);
    return group_seconds(analysis, plans, root, machine);
}

double predict_region_seconds(const LoweredPipeline &lowered, const PipelineAnalysis &analysis, int region,
                              const Schedule &decisions, const MachineModel &machine) {
    std::vector<RegionPlan> plans = plan_regions(lowered, decisions, /*whole_pipeline=*/false);
    return plan_seconds(lowered, analysis, plans[region], region, machine);
}

std::vector<double> predict_seconds(const LoweredPipeline &lowered, const PipelineAnalysis &analysis,
                                    const std::vector<Schedule> &schedules, const MachineModel &machine) {
    std::vector<double> seconds;
    for (const Schedule &s : schedules) {
        std::vector<RegionPlan> plans = plan_regions(lowered, s);
        double total = 0;
        for (const StageAnalysis &stage : analysis.stages) {
            const RegionPlan &p = plans[stage.region];
            if (p.tile_of >= 0) continue;  // in its tiled region's group
            total += p.tile_axis >= 0 && !p.inlined ? group_seconds(analysis, plans, stage.region, machine)
                                                    : plan_seconds(lowered, analysis, p, stage.region, machine);
        }
        seconds.push_back(total);
    }
    return seconds;
}

double correction_factor(const MachineModel &machine, const Schedule &decisions) {
    double log_factor = 0;
    for (const Decision &d : decisions) {
        for (const auto &[choice, weight] : machine.choice_weights) {
            if (choice == d.choice) log_factor += weight;
        }
    }
    return std::exp(log_factor);
}

}  // namespace hc
