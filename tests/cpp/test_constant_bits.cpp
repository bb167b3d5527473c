// Constants are identified by their bits, never by float `==`/`<`: NaN must not merge with any
// other constant (it compares equal to everything under `<`), -0.0 must not merge with 0.0, and
// float32 constants hold NumPy's float32 value (core/src/graph.cpp, core/src/passes.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "hcompile/graph.h"
#include "hcompile/passes.h"
#include "hcompile/verify.h"

using namespace hc;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

uint64_t bits_of(double d) {
    uint64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

double stored(const Graph &g, NodeId id) { return std::get<double>(g.node(id).attrs.at("value")); }

int count_constants(const Graph &g) {
    int n = 0;
    for (const Node &node : g.nodes()) n += node.kind == OpKind::Constant;
    return n;
}

// CSE of a graph whose outputs are `values` as constants of `t`: how many constants survive.
int constants_after_cse(const std::vector<double> &values, DType t) {
    Graph g;
    std::vector<NodeId> outs;
    for (double v : values) outs.push_back(g.add_constant(v, t));
    g.set_outputs(outs);
    Graph c = eliminate_common_subexpressions(g);
    verify(c);
    return count_constants(c);
}

}  // namespace

TEST_CASE("attrs_less orders float attributes by their bits") {
    Attrs nan{{"value", kNaN}}, two{{"value", 2.0}}, zero{{"value", 0.0}}, neg_zero{{"value", -0.0}};
    CHECK_FALSE(attrs_identical(nan, two));
    CHECK_FALSE(attrs_identical(two, nan));
    CHECK(attrs_identical(nan, Attrs{{"value", kNaN}}));
    CHECK_FALSE(attrs_identical(zero, neg_zero));
    CHECK(attrs_less(zero, neg_zero) != attrs_less(neg_zero, zero));
    CHECK(attrs_identical(two, Attrs{{"value", 2.0}}));
    // An int attribute never equals a float one of the same value.
    CHECK_FALSE(attrs_identical(Attrs{{"value", int64_t{2}}}, two));
    // Fewer keys sort first; different keys compare by name.
    CHECK(attrs_less(Attrs{}, two));
    CHECK_FALSE(attrs_less(two, Attrs{}));
    CHECK(attrs_less(Attrs{{"a", 5.0}}, Attrs{{"b", 1.0}}));
}

TEST_CASE("CSE keeps NaN, -0.0 and 0.0 constants apart, merges identical bits") {
    for (DType t : {DType::Float32, DType::Float64}) {
        CAPTURE(dtype_name(t));
        CHECK(constants_after_cse({2.0, kNaN}, t) == 2);
        CHECK(constants_after_cse({kNaN, 2.0}, t) == 2);
        CHECK(constants_after_cse({0.0, kNaN, 1.0}, t) == 3);
        CHECK(constants_after_cse({0.0, -0.0}, t) == 2);
        CHECK(constants_after_cse({kNaN, kNaN}, t) == 1);
        CHECK(constants_after_cse({-0.0, -0.0}, t) == 1);
        CHECK(constants_after_cse({kInf, -kInf, kInf}, t) == 2);
        CHECK(constants_after_cse({1.5, 1.5}, t) == 1);
    }
    // NaNs with different payloads or signs are different constants; CSE merges only copies.
    double other_nan = -kNaN;
    REQUIRE(bits_of(other_nan) != bits_of(kNaN));
    CHECK(constants_after_cse({kNaN, other_nan}, DType::Float64) == 2);
}

TEST_CASE("CSE keeps ops that differ only in a NaN or signed-zero attribute apart") {
    // x * 2.0 + nan: the NaN constant must survive as the second operand of add.
    Graph g;
    NodeId x = g.add_input(0, DType::Float64, {3});
    NodeId two = g.add_op(OpKind::Broadcast, {g.add_constant(2.0, DType::Float64)}, {{"shape", std::vector<int64_t>{3}}});
    NodeId nan = g.add_op(OpKind::Broadcast, {g.add_constant(kNaN, DType::Float64)}, {{"shape", std::vector<int64_t>{3}}});
    g.set_outputs({g.add_op(OpKind::Add, {g.add_op(OpKind::Mul, {x, two}), nan})});
    Graph c = eliminate_common_subexpressions(fold_constants(g));
    verify(c);
    const Node &add = c.node(c.outputs()[0]);
    const Node &rhs = c.node(c.node(add.inputs[1]).inputs[0]);
    REQUIRE(rhs.kind == OpKind::Constant);
    CHECK(std::isnan(std::get<double>(rhs.attrs.at("value"))));
    const Node &mul = c.node(add.inputs[0]);
    const Node &factor = c.node(c.node(mul.inputs[1]).inputs[0]);
    CHECK(std::get<double>(factor.attrs.at("value")) == 2.0);
}

TEST_CASE("folding keeps NaN and the sign of zero") {
    for (DType t : {DType::Float32, DType::Float64}) {
        CAPTURE(dtype_name(t));
        auto fold = [&](OpKind kind, std::vector<double> operands) {
            Graph g;
            std::vector<NodeId> ins;
            for (double v : operands) ins.push_back(g.add_constant(v, t));
            g.set_outputs({g.add_op(kind, ins)});
            Graph f = fold_constants(g);
            verify(f);
            REQUIRE(f.node(f.outputs()[0]).kind == OpKind::Constant);
            return stored(f, f.outputs()[0]);
        };
        CHECK(std::signbit(fold(OpKind::Neg, {0.0})));
        CHECK_FALSE(std::signbit(fold(OpKind::Neg, {-0.0})));
        CHECK(std::signbit(fold(OpKind::Add, {-0.0, -0.0})));
        CHECK_FALSE(std::signbit(fold(OpKind::Add, {-0.0, 0.0})));
        CHECK(std::signbit(fold(OpKind::Mul, {-1.0, 0.0})));
        CHECK(fold(OpKind::Div, {1.0, -0.0}) == -kInf);
        CHECK(fold(OpKind::Reciprocal, {-0.0}) == -kInf);
        CHECK(std::isnan(fold(OpKind::Add, {kNaN, 1.0})));
        CHECK(std::isnan(fold(OpKind::Mul, {kInf, 0.0})));
        CHECK(std::isnan(fold(OpKind::Sub, {kInf, kInf})));
    }
}

TEST_CASE("float32 constants hold NumPy's float32 value") {
    Graph g;
    NodeId tenth = g.add_constant(0.1, DType::Float32);
    CHECK(stored(g, tenth) == static_cast<double>(0.1f));
    // Past float32's range: inf, as np.float32(1e300) gives.
    CHECK(stored(g, g.add_constant(1e300, DType::Float32)) == kInf);
    CHECK(stored(g, g.add_constant(-1e300, DType::Float32)) == -kInf);
    // Below its smallest subnormal: a signed zero.
    double tiny = stored(g, g.add_constant(-1e-60, DType::Float32));
    CHECK(tiny == 0.0);
    CHECK(std::signbit(tiny));
    // Halfway between two float32 values: round to even (1 + 2^-24 -> 1.0).
    CHECK(stored(g, g.add_constant(1.0 + std::ldexp(1.0, -24), DType::Float32)) == 1.0);
    CHECK(std::isnan(stored(g, g.add_constant(kNaN, DType::Float32))));
    // Two doubles with the same float32 value are one constant after CSE.
    CHECK(constants_after_cse({0.1, std::nextafter(0.1, 1.0)}, DType::Float32) == 1);
    // float64 constants are untouched.
    CHECK(stored(g, g.add_constant(0.1, DType::Float64)) == 0.1);
}
