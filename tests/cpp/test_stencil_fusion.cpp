// Stencil fusion: the analysis's windows of rows, tile spans through them, the tile_rows and
// compute_at_tile decisions (applied, sliding or not, refused), and the search choosing them on the reference
// machine.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "hcompile/analysis.h"
#include "hcompile/compile.h"
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

LoweredPipeline lower(const Graph &g) { return lower_to_halide(g, partition_into_regions(g), {}); }

// tanh(exp(x)) over (n x cols) float32, then the sum of 3 neighbouring rows of it: too costly to
// inline at 3 places, so it is a stored region read through the window [y, y + 2].
Graph exp_then_rows(int64_t n, int64_t cols) {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {n, cols});
    NodeId e = g.add_op(OpKind::Tanh, {g.add_op(OpKind::Exp, {x})});
    NodeId sum = g.add_op(OpKind::Add, {rows(g, e, 0, n - 2, cols), rows(g, e, 1, n - 2, cols)});
    g.set_outputs({g.add_op(OpKind::Add, {sum, rows(g, e, 2, n - 2, cols)})});
    return g;
}

NodeId cols_of(Graph &g, NodeId x, int64_t first, int64_t count, int64_t n) {
    return g.add_op(OpKind::Slice, {x},
                    Attrs{{"starts", Ints{0, first}}, {"stops", Ints{n, first + count}}, {"steps", Ints{1, 1}}});
}

// A separable 3x3 sum over (n x cols) float32: the horizontal pass is cheap enough to inline at
// its 3 readers, so the partitioner inlines it; read through slices only, it is optional.
Graph separable_sum(int64_t n, int64_t cols) {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {n, cols});
    NodeId h = g.add_op(OpKind::Add, {g.add_op(OpKind::Add, {cols_of(g, x, 0, cols - 2, n), cols_of(g, x, 1, cols - 2, n)}),
                                      cols_of(g, x, 2, cols - 2, n)});
    NodeId v = g.add_op(OpKind::Add, {rows(g, h, 0, n - 2, cols - 2), rows(g, h, 1, n - 2, cols - 2)});
    g.set_outputs({g.add_op(OpKind::Add, {v, rows(g, h, 2, n - 2, cols - 2)})});
    return g;
}

const StageAnalysis::Reach *reach_of(const StageAnalysis &s, int producer, int axis) {
    for (const auto &r : s.reaches) {
        if (r.producer == producer && r.axis == axis) return &r;
    }
    return nullptr;
}

std::vector<float> run_rows(const Graph &g, const std::optional<Schedule> &schedule, int64_t n, int64_t cols,
                            CompileReport *report, int64_t out_cols = -1) {
    CompileOptions options;
    options.schedule = schedule;
    KernelPtr k = compile_graph(g, options, report);
    Halide::Runtime::Buffer<float> x(static_cast<int>(cols), static_cast<int>(n)),
        out(static_cast<int>(out_cols < 0 ? cols : out_cols), static_cast<int>(n - 2));
    x.for_each_element([&](int j, int i) { x(j, i) = static_cast<float>((i * 7 + j * 3) % 13) / 8.0f - 0.7f; });
    std::vector<halide_buffer_t *> buffers{x.raw_buffer(), out.raw_buffer()};
    std::string error;
    REQUIRE_MESSAGE(k->run(buffers.data(), &error) == 0, error);
    return std::vector<float>(out.begin(), out.end());
}

}  // namespace

TEST_SUITE("stencil fusion") {

TEST_CASE("the analysis finds windows of rows, and tile spans follow them") {
    LoweredPipeline lowered = lower(exp_then_rows(64, 40));
    PipelineAnalysis a = analyze_pipeline(lowered);
    REQUIRE(a.stages.size() == 2);   // exp, and the output reading it
    CHECK(a.stages[0].consumers == std::vector<int>{1});
    const auto *down = reach_of(a.stages[1], 0, 1), *across = reach_of(a.stages[1], 0, 0);
    REQUIRE(down);
    REQUIRE(across);
    CHECK(down->producer_axis == 1);
    CHECK(down->lo == 0);
    CHECK(down->hi == 2);
    CHECK(across->producer_axis == 0);
    CHECK(across->lo == 0);
    CHECK(across->hi == 0);
    auto spans = tile_spans(a, 1, 1, {0});
    REQUIRE(spans);
    CHECK(spans->at(0).axis == 1);
    CHECK(spans->at(0).hi - spans->at(0).lo == 2);   // two rows more than the tile
    CHECK(spans->at(1).hi == 0);
    // The output is read by nothing: it cannot be computed in another region's tiles.
    CHECK_FALSE(tile_spans(a, 0, 1, {1}));
}

TEST_CASE("regions computed per tile give the numbers computed at the root, partial tiles included") {
    const int64_t n = 61, cols = 37;   // 59 output rows: tiles of 8 leave a partial one
    Graph g = exp_then_rows(n, cols);
    Schedule root{{0, Choice::ComputeRoot}, {0, Choice::Vectorize, 0, 8}, {1, Choice::ComputeRoot},
                  {1, Choice::Vectorize, 0, 8}, {1, Choice::Parallel, 1}};
    Schedule tiled{{0, Choice::ComputeAtTile, -1, 1}, {0, Choice::Vectorize, 0, 8}, {1, Choice::ComputeRoot},
                   {1, Choice::TileRows, 1, 8}, {1, Choice::Vectorize, 0, 8}};
    CompileReport report;
    const std::vector<float> want = run_rows(g, root, n, cols, nullptr);
    CHECK(run_rows(g, tiled, n, cols, &report) == want);
    CHECK(report.schedule_source.find(".compute_at(") != std::string::npos);
    CHECK(report.schedule_source.find(".parallel(tile_") != std::string::npos);   // the tile loop, in parallel
    // Sliding down each tile's rows (stored per tile, computed per row): the same numbers, for
    // tiles that divide the rows, leave a partial one, or hold them all.
    for (int64_t rows : {8, 59, 128}) {
        Schedule sliding = tiled;
        sliding[3] = Decision{1, Choice::TileRows, 1, rows, 1};
        CompileReport slid;
        CHECK(run_rows(g, sliding, n, cols, &slid) == want);
        CHECK(slid.schedule_source.find(".store_at(") != std::string::npos);
    }
    // A tile taller than the image: one tile.
    tiled[3].value = 128;
    CHECK(run_rows(g, tiled, n, cols, nullptr) == want);
}

TEST_CASE("tile decisions that do not fit are refused") {
    Graph g = exp_then_rows(40, 16);
    auto refused = [&](Schedule s, const std::string &why) {
        try {
            CompileOptions options;
            options.schedule = s;
            compile_graph(g, options);
        } catch (const std::invalid_argument &e) {
            CHECK_MESSAGE(std::string(e.what()).find(why) != std::string::npos, e.what());
            return;
        }
        FAIL("not refused: ", print_schedule(s));
    };
    const Decision root0{0, Choice::ComputeRoot}, root1{1, Choice::ComputeRoot};
    refused({{0, Choice::ComputeAtTile, -1, 1}, root1}, "not tiled at the root");
    refused({root0, {1, Choice::ComputeAtTile, -1, 0}, {0, Choice::TileRows, 1, 8}}, "an output is stored whole");
    refused({{0, Choice::ComputeAtTile, -1, 0}, root1}, "another region's");
    refused({root0, root1, {1, Choice::TileRows, 1, 8}, {1, Choice::Parallel, 1}}, "the tile loop is the region's parallel loop");
    refused({root0, root1, {1, Choice::TileRows, 0, 8}, {1, Choice::Vectorize, 0, 8}}, "not the vector's");
    refused({{0, Choice::ComputeAtTile, -1, 1}, {0, Choice::Parallel, 1}, root1, {1, Choice::TileRows, 1, 8}},
            "in no loop of its own");
    refused({root0, root1, {1, Choice::TileRows, 0, 8, 1}}, "the outermost axis only");
}

TEST_CASE("golden: the search computes a stencil's producer per tile on the reference machine") {
    LoweredPipeline big = lower(exp_then_rows(2048, 2048));
    PipelineAnalysis a = analyze_pipeline(big);
    SearchResult found = search_schedule(big, a, reference_machine(), avx2());
    CHECK(std::count(found.schedule.begin(), found.schedule.end(), Decision{0, Choice::ComputeAtTile, -1, 1}) == 1);
    CHECK(std::any_of(found.schedule.begin(), found.schedule.end(), [](const Decision &d) {
        return d.region == 1 && d.choice == Choice::TileRows && d.axis == 1;
    }));
    // Too few rows for two tiles per core: each region at the root.
    LoweredPipeline small = lower(exp_then_rows(20, 2048));
    SearchResult alone = search_schedule(small, analyze_pipeline(small), reference_machine(), avx2());
    CHECK(std::none_of(alone.schedule.begin(), alone.schedule.end(),
                       [](const Decision &d) { return d.choice == Choice::TileRows; }));
}

TEST_CASE("a stencil intermediate the partitioner inlines is an optional region the schedule may store") {
    const int64_t n = 45, cols = 53;
    Graph g = separable_sum(n, cols);
    Partition p = partition_into_regions(g);
    REQUIRE(p.regions.size() == 2);
    CHECK(p.optional[p.regions[0].root]);
    CHECK(print_partition(g, p).find("[optional") != std::string::npos);
    CompileReport report;
    const std::vector<float> want = run_rows(g, std::nullopt, n, cols, &report, cols - 2);
    CHECK(std::count(report.decisions.begin(), report.decisions.end(), Decision{0, Choice::Inline}) == 1);
    CHECK(report.schedule_source.find(".compute_inline();") != std::string::npos);
    // Stored at the root, or per tile (a partial last tile): the same numbers.
    const Schedule root{{0, Choice::ComputeRoot}, {1, Choice::ComputeRoot}, {1, Choice::Vectorize, 0, 8}};
    const Schedule tiled{{0, Choice::ComputeAtTile, -1, 1}, {0, Choice::Vectorize, 0, 8}, {1, Choice::ComputeRoot},
                         {1, Choice::TileRows, 1, 16}, {1, Choice::Vectorize, 0, 8}};
    CHECK(run_rows(g, root, n, cols, nullptr, cols - 2) == want);
    CHECK(run_rows(g, tiled, n, cols, nullptr, cols - 2) == want);
    // Inline is for optional regions, and gives the region no loops.
    auto refused = [&](Schedule s, const std::string &why) {
        CompileOptions options;
        options.schedule = s;
        CHECK_THROWS_WITH_AS(compile_graph(g, options), doctest::Contains(why.c_str()), std::invalid_argument);
    };
    refused({{0, Choice::ComputeRoot}, {1, Choice::Inline}}, "only an optional region");
    refused({{0, Choice::Inline}, {0, Choice::Vectorize, 0, 8}, {1, Choice::ComputeRoot}}, "no loops of its own");
    // The search on a large image computes it per tile on the reference machine.
    LoweredPipeline big = lower(separable_sum(2048, 2048));
    SearchResult found = search_schedule(big, analyze_pipeline(big), reference_machine(), avx2());
    CHECK(std::count(found.schedule.begin(), found.schedule.end(), Decision{0, Choice::ComputeAtTile, -1, 1}) == 1);
}

}  // TEST_SUITE
