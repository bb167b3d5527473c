// Accuracy and special-value tests for hc::math (core/src/lowering/numpy_math.h).
//
// Each function is JIT-compiled once per dtype and evaluated on one buffer of
// inputs: random bit patterns (every exponent, nan/inf, denormals), the function's
// main domain, log-uniform magnitudes, and a table of special values (all pairs for
// binary functions). Results are compared with <cmath> evaluated in long double
// (NumPy's float64 loops call the platform libm; its float32 loops are <= ~1-4 ulp
// SIMD or libm code, so a correctly rounded oracle is the fair reference).
//
// Claimed bounds: float32 <= 2 ulp; float64 <= 3 ulp (sin/cos/tan: 5 ulp, reached only
// for |x| >= 2^20), all well inside 1e-14 relative; and no special-value mismatch
// (nan/inf/signed zero) with the C99/NumPy result.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "lowering/numpy_math.h"

namespace {

using Halide::Expr;
using LD = long double;

struct Case {
    const char *name;
    int arity;
    Expr (*fn)(Expr, Expr);
    LD (*ref)(LD, LD);
    double lo, hi;  // main domain
    double ulp32, ulp64;
};

const double kBad = 1e30;

// Error of `got` in ulps of T at the oracle value; kBad marks a special-value mismatch.
template <typename T>
double ulp_err(T got, LD ref) {
    T r = (T)ref;
    if (std::isnan(ref)) return std::isnan(got) ? 0 : kBad;
    if (std::isnan(got)) return kBad;
    if (std::isinf(r)) return got == r ? 0 : kBad;
    if (std::isinf(got)) return kBad;
    if (ref == 0 && got == 0) return std::signbit((double)ref) == std::signbit(got) ? 0 : kBad;
    LD a = fabsl(ref);
    LD ulp = a < (LD)std::numeric_limits<T>::min()
                 ? (LD)std::numeric_limits<T>::denorm_min()
                 : ldexpl(1.0L, ilogbl(a) - (std::numeric_limits<T>::digits - 1));
    return (double)(fabsl((LD)got - ref) / ulp);
}

template <typename T>
std::vector<T> specials() {
    using L = std::numeric_limits<T>;
    std::vector<T> s = {0, 1, 2, 3, 0.5, 1.5, 2.5, 10, 100, (T)1e-3, (T)1e-8, (T)1e-20, (T)1e20,
                        (T)M_PI, (T)M_PI_2, (T)M_PI_4, (T)0.7, (T)0.9999, (T)1.0001, (T)88.72, (T)89.5,
                        (T)709.78, (T)710.5, (T)-103.9, (T)-745.2, (T)1e5, (T)1e10, (T)1e30, (T)1e300,
                        L::min(), L::denorm_min(), L::max(), L::epsilon(), L::infinity(), L::quiet_NaN(),
                        std::nextafter(T(1), T(2)), std::nextafter(T(1), T(0)), (T)(1.0 / 3), T(0.25), T(4)};
    size_t n = s.size();
    for (size_t i = 0; i < n; i++) s.push_back(-s[i]);
    return s;
}

template <typename T>
std::vector<T> make_inputs(const Case &c, int which, size_t n) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    std::mt19937_64 rng(99 + which);
    std::uniform_real_distribution<double> u01(0, 1);
    std::vector<T> sp = specials<T>(), v(n);
    const int emin = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
    const int emax = std::numeric_limits<T>::max_exponent;
    for (size_t i = 0; i < n; i++) {
        size_t kk = i / 4;
        switch (i % 4) {
        case 0: {
            Bits b = (Bits)rng();
            std::memcpy(&v[i], &b, sizeof(T));
            break;
        }
        case 1: v[i] = (T)(c.lo + (c.hi - c.lo) * u01(rng)); break;
        case 2: v[i] = (T)std::ldexp((rng() & 1 ? -1 : 1) * (1 + u01(rng)), (int)(rng() % (emax - emin)) + emin); break;
        default:
            // For binary functions: every pair of specials (argument 0 cycles fastest).
            if (kk < sp.size() * sp.size())
                v[i] = c.arity == 1 || which == 0 ? sp[kk % sp.size()] : sp[(kk / sp.size()) % sp.size()];
            else
                v[i] = (T)(c.lo + (c.hi - c.lo) * u01(rng));
        }
    }
    return v;
}

template <typename T>
void check(const Case &c) {
    const int n = 1 << 16;
    std::vector<T> a = make_inputs<T>(c, 0, n), b = make_inputs<T>(c, 1, n);
    Halide::Buffer<T> ba(a.data(), n), bb(b.data(), n), out(n);
    Halide::Var x("x");
    Halide::Func f(std::string("hc_") + c.name);
    f(x) = c.fn(ba(x), bb(x));
    f.vectorize(x, sizeof(T) == 4 ? 8 : 4);
    f.realize(out);

    double worst = 0, bound = sizeof(T) == 4 ? c.ulp32 : c.ulp64;
    int bad = 0;
    std::string where;
    for (int i = 0; i < n; i++) {
        LD ref = c.ref((LD)a[i], (LD)b[i]);
        double e = ulp_err<T>(out(i), ref);
        if (e >= kBad || e > worst) {
            char buf[200];
            std::snprintf(buf, sizeof buf, "%s(%.17g, %.17g) = %.17g, want %.17Lg", c.name, (double)a[i],
                          (double)b[i], (double)out(i), ref);
            if (e >= kBad) {
                if (bad++ < 5) MESSAGE("special-value mismatch: ", buf);
            } else {
                worst = e;
                where = buf;
            }
        }
    }
    INFO(c.name, (sizeof(T) == 4 ? " float32" : " float64"), " max ulp ", worst, " at ", where);
    CHECK(bad == 0);
    CHECK(worst <= bound);
}

#define U1(f) [](Expr a, Expr) { return hc::math::f(a); }
#define R1(f) [](LD a, LD) -> LD { return f(a); }

void check_both(const Case &c) {
    check<float>(c);
    check<double>(c);
}

}  // namespace

TEST_SUITE("numpy_math") {

TEST_CASE("exp") { check_both({"exp", 1, U1(exp), R1(expl), -100, 100, 2, 3}); }
TEST_CASE("expm1") { check_both({"expm1", 1, U1(expm1), R1(expm1l), -5, 5, 2, 3}); }
TEST_CASE("log") { check_both({"log", 1, U1(log), R1(logl), 0, 10, 2, 3}); }
TEST_CASE("log1p") { check_both({"log1p", 1, U1(log1p), R1(log1pl), -1, 2, 2, 3}); }
TEST_CASE("sqrt") { check_both({"sqrt", 1, U1(sqrt), R1(sqrtl), 0, 100, 0.5, 0.5}); }
TEST_CASE("sin") { check_both({"sin", 1, U1(sin), R1(sinl), -10, 10, 2, 5}); }
TEST_CASE("cos") { check_both({"cos", 1, U1(cos), R1(cosl), -10, 10, 2, 5}); }
TEST_CASE("tan") { check_both({"tan", 1, U1(tan), R1(tanl), -10, 10, 2, 5}); }
TEST_CASE("tanh") { check_both({"tanh", 1, U1(tanh), R1(tanhl), -10, 10, 2, 3}); }
TEST_CASE("sinh") { check_both({"sinh", 1, U1(sinh), R1(sinhl), -10, 10, 2, 3}); }
TEST_CASE("cosh") { check_both({"cosh", 1, U1(cosh), R1(coshl), -10, 10, 2, 3}); }
TEST_CASE("arcsin") { check_both({"arcsin", 1, U1(arcsin), R1(asinl), -1, 1, 2, 3}); }
TEST_CASE("arccos") { check_both({"arccos", 1, U1(arccos), R1(acosl), -1, 1, 2, 3}); }
TEST_CASE("arctan") { check_both({"arctan", 1, U1(arctan), R1(atanl), -10, 10, 2, 3}); }
TEST_CASE("arctan2") {
    check_both({"arctan2", 2, [](Expr a, Expr b) { return hc::math::arctan2(a, b); },
                [](LD a, LD b) -> LD { return atan2l(a, b); }, -10, 10, 2, 3});
}
TEST_CASE("pow") {
    check_both({"pow", 2, [](Expr a, Expr b) { return hc::math::pow(a, b); },
                [](LD a, LD b) -> LD { return powl(a, b); }, 0, 10, 2, 3});
}
TEST_CASE("floor") { check_both({"floor", 1, U1(floor), R1(floorl), -10, 10, 0, 0}); }
TEST_CASE("ceil") { check_both({"ceil", 1, U1(ceil), R1(ceill), -10, 10, 0, 0}); }
TEST_CASE("rint") { check_both({"rint", 1, U1(rint), R1(nearbyintl), -10, 10, 0, 0}); }
TEST_CASE("trunc") { check_both({"trunc", 1, U1(trunc), R1(truncl), -10, 10, 0, 0}); }

// A few NumPy results spelled out (also covered by the sweeps above). Inputs come
// through an ImageParam: Halide may merge the constants 0.0f and -0.0f (they compare
// equal), which would make e.g. arctan2(0, -0) see two -0s.
static float eval(Expr (*fn)(Expr, Expr), float a, float b = 0) {
    Halide::Buffer<float> in(2);
    in(0) = a;
    in(1) = b;
    Halide::ImageParam p(Halide::Float(32), 1);
    p.set(in);
    Halide::Func f;
    f() = fn(p(0), p(1));
    return Halide::Buffer<float>(f.realize())();
}

TEST_CASE("special values") {
    const float inf = INFINITY, nan = NAN, pi = (float)M_PI;
    using F = Expr (*)(Expr, Expr);
    F exp = U1(exp), log = U1(log), sqrt = U1(sqrt), tanh = U1(tanh), expm1 = U1(expm1);
    F rint = U1(rint), ceil = U1(ceil), arcsin = U1(arcsin), arccos = U1(arccos), sin = U1(sin);
    F atan2 = [](Expr a, Expr b) { return hc::math::arctan2(a, b); };
    F pow = [](Expr a, Expr b) { return hc::math::pow(a, b); };
    CHECK(eval(exp, inf) == inf);
    CHECK(eval(exp, -inf) == 0.0f);
    CHECK(std::isnan(eval(exp, nan)));
    CHECK(eval(exp, 100.0f) == inf);
    CHECK(eval(log, 0.0f) == -inf);
    CHECK(std::isnan(eval(log, -1.0f)));
    CHECK(std::signbit(eval(sqrt, -0.0f)));
    CHECK(std::signbit(eval(tanh, -0.0f)));
    CHECK(std::signbit(eval(expm1, -0.0f)));
    CHECK(eval(atan2, 0.0f, -0.0f) == pi);
    CHECK(eval(atan2, -0.0f, -0.0f) == -pi);
    CHECK(eval(pow, nan, 0.0f) == 1.0f);
    CHECK(eval(pow, 1.0f, nan) == 1.0f);
    CHECK(std::isnan(eval(pow, -8.0f, 1.0f / 3)));
    CHECK(eval(pow, -2.0f, 3.0f) == -8.0f);
    CHECK(eval(pow, -0.0f, -1.0f) == -inf);
    CHECK(eval(rint, 2.5f) == 2.0f);
    CHECK(std::signbit(eval(rint, -0.5f)));
    CHECK(std::signbit(eval(ceil, -0.5f)));
    CHECK(std::isnan(eval(arcsin, 1.5f)));
    CHECK(eval(arccos, 1.0f) == 0.0f);
    CHECK(std::isnan(eval(sin, inf)));
}

// Arguments that are widening casts: LLVM's fast-math flags on the cast let it assume
// the value is not nan/inf, which used to fold Halide's is_nan/is_inf away.
TEST_CASE("special values through a float32 -> float64 cast") {
    Halide::Buffer<float> in(3);
    in(0) = INFINITY;
    in(1) = NAN;
    in(2) = -INFINITY;
    Halide::ImageParam p(Halide::Float(32), 1);
    p.set(in);
    Halide::Var x;
    Halide::Func f;
    Expr w = Halide::cast<double>(p(x));
    f(x) = Halide::Tuple(hc::math::exp(w), hc::math::log(w), hc::math::pow(w, Expr(0.5)));
    Halide::Realization r = f.realize({3});
    Halide::Buffer<double> e = r[0], l = r[1], pw = r[2];
    CHECK(e(0) == INFINITY);
    CHECK(std::isnan(e(1)));
    CHECK(e(2) == 0.0);
    CHECK(l(0) == INFINITY);
    CHECK(std::isnan(l(1)));
    CHECK(std::isnan(l(2)));
    CHECK(pw(0) == INFINITY);
    CHECK(std::isnan(pw(1)));
    CHECK(pw(2) == INFINITY);
}

}  // TEST_SUITE
