// Halide pipelines written by hand, as the HCompile plugin receives them: regions and extents from
// estimates, reductions that are their own accumulator, update axes kept serial, refusals, the
// plugin's parameters, and the search's lists applied and run against plain loops.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "hcompile/analysis.h"
#include "hcompile/apply_schedule.h"
#include "hcompile/cost_model.h"
#include "hcompile/halide_pipeline.h"
#include "hcompile/machine.h"
#include "hcompile/plugin_params.h"
#include "hcompile/tuning_records.h"
#include "hcompile/search.h"
#include "region_plan.h"
#include "schedule_writer.h"

#include "test_helpers.h"

using namespace hc;
using hc::testing::avx2;

namespace {

using Halide::Func;
using Halide::RDom;
using Halide::Var;

// Harris's middle: a Sobel product, its 3x3 box sum written with Halide's sum() (a Func with an
// update over an RDom), and a response read through it.
struct HarrisLike {
    Halide::ImageParam input{Halide::Float(32), 2, "input"};
    Func gray{"gray"}, ix{"ix"}, ixx{"ixx"}, out{"out"};
    Var x{"x"}, y{"y"};
    HarrisLike(int w, int h) {
        Func clamped = Halide::BoundaryConditions::repeat_edge(input);
        gray(x, y) = clamped(x, y) * 0.5f + 1.0f;
        ix(x, y) = gray(x + 1, y) - gray(x - 1, y) + 2.0f * (gray(x + 1, y + 1) - gray(x - 1, y - 1));
        ixx(x, y) = ix(x, y) * ix(x, y);
        RDom box(-1, 3, -1, 3);
        out(x, y) = Halide::sum(ixx(x + box.x, y + box.y)) * 0.25f;
        input.dim(0).set_estimate(0, w);
        input.dim(1).set_estimate(0, h);
        out.set_estimate(x, 0, w).set_estimate(y, 0, h);
    }
};

}  // namespace

// Runs `out` on `input` (w x h floats, values from a formula) and returns the output.
std::vector<float> realize(Halide::Func out, Halide::ImageParam &input, int w, int h) {
    Halide::Buffer<float> in(w, h);
    in.for_each_element([&](int x, int y) { in(x, y) = std::sin(0.37f * x) + std::cos(0.11f * y * y); });
    input.set(in);
    Halide::Buffer<float> result = out.realize({w, h}, Halide::get_jit_target_from_environment());
    return std::vector<float>(result.begin(), result.end());
}

TEST_CASE("a Halide pipeline's Funcs become regions with the extents its estimates give") {
    HarrisLike p(300, 200);
    LoweredPipeline lowered = adapt_halide_pipeline(Halide::Pipeline(p.out));
    std::vector<std::string> names;
    // (Without the "$n" Halide appends to an inline reduction's name used before in the process.)
    for (const RegionFunc &r : lowered.regions) names.push_back(r.func.name().substr(0, r.func.name().find('$')));
    // The input's own Func and the boundary condition's copy of it stay plain loads; the gradient,
    // read by its square alone and at its own point, is inlined and read through.
    // So is the boundary condition, read by gray alone, at gray's own point.
    CHECK(names == std::vector<std::string>{"gray", "ixx", "sum", "out"});
    REQUIRE(lowered.see_through.size() == 4);
    CHECK(lowered.see_through.back().name() == p.ix.name());
    const RegionFunc &ixx = lowered.regions[1], &sum = lowered.regions[2], &out = lowered.regions[3];
    CHECK(out.extents == std::vector<int64_t>{300, 200});
    CHECK(ixx.extents == std::vector<int64_t>{302, 202});          // the box's halo
    CHECK(lowered.regions[0].extents == std::vector<int64_t>{304, 204});  // and the gradient's
    CHECK(ixx.optional);
    CHECK_FALSE(out.optional);
    CHECK(sum.op_class == OpClass::Reduction);
    CHECK(sum.accumulator.name() == sum.func.name());
    CHECK(sum.rextents == std::vector<int64_t>{3, 3});
    CHECK(sum.serial_update_axes == 0);
    CHECK(tile_member(sum));
    CHECK_FALSE(sum.optional);   // Halide cannot inline a Func with an update
}

TEST_CASE("a Func read once per point, at the reader's own indices then constant channels, is read through") {
    Halide::ImageParam input{Halide::Float(32), 2, "input"};
    Var x{"x"}, y{"y"}, c{"c"};
    Func chans{"chans"}, ratio{"ratio"};
    chans(x, y, c) = input(x, y) * (c + 1.0f) + input(x, y + 1);
    ratio(x, y) = chans(x, y, 0) / chans(x, y, 1);   // every point of chans read once: inlining is free
    input.dim(0).set_estimate(0, 64);
    input.dim(1).set_estimate(0, 65);
    ratio.set_estimate(x, 0, 64).set_estimate(y, 0, 64);
    LoweredPipeline lowered = adapt_halide_pipeline(Halide::Pipeline(ratio));
    REQUIRE(lowered.regions.size() == 1);
    CHECK(lowered.see_through.back().name() == chans.name());

    // Reading a neighbour's channel, or dropping a reader's axis, reads points more than once: not
    // free. (The same call twice is one read: Halide's define() shares it in a Let.)
    Func shifted{"shifted"}, sums{"sums"}, by_row{"by_row"};
    shifted(x, y) = chans(x, y, 0) * chans(x, y + 1, 1);
    sums(x, y, c) = input(x, y) + c;
    by_row(x, y) = sums(x, 0, 1) + y;
    for (Func f : {shifted, by_row}) {
        f.set_estimate(x, 0, 64).set_estimate(y, 0, 64);
        LoweredPipeline l = adapt_halide_pipeline(Halide::Pipeline(f));
        CHECK(l.regions.size() == 2);
    }
}

TEST_CASE("an update that reads its own other rows keeps that loop serial") {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    Var x("x"), y("y");
    Func scan("scan");
    scan(x, y) = in(x, y);
    RDom r(1, 99);
    scan(x, r) = scan(x, r - 1) + in(x, r);    // a running sum down the rows
    in.dim(0).set_estimate(0, 64);
    in.dim(1).set_estimate(0, 100);
    scan.set_estimate(x, 0, 64).set_estimate(y, 0, 100);
    LoweredPipeline lowered = adapt_halide_pipeline(Halide::Pipeline(scan));
    REQUIRE(lowered.regions.size() == 1);
    const RegionFunc &s = lowered.regions[0];
    CHECK(s.serial_update_axes == 2);     // axis 1 (rows) serial, axis 0 free
    CHECK_FALSE(s.reduces_innermost);     // so its update vectorizes across columns
    CHECK_FALSE(tile_member(s));
    CHECK_THROWS_WITH_AS(plan_regions(lowered, {{0, Choice::ComputeRoot}, {0, Choice::ParallelUpdate, 1, 0}}),
                         doctest::Contains("reads its own values at other indices"), std::invalid_argument);
    const Schedule chosen = search_schedule(lowered, analyze_pipeline(lowered), reference_machine(), avx2()).schedule;
    for (const Decision &d : chosen) CHECK(d.choice != Choice::ParallelUpdate);
    CHECK(std::find(chosen.begin(), chosen.end(), Decision{0, Choice::ReduceAcrossOutputs, 0, 8}) != chosen.end());
}

TEST_CASE("what the adapter cannot schedule is refused with the reason") {
    Halide::ImageParam in(Halide::Float(32), 2, "in");
    Var x("x"), y("y");
    Func no_estimates("no_estimates");
    no_estimates(x, y) = in(x, y) * 2;
    CHECK_THROWS_WITH_AS(adapt_halide_pipeline(Halide::Pipeline(no_estimates)), doctest::Contains("has no estimate"),
                         std::invalid_argument);
    Func doubled("doubled"), gather("gather");
    doubled(x, y) = in(x, y) * 2;
    gather(x) = doubled(Halide::cast<int>(in(x, 0) * 1000.0f), 0);   // an index from data: unbounded
    gather.set_estimate(x, 0, 16);
    CHECK_THROWS_WITH_AS(adapt_halide_pipeline(Halide::Pipeline(gather)), doctest::Contains("not bounded"),
                         std::invalid_argument);
    Func scheduled("scheduled");
    scheduled(x, y) = in(x, y) + 1;
    scheduled.set_estimate(x, 0, 8).set_estimate(y, 0, 8);
    scheduled.vectorize(x, 8);
    CHECK_THROWS_WITH_AS(adapt_halide_pipeline(Halide::Pipeline(scheduled)), doctest::Contains("already scheduled"),
                         std::invalid_argument);
}

TEST_CASE("the search's list for a Halide pipeline computes what the unscheduled pipeline computes") {
    const int w = 301, h = 203;   // tiles with tails
    HarrisLike plain(w, h);
    const std::vector<float> expected = realize(plain.out, plain.input, w, h);
    HarrisLike tuned(w, h);
    LoweredPipeline lowered = adapt_halide_pipeline(Halide::Pipeline(tuned.out));
    const PipelineAnalysis analysis = analyze_pipeline(lowered);
    MachineModel machine = reference_machine();
    const Schedule chosen = search_schedule(lowered, analysis, machine, avx2()).schedule;
    // The window sum is computed per tile of the output with everything it reads.
    CHECK(std::find(chosen.begin(), chosen.end(), Decision{2, Choice::ComputeAtTile, -1, 3}) != chosen.end());
    const std::string source = apply_schedule(lowered, chosen);
    const std::string out = ScheduleWriter::cpp_name(tuned.out.name());   // out_<n>: Func names are unique
    const size_t declared = source.find("Var tile_" + out + "(");
    CHECK(declared != std::string::npos);
    CHECK(declared < source.find("compute_at(" + out + ", tile_" + out + ")"));   // declared before use
    // The prelude names each region's Func by the index Halide's Pipeline::get_func gives it.
    const std::string prelude = halide_schedule_prelude(lowered);
    for (const RegionFunc &r : lowered.regions) {
        CHECK(lowered.pipeline.get_func(r.node).name() == r.func.name());
        CHECK(prelude.find("Func " + ScheduleWriter::cpp_name(r.func.name()) + " = pipeline.get_func(" +
                           std::to_string(r.node) + ");") != std::string::npos);
    }
    const std::vector<float> got = realize(tuned.out, tuned.input, w, h);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-4));
}

TEST_CASE("the plugin's parameters") {
    CHECK(parse_plugin_params({}).parallelism == 0);
    PluginParams p = parse_plugin_params({{"parallelism", "16"}, {"variant", "3"}});
    CHECK(p.parallelism == 16);
    CHECK(p.variant == 3);
    CHECK_THROWS_WITH_AS(parse_plugin_params({{"beam_size", "4"}}), doctest::Contains("unknown parameter 'beam_size'"),
                         std::invalid_argument);
    CHECK_THROWS_AS(parse_plugin_params({{"parallelism", "0"}}), std::invalid_argument);
    CHECK_THROWS_AS(parse_plugin_params({{"parallelism", "2x"}}), std::invalid_argument);
    CHECK_THROWS_AS(parse_plugin_params({{"variant", "-1"}}), std::invalid_argument);
}
TEST_CASE("a contraction read pointwise by one Func becomes a register-tiled product, right at any size") {
    struct Product {
        Halide::ImageParam a{Halide::Float(32), 2, "a"}, b{Halide::Float(32), 2, "b"};
        Func prod{"prod"}, out{"out"};
        Product() {
            Var x("x"), y("y");
            RDom k(0, a.width());
            prod(x, y) = 0.0f;
            prod(x, y) += a(k, y) * b(x, k);
            out(x, y) = prod(x, y) * 2.0f + 1.0f;
            for (auto *p : {&a, &b}) {
                p->dim(0).set_estimate(0, 256);
                p->dim(1).set_estimate(0, 256);
            }
            out.set_estimate(x, 0, 256).set_estimate(y, 0, 256);
        }
    } product;
    LoweredPipeline lowered = adapt_halide_pipeline(Halide::Pipeline(product.out));
    REQUIRE(lowered.regions.size() == 1);
    const RegionFunc &r = lowered.regions[0];
    CHECK(r.op_class == OpClass::Matmul);
    CHECK(r.accumulator.name() == product.prod.name());
    CHECK(r.rextents == std::vector<int64_t>{256});
    const PipelineAnalysis analysis = analyze_pipeline(lowered);
    // The operands' sizes come from their estimates: a product reads each from cache.
    CHECK(analysis.stages[0].load_bytes_per_reduction_point < 0.1);
    const Schedule chosen = search_schedule(lowered, analysis, reference_machine(), avx2()).schedule;
    CHECK(std::any_of(chosen.begin(), chosen.end(), [](const Decision &d) { return d.choice == Choice::RegisterTile; }));
    apply_schedule(lowered, chosen);
    // Sizes other than the estimates, smaller than a tile on either axis and not multiples of it.
    for (auto [n, k, m] : std::vector<std::array<int, 3>>{{37, 19, 53}, {3, 5, 2}, {256, 256, 256}}) {
        Halide::Buffer<float> a(k, n), b(m, k);
        a.for_each_element([&](int i, int j) { a(i, j) = std::sin(0.3f * i + j); });
        b.for_each_element([&](int i, int j) { b(i, j) = std::cos(0.7f * i - j); });
        product.a.set(a);
        product.b.set(b);
        Halide::Buffer<float> got = product.out.realize({m, n}, avx2());
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i < m; ++i) {
                double want = 0;
                for (int t = 0; t < k; ++t) want += double(a(t, j)) * b(i, t);
                CHECK(got(i, j) == doctest::Approx(want * 2 + 1).epsilon(1e-4));
            }
        }
    }
}

TEST_CASE("a Halide pipeline's workload key is the same for the same pipeline built again, and differs otherwise") {
    auto key = [](int w, int h, const Halide::Target &target) {
        HarrisLike p(w, h);   // every build makes new uniquely named Funcs, RDoms and wrappers
        return halide_workload_key(adapt_halide_pipeline(Halide::Pipeline(p.out)), target);
    };
    const std::string first = key(300, 200, avx2());
    CHECK(first.rfind("halide-", 0) == 0);
    CHECK(first.size() == 7 + 16);
    CHECK(key(300, 200, avx2()) == first);
    CHECK(key(300, 201, avx2()) != first);
    CHECK(key(300, 200, Halide::Target("x86-64-linux-sse41")) != first);
}

TEST_CASE("decision lists as the tuning database stores them") {
    const Schedule s{{0, Choice::ComputeRoot, -1, 0, 0}, {2, Choice::TileRows, 1, 64, 1}, {3, Choice::RegisterTile, -1, 32, 6}};
    const std::string json = decisions_to_json(s);
    CHECK(json == "[[0, \"compute_root\", -1, 0, 0], [2, \"tile_rows\", 1, 64, 1], [3, \"register_tile\", -1, 32, 6]]");
    CHECK(decisions_from_json(json) == std::optional<Schedule>(s));
    CHECK(decisions_from_json(" [ ] ") == std::optional<Schedule>(Schedule{}));
    for (const char *bad : {"", "[", "[[0, \"compute_root\", -1, 0]]", "[[0, \"no_such_choice\", -1, 0, 0]]",
                            "[[0, \"compute_root\", -1, 0, 0]] x", "{}"}) {
        CHECK_FALSE(decisions_from_json(bad).has_value());
    }
    CHECK(machine_fingerprint().find(" cores | ") != std::string::npos);
}

TEST_CASE("a Func inlined inside a stencil group: its windows pass through it, in the model and in Halide") {
    // A shifted copy of the luminance, read through a window of rows, inlined into the output
    // while the luminance is computed per tile of the output (what keep_cheap_members_inlined
    // in stencil_fusion.cpp weighs for pipelines written in Halide).
    auto build = [](Halide::ImageParam &input, Func &out) {
        Var x("x"), y("y");
        Func gray("gray"), right("right");
        gray(x, y) = 0.299f * input(x, y, 0) + 0.587f * input(x, y, 1) + 0.114f * input(x, y, 2);
        right(x, y) = gray(x + 1, y);
        out(x, y) = right(x, y - 1) + right(x, y + 1) + gray(x, y);
        input.dim(0).set_estimate(0, 300);
        input.dim(1).set_estimate(0, 402);
        input.dim(2).set_estimate(0, 3);
        out.set_estimate(x, 0, 299).set_estimate(y, 1, 400);
    };
    auto run = [](Halide::ImageParam &input, Func &out) {
        Halide::Buffer<float> in(300, 402, 3);
        in.for_each_element([&](int x, int y, int c) { in(x, y, c) = std::sin(0.1f * x + 0.7f * y + c); });
        input.set(in);
        Halide::Buffer<float> result(299, 400);
        result.set_min(0, 1);
        out.realize(result, avx2());
        return std::vector<float>(result.begin(), result.end());
    };
    Halide::ImageParam plain_input(Halide::Float(32), 3, "rgb");
    Func plain_out("out");
    build(plain_input, plain_out);
    const std::vector<float> expected = run(plain_input, plain_out);
    Halide::ImageParam input(Halide::Float(32), 3, "rgb");
    Func out("out");
    build(input, out);
    LoweredPipeline lowered = adapt_halide_pipeline(Halide::Pipeline(out));
    REQUIRE(lowered.regions.size() == 3);   // gray, right, out
    const PipelineAnalysis analysis = analyze_pipeline(lowered);
    const Schedule inside{{2, Choice::ComputeRoot},   {2, Choice::TileRows, 1, 32},  {2, Choice::Vectorize, 0, 8},
                          {0, Choice::ComputeAtTile, -1, 2}, {0, Choice::Vectorize, 0, 8}, {1, Choice::Inline}};
    const double seconds = predict_seconds(lowered, analysis, {inside}, reference_machine())[0];
    CHECK(seconds > 0);
    CHECK(seconds < 1.0);   // finite: the windows compose through the inlined copy
    apply_schedule(lowered, inside);
    const std::vector<float> got = run(input, out);
    REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(expected[i]).epsilon(1e-6));
}
