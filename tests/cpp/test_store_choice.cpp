// Inline or store, decided by the scheduler: a node the partitioner's cost rule stored, whose
// inlined copies would stay small, is an optional region stored by default. The baseline stores
// it; an explicit Inline gives the same numbers; the search weighs both with the cost model.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "hcompile/analysis.h"
#include "hcompile/baseline_schedule.h"
#include "hcompile/compile.h"
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
using hc::testing::rows;

namespace {

using Ints = std::vector<int64_t>;

// exp(x) over (n x cols) float32 read through 4 windows of rows: 3 extra copies of 10 op units
// pass the recompute budget (24), so the cost rule stores it; 4 copies, 40 units, stay under the
// bound on what the scheduler may inline (64).
Graph exp_read_four_times(int64_t n, int64_t cols) {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {n, cols});
    NodeId e = g.add_op(OpKind::Exp, {x});
    NodeId sum = g.add_op(OpKind::Add, {rows(g, e, 0, n - 3, cols), rows(g, e, 1, n - 3, cols)});
    sum = g.add_op(OpKind::Add, {sum, rows(g, e, 2, n - 3, cols)});
    g.set_outputs({g.add_op(OpKind::Sub, {sum, rows(g, e, 3, n - 3, cols)})});
    return g;
}

std::vector<float> run(const Graph &g, const std::optional<Schedule> &schedule, int64_t n, int64_t cols,
                       CompileReport *report) {
    CompileOptions options;
    options.schedule = schedule;
    KernelPtr k = compile_graph(g, options, report);
    Halide::Runtime::Buffer<float> x(static_cast<int>(cols), static_cast<int>(n)),
        out(static_cast<int>(cols), static_cast<int>(n - 3));
    x.for_each_element([&](int j, int i) { x(j, i) = static_cast<float>((i * 5 + j * 3) % 11) / 8.0f - 0.6f; });
    std::vector<halide_buffer_t *> buffers{x.raw_buffer(), out.raw_buffer()};
    std::string error;
    REQUIRE_MESSAGE(k->run(buffers.data(), &error) == 0, error);
    return std::vector<float>(out.begin(), out.end());
}

bool inlines(const Schedule &s, int region) {
    return std::any_of(s.begin(), s.end(), [&](const Decision &d) { return d.region == region && d.choice == Choice::Inline; });
}

}  // namespace

TEST_SUITE("store choice") {

TEST_CASE("a small store of the cost rule is the scheduler's to inline; the baseline stores it") {
    Graph g = exp_read_four_times(40, 24);
    Partition p = partition_into_regions(g);
    REQUIRE(p.regions.size() == 2);
    const NodeId e = p.regions[0].root;
    CHECK(p.optional[e]);
    CHECK(p.stored_by_default[e]);
    CHECK(print_partition(g, p).find("stored by the cost rule; the schedule may inline it") != std::string::npos);

    LoweredPipeline lowered = lower_to_halide(g, p, {});
    CHECK(lowered.regions[0].stored_by_default);
    Schedule base = baseline_schedule(lowered, avx2());
    CHECK_FALSE(inlines(base, 0));
    CHECK(std::any_of(base.begin(), base.end(), [](const Decision &d) { return d.region == 0 && d.choice == Choice::ComputeRoot; }));
}

TEST_CASE("inlined or stored, the same numbers; partial vectors and sizes under a vector included") {
    for (int64_t n : {4, 9, 61}) {
        for (int64_t cols : {1, 7, 37}) {
            CAPTURE(n);
            CAPTURE(cols);
            Graph g = exp_read_four_times(n, cols);
            Schedule stored{{0, Choice::ComputeRoot}, {0, Choice::Vectorize, 0, 8}, {1, Choice::ComputeRoot},
                            {1, Choice::Vectorize, 0, 8}, {1, Choice::Parallel, 1}};
            Schedule inlined{{0, Choice::Inline}, {1, Choice::ComputeRoot}, {1, Choice::Vectorize, 0, 8}};
            CompileReport report;
            const std::vector<float> want = run(g, stored, n, cols, nullptr);
            CHECK(run(g, inlined, n, cols, &report) == want);
            CHECK(report.schedule_source.find("compute_inline") != std::string::npos);
            CHECK(run(g, std::nullopt, n, cols, nullptr) == want);   // the search's own choice
        }
    }
}

TEST_CASE("the search weighs inlining against storing with the cost model") {
    const MachineModel m = reference_machine();
    for (int64_t n : {64, 2048}) {
        CAPTURE(n);
        Graph g = exp_read_four_times(n, 2048);
        LoweredPipeline lowered = lower_to_halide(g, partition_into_regions(g), {});
        PipelineAnalysis a = analyze_pipeline(lowered);
        SearchResult r = search_schedule(lowered, a, m, avx2());
        const double inline_cost = inline_seconds(a, 0, m);
        const double store_cost = predict_region_seconds(lowered, a, 0, baseline_schedule(lowered, avx2()), m);
        // Chosen inline only where the model predicts it cheaper than the stored region.
        if (inlines(r.schedule, 0)) CHECK(inline_cost < store_cost);
        // Exp at 4 places (40 ops a point) against one pass storing and reloading 4 bytes a point.
        MESSAGE("n=" << n << ": inline " << inline_cost * 1e3 << " ms, stored " << store_cost * 1e3 << " ms, chose "
                     << std::string(inlines(r.schedule, 0) ? "inline" : "store"));
    }
}

}  // TEST_SUITE
