// Symbolic extents (dynamic shapes): the check of which graphs are the same function at every
// size, and kernels compiled with placeholder extents run at other sizes.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "hcompile/compile.h"
#include "hcompile/graph.h"
#include "hcompile/symbols.h"

using namespace hc;

namespace {

using Ints = std::vector<int64_t>;
constexpr int64_t kN = 1009;  // the placeholder extent of symbol 0

bool generic(const Graph &g) {
    try {
        resolve_symbolic_extents(g, {kN}, {{0, 0}});
        return true;
    } catch (const GraphError &) {
        return false;
    }
}

Attrs slice_attrs(Ints starts, Ints stops, Ints steps) {
    return Attrs{{"starts", std::move(starts)}, {"stops", std::move(stops)}, {"steps", std::move(steps)}};
}

}  // namespace

TEST_SUITE("symbols") {

TEST_CASE("symbolic axes pass elementwise ops, full slices, reductions and matmuls") {
    Graph g;
    NodeId x = g.add_input(0, DType::Float64, {kN, 4});
    NodeId w = g.add_input(1, DType::Float64, {4, 3});
    NodeId y = g.add_op(OpKind::Exp, {g.add_op(OpKind::Slice, {x}, slice_attrs({0, 1}, {kN, 3}, {1, 1}))});
    NodeId s = g.add_op(OpKind::Sum, {y}, Attrs{{"axes", Ints{0}}, {"keepdims", int64_t{0}}});
    NodeId m = g.add_op(OpKind::Matmul, {x, w});
    NodeId t = g.add_op(OpKind::Matmul, {g.add_op(OpKind::Transpose, {x}, Attrs{{"perm", Ints{1, 0}}}), x});
    g.set_outputs({s, m, t});
    SymbolicExtents found = resolve_symbolic_extents(g, {kN}, {{0, 0}});
    CHECK(found.loaded[0].arg == 0);
    CHECK(found.loaded[0].axis == 0);
    CHECK(found.symbol_of(kN) == 0);
    CHECK(found.symbol_of(4) == -1);
}

TEST_CASE("part of a symbolic axis, or merging it with others, is refused") {
    Graph part;
    NodeId x = part.add_input(0, DType::Float32, {kN});
    part.set_outputs({part.add_op(OpKind::Slice, {x}, slice_attrs({0}, {5}, {1}))});   // x[:5]
    CHECK_FALSE(generic(part));

    Graph shifted;
    x = shifted.add_input(0, DType::Float32, {kN, 2});
    shifted.set_outputs({shifted.add_op(OpKind::Reshape, {x}, Attrs{{"shape", Ints{2 * kN}}})});
    CHECK_FALSE(generic(shifted));

    Graph unit_axes;
    x = unit_axes.add_input(0, DType::Float32, {kN, 2});
    unit_axes.set_outputs({unit_axes.add_op(OpKind::Reshape, {x}, Attrs{{"shape", Ints{1, kN, 1, 2}}})});
    CHECK(generic(unit_axes));
}

TEST_CASE("placeholders must be large and far apart (their offset windows must not meet)") {
    Graph g;
    g.set_outputs({g.add_input(0, DType::Float32, {kN})});
    CHECK_THROWS_AS(resolve_symbolic_extents(g, {kN, kN}, {{0, 0}, {0, 0}}), GraphError);
    CHECK_THROWS_AS(resolve_symbolic_extents(g, {1}, {{0, 0}}), GraphError);
}

TEST_CASE("a kernel compiled at a placeholder runs at other sizes, its extent values read at run time") {
    // mean over the symbolic axis: sum / n, with n an `extent` leaf; plus x * 2 elementwise.
    Graph g;
    NodeId x = g.add_input(0, DType::Float64, {kN, 3});
    NodeId s = g.add_op(OpKind::Sum, {x}, Attrs{{"axes", Ints{0}}, {"keepdims", int64_t{0}}});
    NodeId count = g.add_constant(static_cast<double>(kN), DType::Float64);
    NodeId mean = g.add_op(OpKind::Div, {s, g.add_op(OpKind::Broadcast, {count}, Attrs{{"shape", Ints{3}}})});
    NodeId twice = g.add_op(OpKind::Mul, {x, g.add_op(OpKind::Broadcast, {g.add_constant(2.0, DType::Float64)},
                                                       Attrs{{"shape", Ints{kN, 3}}})});
    g.set_outputs({mean, twice});
    CompileOptions options;
    options.symbol_values = {kN};
    options.symbol_sources = {{0, 0}};
    options.extent_values = {{count, 0, 1, 0}};
    KernelPtr k = compile_graph(g, options);
    REQUIRE(k->outputs.size() == 2);
    CHECK(k->outputs[0].shape == Ints{3});
    CHECK(k->outputs[1].shape == Ints{-1, 3});   // symbol 0, sized from the call
    REQUIRE(k->symbol_sources.size() == 1);
    for (int n : {2, 3, 17, 40}) {
        Halide::Runtime::Buffer<double> in(3, n), m(3), t(3, n);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < 3; ++j) in(j, i) = i * 3 + j;
        }
        std::vector<halide_buffer_t *> buffers{in.raw_buffer(), m.raw_buffer(), t.raw_buffer()};
        std::string error;
        REQUIRE_MESSAGE(k->run(buffers.data(), &error) == 0, error);
        for (int j = 0; j < 3; ++j) {
            double want = 0;
            for (int i = 0; i < n; ++i) want += i * 3 + j;
            CHECK(m(j) == doctest::Approx(want / n));
            CHECK(t(j, n - 1) == 2 * ((n - 1) * 3 + j));
        }
    }
}

}  // TEST_SUITE

TEST_SUITE("symbols") {

TEST_CASE("a slice from a fixed start to a fixed distance from the end is the symbol plus an offset") {
    Graph g;
    NodeId x = g.add_input(0, DType::Float64, {kN});
    NodeId inner = g.add_op(OpKind::Slice, {x}, slice_attrs({1}, {kN - 1}, {1}));      // x[1:-1]
    NodeId right = g.add_op(OpKind::Slice, {x}, slice_attrs({2}, {kN}, {1}));          // x[2:]
    NodeId sum = g.add_op(OpKind::Add, {inner, right});
    g.set_outputs({sum});
    SymbolicExtents s = resolve_symbolic_extents(g, {kN}, {{0, 0}});
    CHECK(s.symbol_of(kN - 2) == 0);
    CHECK(s.offset_of(kN - 2) == -2);

    Graph stepped;
    x = stepped.add_input(0, DType::Float64, {kN});
    stepped.set_outputs({stepped.add_op(OpKind::Slice, {x}, slice_attrs({0}, {kN - 1}, {2}))});   // x[:-1:2]
    CHECK_FALSE(generic(stepped));

    CompileOptions options;
    options.symbol_values = {kN};
    options.symbol_sources = {{0, 0}};
    KernelPtr k = compile_graph(g, options);
    CHECK(k->outputs[0].shape == Ints{-1});
    CHECK(k->outputs[0].offsets == Ints{-2});
    for (int n : {3, 4, 19}) {
        Halide::Runtime::Buffer<double> in(n), out(n - 2);
        for (int i = 0; i < n; ++i) in(i) = i * i;
        std::vector<halide_buffer_t *> buffers{in.raw_buffer(), out.raw_buffer()};
        std::string error;
        REQUIRE_MESSAGE(k->run(buffers.data(), &error) == 0, error);
        for (int i = 0; i < n - 2; ++i) CHECK(out(i) == (i + 1) * (i + 1) + (i + 2) * (i + 2));
    }
}

}  // TEST_SUITE

TEST_SUITE("symbols") {

TEST_CASE("a kernel for any size checks a call's array bytes against Halide's 2 GiB buffers") {
    // outer(x, x[1:]) in float32: 4 * n * (n - 1) bytes, past 2^31 from n = 23171.
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {kN});
    NodeId column = g.add_op(OpKind::Reshape, {x}, Attrs{{"shape", Ints{kN, 1}}});
    NodeId row = g.add_op(OpKind::Reshape, {g.add_op(OpKind::Slice, {x}, slice_attrs({1}, {kN}, {1}))},
                          Attrs{{"shape", Ints{1, kN - 1}}});
    Ints square{kN, kN - 1};
    NodeId outer = g.add_op(OpKind::Mul, {g.add_op(OpKind::Broadcast, {column}, Attrs{{"shape", square}}),
                                          g.add_op(OpKind::Broadcast, {row}, Attrs{{"shape", square}})});
    g.set_outputs({outer});
    CompileOptions options;
    options.symbol_values = {kN};
    options.symbol_sources = {{0, 0}};
    KernelPtr k = compile_graph(g, options);
    auto fits = [&](int64_t n) { return k->fits_buffer_limit([n](int, int) { return n; }); };
    CHECK(fits(2));
    CHECK(fits(23170));
    CHECK_FALSE(fits(23171));
    CHECK_FALSE(fits(int64_t{1} << 40));   // no overflow on the way
}

}  // TEST_SUITE

TEST_SUITE("symbols") {

TEST_CASE("GPU blocks of rows along a symbolic axis need a block's rows; a smaller call's entry runs a row a block") {
    // Row sums over rows of 64, their count symbolic: blocks of several rows whose last block is
    // shifted back to end at the last row (least_symbol_sizes).
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {kN, 64});
    g.set_outputs({g.add_op(OpKind::Sum, {x}, Attrs{{"axes", Ints{1}}, {"keepdims", int64_t{0}}})});
    CompileOptions options;
    options.target = "host-cuda-cuda_capability_86";
    options.symbol_values = {kN};
    options.symbol_sources = {{0, 0}};
    CompileReport any;
    compile_graph(g, options, &any);
    REQUIRE(any.symbol_least.size() == 1);
    const int64_t rows = any.symbol_least[0];
    CHECK(rows > 1);
    CHECK(any.symbol_below.empty());
    options.symbol_sizes = {rows};   // a call of a block's rows: the same schedule
    CompileReport at;
    compile_graph(g, options, &at);
    CHECK(at.decisions == any.decisions);
    options.symbol_sizes = {rows - 1};   // fewer: the entry below them, a row a block
    CompileReport below;
    compile_graph(g, options, &below);
    CHECK(below.symbol_below == Ints{rows});
    CHECK(below.symbol_least == Ints{0});
    for (const Decision &d : below.decisions) CHECK((d.choice != Choice::GpuRows || d.value2 <= 1));
}

}  // TEST_SUITE

TEST_SUITE("symbols") {

TEST_CASE("a batch and its rows both symbolic: blocks of rows, every block loop fused into the GPU grid's x") {
    // Sums over (batch, tokens, 64), batch and tokens symbolic: blocks of several rows along the
    // tokens, fused with the batch's loop into the grid's x (any number of blocks; its y and z
    // stop at 65535). The rows need a block's rows (least_symbol_sizes), the batch nothing.
    constexpr int64_t kM = 1151;   // (placeholders further apart than their offsets)
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {kN, kM, 64});
    g.set_outputs({g.add_op(OpKind::Sum, {x}, Attrs{{"axes", Ints{2}}, {"keepdims", int64_t{0}}})});
    CompileOptions options;
    options.target = "host-cuda-cuda_capability_86";
    options.symbol_values = {kN, kM};
    options.symbol_sources = {{0, 0}, {0, 1}};
    CompileReport any;
    compile_graph(g, options, &any);
    REQUIRE(any.symbol_least.size() == 2);
    CHECK(any.symbol_least[0] == 0);
    CHECK(any.symbol_least[1] > 1);
    CHECK(any.schedule_source.find(".fuse(gpu_row_block, n1_a0, gpu_rows_fused);") != std::string::npos);
    CHECK(any.schedule_source.find(".gpu_blocks(gpu_rows_fused);") != std::string::npos);
}

}  // TEST_SUITE
