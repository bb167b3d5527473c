// fast_math's marks (core/src/lowering/gpu_fast_math.cpp): approximate only inside GPU kernels.
// What a GPU pipeline computes on the host keeps C's exact answers; the kernels' PTX and their
// accuracy are tested from Python (tests/python/test_cuda_fast_math.py).
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "hcompile/fusion.h"
#include "hcompile/graph.h"
#include "hcompile/lowering.h"
#include "hcompile/target.h"

using namespace hc;

namespace {

// exp(x), tanh(x), x / y and 1 / x of float32 inputs.
Graph four_operations(int64_t n) {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {n});
    NodeId y = g.add_input(1, DType::Float32, {n});
    NodeId one = g.add_op(OpKind::Broadcast, {g.add_constant(1.0, DType::Float32)}, Attrs{{"shape", std::vector<int64_t>{n}}});
    g.set_outputs({g.add_op(OpKind::Exp, {x}), g.add_op(OpKind::Tanh, {x}), g.add_op(OpKind::Div, {x, y}),
                   g.add_op(OpKind::Div, {one, x})});
    return g;
}

std::string definitions(const LoweredPipeline &lowered) {
    std::string text;
    for (const Halide::Func &f : lowered.outputs) {
        for (const Halide::Expr &e : f.function().values()) {
            std::ostringstream s;
            s << e;
            text += s.str() + "\n";
        }
    }
    return text;
}

}  // namespace

TEST_CASE("fast_math marks float32 exp, tanh, division and reciprocal for GPU pipelines only") {
    Graph g = four_operations(8);
    const Partition p = partition_into_regions(g);
    CHECK(definitions(lower_to_halide(g, p, {}, {}, {}, /*for_gpu=*/true, /*fast_math=*/true)).find("hc_fast_") !=
          std::string::npos);
    CHECK(definitions(lower_to_halide(g, p, {}, {}, {}, /*for_gpu=*/false, /*fast_math=*/true)).find("hc_fast_") ==
          std::string::npos);
    CHECK(definitions(lower_to_halide(g, p, {}, {}, {}, /*for_gpu=*/true, /*fast_math=*/false)).find("hc_fast_") ==
          std::string::npos);
}

TEST_CASE("fast_math's marks computed on the host are C's exact operations") {
    const int n = 8;
    Graph g = four_operations(n);
    LoweredPipeline lowered = lower_to_halide(g, partition_into_regions(g), {}, {}, {}, true, true);
    const std::vector<float> xs = {-100.0f, -3.5f, -0.25f, 0.0f, 1e-3f, 0.7f, 20.0f, 88.5f};
    const std::vector<float> ys = {3.0f, -7.0f, 1e-30f, 2.0f, 0.1f, -0.0f, 9.0f, 1e30f};
    Halide::Buffer<float> x(n), y(n);
    for (int i = 0; i < n; ++i) {
        x(i) = xs[i];
        y(i) = ys[i];
    }
    lowered.inputs[0].param.set(x);
    lowered.inputs[1].param.set(y);
    // No GPU schedule: every Func runs on the host, where the marks become expf, tanhf and IEEE
    // divisions.
    Halide::Realization r = lowered.pipeline.realize({n}, ieee_target(parse_target("host")));
    for (int i = 0; i < n; ++i) {
        CHECK(Halide::Buffer<float>(r[0])(i) == std::exp(xs[i]));
        CHECK(Halide::Buffer<float>(r[1])(i) == std::tanh(xs[i]));
        CHECK(Halide::Buffer<float>(r[2])(i) == xs[i] / ys[i]);
        CHECK(Halide::Buffer<float>(r[3])(i) == 1.0f / xs[i]);
    }
}
