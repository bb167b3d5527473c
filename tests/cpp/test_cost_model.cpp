// The autoscheduler's analysis, machine model, cost model and search, on small pipelines with
// the reference machine (fixed rates), so that the decisions chosen are golden.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hcompile/analysis.h"
#include "hcompile/baseline_schedule.h"
#include "hcompile/cost_model.h"
#include "hcompile/fusion.h"
#include "hcompile/graph.h"
#include "hcompile/lowering.h"
#include "hcompile/machine.h"
#include "hcompile/search.h"
#include "hcompile/target.h"

#include "test_helpers.h"

using namespace hc;
using hc::testing::avx2;

namespace {

using Ints = std::vector<int64_t>;

// An AVX2 target, whatever this machine has: the decisions depend on the vector width.
LoweredPipeline lower(const Graph &g) { return lower_to_halide(g, partition_into_regions(g), {}); }

// tanh(x) * 2 over (rows x cols) float32, and its sum over axis 1 (a second region).
Graph tanh_and_row_sum(int64_t rows, int64_t cols) {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {rows, cols});
    NodeId t = g.add_op(OpKind::Tanh, {x});
    g.set_outputs({t, g.add_op(OpKind::Max, {t}, Attrs{{"axes", Ints{1}}, {"keepdims", int64_t{0}}})});
    return g;
}

bool has(const Schedule &s, Decision d) { return std::find(s.begin(), s.end(), d) != s.end(); }

}  // namespace

TEST_SUITE("cost model") {

TEST_CASE("the analysis counts points, work, bytes and producers per region") {
    Graph g = tanh_and_row_sum(512, 256);
    LoweredPipeline lowered = lower(g);
    PipelineAnalysis a = analyze_pipeline(lowered);
    REQUIRE(a.stages.size() == lowered.regions.size());
    const StageAnalysis *reduction = nullptr, *elementwise = nullptr;
    for (const StageAnalysis &s : a.stages) {
        if (s.reduction_points > 1) {
            reduction = &s;
        } else if (!elementwise || s.ops_per_point > elementwise->ops_per_point) {
            elementwise = &s;   // tanh's region (the output is a copy of it: other nodes read it)
        }
    }
    REQUIRE(reduction);
    REQUIRE(elementwise);
    CHECK(elementwise->points == 512 * 256);
    CHECK(elementwise->ops_per_point > 5);                  // tanh is a polynomial, not one op
    CHECK(elementwise->load_bytes_per_point == doctest::Approx(4));
    CHECK(reduction->points == 512);
    CHECK(reduction->reduction_points == 256);
    CHECK(a.print().find("points") != std::string::npos);
}

TEST_CASE("machine models round-trip through their cache file's text") {
    MachineModel m = reference_machine();
    m.cores = 7;
    m.parallel_launch_seconds = 4.5e-6;
    MachineModel back;
    REQUIRE(MachineModel::parse(m.serialize(), &back));
    CHECK(back.cores == 7);
    CHECK(back.parallel_launch_seconds == doctest::Approx(4.5e-6));
    CHECK_FALSE(MachineModel::parse("cores 2\nvector_bits 256\n", &back));   // incomplete: probe again
    CHECK_FALSE(MachineModel::parse("garbage", &back));
}

TEST_CASE("the cost model prefers vectors and, for large regions, parallel loops") {
    Graph g = tanh_and_row_sum(2048, 1024);
    LoweredPipeline lowered = lower(g);
    PipelineAnalysis a = analyze_pipeline(lowered);
    const MachineModel m = reference_machine();
    int ew = -1;   // tanh's region: the most work per point
    for (const StageAnalysis &s : a.stages) {
        if (s.reduction_points == 1 && (ew < 0 || s.ops_per_point > a.stages[ew].ops_per_point)) ew = s.region;
    }
    REQUIRE(ew >= 0);
    const StageAnalysis &stage = a.stages[ew];
    auto seconds = [&](Schedule s) { return predict_region_seconds(lowered, a, stage.region, s, m); };
    const Decision root{ew, Choice::ComputeRoot}, vec{ew, Choice::Vectorize, 0, 8}, par{ew, Choice::Parallel, 1};
    CHECK(seconds({root, vec}) < seconds({root}) / 4);
    CHECK(seconds({root, vec, par}) < seconds({root, vec}));
    // A tiny region: the parallel loop's launch outweighs its share of the work.
    Graph small = tanh_and_row_sum(4, 16);
    LoweredPipeline small_lowered = lower(small);
    PipelineAnalysis sa = analyze_pipeline(small_lowered);
    for (const StageAnalysis &s : sa.stages) {
        if (s.reduction_points != 1) continue;
        Decision sroot{s.region, Choice::ComputeRoot}, spar{s.region, Choice::Parallel, 1};
        CHECK(predict_region_seconds(small_lowered, sa, s.region, {sroot, spar}, m) > predict_region_seconds(small_lowered, sa, s.region, {sroot}, m));
    }
    // The batch interface agrees with the per-region one.
    Schedule baseline = baseline_schedule(lowered, avx2());
    double total = 0;
    for (const StageAnalysis &s : a.stages) {
        Schedule mine;
        for (const Decision &d : baseline) if (d.region == s.region) mine.push_back(d);
        total += predict_region_seconds(lowered, a, s.region, mine, m);
    }
    CHECK(predict_seconds(lowered, a, {baseline}, m).at(0) == doctest::Approx(total));
}

TEST_CASE("golden: the search's lists for small pipelines on the reference machine") {
    const MachineModel m = reference_machine();
    SUBCASE("a large tanh region: two vectors per iteration (its chains are long); the rest the baseline's") {
        Graph g = tanh_and_row_sum(2048, 1024);
        LoweredPipeline lowered = lower(g);
        SearchResult r = search_schedule(lowered, analyze_pipeline(lowered), m, avx2());
        CHECK(r.predicted_seconds < r.baseline_predicted_seconds);
        CHECK(r.candidates_ranked > 4);
        Schedule expected = baseline_schedule(lowered, avx2());
        for (Decision &d : expected) {
            if (d.region == 0 && d.choice == Choice::Vectorize) d.value = 16;
        }
        CHECK(print_schedule(r.schedule) == print_schedule(expected));
    }
    SUBCASE("a region too small for parallel loops stays serial and vectorized") {
        Graph g = tanh_and_row_sum(8, 64);
        LoweredPipeline lowered = lower(g);
        SearchResult r = search_schedule(lowered, analyze_pipeline(lowered), m, avx2());
        for (const Decision &d : r.schedule) {
            CHECK(d.choice != Choice::Parallel);
            CHECK(d.choice != Choice::ParallelUpdate);
        }
        for (size_t i = 0; i < lowered.regions.size(); ++i) {
            if (!lowered.regions[i].accumulator.defined()) CHECK(has(r.schedule, Decision{int(i), Choice::Vectorize, 0, 8}));
        }
    }
    SUBCASE("a column sum keeps its loop over columns serial (measured 1.2-1.9x faster)") {
        Graph g;
        NodeId x = g.add_input(0, DType::Float32, {2048, 2048});
        g.set_outputs({g.add_op(OpKind::Sum, {x}, Attrs{{"axes", Ints{0}}, {"keepdims", int64_t{0}}})});
        LoweredPipeline lowered = lower(g);
        Schedule baseline = baseline_schedule(lowered, avx2());
        SearchResult r = search_schedule(lowered, analyze_pipeline(lowered), m, avx2());
        auto parallel_update = [](const Schedule &s) {
            return std::any_of(s.begin(), s.end(), [](const Decision &d) { return d.choice == Choice::ParallelUpdate; });
        };
        CHECK(parallel_update(baseline));
        CHECK_FALSE(parallel_update(r.schedule));
        CHECK(has(r.schedule, Decision{0, Choice::SumVector, -1, 8}));
    }
    SUBCASE("the variants differ from the choice in one region and are ranked") {
        Graph g = tanh_and_row_sum(256, 256);
        LoweredPipeline lowered = lower(g);
        PipelineAnalysis a = analyze_pipeline(lowered);
        SearchResult r = search_schedule(lowered, a, m, avx2());
        auto variants = schedule_variants(lowered, a, m, avx2(), r.schedule, 6);
        REQUIRE(variants.size() == 6);
        for (size_t i = 1; i < variants.size(); ++i) CHECK(variants[i - 1].second <= variants[i].second);
        for (const auto &[s, seconds] : variants) {
            CHECK(s != r.schedule);
            CHECK(predict_seconds(lowered, a, {s}, m).at(0) == doctest::Approx(seconds));
        }
    }
}

}  // TEST_SUITE
