// Lowering + JIT + run: small graphs compiled with compile_graph() for the host and run through
// Kernel::run on Halide::Runtime::Buffers, checked against plain C++ loops.
//
// Halide dimension 0 is NumPy's LAST axis: a NumPy array of shape (R, C) is a Halide buffer of
// sizes (C, R), and a dense Halide buffer is laid out exactly like the C-contiguous NumPy array.
// Each compile costs ~0.1-0.3 s; keep their number small.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hcompile/compile.h"
#include "hcompile/graph.h"

using namespace hc;

namespace {

using Ints = std::vector<int64_t>;
template <typename T>
using Buf = Halide::Runtime::Buffer<T>;

// A dense buffer for a NumPy shape (sizes reversed into Halide order).
template <typename T>
Buf<T> np_buffer(const Shape &shape) {
    std::vector<int> sizes(shape.rbegin(), shape.rend());
    Buf<T> b(sizes);
    b.fill(T{});
    return b;
}

// A dense buffer for a NumPy shape with the given row-major contents.
template <typename T>
Buf<T> np_buffer(const Shape &shape, const std::vector<T> &values) {
    Buf<T> b = np_buffer<T>(shape);
    REQUIRE(static_cast<size_t>(b.number_of_elements()) == values.size());
    std::copy(values.begin(), values.end(), b.data());
    return b;
}

// Row-major contents of a dense buffer.
template <typename T>
std::vector<T> values_of(const Buf<T> &b) {
    return std::vector<T>(b.data(), b.data() + b.number_of_elements());
}

KernelPtr compile(const Graph &g, std::vector<InputLayout> layouts = {}, CompileReport *report = nullptr) {
    CompileOptions options;
    options.target = "host";
    options.layouts = std::move(layouts);
    return compile_graph(g, options, report);
}

// Runs `k` on the graph's `inputs` (by argument index) then `outputs`. A kernel takes only the
// inputs it reads (an input whose every use was folded away, such as an empty array under a
// reduction, is not a Halide argument), so its Halide arguments are picked by `arg_index`.
void run(const KernelPtr &k, std::vector<halide_buffer_t *> inputs, std::vector<halide_buffer_t *> outputs) {
    REQUIRE(k->inputs.size() <= inputs.size());
    REQUIRE(k->outputs.size() == outputs.size());
    std::vector<halide_buffer_t *> all;
    for (const KernelInput &in : k->inputs) {
        REQUIRE(in.arg_index >= 0);
        REQUIRE(static_cast<size_t>(in.arg_index) < inputs.size());
        all.push_back(inputs[in.arg_index]);
    }
    all.insert(all.end(), outputs.begin(), outputs.end());
    std::string error;
    int rc = k->run(all.data(), &error);
    REQUIRE_MESSAGE(rc == 0, "kernel failed: ", error);
}

// Deterministic small-integer-valued data, exact in every dtype and in every summation order.
template <typename T>
std::vector<T> ramp(size_t n, int mod = 7, int offset = 3) {
    std::vector<T> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>((i * 5 + 2) % mod) - offset);
    return v;
}

bool same_float(double got, double want, double rel = 0) {
    if (std::isnan(want)) return std::isnan(got);
    if (rel == 0) return got == want;
    return std::fabs(got - want) <= rel * std::max(1.0, std::fabs(want));
}

Attrs reduce_attrs(Ints axes, int64_t keepdims) {
    return Attrs{{"axes", std::move(axes)}, {"keepdims", keepdims}};
}

// NumPy's integer floor division and modulo (x // 0 == x % 0 == 0), for a wrapping T.
template <typename T>
std::pair<T, T> np_divmod(T a, T b) {
    if (b == 0) return {0, 0};
    if (std::is_signed_v<T> && b == T(-1)) return {static_cast<T>(-static_cast<std::make_unsigned_t<T>>(a)), 0};
    T q = a / b, r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) {
        q -= 1;
        r += b;
    }
    return {q, r};
}

}  // namespace

TEST_SUITE("lowering") {

TEST_CASE("elementwise chain, several outputs, a leaf output, a repeated output") {
    Graph g;
    const Shape shape{3, 5};
    NodeId x = g.add_input(0, DType::Float32, shape);
    NodeId two = g.add_op(OpKind::Broadcast, {g.add_constant(2.0, DType::Float32)}, Attrs{{"shape", Ints{3, 5}}});
    NodeId e = g.add_op(OpKind::Exp, {g.add_op(OpKind::Neg, {x})});
    NodeId y = g.add_op(OpKind::Add, {g.add_op(OpKind::Mul, {e, x}), two});   // exp(-x) * x + 2
    NodeId z = g.add_op(OpKind::Sqrt, {g.add_op(OpKind::Abs, {x})});           // sqrt(|x|)
    NodeId w = g.add_op(OpKind::Where, {g.add_op(OpKind::Gt, {x, two}), x, g.add_op(OpKind::Square, {x})});
    g.set_outputs({y, z, x, y, w});
    CompileReport report;
    KernelPtr k = compile(g, {}, &report);

    std::vector<float> xs{-3, -2.5f, -1, -0.5f, 0, 0.25f, 0.5f, 1, 1.5f, 2, 2.5f, 3, 4, 7.75f, -0.0f};
    Buf<float> in = np_buffer<float>(shape, xs);
    Buf<float> oy = np_buffer<float>(shape), oz = np_buffer<float>(shape), ox = np_buffer<float>(shape),
               oy2 = np_buffer<float>(shape), ow = np_buffer<float>(shape);
    run(k, {in.raw_buffer()}, {oy.raw_buffer(), oz.raw_buffer(), ox.raw_buffer(), oy2.raw_buffer(), ow.raw_buffer()});
    for (size_t i = 0; i < xs.size(); ++i) {
        float v = xs[i];
        INFO("x = ", v);
        CHECK(same_float(oy.data()[i], std::exp(-v) * v + 2.0f, 1e-6));
        CHECK(same_float(oz.data()[i], std::sqrt(std::fabs(v)), 1e-7));
        CHECK(ox.data()[i] == v);
        CHECK(oy2.data()[i] == oy.data()[i]);
        CHECK(ow.data()[i] == (v > 2 ? v : v * v));
    }
    // The report records the steps in the driver's order.
    std::vector<std::string> steps;
    for (const auto &s : report.step_ms) steps.push_back(s.first);
    REQUIRE(steps.size() >= 8);
    CHECK(steps.front() == "verify");
    CHECK(std::find(steps.begin(), steps.end(), "jit_compile") != steps.end());
    CHECK(steps.back() == "outputs_written_in_place");  // read off the compiled schedule
    CHECK(report.captured_graph.find("exp") != std::string::npos);
    CHECK(report.regions.find("region 0") != std::string::npos);
    CHECK(k->outputs.size() == 5);
    CHECK(k->outputs[0].shape == Shape{3, 5});
}

TEST_CASE("broadcast (3,1) + (1,4)") {
    Graph g;
    NodeId a = g.add_input(0, DType::Int32, {3, 1});
    NodeId b = g.add_input(1, DType::Int32, {1, 4});
    NodeId ba = g.add_op(OpKind::Broadcast, {a}, Attrs{{"shape", Ints{3, 4}}});
    NodeId bb = g.add_op(OpKind::Broadcast, {b}, Attrs{{"shape", Ints{3, 4}}});
    NodeId y = g.add_op(OpKind::Sub, {g.add_op(OpKind::Mul, {ba, ba}), bb});
    // Also a new leading axis: (4,) -> (2, 3, 4) via the (1, 4) input reshaped.
    NodeId r = g.add_op(OpKind::Reshape, {b}, Attrs{{"shape", Ints{4}}});
    NodeId big = g.add_op(OpKind::Broadcast, {r}, Attrs{{"shape", Ints{2, 3, 4}}});
    g.set_outputs({y, big});
    KernelPtr k = compile(g);
    Buf<int32_t> ia = np_buffer<int32_t>({3, 1}, {10, 20, -30});
    Buf<int32_t> ib = np_buffer<int32_t>({1, 4}, {1, 2, 3, -4});
    Buf<int32_t> oy = np_buffer<int32_t>({3, 4}), obig = np_buffer<int32_t>({2, 3, 4});
    run(k, {ia.raw_buffer(), ib.raw_buffer()}, {oy.raw_buffer(), obig.raw_buffer()});
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 4; ++j) CHECK(oy(j, i) == ia(0, i) * ia(0, i) - ib(j, 0));
    }
    for (int p = 0; p < 2; ++p) {
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 4; ++j) CHECK(obig(j, i, p) == ib(j, 0));
        }
    }
}

TEST_CASE("sum over axis 0 and axis 1 with keepdims, and over everything") {
    // 37 columns: not a multiple of any vector width, so the vectorized paths have tails.
    const int R = 5, C = 37;
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {R, C});
    NodeId s0 = g.add_op(OpKind::Sum, {x}, reduce_attrs({0}, 1));
    NodeId s1 = g.add_op(OpKind::Sum, {x}, reduce_attrs({1}, 1));
    NodeId sa = g.add_op(OpKind::Sum, {x}, reduce_attrs({0, 1}, 0));
    NodeId p1 = g.add_op(OpKind::Prod, {x}, reduce_attrs({1}, 0));
    NodeId m0 = g.add_op(OpKind::Min, {x}, reduce_attrs({0}, 0));
    g.set_outputs({s0, s1, sa, p1, m0});
    KernelPtr k = compile(g);
    CHECK(k->outputs[0].shape == Shape{1, C});
    CHECK(k->outputs[1].shape == Shape{R, 1});
    CHECK(k->outputs[2].shape == Shape{});

    std::vector<float> xs = ramp<float>(R * C);
    // Every other row holds a 0; row 2 gets a non-zero product that float32 holds exactly.
    for (int j = 0; j < C; ++j) xs[2 * C + j] = j % 9 == 0 ? 2.0f : (j % 2 ? -1.0f : 1.0f);
    Buf<float> in = np_buffer<float>({R, C}, xs);
    Buf<float> o0 = np_buffer<float>({1, C}), o1 = np_buffer<float>({R, 1}), oa = np_buffer<float>({}),
               op = np_buffer<float>({R}), om = np_buffer<float>({C});
    run(k, {in.raw_buffer()}, {o0.raw_buffer(), o1.raw_buffer(), oa.raw_buffer(), op.raw_buffer(), om.raw_buffer()});
    double total = 0;
    for (int j = 0; j < C; ++j) {
        double col = 0, mn = INFINITY;
        for (int i = 0; i < R; ++i) {
            col += xs[i * C + j];
            mn = std::min<double>(mn, xs[i * C + j]);
        }
        CHECK(o0(j, 0) == col);
        CHECK(om(j) == mn);
        total += col;
    }
    for (int i = 0; i < R; ++i) {
        double row = 0, prod = 1;
        for (int j = 0; j < C; ++j) {
            row += xs[i * C + j];
            prod *= xs[i * C + j];
        }
        CHECK(o1(0, i) == row);
        CHECK(op(i) == static_cast<float>(prod));
    }
    CHECK(oa() == total);
}

TEST_CASE("max/min propagate NaN; argmax/argmin: first occurrence, NaN is the extreme") {
    const int R = 4, C = 19;
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {R, C});
    NodeId mx1 = g.add_op(OpKind::Max, {x}, reduce_attrs({1}, 0));
    NodeId mx0 = g.add_op(OpKind::Max, {x}, reduce_attrs({0}, 0));
    NodeId mn1 = g.add_op(OpKind::Min, {x}, reduce_attrs({1}, 1));
    NodeId am1 = g.add_op(OpKind::Argmax, {x}, Attrs{{"axis", int64_t{1}}, {"keepdims", int64_t{0}}});
    NodeId an1 = g.add_op(OpKind::Argmin, {x}, Attrs{{"axis", int64_t{1}}, {"keepdims", int64_t{1}}});
    NodeId am0 = g.add_op(OpKind::Argmax, {x}, Attrs{{"axis", int64_t{0}}, {"keepdims", int64_t{0}}});
    g.set_outputs({mx1, mx0, mn1, am1, an1, am0});
    KernelPtr k = compile(g);
    CHECK(k->outputs[3].dtype == DType::Int64);
    CHECK(k->outputs[4].shape == Shape{R, 1});

    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> xs = ramp<float>(R * C, 11, 5);
    // Row 0: ties for the max (5) at 2 and 7 and later; min (-5) ties too.
    // Row 1: a NaN after the max; row 2: all equal; row 3: NaN first, -inf and +inf.
    for (int j = 0; j < C; ++j) xs[0 * C + j] = 0;
    xs[0 * C + 2] = 5, xs[0 * C + 7] = 5, xs[0 * C + 18] = 5, xs[0 * C + 4] = -5, xs[0 * C + 9] = -5;
    xs[1 * C + 1] = 100, xs[1 * C + 12] = nan, xs[1 * C + 15] = nan;
    for (int j = 0; j < C; ++j) xs[2 * C + j] = 1.5f;
    xs[3 * C + 0] = nan, xs[3 * C + 3] = -INFINITY, xs[3 * C + 5] = INFINITY;
    Buf<float> in = np_buffer<float>({R, C}, xs);
    Buf<float> omx1 = np_buffer<float>({R}), omx0 = np_buffer<float>({C}), omn1 = np_buffer<float>({R, 1});
    Buf<int64_t> oam1 = np_buffer<int64_t>({R}), oan1 = np_buffer<int64_t>({R, 1}), oam0 = np_buffer<int64_t>({C});
    run(k, {in.raw_buffer()},
        {omx1.raw_buffer(), omx0.raw_buffer(), omn1.raw_buffer(), oam1.raw_buffer(), oan1.raw_buffer(), oam0.raw_buffer()});

    // Reference in plain loops, NumPy's rules.
    auto better = [](float v, float best, bool is_max) {
        if (std::isnan(best)) return false;
        if (std::isnan(v)) return true;
        return is_max ? v > best : v < best;
    };
    auto reduce = [&](int fixed, int axis, bool is_max, float &value, int64_t &index) {
        int n = axis == 1 ? C : R;
        for (int t = 0; t < n; ++t) {
            float v = axis == 1 ? xs[fixed * C + t] : xs[t * C + fixed];
            if (t == 0 || better(v, value, is_max)) value = v, index = t;
        }
    };
    for (int i = 0; i < R; ++i) {
        INFO("row ", i);
        float v;
        int64_t at;
        reduce(i, 1, true, v, at);
        CHECK(same_float(omx1(i), v));
        CHECK(oam1(i) == at);
        reduce(i, 1, false, v, at);
        CHECK(same_float(omn1(0, i), v));
        CHECK(oan1(0, i) == at);
    }
    CHECK(oam1(0) == 2);
    CHECK(oam1(1) == 12);
    CHECK(oam1(2) == 0);
    CHECK(oam1(3) == 0);
    CHECK(oan1(0, 0) == 4);
    CHECK(std::isnan(omx1(1)));
    CHECK(std::isnan(omn1(0, 3)));
    CHECK(omx1(0) == 5);
    for (int j = 0; j < C; ++j) {
        INFO("column ", j);
        float v;
        int64_t at;
        reduce(j, 0, true, v, at);
        CHECK(same_float(omx0(j), v));
        CHECK(oam0(j) == at);
    }
    CHECK(std::isnan(omx0(0)));   // row 3 has NaN at column 0
    CHECK(std::isnan(omx0(12)));  // row 1 has NaN at column 12
}

TEST_CASE("matmul, sizes that are not multiples of the vector width") {
    auto check_matmul = [](int M, int K, int N) {
        INFO("(", M, ", ", K, ") @ (", K, ", ", N, ")");
        Graph g;
        NodeId a = g.add_input(0, DType::Float32, {M, K});
        NodeId b = g.add_input(1, DType::Float32, {K, N});
        g.set_outputs({g.add_op(OpKind::Matmul, {a, b})});
        KernelPtr k = compile(g);
        std::vector<float> av = ramp<float>(M * K, 7, 3), bv = ramp<float>(K * N, 5, 2);
        Buf<float> ia = np_buffer<float>({M, K}, av), ib = np_buffer<float>({K, N}, bv);
        Buf<float> out = np_buffer<float>({M, N});
        out.fill(-12345.0f);
        run(k, {ia.raw_buffer(), ib.raw_buffer()}, {out.raw_buffer()});
        int bad = 0;
        for (int i = 0; i < M; ++i) {
            for (int j = 0; j < N; ++j) {
                double acc = 0;
                for (int t = 0; t < K; ++t) acc += av[i * K + t] * bv[t * N + j];
                if (out(j, i) != acc && bad++ < 5) CHECK_MESSAGE(out(j, i) == acc, "at (", i, ", ", j, ")");
            }
        }
        CHECK(bad == 0);
    };
    check_matmul(5, 7, 3);
    check_matmul(33, 65, 17);
}

TEST_CASE("batched integer matmul with a fused transpose operand") {
    // (2, 3, 4) @ transpose((2, 5, 4), (0, 2, 1)) -> (2, 3, 5), int32.
    Graph g;
    NodeId a = g.add_input(0, DType::Int32, {2, 3, 4});
    NodeId b = g.add_input(1, DType::Int32, {2, 5, 4});
    NodeId bt = g.add_op(OpKind::Transpose, {b}, Attrs{{"perm", Ints{0, 2, 1}}});
    g.set_outputs({g.add_op(OpKind::Matmul, {a, bt})});
    KernelPtr k = compile(g);
    std::vector<int32_t> av = ramp<int32_t>(24, 9, 4), bv = ramp<int32_t>(40, 13, 6);
    Buf<int32_t> ia = np_buffer<int32_t>({2, 3, 4}, av), ib = np_buffer<int32_t>({2, 5, 4}, bv);
    Buf<int32_t> out = np_buffer<int32_t>({2, 3, 5});
    run(k, {ia.raw_buffer(), ib.raw_buffer()}, {out.raw_buffer()});
    for (int p = 0; p < 2; ++p) {
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 5; ++j) {
                int32_t acc = 0;
                for (int t = 0; t < 4; ++t) acc += av[(p * 3 + i) * 4 + t] * bv[(p * 5 + j) * 4 + t];
                CHECK(out(j, i, p) == acc);
            }
        }
    }
}

TEST_CASE("layout ops: slice with negative steps, reshapes, transpose") {
    Graph g;
    NodeId x = g.add_input(0, DType::Int16, {6, 7});
    NodeId y = g.add_input(1, DType::Int16, {2, 6});
    NodeId z = g.add_input(2, DType::Int16, {4, 3});
    NodeId t = g.add_input(3, DType::Int16, {2, 3, 4});
    // x[5::-2, 1::3] -> rows 5 3 1, cols 1 4 -> (3, 2)
    NodeId sl = g.add_op(OpKind::Slice, {x}, Attrs{{"starts", Ints{5, 1}}, {"stops", Ints{-1, 7}}, {"steps", Ints{-2, 3}}});
    // x[4:1:-1, ::-1] -> rows 4 3 2, all columns reversed -> (3, 7)
    NodeId rv = g.add_op(OpKind::Slice, {x}, Attrs{{"starts", Ints{4, 6}}, {"stops", Ints{1, -1}}, {"steps", Ints{-1, -1}}});
    NodeId r34 = g.add_op(OpKind::Reshape, {y}, Attrs{{"shape", Ints{3, 4}}});
    NodeId r12 = g.add_op(OpKind::Reshape, {z}, Attrs{{"shape", Ints{12}}});
    NodeId r4d = g.add_op(OpKind::Reshape, {r12}, Attrs{{"shape", Ints{2, 1, 3, 2}}});
    NodeId tp = g.add_op(OpKind::Transpose, {t}, Attrs{{"perm", Ints{2, 0, 1}}});
    // A transpose then reshape then an elementwise op: layout ops compose inside one region.
    NodeId tr = g.add_op(OpKind::Reshape, {tp}, Attrs{{"shape", Ints{8, 3}}});
    NodeId trn = g.add_op(OpKind::Neg, {tr});
    g.set_outputs({sl, rv, r34, r12, r4d, tp, trn});
    KernelPtr k = compile(g);

    std::vector<int16_t> xv(42), yv(12), zv(12), tv(24);
    for (int i = 0; i < 42; ++i) xv[i] = static_cast<int16_t>(100 + i);
    for (int i = 0; i < 12; ++i) yv[i] = static_cast<int16_t>(i * 3 - 7), zv[i] = static_cast<int16_t>(50 - i);
    for (int i = 0; i < 24; ++i) tv[i] = static_cast<int16_t>(i * i - 100);
    Buf<int16_t> ix = np_buffer<int16_t>({6, 7}, xv), iy = np_buffer<int16_t>({2, 6}, yv),
                 iz = np_buffer<int16_t>({4, 3}, zv), it = np_buffer<int16_t>({2, 3, 4}, tv);
    Buf<int16_t> osl = np_buffer<int16_t>({3, 2}), orv = np_buffer<int16_t>({3, 7}), o34 = np_buffer<int16_t>({3, 4}),
                 o12 = np_buffer<int16_t>({12}), o4d = np_buffer<int16_t>({2, 1, 3, 2}),
                 otp = np_buffer<int16_t>({4, 2, 3}), otrn = np_buffer<int16_t>({8, 3});
    run(k, {ix.raw_buffer(), iy.raw_buffer(), iz.raw_buffer(), it.raw_buffer()},
        {osl.raw_buffer(), orv.raw_buffer(), o34.raw_buffer(), o12.raw_buffer(), o4d.raw_buffer(), otp.raw_buffer(),
         otrn.raw_buffer()});

    CHECK(values_of(osl) == std::vector<int16_t>{xv[5 * 7 + 1], xv[5 * 7 + 4], xv[3 * 7 + 1], xv[3 * 7 + 4],
                                                 xv[1 * 7 + 1], xv[1 * 7 + 4]});
    for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 7; ++j) CHECK(orv(j, i) == xv[(4 - i) * 7 + (6 - j)]);
    }
    // Reshapes are row-major reinterpretations: the flat contents are unchanged.
    CHECK(values_of(o34) == yv);
    CHECK(values_of(o12) == zv);
    CHECK(values_of(o4d) == zv);
    std::vector<int16_t> tref;
    for (int a = 0; a < 4; ++a) {
        for (int b = 0; b < 2; ++b) {
            for (int c = 0; c < 3; ++c) {
                CHECK(otp(c, b, a) == tv[(b * 3 + c) * 4 + a]);  // out[a, b, c] = t[b, c, a]
                tref.push_back(static_cast<int16_t>(-tv[(b * 3 + c) * 4 + a]));
            }
        }
    }
    CHECK(values_of(otrn) == tref);
}

TEST_CASE("integer floordiv/mod: floor rounding, negative operands, zero divisors, MIN // -1") {
    // Every pair of `as` x `bs`, laid out as a (|as|, |bs|) grid.
    const std::vector<int64_t> as{-7, -6, -1, 0, 1, 6, 7, 100, -100};
    const std::vector<int64_t> bs{-3, -2, -1, 0, 1, 2, 3};
    const int64_t R = static_cast<int64_t>(as.size()) + 1, C = static_cast<int64_t>(bs.size());  // +1: a MIN/MAX row
    Graph g;
    NodeId a32 = g.add_input(0, DType::Int32, {R, C});
    NodeId b32 = g.add_input(1, DType::Int32, {R, C});
    NodeId a8 = g.add_input(2, DType::Int8, {R, C});
    NodeId b8 = g.add_input(3, DType::Int8, {R, C});
    NodeId au = g.add_input(4, DType::UInt16, {R, C});
    NodeId bu = g.add_input(5, DType::UInt16, {R, C});
    g.set_outputs({g.add_op(OpKind::FloorDiv, {a32, b32}), g.add_op(OpKind::Mod, {a32, b32}),
                   g.add_op(OpKind::FloorDiv, {a8, b8}), g.add_op(OpKind::Mod, {a8, b8}),
                   g.add_op(OpKind::FloorDiv, {au, bu}), g.add_op(OpKind::Mod, {au, bu})});
    KernelPtr k = compile(g);

    auto fill = [&](auto tag, int64_t lo, int64_t hi, auto &av, auto &bv) {
        using T = decltype(tag);
        for (int64_t i = 0; i < R; ++i) {
            for (int64_t j = 0; j < C; ++j) {
                int64_t a = i + 1 < R ? as[i] : (j % 2 ? hi : lo);
                av.push_back(static_cast<T>(a));
                bv.push_back(static_cast<T>(bs[j]));
            }
        }
    };
    std::vector<int32_t> va32, vb32;
    std::vector<int8_t> va8, vb8;
    std::vector<uint16_t> vau, vbu;
    fill(int32_t{}, INT32_MIN, INT32_MAX, va32, vb32);
    fill(int8_t{}, INT8_MIN, INT8_MAX, va8, vb8);
    fill(uint16_t{}, 0, UINT16_MAX, vau, vbu);  // negative as/bs wrap to large unsigned values
    Shape shape{R, C};
    Buf<int32_t> ia32 = np_buffer<int32_t>(shape, va32), ib32 = np_buffer<int32_t>(shape, vb32);
    Buf<int8_t> ia8 = np_buffer<int8_t>(shape, va8), ib8 = np_buffer<int8_t>(shape, vb8);
    Buf<uint16_t> iau = np_buffer<uint16_t>(shape, vau), ibu = np_buffer<uint16_t>(shape, vbu);
    Buf<int32_t> q32 = np_buffer<int32_t>(shape), r32 = np_buffer<int32_t>(shape);
    Buf<int8_t> q8 = np_buffer<int8_t>(shape), r8 = np_buffer<int8_t>(shape);
    Buf<uint16_t> qu = np_buffer<uint16_t>(shape), ru = np_buffer<uint16_t>(shape);
    run(k, {ia32.raw_buffer(), ib32.raw_buffer(), ia8.raw_buffer(), ib8.raw_buffer(), iau.raw_buffer(), ibu.raw_buffer()},
        {q32.raw_buffer(), r32.raw_buffer(), q8.raw_buffer(), r8.raw_buffer(), qu.raw_buffer(), ru.raw_buffer()});

    auto check_all = [&](const char *name, const auto &av, const auto &bv, const auto &q, const auto &r) {
        for (size_t i = 0; i < av.size(); ++i) {
            auto [wq, wr] = np_divmod(av[i], bv[i]);
            INFO(name, ": ", int64_t(av[i]), " // ", int64_t(bv[i]));
            CHECK(int64_t(q.data()[i]) == int64_t(wq));
            CHECK(int64_t(r.data()[i]) == int64_t(wr));
        }
    };
    check_all("int32", va32, vb32, q32, r32);
    check_all("int8", va8, vb8, q8, r8);
    check_all("uint16", vau, vbu, qu, ru);
    // A few spelled out (NumPy): -7 // 2 == -4, -7 % 2 == 1, 7 // -2 == -4, 7 % -2 == -1, x // 0 == 0.
    CHECK(np_divmod<int32_t>(-7, 2) == std::pair<int32_t, int32_t>{-4, 1});
    CHECK(np_divmod<int32_t>(7, -2) == std::pair<int32_t, int32_t>{-4, -1});
    CHECK(np_divmod<int32_t>(-7, -2) == std::pair<int32_t, int32_t>{3, -1});
    CHECK(np_divmod<int8_t>(-128, -1) == std::pair<int8_t, int8_t>{-128, 0});
    CHECK(q32(5, 0) == -4);  // as[0] = -7, bs[5] = 2
    CHECK(r32(5, 0) == 1);
    CHECK(q32(3, 0) == 0);   // -7 // 0
    CHECK(r32(3, 0) == 0);
}

// NumPy's float divmod (npy_divmod), the reference for float floordiv/mod.
std::pair<double, double> npy_divmod(double x, double y) {
    double mod = std::fmod(x, y);
    if (y == 0) return {x / y, mod};
    double div = (x - mod) / y;
    if (mod != 0) {
        if ((y < 0) != (mod < 0)) mod += y, div -= 1;
    } else {
        mod = std::copysign(0.0, y);
    }
    double fq;
    if (div != 0) {
        fq = std::floor(div);
        if (div - fq > 0.5) fq += 1;
    } else {
        fq = std::copysign(0.0, x / y);
    }
    return {fq, mod};
}

// Compiles float64 a // b and a % b and runs them on every pair of `as` x `bs`; `check_zero_signs`
// also compares the sign of zero results.
void check_float_divmod(bool check_zero_signs) {
    const std::vector<double> as{-7.5, -7, -0.5, -0.0, 0, 3, 7, 7.5, 1e300, INFINITY};
    const std::vector<double> bs{-2, -0.75, -0.0, 0, 0.75, 2, INFINITY};
    const int64_t R = as.size(), C = bs.size();
    Graph g;
    NodeId a = g.add_input(0, DType::Float64, {R, C});
    NodeId b = g.add_input(1, DType::Float64, {R, C});
    g.set_outputs({g.add_op(OpKind::FloorDiv, {a, b}), g.add_op(OpKind::Mod, {a, b})});
    KernelPtr k = compile(g);
    std::vector<double> av, bv;
    for (double x : as) {
        for (double y : bs) av.push_back(x), bv.push_back(y);
    }
    Buf<double> ia = np_buffer<double>({R, C}, av), ib = np_buffer<double>({R, C}, bv);
    Buf<double> q = np_buffer<double>({R, C}), r = np_buffer<double>({R, C});
    run(k, {ia.raw_buffer(), ib.raw_buffer()}, {q.raw_buffer(), r.raw_buffer()});
    for (size_t i = 0; i < av.size(); ++i) {
        auto [want_q, want_r] = npy_divmod(av[i], bv[i]);
        INFO(av[i], " // ", bv[i], " -> want (", want_q, ", ", want_r, "), got (", q.data()[i], ", ", r.data()[i], ")");
        CHECK(same_float(q.data()[i], want_q));
        CHECK(same_float(r.data()[i], want_r));
        if (check_zero_signs && want_q == 0) CHECK(std::signbit(q.data()[i]) == std::signbit(want_q));
        if (check_zero_signs && want_r == 0) CHECK(std::signbit(r.data()[i]) == std::signbit(want_r));
    }
}

TEST_CASE("float floordiv/mod follow Python's signs; a zero divisor gives inf/nan") {
    CHECK(npy_divmod(-7, 2) == std::pair<double, double>{-4, 1});
    CHECK(npy_divmod(7, -2) == std::pair<double, double>{-4, -1});
    check_float_divmod(false);
}

TEST_CASE("float floordiv/mod: signed zero results match NumPy") {
    // BUG (reported): NumPy gives -7.5 % -0.75 == -0.0, 0.0 % -2 == -0.0 and 0.0 // -2 == -0.0; the
    // kernel returns +0.0. float_divmod (elementwise_rules.cpp) selects make_const(t, -0.0), and
    // Halide loses the sign of that constant (even select(b < 0, -0.0, 1.0) yields +0.0).
    check_float_divmod(true);
}

TEST_CASE("NaN through comparisons, isnan, maximum/minimum; bool arithmetic") {
    Graph g;
    NodeId a = g.add_input(0, DType::Float32, {6});
    NodeId b = g.add_input(1, DType::Float32, {6});
    NodeId p = g.add_input(2, DType::Bool, {6});
    NodeId q = g.add_input(3, DType::Bool, {6});
    g.set_outputs({g.add_op(OpKind::Ne, {a, b}), g.add_op(OpKind::Lt, {a, b}), g.add_op(OpKind::IsNan, {g.add_op(OpKind::Add, {a, b})}),
                   g.add_op(OpKind::Maximum, {a, b}), g.add_op(OpKind::Minimum, {a, b}),
                   g.add_op(OpKind::Add, {p, q}), g.add_op(OpKind::Mul, {p, q}), g.add_op(OpKind::Gt, {p, q}),
                   g.add_op(OpKind::BitwiseXor, {p, q})});
    KernelPtr k = compile(g);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> av{1, nan, 2, nan, INFINITY, -0.0f}, bv{1, 3, nan, nan, -INFINITY, 0.0f};
    std::vector<bool> pv{false, false, true, true, true, false}, qv{false, true, false, true, true, true};
    Buf<float> ia = np_buffer<float>({6}, av), ib = np_buffer<float>({6}, bv);
    Buf<bool> ip = np_buffer<bool>({6}), iq = np_buffer<bool>({6});
    for (int i = 0; i < 6; ++i) ip(i) = pv[i], iq(i) = qv[i];
    Buf<bool> ne = np_buffer<bool>({6}), lt = np_buffer<bool>({6}), isn = np_buffer<bool>({6}), bor = np_buffer<bool>({6}),
              band = np_buffer<bool>({6}), bgt = np_buffer<bool>({6}), bxor = np_buffer<bool>({6});
    Buf<float> mx = np_buffer<float>({6}), mn = np_buffer<float>({6});
    run(k, {ia.raw_buffer(), ib.raw_buffer(), ip.raw_buffer(), iq.raw_buffer()},
        {ne.raw_buffer(), lt.raw_buffer(), isn.raw_buffer(), mx.raw_buffer(), mn.raw_buffer(), bor.raw_buffer(),
         band.raw_buffer(), bgt.raw_buffer(), bxor.raw_buffer()});
    for (int i = 0; i < 6; ++i) {
        INFO("element ", i);
        float x = av[i], y = bv[i];
        CHECK(ne(i) == (x != y));  // NaN != anything
        CHECK(lt(i) == (x < y));
        CHECK(isn(i) == std::isnan(x + y));  // inf + -inf is NaN
        bool any_nan = std::isnan(x) || std::isnan(y);
        CHECK(same_float(mx(i), any_nan ? NAN : std::max(x, y)));
        CHECK(same_float(mn(i), any_nan ? NAN : std::min(x, y)));
        CHECK(bor(i) == (pv[i] || qv[i]));
        CHECK(band(i) == (pv[i] && qv[i]));
        CHECK(bgt(i) == (pv[i] && !qv[i]));
        CHECK(bxor(i) == (pv[i] != qv[i]));
    }
}

TEST_CASE("casts: truncation toward zero, x -> bool, integer wraparound") {
    Graph g;
    NodeId f = g.add_input(0, DType::Float32, {8});
    NodeId i = g.add_input(1, DType::Int32, {8});
    auto cast = [&](NodeId x, const char *t) { return g.add_op(OpKind::Cast, {x}, Attrs{{"dtype", std::string(t)}}); };
    g.set_outputs({cast(f, "int32"), cast(f, "bool"), cast(i, "int8"), cast(i, "uint8"), cast(i, "float32")});
    KernelPtr k = compile(g);
    std::vector<float> fv{-2.7f, 2.7f, -0.0f, 0.5f, -0.5f, 1e9f, std::numeric_limits<float>::quiet_NaN(), -1e9f};
    std::vector<int32_t> iv{300, -129, 255, 256, -1, 16777217, INT32_MIN, 127};
    Buf<float> inf_ = np_buffer<float>({8}, fv);
    Buf<int32_t> ini = np_buffer<int32_t>({8}, iv);
    Buf<int32_t> o_fi = np_buffer<int32_t>({8});
    Buf<bool> o_fb = np_buffer<bool>({8});
    Buf<int8_t> o_i8 = np_buffer<int8_t>({8});
    Buf<uint8_t> o_u8 = np_buffer<uint8_t>({8});
    Buf<float> o_if = np_buffer<float>({8});
    run(k, {inf_.raw_buffer(), ini.raw_buffer()},
        {o_fi.raw_buffer(), o_fb.raw_buffer(), o_i8.raw_buffer(), o_u8.raw_buffer(), o_if.raw_buffer()});
    for (int j = 0; j < 8; ++j) {
        INFO("element ", j);
        if (!std::isnan(fv[j])) {
            CHECK(o_fi(j) == static_cast<int32_t>(fv[j]));
        }
        CHECK(o_fb(j) == (fv[j] != 0));  // NaN -> true
        CHECK(o_i8(j) == static_cast<int8_t>(iv[j]));
        CHECK(o_u8(j) == static_cast<uint8_t>(iv[j]));
        CHECK(o_if(j) == static_cast<float>(iv[j]));
    }
}

TEST_CASE("input layouts: strided (non-unit and negative innermost strides), inner-dense") {
    Graph g;
    NodeId x = g.add_input(0, DType::Float32, {3, 4});
    NodeId idx = g.add_op(OpKind::Mul, {x, x});
    NodeId y = g.add_op(OpKind::Sum, {idx}, reduce_attrs({1}, 0));
    g.set_outputs({idx, y});
    KernelPtr strided = compile(g, {InputLayout::Strided});

    std::vector<float> want(12);
    for (int i = 0; i < 12; ++i) want[i] = static_cast<float>(i - 5);  // x[r, c] = 4 r + c - 5
    auto check = [&](const KernelPtr &k, Buf<float> &view) {
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) REQUIRE(view(c, r) == want[r * 4 + c]);
        }
        Buf<float> o = np_buffer<float>({3, 4}), s = np_buffer<float>({3});
        run(k, {view.raw_buffer()}, {o.raw_buffer(), s.raw_buffer()});
        for (int r = 0; r < 3; ++r) {
            float row = 0;
            for (int c = 0; c < 4; ++c) {
                CHECK(o(c, r) == want[r * 4 + c] * want[r * 4 + c]);
                row += want[r * 4 + c] * want[r * 4 + c];
            }
            CHECK(s(r) == row);
        }
    };
    {
        INFO("every other element of a (3, 8) array: x = base[:, ::2]");
        std::vector<float> base(24, -999.0f);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) base[r * 8 + 2 * c] = want[r * 4 + c];
        }
        halide_dimension_t dims[2] = {{0, 4, 2}, {0, 3, 8}};
        Buf<float> view(base.data(), 2, dims);
        check(strided, view);
    }
    {
        INFO("a transposed view: x = base.T with base of shape (4, 3)");
        std::vector<float> base(12);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) base[c * 3 + r] = want[r * 4 + c];
        }
        halide_dimension_t dims[2] = {{0, 4, 3}, {0, 3, 1}};
        Buf<float> view(base.data(), 2, dims);
        check(strided, view);
    }
    {
        INFO("a reversed view: x = base[::-1, ::-1]");
        std::vector<float> base(12);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) base[(2 - r) * 4 + (3 - c)] = want[r * 4 + c];
        }
        halide_dimension_t dims[2] = {{0, 4, -1}, {0, 3, -4}};
        Buf<float> view(base.data() + 11, 2, dims);
        check(strided, view);
    }
    {
        INFO("inner-dense rows with padding, and the contiguous kernel's guard");
        KernelPtr inner = compile(g, {InputLayout::InnerDense});
        std::vector<float> base(3 * 6, -999.0f);
        for (int r = 0; r < 3; ++r) {
            for (int c = 0; c < 4; ++c) base[r * 6 + c] = want[r * 4 + c];
        }
        halide_dimension_t dims[2] = {{0, 4, 1}, {0, 3, 6}};
        Buf<float> view(base.data(), 2, dims);
        check(inner, view);
        // A kernel compiled for C-contiguous inputs refuses the padded view instead of misreading it.
        KernelPtr dense = compile(g);
        Buf<float> o = np_buffer<float>({3, 4}), s = np_buffer<float>({3});
        std::vector<halide_buffer_t *> args{view.raw_buffer(), o.raw_buffer(), s.raw_buffer()};
        std::string error;
        CHECK(dense->run(args.data(), &error) != 0);
        CHECK_FALSE(error.empty());
        // ... and the strided kernel refuses a buffer of the wrong shape.
        Buf<float> wrong = np_buffer<float>({3, 5});
        args[0] = wrong.raw_buffer();
        error.clear();
        CHECK(strided->run(args.data(), &error) != 0);
        CHECK_FALSE(error.empty());
    }
}

TEST_CASE("reductions over empty and size-1 axes") {
    Graph g;
    NodeId e = g.add_input(0, DType::Int64, {2, 0});
    NodeId one = g.add_input(1, DType::Float32, {3, 1});
    NodeId s = g.add_op(OpKind::Sum, {e}, reduce_attrs({1}, 0));
    NodeId p = g.add_op(OpKind::Prod, {e}, reduce_attrs({1}, 1));
    NodeId am = g.add_op(OpKind::Argmax, {one}, Attrs{{"axis", int64_t{1}}, {"keepdims", int64_t{0}}});
    NodeId mx = g.add_op(OpKind::Max, {one}, reduce_attrs({1}, 0));
    g.set_outputs({s, p, am, mx});
    KernelPtr k = compile(g);
    Buf<int64_t> ie = np_buffer<int64_t>({2, 0});
    Buf<float> ione = np_buffer<float>({3, 1}, {4.5f, -1.0f, std::numeric_limits<float>::quiet_NaN()});
    Buf<int64_t> os = np_buffer<int64_t>({2}), op = np_buffer<int64_t>({2, 1}), oam = np_buffer<int64_t>({3});
    Buf<float> omx = np_buffer<float>({3});
    os.fill(77), op.fill(77), oam.fill(77);
    run(k, {ie.raw_buffer(), ione.raw_buffer()}, {os.raw_buffer(), op.raw_buffer(), oam.raw_buffer(), omx.raw_buffer()});
    CHECK(values_of(os) == std::vector<int64_t>{0, 0});
    CHECK(values_of(op) == std::vector<int64_t>{1, 1});
    CHECK(values_of(oam) == std::vector<int64_t>{0, 0, 0});
    CHECK(omx(0) == 4.5f);
    CHECK(omx(1) == -1.0f);
    CHECK(std::isnan(omx(2)));
}

TEST_CASE("uint64 constant arithmetic past 2^63 (folded end to end)") {
    // BUG (reported, see test_passes.cpp): fold_constants turns uint64 (0 - 1) into 2^63, so
    // x + (0 - 1) computes x + 2^63 instead of x - 1.
    Graph g;
    NodeId x = g.add_input(0, DType::UInt64, {3});
    NodeId m1 = g.add_op(OpKind::Sub, {g.add_constant_int(0, DType::UInt64), g.add_constant_int(1, DType::UInt64)});
    NodeId b = g.add_op(OpKind::Broadcast, {m1}, Attrs{{"shape", Ints{3}}});
    g.set_outputs({g.add_op(OpKind::Add, {x, b})});
    KernelPtr k = compile(g);
    Buf<uint64_t> in = np_buffer<uint64_t>({3}, {5, 1, 0});
    Buf<uint64_t> out = np_buffer<uint64_t>({3});
    run(k, {in.raw_buffer()}, {out.raw_buffer()});
    CHECK(values_of(out) == std::vector<uint64_t>{4, 0, UINT64_MAX});
}

}  // TEST_SUITE
