// NumPy-compatible transcendental and rounding functions for Halide pipelines.
//
// Every function takes and returns a Halide::Expr of type Float(32) or Float(64)
// (the result has the argument's type). They are written as plain vectorizable
// Halide expressions (range reduction + polynomial), avoiding Halide builtins that
// lower to per-lane libm calls, and they reproduce NumPy's (C99 Annex F) special
// values: nan -> nan, +-inf, overflow -> inf, underflow -> 0, signed zeros, and
// nan for domain errors. Measured accuracy and speed: apps/mathbench/RESULTS.md.
#pragma once

#include <Halide.h>

#include <functional>

namespace hc::math {

Halide::Expr exp(Halide::Expr x);
// 2^x: exact for integer x; float32 through float64.
Halide::Expr exp2(Halide::Expr x);
Halide::Expr expm1(Halide::Expr x);
Halide::Expr log(Halide::Expr x);
Halide::Expr log1p(Halide::Expr x);
// Integer answers exact (log2(8) = 3, log10(1000) = 3): float32 through float64's log,
// float64 with the base's constants split in two (numpy_math.cpp's log_base64).
Halide::Expr log2(Halide::Expr x);
Halide::Expr log10(Halide::Expr x);
Halide::Expr sqrt(Halide::Expr x);
Halide::Expr sin(Halide::Expr x);
Halide::Expr cos(Halide::Expr x);
Halide::Expr tan(Halide::Expr x);
Halide::Expr tanh(Halide::Expr x);
// tanh with tanh|x| above |x| = 0.5625 computed by `large` from |x| (tanh's own is exact; the
// GPU's fast_math has its own, gpu_fast_math.cpp): the polynomial below, signs and NaN as tanh's.
Halide::Expr tanh_with(Halide::Expr x, const std::function<Halide::Expr(const Halide::Expr &)> &large);
// tanh with the reciprocal of its large branch's denominator (in [4, 2^65], a normal float)
// computed by `reciprocal` (tanh's own: an IEEE division; gpu_tanh.cpp's inside GPU kernels).
Halide::Expr tanh_with_reciprocal(Halide::Expr x, const std::function<Halide::Expr(const Halide::Expr &)> &reciprocal);
Halide::Expr sinh(Halide::Expr x);
Halide::Expr cosh(Halide::Expr x);
Halide::Expr arcsin(Halide::Expr x);
Halide::Expr arccos(Halide::Expr x);
Halide::Expr arctan(Halide::Expr x);
Halide::Expr arctan2(Halide::Expr y, Halide::Expr x);
// Inverse hyperbolic functions: float32 through float64, float64 from log and log1p of arguments
// formed without cancellation.
Halide::Expr arcsinh(Halide::Expr x);
Halide::Expr arccosh(Halide::Expr x);
Halide::Expr arctanh(Halide::Expr x);
// The real cube root: a cube's root exact; float32 through float64.
Halide::Expr cbrt(Halide::Expr x);
// x's magnitude with y's sign bit (NaN's payload kept); whether x's sign bit is set (a Bool Expr).
Halide::Expr copysign(Halide::Expr x, Halide::Expr y);
Halide::Expr signbit(Halide::Expr x);
// sqrt(x^2 + y^2) without overflow or underflow on the way: float32 through float64 as C's hypotf,
// float64 scaled and corrected by one Newton step; +inf where either side is infinite.
Halide::Expr hypot(Halide::Expr x, Halide::Expr y);
Halide::Expr pow(Halide::Expr a, Halide::Expr b);
// a * b + c with one rounding where the target has FMA instructions (NumPy's BLAS uses them
// too; on CUDA targets the host's features say so, and the GPU has them), else a * b + c.
Halide::Expr fused_multiply_add(const Halide::Expr &a, const Halide::Expr &b, const Halide::Expr &c);
// IEEE negation: flips the sign bit, so -(+0) is -0 (Halide's unary minus is 0 - x, +0 for +0).
Halide::Expr negate(Halide::Expr x);
Halide::Expr floor(Halide::Expr x);
Halide::Expr ceil(Halide::Expr x);
Halide::Expr rint(Halide::Expr x);  // round half to even
Halide::Expr trunc(Halide::Expr x);

}  // namespace hc::math
