// Vectorizable, NumPy-compatible math for Halide. See numpy_math.h.
//
// Conventions used throughout:
//  * Every function is written once for Float(32) and Float(64); only the
//    polynomial coefficients and range constants differ (chosen via is64()).
//  * Polynomials are near-minimax fits (Lawson-iterated least squares in 60-digit
//    mpmath, then rounded to the target type). The comment next to each gives the
//    fit's max relative error on its interval.
//  * Halide's default float mode lets the simplifier and LLVM reassociate, assume
//    no nan/inf and ignore the sign of zero. So special values are detected with
//    integer bit tests (see isnan_), signs are restored with integer bit
//    operations, and the few operations whose order matters (Cody-Waite
//    reductions, exact splits) are wrapped in strict_of(), which applies
//    strict_float to those operations only.
//  * Integer work uses an integer type of the float's width so vectors keep the
//    same lane count (AVX2 has no double<->int64 conversion, so doubles go through
//    int32 and are widened).
//  * float32 sin/cos/tan, the inverse trig functions and pow are evaluated in
//    double (half the lanes, but exact range reduction and a single final rounding);
//    the rest works in the argument's own type.
//  * sqrt, floor, ceil, rint and trunc are Halide's builtins (single instructions,
//    correctly rounded, signed zeros and nan preserved; checked by the tests).
#include "numpy_math.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hc::math {

using namespace Halide;
using Halide::Internal::make_const;

namespace {

bool is64(const Expr &x) { return x.type().bits() == 64; }

// Every public entry point takes Float(32) or Float(64) (scalar or vector).
const Expr &checked(const Expr &x, const char *fn) {
    if (!x.defined() || !x.type().is_float() || (x.type().bits() != 32 && x.type().bits() != 64))
        throw CompileError(std::string("hc::math::") + fn + " expects a float32 or float64 Expr");
    return x;
}

void check_same(const Expr &a, const Expr &b, const char *fn) {
    checked(a, fn);
    checked(b, fn);
    if (a.type() != b.type()) throw CompileError(std::string("hc::math::") + fn + ": arguments differ in type");
}

// A constant of x's (scalar) float type.
Expr k(const Expr &x, double v) { return make_const(x.type().element_of(), v); }

Type int_t(const Expr &x) { return Int(x.type().bits(), x.type().lanes()); }

Expr bits_of(const Expr &x) { return reinterpret(int_t(x), x); }

Expr sign_bit(const Expr &x) {
    return bits_of(x) & make_const(int_t(x).element_of(), is64(x) ? INT64_MIN : (int64_t)INT32_MIN);
}

// |x| with the sign bit set to that of `s` (an integer sign mask as from sign_bit).
Expr with_sign(const Expr &mag, const Expr &sbit) { return reinterpret(mag.type(), bits_of(mag) | sbit); }

Expr abs_f(const Expr &x) {
    return reinterpret(x.type(), bits_of(x) & make_const(int_t(x).element_of(), is64(x) ? INT64_MAX : INT32_MAX));
}

// Special-value tests. Under fast-math, LLVM may assume that the result of a flagged
// instruction is not nan/inf and fold Halide's is_nan/is_inf -- and equally the
// bit-pattern idioms below -- to false. That bites for arguments that are widening
// casts (fpext carries the flags), so tests look through widening casts to the
// narrower value, which has the same class.
Expr class_source(Expr x) {
    while (const Internal::Cast *c = x.as<Internal::Cast>()) {
        if (!c->value.type().is_float() || c->value.type().bits() > c->type.bits()) break;
        x = c->value;
    }
    return x;
}
Expr abs_bits(const Expr &x) {
    return bits_of(x) & make_const(int_t(x).element_of(), is64(x) ? INT64_MAX : INT32_MAX);
}
Expr inf_bits(const Expr &x) {
    return make_const(int_t(x).element_of(), (int64_t)(is64(x) ? 0x7ff0000000000000LL : 0x7f800000LL));
}
// x == v (v = 0 matches both zeros), also false for nan x: a float compare carries
// fast-math "no nan" flags and may be lowered as an unordered compare, true for nan.
Expr equals_(const Expr &x, double v) {
    Expr s = class_source(x);
    if (v == 0) return abs_bits(s) == make_const(int_t(s).element_of(), 0);
    return bits_of(s) == bits_of(k(s, v));
}
Expr isnan_(const Expr &x) {
    Expr v = class_source(x);
    return abs_bits(v) > inf_bits(v);
}
Expr isinf_(const Expr &x) {
    Expr v = class_source(x);
    return abs_bits(v) == inf_bits(v);
}
Expr isfinite_(const Expr &x) {
    Expr v = class_source(x);
    return abs_bits(v) < inf_bits(v);
}

Expr inf_of(const Expr &x) { return k(x, INFINITY); }
Expr nan_of(const Expr &x) { return k(x, NAN); }

// Evaluates f over let-bound copies of `args` under strict_float, so that only
// f's own few operations are IEEE-exact and unreassociated; the (possibly large)
// argument expressions keep fast-math (FMA contraction etc.).
Expr strict_of(const std::vector<Expr> &args, const std::function<Expr(const std::vector<Expr> &)> &f) {
    std::vector<Expr> vars;
    std::vector<std::string> names;
    for (const Expr &a : args) {
        names.push_back(Internal::unique_name('s'));
        vars.push_back(Internal::Variable::make(a.type(), names.back()));
    }
    Expr e = strict_float(f(vars));
    for (int i = (int)args.size() - 1; i >= 0; i--) e = Internal::Let::make(names[i], args[i], e);
    return e;
}

// Horner evaluation of c[0] + c[1] r + c[2] r^2 + ..., each step one fused multiply-add where
// the target has FMA (one rounding each: more accurate, and on the GPU, where every other
// product is rounded on its own, half the instructions).
Expr horner(const Expr &r, const std::vector<double> &c) {
    Expr p = k(r, c.back());
    for (int i = (int)c.size() - 2; i >= 0; i--) p = fused_multiply_add(p, r, k(r, c[i]));
    return p;
}

// Integer-valued float -> integer of the float's width (via int32 for doubles).
Expr to_int(const Expr &kf) {
    Expr i = cast(Int(32, kf.type().lanes()), kf);
    return is64(kf) ? cast(Int(64, kf.type().lanes()), i) : i;
}

// 2^n for an integer n (of the float's width) in the normal exponent range.
Expr pow2(const Expr &n, Type ft) {
    bool d = ft.bits() == 64;
    Expr biased = n + make_const(n.type().element_of(), d ? 1023 : 127);
    return reinterpret(ft, biased << make_const(n.type().element_of(), d ? 52 : 23));
}

// y * 2^n for y in [0.5, 2) and |n| < 1100 (f64) / 160 (f32), rounding once, so
// overflow gives inf and denormal results are correctly rounded. n is first added
// to y's exponent field (integer add: the simplifier cannot reassociate it), keeping
// 2^-+600 / 2^-+64 in reserve for a single final multiply.
Expr scale(const Expr &y, const Expr &n) {
    bool d = is64(y);
    Type it = n.type().element_of();
    Expr pos = n >= make_const(it, 0);
    int off = d ? 600 : 64;
    Expr n2 = select(pos, n - make_const(it, off), n + make_const(it, off));
    Expr yb = reinterpret(y.type(), bits_of(y) + (n2 << make_const(it, d ? 52 : 23)));
    return yb * select(pos, k(y, std::ldexp(1.0, off)), k(y, std::ldexp(1.0, -off)));
}

// Cody-Waite reduction x = kf*ln2 + r. ln2 is split so that kf*LN2_HI is exact for
// |kf| < 2^11 even without FMA contraction.
struct Reduced {
    Expr r, kf, ki;
};
Reduced reduce_ln2(const Expr &x, bool truncate) {
    bool d = is64(x);
    Expr t = x * k(x, 1.4426950408889634);
    Expr kf = truncate ? Halide::trunc(t) : Halide::round(t);
    // hi = ln2 rounded to 32 (f64) / 12 (f32) bits; lo = ln2 - hi.
    double hi = d ? 0x1.62e42feep-1 : 0x1.62ep-1;
    double lo = d ? 0x1.a39ef35793c76p-33 : 0x1.0bfbe8p-15;
    // strict_float keeps the simplifier from merging the two products back into one.
    // x - kf*hi is exact either way; with FMA the kf*lo step rounds once instead of twice.
    Expr r = strict_of({x, kf}, [&](const std::vector<Expr> &v) {
        return fused_multiply_add(v[1], k(x, -lo), fused_multiply_add(v[1], k(x, -hi), v[0]));
    });
    return {r, kf, to_int(kf)};
}

// expm1(r) for |r| <= ln2/2 (exp) or |r| < ln2 (expm1 family), as r + r^2 P(r).
Expr expm1_poly(const Expr &r, bool wide) {
    const bool d = is64(r);
    // exp, |r| <= 0.35: P rel err 1.4e-7 (f32, deg 4), 2.3e-16 (f64, deg 9).
    static const std::vector<double> e32 = {0.5, 0.16666573286056519, 0.04166686162352562, 0.008363739587366581,
                                            0.0013901470229029655};
    static const std::vector<double> e64 = {0.5000000000000001,    0.1666666666666664,   0.04166666666662084,
                                            0.008333333333358109,  0.0013888888918857539, 0.00019841269781120194,
                                            2.480151874803428e-05, 2.7557357075889553e-06, 2.7621295140372885e-07,
                                            2.5068448048906584e-08};
    // expm1, |r| < 0.7: P rel err 8.2e-9 (f32, deg 6), 2.2e-16 (f64, deg 11).
    static const std::vector<double> m32 = {0.5,
                                            0.16666670143604279,
                                            0.04166664928197861,
                                            0.008332755416631699,
                                            0.0013889474794268608,
                                            0.00020078099623788148,
                                            2.487972415110562e-05};
    static const std::vector<double> m64 = {0.49999999999999994,   0.16666666666666688,    0.04166666666667792,
                                            0.008333333333324814,  0.0013888888886194526,  0.00019841269850092528,
                                            2.4801589657341206e-05, 2.7557315832534725e-06, 2.755638943988378e-07,
                                            2.5052502560033322e-08, 2.104566382861386e-09,  1.6096302616229675e-10};
    const auto &c = wide ? (d ? m64 : m32) : (d ? e64 : e32);
    return fused_multiply_add(r * r, horner(r, c), r);
}

// Clamp bounds beyond which exp is certainly 0 / inf (keeps 2^k representable).
Expr clamp_exp_arg(const Expr &x) {
    return is64(x) ? clamp(x, k(x, -760.0), k(x, 720.0)) : clamp(x, k(x, -110.0), k(x, 100.0));
}

// Splits positive normal x (as integer bits) into 2^e * m with m in [sqrt(1/2), sqrt(2)).
// Returns e (integer, float's width) and m.
void split_exponent(const Expr &bits, Type ft, Expr &e, Expr &m) {
    bool d = ft.bits() == 64;
    Type it = bits.type().element_of();
    // Subtracting sqrt(1/2)'s bits makes the exponent field count from sqrt(1/2).
    Expr base = make_const(it, (int64_t)(d ? 0x3fe6a09e667f3bcdLL : 0x3f3504f3));
    Expr ix = bits - base;
    e = ix >> make_const(it, d ? 52 : 23);
    Expr mant_mask = make_const(it, (int64_t)(d ? 0x000fffffffffffffLL : 0x007fffff));
    m = reinterpret(ft, (ix & mant_mask) + base);
}

// log1p(f) for |f| <= 0.42 as f - corr: with s = f / (2 + f),
// log1p(f) = 2 atanh(s) = 2s + s^3 Q(s^2), and since 2s = f - s f,
// log1p(f) = f - s (f - s^2 Q(s^2)): the leading f is exact and the correction is
// small, so rounding in it costs a fraction of an ulp. Returns corr.
Expr log1p_correction(const Expr &f) {
    const bool d = is64(f);
    // Q on z in [0, 0.03]: rel err 3.0e-7 (f32, deg 2), 6.0e-16 (f64, deg 6); it is
    // scaled by s^2/2 < 0.015 in the result.
    static const std::vector<double> q32 = {0.6666668653488159, 0.3998832106590271, 0.2960034906864166};
    static const std::vector<double> q64 = {0.666666666666667,   0.39999999999886837, 0.2857142863164357,
                                            0.2222221022116239,  0.18182954896549944, 0.15329560467420614,
                                            0.14642865118164747};
    Expr s = f / (k(f, 2.0) + f);
    Expr z = s * s;
    return s * (f - z * horner(z, d ? q64 : q32));
}

// log(2^e (1 + f)) for |f| <= 0.42, e given as a float.
Expr log_core(const Expr &ef, const Expr &f) {
    const bool d = is64(f);
    Expr corr = log1p_correction(f);
    double hi = d ? 0x1.62e42feep-1 : 0x1.62ep-1;
    double lo = d ? 0x1.a39ef35793c76p-33 : 0x1.0bfbe8p-15;
    // e*hi is exact; keep the summation order (the simplifier would merge e*hi + e*lo).
    return strict_of({ef, f, corr}, [&](const std::vector<Expr> &v) {
        return v[0] * k(f, hi) + (v[1] - (v[2] - v[0] * k(f, lo)));
    });
}

// Positive x as 2^e (1 + f), f in [sqrt(1/2) - 1, sqrt(2) - 1) exact, e an integer-valued float
// (subnormals scaled into the normal range first).
void split_log_argument(const Expr &x, Expr &ef, Expr &f) {
    const bool d = is64(x);
    Expr tiny = x < k(x, d ? 0x1p-1022 : 0x1p-126);
    Expr xs = select(tiny, x * k(x, d ? 0x1p54 : 0x1p24), x);
    Expr e, m;
    split_exponent(bits_of(xs), x.type(), e, m);
    ef = cast(x.type(), cast(Int(32, x.type().lanes()), e)) - select(tiny, k(x, d ? 54 : 24), k(x, 0));
    f = m - k(x, 1.0);  // exact (Sterbenz)
}

// C99's log special values around a finite result `y` of x: log(0) = -inf, log(inf) = inf,
// NaN for x < 0 and NaN.
Expr with_log_specials(const Expr &x, Expr y) {
    y = select(x == k(x, 0.0), -inf_of(x), y);
    y = select(isinf_(x), x, y);  // +inf -> inf; -inf -> nan below
    return select(x < k(x, 0.0) || isnan_(x), nan_of(x), y);
}

// A function of float32 x computed by `f` on x in float64 and rounded once (float64's few-ulp
// error is far below float32's half ulp, so integer answers stay exact).
Expr through_float64(const Expr &x, const std::function<Expr(const Expr &)> &f) {
    return cast(x.type(), f(cast(Float(64, x.type().lanes()), x)));
}

// x * y as hi + lo exactly (Dekker's product over Veltkamp's splits, no FMA needed), for
// float64 x, y below 2^996 whose product neither overflows nor underflows.
std::pair<Expr, Expr> exact_product(const Expr &x, const Expr &y) {
    auto split = [](const Expr &v) {
        Expr big = v * k(v, 134217729.0);  // 2^27 + 1
        Expr high = big - (big - v);
        return std::make_pair(high, v - high);
    };
    auto [xh, xl] = split(x);
    auto [yh, yl] = split(y);
    Expr product = x * y;
    return {product, ((xh * yh - product) + xh * yl + xl * yh) + xl * yl};
}

// log_base(x) for float64 x = 2^e (1 + f), as e log_base(2) + log1p(f) log_base(e), with
// log_base(2) = two_hi + two_lo (two_hi of 40 bits, so e two_hi is exact) and log_base(e) = e_hi
// + e_lo, the large products exact (exact_product) and the small terms added last: accurate to
// about 2^-60 relative before the final rounding, so integer answers (log10(1000), log2(8)) are
// exact.
Expr log_base64(const Expr &x, double two_hi, double two_lo, double e_hi, double e_lo) {
    Expr ef, f;
    split_log_argument(x, ef, f);
    Expr corr = log1p_correction(f);
    Expr y = strict_of({ef, f, corr}, [&](const std::vector<Expr> &v) {
        auto [p, p_err] = exact_product(v[1], k(x, e_hi));
        Expr small = ((p_err + v[1] * k(x, e_lo)) - v[2] * k(x, e_hi + e_lo)) + v[0] * k(x, two_lo);
        return (v[0] * k(x, two_hi) + p) + small;
    });
    return with_log_specials(x, y);
}

}  // namespace

Expr exp(Expr x) {
    checked(x, "exp");
    // e^x = 2^k (1 + expm1(r)), k = round(x / ln2), |r| <= ln2/2.
    Reduced red = reduce_ln2(clamp_exp_arg(x), false);
    Expr y = scale(k(x, 1.0) + expm1_poly(red.r, false), red.ki);
    return select(isnan_(x), x, y);
}

Expr exp2(Expr x) {
    checked(x, "exp2");
    if (!is64(x)) return through_float64(x, [](const Expr &v) { return math::exp2(v); });
    // 2^x = 2^k 2^r, k = round(x), r = x - k exact in [-1/2, 1/2]; 2^r = e^(r ln 2) with r ln 2
    // as p + t (p = r ln2_hi exactly as a sum, exact_product's error and r ln2_lo in t):
    // e^(p + t) = (1 + expm1(p)) (1 + t) to well below an ulp. Integer x: r = 0, exactly 2^k.
    // Clamped where 2^x is certainly inf or 0 (scale() rounds subnormal results once).
    Expr xc = clamp(x, k(x, -1100.0), k(x, 1030.0));
    Expr kf = Halide::round(xc);
    Expr y = strict_of({xc, kf}, [](const std::vector<Expr> &v) {
        Expr r = v[0] - v[1];
        auto [p, p_err] = exact_product(r, k(r, 0x1.62e42fefa39efp-1));
        Expr t = p_err + r * k(r, 0x1.abc9e3b39803fp-56);
        Expr e = k(r, 1.0) + expm1_poly(p, false);
        return fused_multiply_add(e, t, e);
    });
    return select(isnan_(x), x, scale(y, to_int(kf)));
}

namespace {

// e^x = 2^k (1 + p) with k = trunc(x / ln2), r = x - k ln2 (same sign as x, |r| < ln2)
// and p = expm1(r). Returns p, k and expm1(x) = 2^k (p + (1 - 2^-k)): the two terms
// have equal signs, so there is no cancellation. Expects x clamped to [-40, 720] (f64)
// / [-20, 100] (f32); below that expm1 is -1 in the target precision.
struct ExpParts {
    Expr p, ki, em1;
};
ExpParts expm1_parts(const Expr &xc) {
    bool d = is64(xc);
    Reduced red = reduce_ln2(xc, true);
    Expr p = expm1_poly(red.r, true);
    Type it = red.ki.type().element_of();
    Expr lim = make_const(it, d ? 1000 : 100);
    // strict: otherwise p + (1 - 2^-k) is rewritten to (p - 2^-k) + 1.
    Expr t = strict_of({pow2(clamp(-red.ki, -lim, lim), xc.type())},
                       [&](const std::vector<Expr> &v) { return k(xc, 1.0) - v[0]; });
    // k = 0 returns p as is (scale() needs a normal-range argument).
    Expr em1 = select(red.ki == make_const(it, 0), p, scale(p + t, red.ki));
    return {p, red.ki, em1};
}

Expr clamp_expm1_arg(const Expr &x) {
    return is64(x) ? clamp(x, k(x, -40.0), k(x, 720.0)) : clamp(x, k(x, -20.0), k(x, 100.0));
}

}  // namespace

Expr expm1(Expr x) {
    checked(x, "expm1");
    Expr y = expm1_parts(clamp_expm1_arg(x)).em1;
    // expm1(-0) = -0: the reduction loses the sign of zero.
    return select(isnan_(x), x, select(x == k(x, 0.0), x, y));
}

Expr tanh(Expr x) {
    // |x| < 0.5625: odd polynomial a + a^3 P(a^2); P rel err 6.0e-8 (f32, deg 4),
    // 6.7e-17 (f64, deg 10), scaled by ~0.1 in the result. Above:
    // tanh|x| = 1 - 2 / (e^2|x| + 1), with e^2|x| = s (1 + p), s = 2^k, k >= 1, and the
    // denominator s p + (s + 1) rounded once (s + 1 is exact to k = 23 (f32) / 52 (f64);
    // beyond, the 1 it loses moves 2 / D by far less than an ulp of the result). 2 / D
    // <= 0.49 there, so its error reaches the result halved. tanh rounds to 1
    // beyond 9 (f32) / 19.1 (f64): |x| is clamped to 22 (s <= 2^64, no overflow). Both
    // branches are computed (the GPU and vector lanes would anyway), so the large one is
    // kept short: one exp-style reduction, no expm1 cancellation guard, no overflow scaling.
    return tanh_with_reciprocal(x, [](const Expr &d) { return k(d, 1.0) / d; });
}

Expr tanh_with_reciprocal(Expr x, const std::function<Expr(const Expr &)> &reciprocal) {
    return tanh_with(x, [&](const Expr &a) {
        Reduced red = reduce_ln2(min(a, k(a, 22.0)) * k(a, 2.0), false);
        Expr s = pow2(red.ki, a.type());
        Expr denominator = fused_multiply_add(s, expm1_poly(red.r, false), s + k(a, 1.0));
        // 1 - 2 / D spelled 1 - 2 (1 / D) (the same value: 2 (1 / D) is exact), one fused
        // multiply-add after the reciprocal: a few instructions cheaper than a division, and
        // inside GPU kernels an estimate refined by a Newton step (gpu_tanh.cpp).
        return fused_multiply_add(k(a, -2.0), reciprocal(denominator), k(a, 1.0));
    });
}

Expr tanh_with(Expr x, const std::function<Expr(const Expr &)> &large) {
    checked(x, "tanh");
    static const std::vector<double> p32 = {-0.3333333134651184, 0.13333073258399963, -0.05390176922082901,
                                            0.021263424307107925, -0.006525685079395771};
    static const std::vector<double> p64 = {-0.3333333333333333,   0.13333333333332392,    -0.05396825396705984,
                                            0.021869488476980604,  -0.0088632340218988,    0.0035921055364761052,
                                            -0.001455624008530869, 0.000588753849156881,   -0.00023410593923249505,
                                            8.426577109885207e-05, -2.00270865593961e-05};
    Expr a = abs_f(x);
    Expr z = a * a;
    Expr small = fused_multiply_add(a * z, horner(z, is64(x) ? p64 : p32), a);
    Expr t = select(a < k(x, 0.5625), small, large(a));
    return select(isnan_(x), x, with_sign(t, sign_bit(x)));
}

Expr sinh(Expr x) {
    checked(x, "sinh");
    // |x| < 1: odd polynomial a + a^3 P(a^2); P rel err 3.2e-8 (f32, deg 3), 5.9e-17
    // (f64, deg 6). |x| < 10 (f32) / 20 (f64): sinh = (u + u / (u + 1)) / 2,
    // u = expm1|x| (all terms positive). Above, e^-|x| is below half an ulp and
    // sinh = 2^(k-1) (1 + p), which stays finite up to the true overflow threshold
    // (e^|x| alone would overflow first). Odd: sign copied back.
    static const std::vector<double> p32 = {0.1666666716337204, 0.008333339355885983, 0.00019838122534565628,
                                            2.8061415378033416e-06};
    static const std::vector<double> p64 = {0.16666666666666666,    0.0083333333333333,     0.00019841269841323515,
                                            2.7557319191673347e-06, 2.5052117639597175e-08, 1.6057684635390652e-10,
                                            7.746011370783184e-13};
    bool d = is64(x);
    Expr a = abs_f(x);
    Expr z = a * a;
    Expr tiny = a + a * z * horner(z, d ? p64 : p32);
    ExpParts ep = expm1_parts(min(a, k(x, d ? 720.0 : 100.0)));
    Expr u = ep.em1;
    Expr small = (u + u / (u + k(x, 1.0))) * k(x, 0.5);
    Expr large = scale(k(x, 1.0) + ep.p, ep.ki - make_const(ep.ki.type().element_of(), 1));
    Expr y = select(a < k(x, 1.0), tiny, select(a < k(x, d ? 20.0 : 10.0), small, large));
    return select(isnan_(x), x, with_sign(y, sign_bit(x)));
}

Expr cosh(Expr x) {
    checked(x, "cosh");
    // cosh = E + 1/(4E), E = e^|x| / 2 = 2^(k-1) (1 + p): finite up to the true
    // overflow threshold; 1/(4E) vanishes (or is 0 for E = inf) for large |x|.
    bool d = is64(x);
    Expr a = abs_f(x);
    Reduced red = reduce_ln2(min(a, k(x, d ? 720.0 : 100.0)), false);
    Expr e = scale(k(x, 1.0) + expm1_poly(red.r, false), red.ki - make_const(red.ki.type().element_of(), 1));
    Expr y = e + k(x, 0.25) / e;
    return select(isnan_(x), x, y);
}

Expr log(Expr x) {
    checked(x, "log");
    Expr ef, f;
    split_log_argument(x, ef, f);
    return with_log_specials(x, log_core(ef, f));
}

namespace {

// log2 and log10 of float32 x: float64's log times the base's constant, rounded once.
Expr log_base32(const Expr &x, double per_natural_log) {
    return through_float64(x, [&](const Expr &v) { return math::log(v) * k(v, per_natural_log); });
}

}  // namespace

Expr log2(Expr x) {
    checked(x, "log2");
    if (!is64(x)) return log_base32(x, 1.4426950408889634);
    // log2(2) = 1 exactly; 1/ln 2 = 0x1.71547652b82fep+0 + 0x1.777d0ffda0d24p-56.
    return log_base64(x, 1.0, 0.0, 0x1.71547652b82fep+0, 0x1.777d0ffda0d24p-56);
}

Expr log10(Expr x) {
    checked(x, "log10");
    if (!is64(x)) return log_base32(x, 0.4342944819032518);
    // log10(2) = 0x1.34413509f8p-2 (40 bits) - 0x1.80433b83b532ap-44, log10(e) =
    // 0x1.bcb7b1526e50ep-2 + 0x1.95355baaafad3p-57 (80-digit decimal arithmetic).
    return log_base64(x, 0x1.34413509f8p-2, -0x1.80433b83b532ap-44, 0x1.bcb7b1526e50ep-2, 0x1.95355baaafad3p-57);
}

Expr log1p(Expr x) {
    checked(x, "log1p");
    const bool d = is64(x);
    // 1 + x = 2^e (1 + f). e comes from u = fl(1 + x); f is formed from x itself,
    // f = x 2^-e + (2^-e - 1), which is exact or singly rounded for e <= 25 (f32) /
    // 54 (f64), so the rounding of 1 + x is not inherited. For larger e, log1p(x)
    // and log(u) differ by < 1/x, far below an ulp, and f = m - 1 is used.
    Expr u = k(x, 1.0) + x;
    Expr e, m;
    split_exponent(bits_of(u), x.type(), e, m);
    Type it = e.type().element_of();
    Expr big = e > make_const(it, d ? 54 : 25);
    Expr sc = pow2(-min(e, make_const(it, d ? 54 : 25)), x.type());
    Expr f_small = strict_of({x, sc}, [&](const std::vector<Expr> &v) { return v[0] * v[1] + (v[1] - k(x, 1.0)); });
    Expr f = select(big, m - k(x, 1.0), f_small);
    Expr ef = cast(x.type(), cast(Int(32, x.type().lanes()), e));
    Expr y = log_core(ef, f);
    y = select(x == k(x, -1.0), -inf_of(x), y);
    y = select(x == k(x, 0.0) || isinf_(x), x, y);  // keeps -0; +inf -> inf
    return select(x < k(x, -1.0) || isnan_(x), nan_of(x), y);
}
Expr sqrt(Expr x) { return Halide::sqrt(checked(x, "sqrt")); }
namespace {

// 2^(j-3) mod 2pi for j = 0..107 as hi (29 significant bits, so M * hi is exact for
// a 24-bit integer M) + lo. Generated with 120-digit mpmath.
const double kTwoPowModTwoPi[108][2] = {
{0x1.0000000000000p-3, 0x0.0p+0},
{0x1.0000000000000p-2, 0x0.0p+0},
{0x1.0000000000000p-1, 0x0.0p+0},
{0x1.0000000000000p+0, 0x0.0p+0},
{0x1.0000000000000p+1, 0x0.0p+0},
{0x1.0000000000000p+2, 0x0.0p+0},
{0x1.b7812af000000p+0, -0x1.0b4611a626331p-32},
{0x1.b7812af000000p+1, -0x1.0b4611a626331p-31},
{0x1.2b0bad5000000p-1, 0x1.63d0d3e0a0805p-31},
{0x1.2b0bad5000000p+0, 0x1.63d0d3e0a0805p-30},
{0x1.2b0bad5000000p+1, 0x1.63d0d3e0a0805p-29},
{0x1.2b0bad5000000p+2, 0x1.63d0d3e0a0805p-28},
{0x1.87ef4ad000000p+1, -0x1.244ae564858a6p-30},
{0x1.87ef4ad000000p+2, -0x1.244ae564858a6p-29},
{0x1.7dbee05000000p+2, 0x1.cb00b98118127p-28},
{0x1.695e0b7000000p+2, -0x1.7ab2ee18323e5p-28},
{0x1.409c619000000p+2, -0x1.868f52b1b7f28p-34},
{0x1.de321bb000000p+1, 0x1.c62e48a01fba7p-29},
{0x1.304999d000000p+0, -0x1.2a1861e90aa2fp-30},
{0x1.304999d000000p+1, -0x1.2a1861e90aa2fp-29},
{0x1.304999d000000p+2, -0x1.2a1861e90aa2fp-28},
{0x1.9ce6fca000000p+1, 0x1.3635b62710adep-29},
{0x1.58e8ec1000000p-3, 0x1.6055432b92ab6p-34},
{0x1.58e8ec1000000p-2, 0x1.6055432b92ab6p-33},
{0x1.58e8ec1000000p-1, 0x1.6055432b92ab6p-32},
{0x1.58e8ec1000000p+0, 0x1.6055432b92ab6p-31},
{0x1.58e8ec1000000p+1, 0x1.6055432b92ab6p-30},
{0x1.58e8ec1000000p+2, 0x1.6055432b92ab6p-29},
{0x1.1fb222e000000p+2, 0x1.3e838844c120cp-30},
{0x1.5a89210000000p+1, -0x1.c5ca73e0074b5p-30},
{0x1.5a89210000000p+2, -0x1.c5ca73e0074b5p-29},
{0x1.22f28cb000000p+2, 0x1.29812b0596518p-28},
{0x1.678ac85000000p+1, -0x1.7b64161e6b807p-29},
{0x1.678ac85000000p+2, -0x1.7b64161e6b807p-28},
{0x1.3cf5db5000000p+2, -0x1.df2355ce59043p-34},
{0x1.cf9802b000000p+1, 0x1.c0a5086e55a96p-29},
{0x1.ebc26b9000000p-1, 0x1.7f853a9f9a315p-31},
{0x1.ebc26b9000000p+0, 0x1.7f853a9f9a315p-30},
{0x1.ebc26b9000000p+1, 0x1.7f853a9f9a315p-29},
{0x1.668ad94000000p+0, 0x1.bb436614df386p-30},
{0x1.668ad94000000p+1, 0x1.bb436614df386p-29},
{0x1.668ad94000000p+2, 0x1.bb436614df386p-28},
{0x1.3af5fd5000000p+2, -0x1.9a2d94f0a3f27p-28},
{0x1.c7988aa000000p+1, -0x1.143e2beea9204p-30},
{0x1.abc6aad000000p-1, -0x1.ad37711b6f34fp-32},
{0x1.abc6aad000000p+0, -0x1.ad37711b6f34fp-31},
{0x1.abc6aad000000p+1, -0x1.ad37711b6f34fp-30},
{0x1.9a6f588000000p-2, 0x1.8afe657e60255p-32},
{0x1.9a6f588000000p-1, 0x1.8afe657e60255p-31},
{0x1.9a6f588000000p+0, 0x1.8afe657e60255p-30},
{0x1.9a6f588000000p+1, 0x1.8afe657e60255p-29},
{0x1.09f4684000000p-3, -0x1.6d7ee7008f78ap-34},
{0x1.09f4684000000p-2, -0x1.6d7ee7008f78ap-33},
{0x1.09f4684000000p-1, -0x1.6d7ee7008f78ap-32},
{0x1.09f4684000000p+0, -0x1.6d7ee7008f78ap-31},
{0x1.09f4684000000p+1, -0x1.6d7ee7008f78ap-30},
{0x1.09f4684000000p+2, -0x1.6d7ee7008f78ap-29},
{0x1.0392367000000p+1, -0x1.f8cd206bc76f2p-30},
{0x1.0392367000000p+2, -0x1.f8cd206bc76f2p-29},
{0x1.d412de5000000p+0, -0x1.303030c53a4afp-33},
{0x1.d412de5000000p+1, -0x1.303030c53a4afp-32},
{0x1.07cca43000000p+0, -0x1.b5d339984d648p-31},
{0x1.07cca43000000p+1, -0x1.b5d339984d648p-30},
{0x1.07cca43000000p+2, -0x1.b5d339984d648p-29},
{0x1.f5e64c5000000p+0, 0x1.cbc32a6a81c2ap-31},
{0x1.f5e64c5000000p+1, 0x1.cbc32a6a81c2ap-30},
{0x1.8f1a5c4000000p+0, -0x1.56965f290c0efp-31},
{0x1.8f1a5c4000000p+1, -0x1.56965f290c0efp-30},
{0x1.8f1a5c4000000p+2, -0x1.56965f290c0efp-29},
{0x1.8c15033000000p+2, 0x1.98b53fbc918dep-28},
{0x1.860a513000000p+2, -0x1.df49e1a13f478p-28},
{0x1.79f4ed1000000p+2, -0x1.9e9048b9c1e44p-29},
{0x1.61ca24d000000p+2, 0x1.50bb562bdbb89p-28},
{0x1.3174946000000p+2, 0x1.90c24b3d550dep-28},
{0x1.a192e71000000p+1, 0x1.0d0356047b88ep-32},
{0x1.ee66399000000p-3, -0x1.e27ecb3a5e429p-33},
{0x1.ee66399000000p-2, -0x1.e27ecb3a5e429p-32},
{0x1.ee66399000000p-1, -0x1.e27ecb3a5e429p-31},
{0x1.ee66399000000p+0, -0x1.e27ecb3a5e429p-30},
{0x1.ee66399000000p+1, -0x1.e27ecb3a5e429p-29},
{0x1.711a111000000p+0, 0x1.999a7567eb471p-33},
{0x1.711a111000000p+1, 0x1.999a7567eb471p-32},
{0x1.711a111000000p+2, 0x1.999a7567eb471p-31},
{0x1.50146ce000000p+2, -0x1.549b8780cf22dp-29},
{0x1.0e09247000000p+2, 0x1.9ab01764ce79fp-28},
{0x1.13e5275000000p+1, 0x1.255e6d79d485fp-31},
{0x1.13e5275000000p+2, 0x1.255e6d79d485fp-30},
{0x1.2b5532c000000p+1, -0x1.f814a975e080fp-30},
{0x1.2b5532c000000p+2, -0x1.f814a975e080fp-29},
{0x1.8915606000000p+1, 0x1.ee6deadf7a37dp-29},
{0x1.8915606000000p+2, 0x1.ee6deadf7a37dp-28},
{0x1.800b0b9000000p+2, -0x1.33d88b5b6df3ap-28},
{0x1.6df661d000000p+2, 0x1.0f35105d836b3p-29},
{0x1.49cd0e6000000p+2, -0x1.7f50bcdef8092p-36},
{0x1.017a678000000p+2, -0x1.13b3029420534p-28},
{0x1.c35466d000000p+0, -0x1.c0d33215184dcp-31},
{0x1.c35466d000000p+1, -0x1.c0d33215184dcp-30},
{0x1.89a58c4000000p-1, 0x1.dc40bb622ebdap-33},
{0x1.89a58c4000000p+0, 0x1.dc40bb622ebdap-32},
{0x1.89a58c4000000p+1, 0x1.dc40bb622ebdap-31},
{0x1.89a58c4000000p+2, 0x1.dc40bb622ebdap-30},
{0x1.812b634000000p+2, -0x1.14a01b4a5822fp-31},
{0x1.7037114000000p+2, -0x1.55dc67ecf86bfp-28},
{0x1.4e4e6d3000000p+2, 0x1.0e4b3c2eb313cp-30},
{0x1.0a7d252000000p+2, -0x1.131d860611b2ap-29},
{0x1.05b529f000000p+1, -0x1.1e8f3903a0ae8p-31},
{0x1.05b529f000000p+2, -0x1.1e8f3903a0ae8p-30},
{0x1.e52a7a6000000p+0, 0x1.8010098f35163p-30}};

// Gathers kTwoPowModTwoPi[j][col] (j int32, clamped).
Expr two_pow_mod_two_pi(const Expr &j, int col) {
    static Buffer<double> table = [] {
        Buffer<double> b(108, 2, "hc_two_pow_mod_two_pi");
        for (int i = 0; i < 108; i++)
            for (int c = 0; c < 2; c++) b(i, c) = kTwoPowModTwoPi[i][c];
        return b;
    }();
    return table(clamp(j, 0, 107), col);
}

// Reduces a = |x| (finite) to a - q pi/2 = r with |r| <= ~pi/4, r in double.
// float32: exact for all inputs. Large a = M 2^e (M < 2^24, e >= -3) is first replaced by
// M (2^e mod 2pi) = M hi + M lo from a table (M hi exact); then y < 1.1e8 and q < 2^26
// so Cody-Waite with pi/2 in 26+26+53 bits leaves an absolute error ~1e-20.
// float64: Cody-Waite with pi/2 in 33+33+33+53 bits, exact products for q < 2^20;
// only valid for a < 2^20 * pi/2 (callers fall back above 2^20).
struct TrigReduced {
    Expr r, q;  // r: Float(64); q: Int(32), only q mod 4 matters
};
TrigReduced reduce_pio2(const Expr &a) {
    const int lanes = a.type().lanes();
    const Type f64 = Float(64, lanes);
    const Expr two_over_pi = make_const(Float(64), 0x1.45f306dc9c883p-1);
    auto c = [](double v) { return make_const(Float(64), v); };
    if (!is64(a)) {
        Expr bits = bits_of(a);
        Expr huge = a >= k(a, 0x1p20);
        Expr e = (bits >> 23) - 150;
        Expr m = cast(f64, (bits & 0x7fffff) | 0x800000);
        Expr hi = select(huge, m * two_pow_mod_two_pi(e + 3, 0), cast(f64, a));
        Expr lo = select(huge, m * two_pow_mod_two_pi(e + 3, 1), c(0.0));
        Expr qf = Halide::round((hi + lo) * two_over_pi);
        Expr r = strict_of({hi, lo, qf}, [&](const std::vector<Expr> &v) {
            return (((v[0] - v[2] * c(0x1.921fb58p+0)) - v[2] * c(-0x1.dde974p-27)) + v[1]) -
                   v[2] * c(0x1.1a62633145c07p-54);
        });
        return {r, cast(Int(32, lanes), qf)};
    }
    Expr qf = Halide::round(a * two_over_pi);
    Expr r = strict_of({a, qf}, [&](const std::vector<Expr> &v) {
        return (((v[0] - v[1] * c(0x1.921fb544p+0)) - v[1] * c(0x1.0b4611a6p-34)) - v[1] * c(0x1.3198a2ep-69)) -
               v[1] * c(0x1.b839a252049c1p-104);
    });
    return {r, cast(Int(32, lanes), qf)};
}

// The first 1280 bits of 2/pi after the binary point (hex; 120-digit+ mpmath).
const char kTwoOverPiHex[] =
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561"
    "b7246e3a424dd2e006492eea09d1921cfe1deb1cb129a73ee88235f52ebb4484"
    "e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde05980f"
    "ef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b"
    "3d0739f78a5292ea6bfb5fb11f8d5d0856033046fc7b6babf0cfbc209af4361d";

// float64 reduction table, entry j + 32 for j = -32..1007: V_j = (2^j * 2/pi) mod 4
// split on fixed grids into U1 (multiple of 2^-32, < 4), U2 (2^-64, < 2^-32),
// U3 (2^-96, < 2^-64) and U4 (the rest, rounded), so that an 18-bit integer times
// U1..U3 is exact.
Expr two_pow_times_two_over_pi(const Expr &idx, int part) {
    static Buffer<double> table = [] {
        auto bit = [](int kk) -> uint64_t {  // bit kk >= 1 after the binary point
            if (kk < 1) return 0;
            char c = kTwoOverPiHex[(kk - 1) / 4];
            int v = c <= '9' ? c - '0' : c - 'a' + 10;
            return (v >> (3 - (kk - 1) % 4)) & 1;
        };
        auto window = [&](int k0, int k1) {  // bits k0..k1 as an integer
            uint64_t w = 0;
            for (int kk = k0; kk <= k1; kk++) w = (w << 1) | bit(kk);
            return (double)w;
        };
        Buffer<double> b(1040, 4, "hc_two_pow_times_two_over_pi");
        for (int j = -32; j <= 1007; j++) {
            // V_j = sum over kk >= j - 1 of bit(kk) 2^(j - kk) (higher bits are multiples of 4).
            b(j + 32, 0) = std::ldexp(window(j - 1, j + 32), -32);
            b(j + 32, 1) = std::ldexp(window(j + 33, j + 64), -64);
            b(j + 32, 2) = std::ldexp(window(j + 65, j + 96), -96);
            b(j + 32, 3) = std::ldexp(window(j + 97, j + 156), -156);
        }
        return b;
    }();
    return table(clamp(idx, 0, 1039), part);
}

// float64 reduction for any finite a >= 2^20 (Payne-Hanek style, vectorizable):
// a = M 2^E with M < 2^53 split into three 18-bit pieces M_i, so a * 2/pi mod 4 =
// sum_i M_i V_(E + 18 i) mod 4. Every M_i * U1..U3 product is exact, each M_i * U1 is
// reduced mod 4 exactly, and the fraction F is summed so that any cancellation happens
// in exact additions; F's relative error is ~2^-52 even when a is within 2^-60 of a
// multiple of pi/2.
TrigReduced reduce_pio2_huge(const Expr &a) {
    const int lanes = a.type().lanes();
    const Type i32 = Int(32, lanes), f64 = Float(64, lanes);
    Expr bits = bits_of(a);
    Expr e = cast(i32, bits >> 52) - 1075;
    // (Explicit Int(64) constants: a long long literal would bind to Halide's int overloads.)
    Expr m = (bits & make_const(Int(64), (int64_t)0x000fffffffffffffLL)) | make_const(Int(64), (int64_t)1 << 52);
    std::vector<Expr> in;
    for (int i = 0; i < 3; i++) in.push_back(cast(f64, cast(i32, (m >> (18 * i)) & 0x3ffff)));
    for (int i = 0; i < 3; i++)
        for (int part = 0; part < 4; part++) in.push_back(two_pow_times_two_over_pi(e + 18 * i + 32, part));
    Expr qf;
    Expr f = strict_of(in, [&](const std::vector<Expr> &v) {
        auto mi = [&](int i) { return v[i]; };
        auto u = [&](int i, int part) { return v[3 + 4 * i + part]; };
        auto c = [](double x) { return make_const(Float(64), x); };
        Expr A;
        for (int i = 0; i < 3; i++) {
            Expr ai = mi(i) * u(i, 0);
            ai = ai - c(4.0) * Halide::floor(ai * c(0.25));
            A = i == 0 ? ai : A + ai;
        }
        Expr B = (mi(0) * u(0, 1) + mi(1) * u(1, 1)) + mi(2) * u(2, 1);
        Expr C = (mi(0) * u(0, 2) + mi(1) * u(1, 2)) + mi(2) * u(2, 2);
        Expr D = (mi(0) * u(0, 3) + mi(1) * u(1, 3)) + mi(2) * u(2, 3);
        qf = Halide::round(A);
        return (((A - qf) + B) + C) + D;
    });
    // qf was built from let-bound names inside strict_of; recompute it outside.
    Expr A;
    for (int i = 0; i < 3; i++) {
        Expr ai = in[i] * in[3 + 4 * i];
        ai = ai - make_const(Float(64), 4.0) * Halide::floor(ai * make_const(Float(64), 0.25));
        A = i == 0 ? ai : A + ai;
    }
    Expr r = f * make_const(Float(64), 0x1.921fb54442d18p+0) + f * make_const(Float(64), 0x1.1a62633145c07p-54);
    return {r, cast(i32, Halide::round(A))};
}

// sin(r), cos(r) for |r| <= pi/4 (double): r + r^3 S(r^2), 1 - r^2/2 + r^4 C(r^2).
// For float32 results S, C of degree 3 (rel err 1.9e-10, 6.1e-11); for float64
// degree 6 / 5 (5.8e-17, 5.6e-17).
void sincos_kernel(const Expr &r, bool full, Expr &s, Expr &c) {
    static const std::vector<double> s3 = {-0.16666666663580784, 0.008333331773240714, -0.00019840033807627392,
                                           2.724324548008107e-06};
    static const std::vector<double> s6 = {-0.16666666666666666,    0.008333333333333331,   -0.00019841269841264523,
                                           2.755731921892631e-06,   -2.5052106091543932e-08, 1.6058509645598708e-10,
                                           -7.585421384617872e-13};
    static const std::vector<double> c3 = {0.04166666666410488, -0.0013888887590959608, 2.4800557735227326e-05,
                                           -2.7295545593324863e-07};
    static const std::vector<double> c5 = {0.041666666666666664,    -0.001388888888888723, 2.4801587298518488e-05,
                                           -2.7557317145736517e-07, 2.087612042343041e-09,  -1.138079757464786e-11};
    Expr z = r * r;
    s = r + r * z * horner(z, full ? s6 : s3);
    // 1 - z/2 loses nothing: z/2 <= 0.31 and the rounding of 1 - z/2 is the result's.
    c = (k(r, 1.0) - z * k(r, 0.5)) + z * z * horner(z, full ? c5 : c3);
}

enum class Trig { Sin, Cos, Tan };

Expr trig(const Expr &x, Trig which) {
    const bool d = is64(x);
    Expr a = abs_f(x);
    TrigReduced red = reduce_pio2(a);
    if (d) {
        // Cody-Waite is exact only below 2^20; above, the table-driven reduction.
        TrigReduced hr = reduce_pio2_huge(a);
        Expr big = a >= k(x, 0x1p20);
        red = {select(big, hr.r, red.r), select(big, hr.q, red.q)};
    }
    Expr s, c;
    sincos_kernel(red.r, d, s, c);
    Expr q = red.q & 3;
    Expr y;
    if (which == Trig::Sin) {
        // sin(a) by quadrant: s, c, -s, -c; odd in x (sign bit copied back below).
        y = select(q == 0, s, q == 1, c, q == 2, -s, -c);
    } else if (which == Trig::Cos) {
        y = select(q == 0, c, q == 1, -s, q == 2, -c, s);
    } else {
        y = select((q & 1) == 0, s / c, -c / s);
    }
    y = cast(x.type(), y);
    if (which != Trig::Cos) y = reinterpret(x.type(), bits_of(y) ^ sign_bit(x));
    return select(isfinite_(x), y, nan_of(x));
}

}  // namespace

Expr sin(Expr x) { return trig(checked(x, "sin"), Trig::Sin); }
Expr cos(Expr x) { return trig(checked(x, "cos"), Trig::Cos); }
Expr tan(Expr x) { return trig(checked(x, "tan"), Trig::Tan); }
namespace {

// Inverse trig works in double: float32 inputs are widened (so the float32 result is
// rounded once from a ~1e-10 accurate value) and float64 uses higher-degree fits.
Expr widen(const Expr &x) { return cast(Float(64, x.type().lanes()), x); }
Expr dc(double v) { return make_const(Float(64), v); }

const double kPio2Hi = 0x1.921fb54442d18p+0, kPio2Lo = 0x1.1a62633145c07p-54;  // pi/2 = hi + lo
const double kPio4Hi = 0x1.921fb54442d18p-1, kPio4Lo = 0x1.1a62633145c07p-55;

// atan(a) for a >= 0 (inf allowed), in double. Three ranges, one division:
//   a <= tan(pi/8):  atan(a)                    (u = a)
//   a <= tan(3pi/8): pi/4 + atan((a-1)/(a+1))   (|u| <= tan(pi/8))
//   else:            pi/2 + atan(-1/a)
// atan(u) = u + u^3 P(u^2); P rel err 1.6e-9 (deg 5, for float32), 1.4e-16 (deg 10),
// scaled by u^2/3 < 0.06 in the result.
Expr atan_core(const Expr &a, bool full) {
    static const std::vector<double> p5 = {-0.33333333280373517, 0.1999997757861422,  -0.1428416591881243,
                                           0.11071603013789205,  -0.08626249304078194, 0.05051782934367853};
    static const std::vector<double> p10 = {-0.3333333333333333,  0.19999999999995607,  -0.1428571428468314,
                                            0.1111111101648511,   -0.09090904624366195, 0.07692184191129492,
                                            -0.06664524628101146, 0.058582564555844915, -0.05085980193145743,
                                            0.03924614879658595,  -0.019193714970915026};
    Expr lo = a <= dc(0.41421356237309503), mid = a <= dc(2.414213562373095);
    Expr num = select(lo, a, mid, a - dc(1.0), dc(-1.0));
    Expr den = select(lo, dc(1.0), mid, a + dc(1.0), a);
    Expr u = num / den;
    Expr z = u * u;
    Expr poly = u * z * horner(z, full ? p10 : p5);
    Expr bhi = select(lo, dc(0.0), mid, dc(kPio4Hi), dc(kPio2Hi));
    Expr blo = select(lo, dc(0.0), mid, dc(kPio4Lo), dc(kPio2Lo));
    return bhi + (u + (poly + blo));
}

// asin(s) for 0 <= s <= 1/2 in double: s + s^3 R(s^2); R rel err 2.1e-8 (deg 5, for
// float32), 1.1e-16 (deg 12), scaled by s^2 R / 1 < 0.05 in the result.
Expr asin_poly(const Expr &s, bool full) {
    static const std::vector<double> r5 = {0.16666666317305354, 0.07500098696926184,  0.04459804007139617,
                                           0.031116213773044136, 0.017076942327151037, 0.03380825378789943};
    static const std::vector<double> r12 = {0.16666666666666669,  0.07499999999998327,  0.044642857146558426,
                                            0.030381944123164303, 0.022372173542457286, 0.017352378897625895,
                                            0.01397141459667686,  0.011477242838296322, 0.01033518992903283,
                                            0.00540524234028564,  0.017540794375774757, -0.01506698014217499,
                                            0.028902473379011067};
    Expr z = s * s;
    return s + s * z * horner(z, full ? r12 : r5);
}

}  // namespace

Expr arctan(Expr x) {
    checked(x, "arctan");
    // Odd: computed on |x|, sign copied back (keeps -0). atan(+-inf) = +-pi/2.
    Expr y = cast(x.type(), atan_core(widen(abs_f(x)), is64(x)));
    return select(isnan_(x), x, with_sign(y, sign_bit(x)));
}

Expr arcsinh(Expr x) {
    checked(x, "arcsinh");
    if (!is64(x)) return through_float64(x, [](const Expr &v) { return math::arcsinh(v); });
    // On a = |x|, sign copied back (odd; keeps -0): a < 2^-28: a (the cube term is below half
    // an ulp); a > 2^28: log(a) + log 2 (2a would overflow near the top); a >= 2:
    // log(2a + 1 / (sqrt(a^2 + 1) + a)); else log1p(a + a^2 / (1 + sqrt(1 + a^2))), whose
    // argument has no cancellation.
    Expr a = abs_f(x);
    Expr a2 = a * a;
    Expr root = Halide::sqrt(a2 + k(a, 1.0));
    Expr huge = math::log(a) + k(a, 0.6931471805599453);
    Expr large = math::log(k(a, 2.0) * a + k(a, 1.0) / (root + a));
    Expr small = math::log1p(a + a2 / (k(a, 1.0) + root));
    Expr y = select(a > k(a, 0x1p28), huge, a >= k(a, 2.0), large, a < k(a, 0x1p-28), a, small);
    return select(isnan_(x) || isinf_(x), x, with_sign(y, sign_bit(x)));
}

Expr arccosh(Expr x) {
    checked(x, "arccosh");
    if (!is64(x)) return through_float64(x, [](const Expr &v) { return math::arccosh(v); });
    // x > 2^28: log(x) + log 2; x >= 2: log(2x - 1 / (x + sqrt(x^2 - 1))); else with t = x - 1
    // (exact): log1p(t + sqrt(2t + t^2)). x < 1 and NaN: NaN; arccosh(1) = +0; inf: inf.
    Expr huge = math::log(x) + k(x, 0.6931471805599453);
    Expr large = math::log(k(x, 2.0) * x - k(x, 1.0) / (x + Halide::sqrt(x * x - k(x, 1.0))));
    // Strict: reassociated, 2t + t^2 is x^2 - 1, which cancels near 1.
    Expr near_one = math::log1p(strict_of({x}, [](const std::vector<Expr> &v) {
        Expr t = v[0] - k(v[0], 1.0);
        return t + Halide::sqrt(k(t, 2.0) * t + t * t);
    }));
    Expr y = select(x > k(x, 0x1p28), huge, x >= k(x, 2.0), large, near_one);
    y = select(isinf_(x), x, y);  // +inf -> inf; -inf -> NaN below
    return select(x < k(x, 1.0) || isnan_(x), nan_of(x), y);
}

Expr arctanh(Expr x) {
    checked(x, "arctanh");
    if (!is64(x)) return through_float64(x, [](const Expr &v) { return math::arctanh(v); });
    // On a = |x|, sign copied back: a < 2^-28: a; a < 1/2: log1p(2a + 2a^2 / (1 - a)) / 2; else
    // log1p(2a / (1 - a)) / 2 (1 - a exact). |x| = 1: +-inf; |x| > 1 and NaN: NaN.
    Expr a = abs_f(x);
    Expr small = k(a, 0.5) * math::log1p(strict_of({a}, [](const std::vector<Expr> &v) {
        return k(v[0], 2.0) * v[0] + k(v[0], 2.0) * v[0] * v[0] / (k(v[0], 1.0) - v[0]);
    }));
    Expr large = k(a, 0.5) * math::log1p(strict_of({a}, [](const std::vector<Expr> &v) {
        return k(v[0], 2.0) * v[0] / (k(v[0], 1.0) - v[0]);
    }));
    Expr y = select(a < k(a, 0x1p-28), a, a < k(a, 0.5), small, large);
    y = select(a == k(a, 1.0), inf_of(x), y);
    return select(a > k(a, 1.0) || isnan_(x), nan_of(x), with_sign(y, sign_bit(x)));
}

Expr copysign(Expr x, Expr y) {
    check_same(x, y, "copysign");
    return with_sign(abs_f(x), sign_bit(y));  // the bits: NaN keeps its payload, takes y's sign
}

Expr signbit(Expr x) {
    checked(x, "signbit");
    return sign_bit(x) != make_const(int_t(x).element_of(), 0);
}

namespace {

// sqrt(a^2 + b^2) for float64 a >= b >= 0, finite: scaled by a power of two into the range
// where the squares neither overflow nor lose bits, then one Newton step on the square root
// with the residual a^2 + b^2 - h^2 summed from exact squares (a^2 - h^2's leading parts cancel
// exactly: h^2 is within a factor two of a^2).
Expr hypot64(const Expr &a, const Expr &b) {
    Expr big = a > k(a, 0x1p500), small = a < k(a, 0x1p-450);
    Expr scale = select(big, k(a, 0x1p-600), small, k(a, 0x1p600), k(a, 1.0));
    Expr unscale = select(big, k(a, 0x1p600), small, k(a, 0x1p-600), k(a, 1.0));
    Expr as = a * scale, bs = b * scale;
    Expr h = Halide::sqrt(as * as + bs * bs);
    auto [a_high, a_low] = exact_product(as, as);
    auto [b_high, b_low] = exact_product(bs, bs);
    auto [h_high, h_low] = exact_product(h, h);
    Expr residual = ((a_high - h_high) + b_high) + ((a_low - h_low) + b_low);
    h = h + residual / (k(a, 2.0) * h);
    return select(b == k(b, 0.0), a, h * unscale);
}

}  // namespace

Expr hypot(Expr x, Expr y) {
    check_same(x, y, "hypot");
    Expr r;
    if (is64(x)) {
        r = strict_of({abs_f(x), abs_f(y)}, [](const std::vector<Expr> &v) {
            return hypot64(max(v[0], v[1]), min(v[0], v[1]));
        });
        r = select(isnan_(x) || isnan_(y), nan_of(x), r);
    } else {
        // float32 as C's hypotf: the squares exact in double, one rounding of their sum, a
        // correctly rounded double square root, rounded to float32; NaN propagates.
        r = strict_of({widen(x), widen(y)}, [](const std::vector<Expr> &v) {
            return Halide::sqrt(v[0] * v[0] + v[1] * v[1]);
        });
        r = cast(x.type(), r);
    }
    // C99: an infinite side gives +inf, even beside a NaN.
    return select(isinf_(x) || isinf_(y), inf_of(x), r);
}

Expr cbrt(Expr x) {
    checked(x, "cbrt");
    if (!is64(x)) return through_float64(x, [](const Expr &v) { return math::cbrt(v); });
    // On a = |x| scaled by 2^-+903 (a cube) into [2^-900, 2^900]: y = e^(log(a) / 3), then one
    // Newton step y - (y^3 - a) / (3 y^2) with y^3 - a from exact products (y^3's leading part
    // cancels a's exactly), so a cube's root is exact. Odd; 0, inf and NaN as they are.
    Expr a = abs_f(x);
    Expr big = a > k(a, 0x1p900), small = a < k(a, 0x1p-900);
    Expr scaled = a * select(big, k(a, 0x1p-903), small, k(a, 0x1p903), k(a, 1.0));
    // The logarithm bound to a name (strict_of's let): exp reads its argument several times,
    // and inlined there, log's whole expression made the max of a cube root compile for minutes.
    Expr guess = strict_of({math::log(scaled)}, [](const std::vector<Expr> &v) {
        return math::exp(v[0] * k(v[0], 1.0 / 3.0));
    });
    Expr root = strict_of({scaled, guess}, [](const std::vector<Expr> &v) {
        auto [square, square_low] = exact_product(v[1], v[1]);
        auto [cube, cube_low] = exact_product(v[1], square);
        Expr residual = (cube - v[0]) + (cube_low + v[1] * square_low);
        return v[1] - residual / (k(v[1], 3.0) * square);
    });
    Expr y = root * select(big, k(a, 0x1p301), small, k(a, 0x1p-301), k(a, 1.0));
    y = select(a == k(a, 0.0) || isinf_(x), a, y);
    return select(isnan_(x), x, with_sign(y, sign_bit(x)));
}

Expr arctan2(Expr y, Expr x) {
    check_same(y, x, "arctan2");
    // theta = atan(|y| / |x|) in [0, pi/2], then pi - theta when x's sign bit is set
    // (so atan2(+-0, -0) = +-pi as in C99/NumPy), then y's sign. 0/0 and inf/inf are
    // patched to theta = 0 and pi/4. For float32 the quotient is formed in double, so
    // it never over/underflows.
    const bool d = is64(x);
    Expr ay = widen(abs_f(y)), ax = widen(abs_f(x));
    Expr theta = atan_core(ay / ax, d);
    theta = select(ay == dc(0.0), dc(0.0), theta);
    // Special-value tests use the unwidened inputs: LLVM may assume a widened value
    // is finite under fast-math and fold is_inf/is_nan on it away.
    theta = select(isinf_(y) && isinf_(x), dc(kPio4Hi), theta);
    Expr xneg = sign_bit(x) != make_const(int_t(x).element_of(), 0);
    Expr t = select(xneg, dc(2 * kPio2Hi) + (dc(2 * kPio2Lo) - theta), theta);
    Expr r = with_sign(cast(x.type(), t), sign_bit(y));
    return select(isnan_(x) || isnan_(y), nan_of(x), r);
}

Expr arcsin(Expr x) {
    checked(x, "arcsin");
    // |x| <= 1/2: asin_poly(|x|). Above: pi/2 - 2 asin(s), s = sqrt((1 - |x|) / 2),
    // where 1 - |x| is exact. Odd: sign copied back. |x| > 1 -> nan.
    const bool d = is64(x);
    Expr a = widen(abs_f(x));
    Expr s = Halide::sqrt((dc(1.0) - min(a, dc(1.0))) * dc(0.5));
    Expr big = dc(kPio2Hi) + (dc(kPio2Lo) - dc(2.0) * asin_poly(s, d));
    Expr r = select(a <= dc(0.5), asin_poly(a, d), big);
    Expr out = with_sign(cast(x.type(), r), sign_bit(x));
    return select(a > dc(1.0) || isnan_(x), nan_of(x), out);
}

Expr arccos(Expr x) {
    checked(x, "arccos");
    // |x| <= 1/2: pi/2 - asin(x). x > 1/2: 2 asin(sqrt((1 - x) / 2)) (accurate near
    // x = 1, acos(1) = +0). x < -1/2: pi - 2 asin(sqrt((1 + x) / 2)).
    const bool d = is64(x);
    Expr xw = widen(x);
    Expr a = widen(abs_f(x));
    Expr mid = dc(kPio2Hi) + (dc(kPio2Lo) - asin_poly(xw, d));
    Expr h = dc(2.0) * asin_poly(Halide::sqrt((dc(1.0) - min(a, dc(1.0))) * dc(0.5)), d);
    Expr r = select(a <= dc(0.5), mid, xw > dc(0.0), h, dc(2 * kPio2Hi) + (dc(2 * kPio2Lo) - h));
    return select(a > dc(1.0) || isnan_(x), nan_of(x), cast(x.type(), r));
}

namespace {

// Error-free transformations (Knuth TwoSum, Dekker/Veltkamp TwoProduct) in double.
// Only valid inside strict_of(): reassociation or FMA contraction breaks them.
void two_sum(const Expr &a, const Expr &b, Expr &s, Expr &e) {
    s = a + b;
    Expr bb = s - a;
    e = (a - (s - bb)) + (b - bb);
}
void split_hi_lo(const Expr &a, Expr &hi, Expr &lo) {
    Expr t = a * dc(134217729.0);  // 2^27 + 1
    hi = t - (t - a);
    lo = a - hi;
}
void two_prod(const Expr &a, const Expr &b, Expr &p, Expr &e) {
    p = a * b;
    Expr ah, al, bh, bl;
    split_hi_lo(a, ah, al);
    split_hi_lo(b, bh, bl);
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

// |x|^y for float64 and finite ax > 0: exp(y log ax) with log ax and y log ax carried
// in double-double, so the result keeps the error of the final exp (~1 ulp) instead of
// |y log ax| * 2^-53 (up to ~700 ulp). Returns nothing useful for ax = 0 / inf.
Expr pow64_mag(const Expr &ax, const Expr &y) {
    const int lanes = ax.type().lanes();
    Expr tiny = ax < dc(0x1p-1022);
    Expr xs = select(tiny, ax * dc(0x1p54), ax);
    Expr e, m;
    split_exponent(bits_of(xs), ax.type(), e, m);
    Expr ef = cast(Float(64, lanes), cast(Int(32, lanes), e)) - select(tiny, dc(54.0), dc(0.0));
    Expr f = m - dc(1.0);  // exact
    // log1p(f) = 2 atanh(s) = 2s + s^3 Q(s^2), s = f / (2 + f) carried as s_hi + s_lo.
    // |y log ax| up to 745 multiplies log's relative error, so Q needs the deg-7 fit
    // (rel err 5.6e-17; the tail is < 0.2% of log).
    static const std::vector<double> q64 = {0.6666666666666666,  0.40000000000001007, 0.28571428570725066,
                                            0.22222222409303688, 0.18181793782511035, 0.15386339600291418,
                                            0.13266127228548635, 0.13113999114217426};
    Expr s_hi = f / (dc(2.0) + f);
    Expr z = s_hi * s_hi;
    Expr tail = s_hi * z * horner(z, q64);  // < 1% of the result: plain double suffices
    // th + tl = y * log(ax), then the Cody-Waite-reduced exp argument r (tl folded in).
    auto dd = [&](const std::vector<Expr> &v, Expr &th, Expr &tl) {
        const Expr &ef = v[0], &f = v[1], &sh = v[2], &tail = v[3], &y = v[4];
        // s_lo = (f - s_hi (2 + f)) / (2 + f), with 2 + f = u + u_lo exactly.
        Expr u = dc(2.0) + f;
        Expr u_lo = f - (u - dc(2.0));
        Expr p, pe;
        two_prod(sh, u, p, pe);
        Expr s_lo = (((f - p) - pe) - sh * u_lo) / u;
        // log = e ln2 + 2 s_hi + (2 s_lo + tail); e * ln2_hi (32-bit hi) is exact.
        Expr lh, l1, Lh, Ll;
        two_sum(ef * dc(0x1.62e42feep-1), dc(2.0) * sh, lh, l1);
        two_sum(lh, l1 + ((dc(2.0) * s_lo + tail) + ef * dc(0x1.a39ef35793c76p-33)), Lh, Ll);
        two_prod(y, Lh, th, tl);
        tl = tl + y * Ll;
    };
    std::vector<Expr> in = {ef, f, s_hi, tail, y};
    Expr th = strict_of(in, [&](const std::vector<Expr> &v) {
        Expr th, tl;
        dd(v, th, tl);
        return th;
    });
    // k from th; out of range th (|th| > 745 means 0 / inf) is clamped and tl dropped.
    Expr in_range = abs(th) < dc(720.0);
    Expr thc = clamp(th, dc(-760.0), dc(720.0));
    Expr kf = Halide::round(thc * dc(1.4426950408889634));
    in.push_back(kf);
    in.push_back(select(in_range, dc(1.0), dc(0.0)));
    Expr r = strict_of(in, [&](const std::vector<Expr> &v) {
        Expr th, tl;
        dd(v, th, tl);
        Expr kf = v[5];
        th = min(max(th, dc(-760.0)), dc(720.0));
        return ((th - kf * dc(0x1.62e42feep-1)) + select(v[6] > dc(0.0), tl, dc(0.0))) -
               kf * dc(0x1.a39ef35793c76p-33);
    });
    return scale(dc(1.0) + expm1_poly(r, false), to_int(kf));
}

// |a|^y for float32 a (y = b widened), in plain double: log and exp need only ~2^-40
// relative accuracy here (|y log a| <= ~104 before the float32 result is 0 or inf),
// so there are no split constants or strict operations, and low-degree fits: Q deg 3
// (rel err 1.8e-9, weight < 0.015) and P deg 5 (2.8e-9, weight < 0.18). Not valid for
// a = 0 / inf / nan (pow() patches those).
Expr pow32_mag(const Expr &a, const Expr &y) {
    static const std::vector<double> q3 = {0.6666666654510905, 0.4000012935296849, 0.28549982758725223,
                                           0.23352943726398429};
    static const std::vector<double> p5 = {0.5000000014201076,   0.16666666523388235,  0.041666457366549996,
                                           0.008333362061917624, 0.0013934496454224672, 0.0001985797793941082};
    const int lanes = a.type().lanes();
    Expr ax = abs_f(a);
    Expr tiny = ax < k(a, 0x1p-126);
    Expr xs = select(tiny, ax * k(a, 0x1p24), ax);
    Expr e, m;
    split_exponent(bits_of(xs), a.type(), e, m);
    Expr ef = cast(Float(64, lanes), e) - select(tiny, dc(24.0), dc(0.0));
    Expr f = widen(m) - dc(1.0);
    Expr sq = f / (dc(2.0) + f);
    Expr z = sq * sq;
    Expr lg = ef * dc(0.6931471805599453) + (f - sq * (f - z * horner(z, q3)));
    Expr t = clamp(y * lg, dc(-200.0), dc(200.0));
    Expr kf = Halide::round(t * dc(1.4426950408889634));
    Expr r = t - kf * dc(0.6931471805599453);
    Expr pr = dc(1.0) + (r + r * r * horner(r, p5));
    return pr * pow2(to_int(kf), Float(64, lanes));
}

}  // namespace

Expr pow(Expr a, Expr b) {
    check_same(a, b, "pow");
    // float32: |a|^b = exp(b log|a|) in double (pow32_mag). float64: the double-double
    // pow64_mag. Then the C99/NumPy special cases, decided in the argument type (for
    // float32 that avoids mask conversions between 8 float and 2x4 double lanes).
    const bool d = is64(a);
    Expr ax = abs_f(a);
    Expr one = k(a, 1.0), zero = k(a, 0.0);
    // 0 and inf bases (and huge |y|): |a|^y is 0 or inf, inf iff y > 0 and |a| > 1 or
    // y < 0 and |a| < 1.
    Expr edge_inf = (b > zero) == (ax > one);
    Expr mag;
    if (d) {
        // |y| > 2^900 would overflow the double-double split; the result is then 0 or
        // inf (or 1, patched below), as for 0 and inf bases.
        Expr use = isfinite_(a) && ax > zero && abs(b) < k(a, 0x1p900);
        mag = select(use, pow64_mag(ax, b), select(edge_inf, inf_of(a), zero));
    } else {
        Expr use = isfinite_(a) && ax > zero;
        mag = cast(a.type(), pow32_mag(a, widen(b)));  // rounds once, to inf / denormals as needed
        mag = select(use, mag, select(edge_inf, inf_of(a), zero));
    }
    // |a| = 1: magnitude 1 for every y (y = +-inf and huge even y included).
    mag = select(ax == one, one, mag);
    // y odd integer <=> y/2 is not an integer but y is (|y| >= 2^24 / 2^53 are even).
    Expr y_int = Halide::floor(b) == b;
    Expr half = b * k(a, 0.5);
    Expr y_odd = y_int && Halide::floor(half) != half && isfinite_(b);
    Expr neg = sign_bit(a) != 0;
    Expr r = select(neg && y_odd, negate(mag), mag);
    // Negative finite base with finite non-integer exponent: nan.
    r = select(neg && isfinite_(a) && a != zero && !y_int && isfinite_(b), nan_of(a), r);
    r = select(isnan_(a) || isnan_(b), nan_of(a), r);
    // pow(1, anything) = 1 and pow(anything, +-0) = 1, even for nan.
    return select(equals_(a, 1.0) || equals_(b, 0.0), one, r);
}
// Pipelines compile in strict float mode (ieee_target), in which LLVM contracts nothing itself
// (on the GPU, gpu_rounding.cpp sees to it); Halide has no fma operator, so this calls LLVM's
// intrinsic, which Halide scalarizes and LLVM's SLP vectorizer puts back together into vector FMAs.
Expr fused_multiply_add(const Expr &a, const Expr &b, const Expr &c) {
    // Operands of one width: a scalar constant (a polynomial's coefficient) beside a vector is
    // broadcast, as Halide's arithmetic operators do (the GPU's fast_math builds these after
    // vectorization).
    const int lanes = std::max({a.type().lanes(), b.type().lanes(), c.type().lanes()});
    auto wide = [&](const Expr &e) { return e.type().lanes() == lanes ? e : Halide::Internal::Broadcast::make(e, lanes); };
    const Type t = a.type().with_lanes(lanes);
    using Halide::Internal::Call;
    Expr fma = Call::make(t, t.bits() == 32 ? "llvm.fma.f32" : "llvm.fma.f64", {wide(a), wide(b), wide(c)}, Call::PureExtern);
    Expr has_fma = Call::make(Bool(), Call::target_has_feature, {make_const(Int(32), Target::FMA)}, Call::PureIntrinsic);
    return select(has_fma, fma, a * b + c);
}
Expr negate(Expr x) {
    checked(x, "negate");
    return reinterpret(x.type(), bits_of(x) ^ make_const(int_t(x).element_of(), is64(x) ? INT64_MIN : (int64_t)INT32_MIN));
}
// Halide's CUDA code rounds float32 with the flush-to-zero conversions (cvt.rmi.ftz, cvt.rpi.ftz),
// which read a subnormal as zero: floor(-1e-40) gave -0 and ceil(1e-40) gave +0 on the GPU
// (mathbench --cuda). The one subnormal sign each gets wrong is answered by a bit test.
namespace {
Expr subnormal_with_sign(const Expr &x, bool negative) {
    const Type u = UInt(32, x.type().lanes());
    Expr first = make_const(u.element_of(), negative ? 0x80000001u : 1u);
    return reinterpret(u, x) - first < make_const(u.element_of(), 0x7fffffu);
}
}  // namespace
Expr floor(Expr x) {
    checked(x, "floor");
    if (is64(x)) return Halide::floor(x);
    return select(subnormal_with_sign(x, true), k(x, -1.0), Halide::floor(x));
}
Expr ceil(Expr x) {
    checked(x, "ceil");
    if (is64(x)) return Halide::ceil(x);
    return select(subnormal_with_sign(x, false), k(x, 1.0), Halide::ceil(x));
}
// Halide::round rounds half to even, like np.rint.
Expr rint(Expr x) { return Halide::round(checked(x, "rint")); }
Expr trunc(Expr x) { return Halide::trunc(checked(x, "trunc")); }
}  // namespace hc::math
