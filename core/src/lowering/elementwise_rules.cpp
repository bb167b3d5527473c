// Scalar rules for elementwise ops, with NumPy's semantics: integer arithmetic wraps, integer
// division and modulo round toward -inf with x//0 == x%0 == 0, max/min propagate NaN, and
// transcendentals go through hc::math (vectorizable, NumPy's special values).
#include <limits>
#include <cmath>
#include <optional>
#include <unordered_map>

#include "numpy_math.h"
#include "rules.h"

namespace hc::lowering {

namespace {

using Halide::Expr;
using Halide::select;
using Args = std::vector<Expr>;

bool is_float_type(const Expr &e) { return e.type().is_float(); }
bool is_bool_type(const Expr &e) { return e.type().is_bool(); }

// Signed integer overflow is undefined in Halide; NumPy wraps. Do the arithmetic unsigned.
template <typename F>
Expr wrapping(const Expr &a, const Expr &b, F op) {
    Halide::Type t = a.type();
    if (!t.is_int()) return op(a, b);
    Halide::Type u = t.with_code(halide_type_uint);
    return Halide::reinterpret(t, op(Halide::reinterpret(u, a), Halide::reinterpret(u, b)));
}

// a * b, wrapping. Halide's interval arithmetic checks a product for overflow in 32 bits, so for
// 64-bit operands it never sees one: the interval of a chain of products of a narrow value
// (uint8 cast to uint64, squared again and again) grew as a tree, four times per step, and a
// proof attempt at every step walked it (`a.astype(np.uint64) ** 65535` compiled for minutes;
// device fuzz, seed 3, program 1368471). A 64-bit operand's range is hidden behind a round trip
// through the other signedness, free in machine code.
Expr wrapping_multiply(const Expr &a, const Expr &b) {
    auto opaque = [](const Expr &x) {
        if (x.type().bits() < 64 || Halide::Internal::is_const(x)) return x;
        const auto *load = x.as<Halide::Internal::Call>();
        if (load && load->call_type == Halide::Internal::Call::Image) return x;  // an input: any value
        Halide::Type other = x.type().is_int() ? x.type().with_code(halide_type_uint) : x.type().with_code(halide_type_int);
        return Halide::reinterpret(x.type(), Halide::reinterpret(other, x));
    };
    return wrapping(opaque(a), opaque(b), [](Expr x, Expr y) { return x * y; });
}

// A signed integer's bits as the unsigned type of its width (free: a reinterpret).
Expr as_unsigned(const Expr &e) {
    return e.type().is_int() ? Halide::reinterpret(e.type().with_code(halide_type_uint), e) : e;
}

// The IEEE sign bit (true for -0.0 and negative NaNs too).
Expr sign_bit(const Expr &x) {
    return Halide::reinterpret(Halide::Int(x.type().bits()), x) < 0;
}

// NumPy's float maximum/minimum: NaN from either side; of two equal values (0.0 and -0.0)
// the second.
Expr numpy_maximum(const Expr &a, const Expr &b) {
    if (is_float_type(a)) return select(Halide::is_nan(a) || a > b, a, b);
    if (is_bool_type(a)) return a || b;
    return Halide::max(a, b);
}

Expr numpy_minimum(const Expr &a, const Expr &b) {
    if (is_float_type(a)) return select(Halide::is_nan(a) || a < b, a, b);
    if (is_bool_type(a)) return a && b;
    return Halide::min(a, b);
}

// C's fmod, which NumPy's float remainder and floor_divide are built on; exact, so a libm call.
Expr c_fmod(const Expr &a, const Expr &b) {
    const char *name = a.type().bits() == 32 ? "fmodf" : "fmod";
    return Halide::Internal::Call::make(a.type(), name, {a, b}, Halide::Internal::Call::PureExtern);
}

// -0.0 built from its bit pattern: Halide drops the sign of a literal -0.0 constant.
Expr negative_zero(Halide::Type t) {
    Expr bits = t.bits() == 32 ? Expr(uint32_t{0x80000000u}) : Expr(uint64_t{0x8000000000000000ull});
    return Halide::reinterpret(t, bits);
}

// NumPy's float divmod (npy_divmod): the quotient rounded toward -inf and the remainder with the
// divisor's sign, computed from fmod so that both are exact where NumPy's are.
std::pair<Expr, Expr> float_divmod(const Expr &a, const Expr &b) {
    Expr mod = c_fmod(a, b);
    Expr div = (a - mod) / b;
    Expr adjust = mod != 0 && ((b < 0) != (mod < 0));
    Expr mod_adj = select(adjust, mod + b, mod);
    Expr div_adj = select(adjust, div - 1, div);
    Expr floordiv = math::floor(div_adj);
    floordiv = select(div_adj - floordiv > Halide::Internal::make_const(a.type(), 0.5), floordiv + 1, floordiv);
    // A zero quotient takes the sign of the true quotient; division by zero gives a / b.
    Expr zero_signed = select(sign_bit(a) != sign_bit(b), negative_zero(a.type()), Halide::Internal::make_zero(a.type()));
    floordiv = select(div_adj == 0, zero_signed, floordiv);
    floordiv = select(b == 0, a / b, floordiv);
    Expr remainder = select(mod == 0, select(b < 0, negative_zero(a.type()), Halide::Internal::make_zero(a.type())), mod_adj);
    remainder = select(b == 0, mod, remainder);
    // fmod is NaN where a is NaN or infinite or b is NaN or zero; said explicitly, because LLVM
    // folds fmod(t, t) to 0 when t is one value (t = a / a: program 99548), NaN or not.
    Expr invalid = Halide::is_nan(a) || Halide::is_nan(b) || Halide::is_inf(a) || b == 0;
    remainder = select(invalid, Halide::Internal::make_const(a.type(), std::numeric_limits<double>::quiet_NaN()), remainder);
    return {floordiv, remainder};
}

// Integer floor division and modulo. Halide's / and % are Euclidean (remainder >= 0) and give 0
// for a zero divisor, as NumPy does; MIN // -1 is routed around the hardware trap (NumPy wraps).
std::pair<Expr, Expr> int_divmod(const Expr &a, const Expr &b) {
    if (a.type().is_uint()) return {a / b, a % b};
    Expr minus_one = Halide::Internal::make_const(b.type(), -1);
    Expr divisor_is_minus_one = as_unsigned(b) == as_unsigned(minus_one);  // see compare()
    Expr safe_b = select(divisor_is_minus_one, Halide::Internal::make_one(b.type()), b);
    Expr q = a / safe_b;
    Expr r = a % safe_b;
    Expr negate = Halide::reinterpret(a.type(), Halide::Internal::make_zero(a.type().with_code(halide_type_uint)) -
                                                    Halide::reinterpret(a.type().with_code(halide_type_uint), a));
    // Euclidean and floor division differ only for a negative divisor with a remainder.
    Expr shift = b < 0 && r != 0;
    // Wrapping even though a selected arm never overflows: Halide constant-folds both arms and
    // stops with an error on a signed overflow in the other one (a // INT64_MAX).
    auto add = [](Expr x, Expr y) { return x + y; };
    Expr floor_q = select(shift, wrapping(q, minus_one, add), q);
    Expr floor_r = select(shift, wrapping(r, b, add), r);
    return {select(divisor_is_minus_one, negate, floor_q),
            select(divisor_is_minus_one, Halide::Internal::make_zero(a.type()), floor_r)};
}

// NumPy's shifts of integers (npy_lshift, npy_rshift): C's shift by an amount below the width; by
// any other amount (a negative one too: C reads it as an unsigned one), 0, or for a right shift
// of a negative value, -1. The left shift runs on the unsigned bits (it wraps, as C's shift of
// the promoted value truncated back does); the right shift of a signed value is arithmetic, and
// by width - 1 it already gives the sign's fill.
Expr unsigned_bits(const Expr &x) { return Halide::reinterpret(x.type().with_code(Halide::Type::UInt), x); }

Expr numpy_left_shift(const Expr &a, const Expr &n) {
    const Expr amount = unsigned_bits(n);
    const Expr width = Halide::cast(amount.type(), a.type().bits());
    const Expr shifted = Halide::reinterpret(a.type(), unsigned_bits(a) << select(amount < width, amount, 0));
    return select(amount < width, shifted, Halide::Internal::make_zero(a.type()));
}

Expr numpy_right_shift(const Expr &a, const Expr &n) {
    const Expr amount = unsigned_bits(n);
    const Expr width = Halide::cast(amount.type(), a.type().bits());
    if (a.type().is_int()) return a >> Halide::min(amount, width - 1);
    return select(amount < width, a >> select(amount < width, amount, 0), Halide::Internal::make_zero(a.type()));
}

// Non-negative integer powers by repeated squaring (the frontend guarantees exponent >= 0).
// Every step is bound to a name (a Let): each step reads the previous square twice and the
// previous result in both arms of a select, so as a tree the expression doubles with every bit
// (2^64 nodes for uint64), and Halide passes that walk trees (bounds inference simplifies 0-d
// values as trees) never finished. A constant exponent needs only its own bits, and no selects.
Expr int_pow(const Expr &base, const Expr &exponent) {
    Halide::Type t = base.type();
    auto mul = wrapping_multiply;
    std::vector<std::pair<std::string, Expr>> lets;
    auto bind = [&lets](const Expr &value) {
        if (Halide::Internal::is_const(value) || value.as<Halide::Internal::Variable>()) return value;
        lets.emplace_back(Halide::Internal::unique_name('p'), value);
        return Halide::Internal::Variable::make(value.type(), lets.back().first);
    };
    Expr result = Halide::Internal::make_one(t);
    Expr square = bind(base);
    std::optional<uint64_t> known = Halide::Internal::as_const_uint(exponent);
    if (auto s = Halide::Internal::as_const_int(exponent)) known = static_cast<uint64_t>(*s);
    if (known) {
        for (uint64_t e = *known; e != 0; e >>= 1) {
            if (e & 1) result = bind(Halide::Internal::is_const_one(result) ? square : mul(result, square));
            if (e > 1) square = bind(mul(square, square));
        }
    } else {
        // An 8-bit exponent's bits are tested in 16 bits: LLVM (Halide 21's) aborted compiling
        // the byte-lane bit tests that its SLP vectorizer formed from a scalar loop for
        // AVX-512BW ("APInt::setBits: hiBit out of range"; device fuzz, seed 3, programs 907270
        // and 1026763: `c ** (np.sign(c) ^ c)`, `(True | a) ** (True | a)` on uint8). Widening
        // keeps the low 8 bits, the only ones tested.
        Expr e = bind(t.bits() == 8 ? Halide::cast(Halide::UInt(16), exponent) : exponent);
        for (int bit = 0; bit < t.bits(); ++bit) {
            result = bind(select((e & 1) != 0, mul(result, square), result));
            if (bit + 1 < t.bits()) {
                square = bind(mul(square, square));
                e = bind(e >> 1);
            }
        }
    }
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) result = Halide::Internal::Let::make(it->first, it->second, result);
    return result;
}

// x86's truncating conversion to a signed integer of `bits` (cvttss2si / cvttsd2si): in range,
// truncation toward zero; out of range or NaN, the "integer indefinite" value, the type's minimum.
Expr x86_truncate(const Expr &x, int bits) {
    Halide::Type t = Halide::Int(bits);
    Expr lo = Halide::Internal::make_const(x.type(), -std::ldexp(1.0, bits - 1));
    Expr hi = Halide::Internal::make_const(x.type(), std::ldexp(1.0, bits - 1));
    // NaN explicitly: Halide's bounds of a float ignore NaN, so where they put x in range (a
    // square root of an int16) it drops the range check, and the conversions around this one
    // were merged into a float -> uint64 conversion, which AVX-512 does unsigned: NaN gave
    // 2^64 - 1 where NumPy gives 2^63 (device fuzz, seed 3, program 2017365).
    return select(x >= lo && x < hi && !Halide::is_nan(x), Halide::cast(t, x), t.min());
}

// x >= bound, false for NaN (Halide's simplifier turns a >= b into !(a < b), true for NaN).
Expr at_least(const Expr &x, double bound) {
    return x >= Halide::Internal::make_const(x.type(), bound) && !Halide::is_nan(x);
}

// NumPy's float -> integer cast (astype, casting="unsafe") on x86-64, measured on this machine
// (core/OPS.md, "Float to integer casts"). NumPy's cast loops are C casts, which gcc compiles to
// x86 conversions: in-range values truncate toward zero, and the rest follow the instructions.
Expr float_to_int(const Expr &x, Halide::Type t) {
    Expr sign = Halide::Internal::make_const(Halide::UInt(t.bits()), uint64_t{1} << (t.bits() - 1));
    if (t.bits() < 32) {
        // Via int32, then the low bits. The mask keeps Halide's simplifier from merging the two
        // casts into one float -> 16-bit conversion where it can prove the int32 one in range
        // (a guarded tail, which sees the value's bounds): that conversion is undefined out of
        // the narrow range, and AVX-512's unsigned one gave 65535 for -5.0 (device fuzz, seed 3,
        // program 1812370).
        Expr low = x86_truncate(x, 32) & static_cast<int32_t>((int64_t{1} << t.bits()) - 1);
        return t.is_uint() ? Halide::cast(t, low) : Halide::reinterpret(t, Halide::cast(t.with_code(halide_type_uint), low));
    }
    if (t.is_int()) return x86_truncate(x, t.bits());
    if (t.bits() == 64) {
        // Below 2^63 (and NaN) through int64, as bits; from 2^63 up, int64(x - 2^63) with the
        // top bit flipped, so 2^64 and up give 0.
        Expr big = at_least(x, std::ldexp(1.0, 63));
        Expr low = Halide::reinterpret(t, x86_truncate(x, 64));
        Expr high = Halide::reinterpret(t, x86_truncate(x - Halide::Internal::make_const(x.type(), std::ldexp(1.0, 63)), 64)) ^ sign;
        return select(big, high, low);
    }
    // uint32: NumPy's vectorised loop (contiguous, aligned data), the same scheme in 32 bits.
    // Its scalar loop (strided or unaligned data, and the tail of a contiguous array) differs
    // for x < -2^31, x >= 2^32 and NaN/inf: NumPy's own answer depends on the memory layout.
    Expr big = at_least(x, std::ldexp(1.0, 31));
    Expr low = Halide::reinterpret(t, x86_truncate(x, 32));
    Expr high = Halide::reinterpret(t, x86_truncate(x - Halide::Internal::make_const(x.type(), std::ldexp(1.0, 31)), 32)) ^ sign;
    return select(big, high, low);
}

// `x` (float64) rounded to float32 to odd: where the nearest float32 is not exact, the float32
// next to x toward zero with its last bit set. Rounding that to float16 rounds x correctly once
// (float32 keeps more than two bits past float16's), where rounding twice to nearest may not.
Expr round_to_odd_float32(const Expr &x) {
    Expr nearest = Halide::cast(Halide::Float(32), x);
    Expr back = Halide::cast(Halide::Float(64), nearest);
    Expr bits = Halide::reinterpret(Halide::UInt(32), nearest);
    Expr toward_zero = select(Halide::abs(back) > Halide::abs(x), bits - 1, bits);
    Expr odd = Halide::reinterpret(Halide::Float(32), toward_zero | 1);
    return select(back == x || Halide::is_nan(x), nearest, odd);
}

// bfloat16 is float32's top half. Widening is Halide's cast, exact (spelled in integers after
// Halide's lowering: bfloat16_casts.cpp). Narrowing rounds float32's low 16 bits to nearest even in
// integer arithmetic (NaN stays a quiet NaN), which no target needs a conversion routine for.
Expr widen_bfloat16(const Expr &x) { return Halide::cast(Halide::Float(32, x.type().lanes()), x); }

Expr round_to_bfloat16(const Expr &x) {
    using namespace Halide::Internal;
    const int lanes = x.type().lanes();
    const Halide::Type u32 = Halide::UInt(32, lanes);
    auto c = [&](uint32_t v) { return make_const(u32, v); };
    const std::string name = unique_name("bf16_bits");
    Expr bits = Variable::make(u32, name);
    Expr rounded = (bits + c(0x7fff) + ((bits >> c(16)) & c(1))) >> c(16);
    Expr quiet_nan = (bits >> c(16)) | c(0x40);
    Expr half = select((bits & c(0x7fffffff)) > c(0x7f800000), quiet_nan, rounded);
    Expr result = Halide::reinterpret(Halide::BFloat(16, lanes), Halide::cast(Halide::UInt(16, lanes), half));
    return Let::make(name, Halide::reinterpret(u32, x), result);
}

Expr numpy_cast(const Expr &x, Halide::Type to) {
    // bfloat16 converts through float32, both ways, as ml_dtypes (and torch) convert it: exactly
    // from bfloat16; to it, rounded to float32 first (so float64 and wide integers may round
    // twice, as there).
    const Halide::Type f32 = Halide::Float(32);
    if (x.type().is_bfloat()) {
        Expr wide = widen_bfloat16(x);
        return to == f32 ? wide : numpy_cast(wide, to);
    }
    if (to.is_bfloat()) return round_to_bfloat16(x.type() == f32 ? x : numpy_cast(x, f32));
    // float16 converts through float32 (exactly from float16; to it, correctly rounded from
    // float32, integers, which float32 holds exactly up to float16's range, and float64 rounded
    // to odd): the JIT links no library routine for the direct conversions.
    if (x.type() == Halide::Float(16) && to != f32) return numpy_cast(Halide::cast(f32, x), to);
    if (to == Halide::Float(16) && x.type() != f32) {
        return Halide::cast(to, x.type() == Halide::Float(64) ? round_to_odd_float32(x) : numpy_cast(x, f32));
    }
    if (to.is_bool()) return x != Halide::Internal::make_zero(x.type());
    if (x.type().is_float() && !to.is_float()) return float_to_int(x, to);
    return Halide::cast(to, x);
}

Expr sign(const Expr &x) {
    Expr zero = Halide::Internal::make_zero(x.type()), one = Halide::Internal::make_one(x.type());
    if (x.type().is_uint()) return select(x > zero, one, zero);
    Expr s = select(x > zero, one, select(x < zero, Halide::Internal::make_const(x.type(), -1), zero));
    return is_float_type(x) ? select(Halide::is_nan(x), x, s) : s;
}

// x - y for floats, IEEE's answer even where Halide's simplifier finds x and y equal and folds
// x - y to 0 assuming no NaN or inf (in a reduction's update: `(b.T.T - b).sum()`, `(np.where(
// True, b, 0.0) - b).sum()` were 0 with an inf in b). A non-finite x takes the other arm, which
// has no subtraction to fold: NaN where x == y (inf - inf; true if folded) or y is NaN, else x.
Expr float_subtract(const Expr &x, const Expr &y) {
    Expr nan = Halide::Internal::make_const(x.type(), std::numeric_limits<double>::quiet_NaN());
    return select(Halide::is_finite(x), x - y, select(x == y || Halide::is_nan(y), nan, x));
}

// NumPy's comparisons. Bools compare as 0/1 integers. Halide's simplifier assumes no NaN: it
// rewrites a <= b as !(b < a), and folds x == x, x <= x and x >= x to true, including where two
// operands only turn out equal after simplifying (np.where(True, b, 0.0) is b), in a reduction's
// update or not, the strict_float target notwithstanding (program 1419296, device fuzz seed 3).
// So a float a <= b is (a < b || a == b), and every comparison that holds for equal operands
// also asks that a is not NaN: redundant in IEEE arithmetic, and the answer if a and b fold.
// A float compared with itself (x == x, also through a shared operand) is spelled with isnan.
Expr compare(OpKind kind, const Expr &a, const Expr &b) {
    auto comparable = [](const Expr &e) { return is_bool_type(e) ? Halide::cast(Halide::UInt(8), e) : e; };
    Expr x = comparable(a), y = comparable(b);
    bool is_float = x.type().is_float();
    if (is_float && (x.same_as(y) || Halide::Internal::equal(x, y))) {
        Expr ordered = !Halide::is_nan(x);
        if (kind == OpKind::Eq || kind == OpKind::Le || kind == OpKind::Ge) return ordered;
        if (kind == OpKind::Ne) return !ordered;
        return Halide::Internal::const_false();
    }
    if (x.type().is_int() && (kind == OpKind::Eq || kind == OpKind::Ne)) {
        // Halide's simplifier decides a == b through a - b, which for two constants far apart
        // (INT_MAX == -1) is a signed overflow it reports as an error. Equality of the bits is
        // the same question without the subtraction.
        x = as_unsigned(x);
        y = as_unsigned(y);
    }
    if (is_float) {
        Expr ordered = !Halide::is_nan(x);
        switch (kind) {
        case OpKind::Eq: return x == y && ordered;
        case OpKind::Ne: return x != y || !ordered;
        case OpKind::Lt: return x < y;
        case OpKind::Gt: return x > y;
        case OpKind::Le: return (x < y || x == y) && ordered;
        default: return (x > y || x == y) && ordered;  // Ge
        }
    }
    switch (kind) {
    case OpKind::Eq: return x == y;
    case OpKind::Ne: return x != y;
    case OpKind::Lt: return x < y;
    case OpKind::Gt: return x > y;
    case OpKind::Le: return x <= y;
    default: return x >= y;  // Ge
    }
}

using Table = std::unordered_map<OpKind, ElementwiseRule>;

Table make_table() {
    Table t;
    auto unary = [&](OpKind k, Expr (*f)(Expr)) { t[k] = [f](const Node &, const Args &a) { return f(a[0]); }; };
    unary(OpKind::Exp, math::exp);
    unary(OpKind::Exp2, math::exp2);
    unary(OpKind::Cbrt, math::cbrt);
    unary(OpKind::Log, math::log);
    unary(OpKind::Log1p, math::log1p);
    unary(OpKind::Log2, math::log2);
    unary(OpKind::Log10, math::log10);
    unary(OpKind::Expm1, math::expm1);
    unary(OpKind::Sqrt, math::sqrt);
    unary(OpKind::Sin, math::sin);
    unary(OpKind::Cos, math::cos);
    unary(OpKind::Tan, math::tan);
    unary(OpKind::Tanh, math::tanh);
    unary(OpKind::Sinh, math::sinh);
    unary(OpKind::Cosh, math::cosh);
    unary(OpKind::Arcsin, math::arcsin);
    unary(OpKind::Arccos, math::arccos);
    unary(OpKind::Arctan, math::arctan);
    unary(OpKind::Arcsinh, math::arcsinh);
    unary(OpKind::Arccosh, math::arccosh);
    unary(OpKind::Arctanh, math::arctanh);
    auto rounding = [&](OpKind k, Expr (*f)(Expr)) {
        t[k] = [f](const Node &, const Args &a) { return is_float_type(a[0]) ? f(a[0]) : a[0]; };
    };
    rounding(OpKind::Floor, math::floor);
    rounding(OpKind::Ceil, math::ceil);
    rounding(OpKind::Rint, math::rint);
    rounding(OpKind::Trunc, math::trunc);

    t[OpKind::Cast] = [](const Node &n, const Args &a) { return numpy_cast(a[0], halide_type(n.dtype)); };
    t[OpKind::Neg] = [](const Node &, const Args &a) {
        if (is_float_type(a[0])) return math::negate(a[0]);  // -(+0) = -0: not 0 - x
        return wrapping(Halide::Internal::make_zero(a[0].type()), a[0], [](Expr x, Expr y) { return x - y; });
    };
    t[OpKind::Abs] = [](const Node &, const Args &a) {
        if (a[0].type().is_uint()) return a[0];
        if (is_float_type(a[0])) {  // clears the sign bit: abs(-0.0) is 0.0 (Halide's may keep -0.0)
            Halide::Type bits = Halide::UInt(a[0].type().bits());
            return Halide::reinterpret(a[0].type(), Halide::reinterpret(bits, a[0]) & (bits.max() >> 1));
        }
        // abs(MIN) wraps back to MIN, as in NumPy. Spelled as a select over a wrapping negation:
        // Halide's abs, cast back, was taken to be non-negative (`abs(INT64_MIN) < 5` was False).
        Expr negated = wrapping(Halide::Internal::make_zero(a[0].type()), a[0], [](Expr x, Expr y) { return x - y; });
        return select(a[0] < 0, negated, a[0]);
    };
    t[OpKind::Square] = [](const Node &, const Args &a) { return wrapping_multiply(a[0], a[0]); };
    t[OpKind::Sign] = [](const Node &, const Args &a) { return sign(a[0]); };
    t[OpKind::Reciprocal] = [](const Node &, const Args &a) {
        Halide::Type t = a[0].type();
        if (t.is_float()) return Halide::Internal::make_one(t) / a[0];
        // NumPy computes 1.0 / x in double and casts it back: 1 and -1 are their own
        // reciprocals, 0 gives the cast of +inf, everything else 0.
        Expr one = Halide::Internal::make_one(t), zero = Halide::Internal::make_zero(t);
        // NumPy's cast of +inf (float_to_int): the minimum for 32 and 64-bit signed types, 0 for
        // the rest.
        Expr of_zero = t.is_int() && t.bits() >= 32 ? t.min() : zero;
        // A constant is answered here: Halide's simplifier rewrites `x == 1` as `x - 1 == 0`,
        // and for x the type's minimum that folding overflows and stops the compile (device
        // fuzz, seed 3, program 2016972: the reciprocal of np.full(..., nan, np.int64)).
        if (auto c = Halide::Internal::as_const_int(a[0])) {
            return *c == 1 || *c == -1 ? a[0] : *c == 0 ? of_zero : zero;
        }
        Expr r = select(a[0] == one, one, a[0] == zero, of_zero, zero);
        return t.is_int() ? select(a[0] == Halide::Internal::make_const(t, -1), a[0], r) : r;
    };
    t[OpKind::IsNan] = [](const Node &, const Args &a) { return Halide::is_nan(a[0]); };
    t[OpKind::IsFinite] = [](const Node &, const Args &a) { return Halide::is_finite(a[0]); };
    t[OpKind::IsInf] = [](const Node &, const Args &a) { return Halide::is_inf(a[0]); };
    t[OpKind::Invert] = [](const Node &, const Args &a) { return is_bool_type(a[0]) ? !a[0] : ~a[0]; };

    t[OpKind::Add] = [](const Node &, const Args &a) {
        return is_bool_type(a[0]) ? (a[0] || a[1]) : wrapping(a[0], a[1], [](Expr x, Expr y) { return x + y; });
    };
    t[OpKind::Sub] = [](const Node &, const Args &a) {
        if (is_float_type(a[0])) return float_subtract(a[0], a[1]);
        return wrapping(a[0], a[1], [](Expr x, Expr y) { return x - y; });
    };
    t[OpKind::Mul] = [](const Node &, const Args &a) {
        return is_bool_type(a[0]) ? (a[0] && a[1]) : wrapping_multiply(a[0], a[1]);
    };
    t[OpKind::Div] = [](const Node &, const Args &a) { return a[0] / a[1]; };
    t[OpKind::FloorDiv] = [](const Node &, const Args &a) {
        return is_float_type(a[0]) ? float_divmod(a[0], a[1]).first : int_divmod(a[0], a[1]).first;
    };
    t[OpKind::Mod] = [](const Node &, const Args &a) {
        return is_float_type(a[0]) ? float_divmod(a[0], a[1]).second : int_divmod(a[0], a[1]).second;
    };
    t[OpKind::Pow] = [](const Node &, const Args &a) {
        return is_float_type(a[0]) ? math::pow(a[0], a[1]) : int_pow(a[0], a[1]);
    };
    t[OpKind::Maximum] = [](const Node &, const Args &a) { return numpy_maximum(a[0], a[1]); };
    t[OpKind::Minimum] = [](const Node &, const Args &a) { return numpy_minimum(a[0], a[1]); };
    t[OpKind::Arctan2] = [](const Node &, const Args &a) { return math::arctan2(a[0], a[1]); };
    t[OpKind::Hypot] = [](const Node &, const Args &a) { return math::hypot(a[0], a[1]); };
    t[OpKind::Copysign] = [](const Node &, const Args &a) { return math::copysign(a[0], a[1]); };
    t[OpKind::Signbit] = [](const Node &, const Args &a) { return math::signbit(a[0]); };
    t[OpKind::LeftShift] = [](const Node &, const Args &a) { return numpy_left_shift(a[0], a[1]); };
    t[OpKind::RightShift] = [](const Node &, const Args &a) { return numpy_right_shift(a[0], a[1]); };
    t[OpKind::Popcount] = [](const Node &, const Args &a) { return Halide::popcount(a[0]); };
    t[OpKind::BitwiseAnd] = [](const Node &, const Args &a) { return is_bool_type(a[0]) ? (a[0] && a[1]) : (a[0] & a[1]); };
    t[OpKind::BitwiseOr] = [](const Node &, const Args &a) { return is_bool_type(a[0]) ? (a[0] || a[1]) : (a[0] | a[1]); };
    t[OpKind::BitwiseXor] = [](const Node &, const Args &a) { return is_bool_type(a[0]) ? (a[0] != a[1]) : (a[0] ^ a[1]); };

    for (OpKind k : {OpKind::Eq, OpKind::Ne, OpKind::Lt, OpKind::Le, OpKind::Gt, OpKind::Ge}) {
        t[k] = [k](const Node &, const Args &a) { return compare(k, a[0], a[1]); };
    }
    t[OpKind::Where] = [](const Node &, const Args &a) { return select(a[0], a[1], a[2]); };
    return t;
}

}  // namespace

const ElementwiseRule *find_elementwise_rule(OpKind kind) {
    static const Table table = make_table();
    auto it = table.find(kind);
    return it == table.end() ? nullptr : &it->second;
}

// The power's base is read through a Func of its own. A Func's value is an interval to Halide,
// while an element read at one point (a consumer that needs one element: a slice, x[i]) is a
// "single point" whose value bounds inference carries as an expression: its box_touched then
// expanded the squaring chain over such a base as a tree, 2^64 nodes for uint64 (device fuzz,
// seed 3, programs 616503 and 873732: `(a ** a)[1:2]`, `(a ** np.uint64(2**64-1))[i]`). The
// scheduler computes it per vector of the power, so it costs no pass over memory.
Halide::Func define_integer_power(const LowerContext &ctx, const Node &n, Halide::Func &f,
                                  const std::vector<Expr> &index, const std::vector<Expr> &lhs) {
    Halide::Func base("pow_base_" + std::to_string(n.id));
    base(lhs) = ctx.at(n.inputs[0], index);
    f(lhs) = int_pow(base(lhs), ctx.at(n.inputs[1], index));
    return base;
}

}  // namespace hc::lowering
