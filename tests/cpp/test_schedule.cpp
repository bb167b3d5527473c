// Schedule decisions as values (decisions.h) and apply_schedule(): the baseline is one list
// among others; any list that fits the pipeline computes the same numbers; lists that do not
// fit are refused by name.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "hcompile/compile.h"
#include "hcompile/decisions.h"
#include "hcompile/graph.h"

using namespace hc;

namespace {

using Ints = std::vector<int64_t>;

// (64 x 40) float32 x: exp(x).sum(axis=1) and x @ w with w (40 x 27): a blocked float sum and
// a register-tiled matmul whose tiles do not divide 27 columns.
Graph sum_and_matmul() {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {64, 40});
    NodeId w = g.add_input(1, DType::Float32, {40, 27});
    NodeId s = g.add_op(OpKind::Sum, {g.add_op(OpKind::Exp, {x})}, Attrs{{"axes", Ints{1}}, {"keepdims", int64_t{0}}});
    g.set_outputs({s, g.add_op(OpKind::Matmul, {x, w})});
    return g;
}

struct Outputs {
    std::vector<float> sums, products;
};

Outputs run(const KernelPtr &k) {
    Halide::Runtime::Buffer<float> x(40, 64), w(27, 40), s(64), m(27, 64);
    x.for_each_element([&](int j, int i) { x(j, i) = static_cast<float>((i * 7 + j * 3) % 11) / 8.0f - 0.5f; });
    w.for_each_element([&](int j, int i) { w(j, i) = static_cast<float>((i * 5 + j) % 9) / 4.0f - 1.0f; });
    std::vector<halide_buffer_t *> buffers{x.raw_buffer(), w.raw_buffer(), s.raw_buffer(), m.raw_buffer()};
    std::string error;
    REQUIRE_MESSAGE(k->run(buffers.data(), &error) == 0, error);
    return {std::vector<float>(s.begin(), s.end()), std::vector<float>(m.begin(), m.end())};
}

KernelPtr compile_with(const Graph &g, std::optional<Schedule> schedule, CompileReport *report = nullptr) {
    CompileOptions options;
    options.schedule = std::move(schedule);
    return compile_graph(g, options, report);
}

int region_with(const Schedule &s, Choice c) {
    for (const Decision &d : s) {
        if (d.choice == c) return d.region;
    }
    FAIL("no decision ", choice_name(c));
    return -1;
}

}  // namespace

TEST_SUITE("schedule") {

TEST_CASE("decisions are values: compared, ordered, hashed and printed") {
    Decision a{2, Choice::Vectorize, 0, 8}, b{2, Choice::Vectorize, 0, 8}, c{2, Choice::Vectorize, 0, 16};
    CHECK(a == b);
    CHECK(a != c);
    CHECK(a < c);
    CHECK(hash_value(a) == hash_value(b));
    std::unordered_set<Decision> set{a, b, c, Decision{1, Choice::RegisterTile, -1, 16, 6}};
    CHECK(set.size() == 3);
    CHECK(to_string(a) == "region 2: vectorize axis 0 by 8");
    CHECK(to_string(Decision{1, Choice::RegisterTile, -1, 16, 6}) == "region 1: register_tile 16x6");
    CHECK(hash_value(Schedule{a, c}) != hash_value(Schedule{c, a}));
}

TEST_CASE("the baseline is a list; other lists that fit compute the same numbers") {
    Graph g = sum_and_matmul();
    CompileReport baseline_report;
    Outputs want = run(compile_with(g, std::nullopt, &baseline_report));
    const Schedule &baseline = baseline_report.decisions;
    // (Its size depends on the host's vectors: 16x6 is AVX2's choice.)
    CHECK(baseline_report.schedule.find(": register_tile ") != std::string::npos);
    CHECK(baseline_report.schedule_source.find(".compute_root();") != std::string::npos);
    CHECK(baseline_report.schedule_source.find(".tile(") != std::string::npos);

    // The same list given explicitly: the same directives (over Funcs Halide names anew).
    CompileReport again;
    compile_with(g, baseline, &again);
    CHECK(again.decisions == baseline);
    auto lines = [](const std::string &s) { return std::count(s.begin(), s.end(), '\n'); };
    CHECK(lines(again.schedule_source) == lines(baseline_report.schedule_source));

    // Every region at the root, nothing vectorized or parallel, odd tiles that leave partial
    // ones on both axes: the order of each sum is the lowering's, so the numbers are equal.
    const int sum = region_with(baseline, Choice::SumVector), product = region_with(baseline, Choice::RegisterTile);
    Schedule plain{{sum, Choice::ComputeRoot}, {product, Choice::ComputeRoot}, {product, Choice::RegisterTile, -1, 5, 3}};
    CompileReport plain_report;
    Outputs got = run(compile_with(g, plain, &plain_report));
    CHECK(got.sums == want.sums);
    CHECK(got.products == want.products);
    CHECK(plain_report.schedule_source.find("parallel") == std::string::npos);

    // Parallel rows of the product, the sum vectorized across outputs and in parallel.
    Schedule parallel{{sum, Choice::ComputeRoot},        {sum, Choice::Vectorize, 0, 4},
                      {sum, Choice::ParallelUpdate, 0},   {product, Choice::ComputeRoot},
                      {product, Choice::RegisterTile, -1, 8, 2}, {product, Choice::Parallel, 1}};
    got = run(compile_with(g, parallel));
    CHECK(got.sums == want.sums);
    CHECK(got.products == want.products);

    // The sum's parallel loop in tasks of 5 rows (64 rows: a partial last task); the list prints
    // and applies its grain.
    Schedule grained = parallel;
    grained[2].value = 5;
    CompileReport grained_report;
    got = run(compile_with(g, grained, &grained_report));
    CHECK(got.sums == want.sums);
    CHECK(got.products == want.products);
    CHECK(to_string(grained[2]).find("parallel_update axis 0 in tasks of 5") != std::string::npos);
    CHECK(grained_report.schedule_source.find("_task, ") != std::string::npos);
}

TEST_CASE("lists that do not fit the pipeline are refused, naming the decision") {
    Graph g = sum_and_matmul();
    CompileReport report;
    compile_with(g, std::nullopt, &report);
    const int sum = region_with(report.decisions, Choice::SumVector);
    const int product = region_with(report.decisions, Choice::RegisterTile);
    auto refused = [&](Schedule s, const std::string &why) {
        try {
            compile_with(g, s);
        } catch (const std::invalid_argument &e) {
            CHECK_MESSAGE(std::string(e.what()).find(why) != std::string::npos, e.what());
            return;
        }
        FAIL("not refused: ", print_schedule(s));
    };
    const Decision root_sum{sum, Choice::ComputeRoot}, root_product{product, Choice::ComputeRoot},
        tile{product, Choice::RegisterTile, -1, 8, 2};
    refused({root_sum, root_product, tile, {7, Choice::ComputeRoot}}, "no such region");
    refused({root_sum, root_product, tile, {sum, Choice::Vectorize, 3, 8}}, "no such axis");
    refused({root_sum, root_product, tile, {sum, Choice::Vectorize, 0, 0}}, "at least 1");
    refused({root_sum, root_product, tile, root_sum}, "already has a decision of this kind");
    refused({root_product, tile}, "is not placed");
    refused({root_sum, root_product}, "without a register tile");
    refused({root_sum, root_product, tile, {sum, Choice::RegisterTile, -1, 8, 2}}, "not a matrix product");
    refused({root_sum, root_product, tile, {product, Choice::Vectorize, 0, 8}}, "register tile");
    refused({root_sum, root_product, tile, {sum, Choice::ReduceInLanes, -1, 8}}, "'region " + std::to_string(sum));
    refused({{sum, Choice::ComputeAtRow, -1, sum}, root_product, tile}, "another region's");
    refused({root_sum, root_product, tile, {product, Choice::CallLibrary, 1, 8, 2}}, "not lowered as a library call");
    refused({root_sum, root_product, tile, {product, Choice::Parallel, 1, 4}}, "a matrix product's tasks are its tiles");
    refused({root_sum, root_product, tile, {sum, Choice::ParallelUpdate, 0, -1}}, "at least one iteration");
}

}  // TEST_SUITE
