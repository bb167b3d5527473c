"""float16, compiled vs NumPy: NumPy's float16 loops compute in float32 and round every result to
float16, and so does hcompile (core's widen_float16), so arithmetic chains agree bit for bit;
functions (exp, tanh, ...) within float16's rounding of our float32 functions; sums in float32.

Also: promotion with float16 (NEP 50), conversions to and from every dtype (exact), float16
scalars, reductions, mean's float32 accumulator, products, odd layouts and shapes.
"""

import numpy as np
import pytest

from numpy_oracle import check, make

F16 = np.float16


def chain(x, y):
    return (x * y + x) / (y - 0.5) - np.sqrt(np.abs(x)) * 3


def cubic(x):
    return ((x * 0.125 - 1.5) * x + 2.0) * x - x / 7


@pytest.mark.parametrize("shape", [(), (1,), (0, 4), (7,), (33, 65), (3, 1, 5)])
@pytest.mark.parametrize("layout", ["C", "F", "step", "rev"])
def test_arithmetic_chains_are_bit_exact(rng, shape, layout):
    if layout != "C" and len(shape) < 2:
        pytest.skip("layouts of 2-D and more")
    x = make(rng, shape, F16, "mixed", specials=0.05, layout=layout)
    y = make(rng, shape, F16, "normal", specials=0.05)
    check(chain, x, y, rtol=0, atol=0)
    check(cubic, x, rtol=0, atol=0)


UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh",
         "arcsin", "arccos", "arctan", "reciprocal", "floor", "ceil", "rint", "trunc", "square",
         "sign", "abs", "negative", "isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions(rng, name):
    fn = getattr(np, name)
    kind = "unit" if name in ("arcsin", "arccos") else "mixed"
    x = make(rng, (41, 37), F16, kind, specials=0.05)
    check(lambda a: fn(a), x)
    check(lambda a: fn(a * 2) + 1, x, ops=2)


@pytest.mark.parametrize("expr", [
    "np.power(np.abs(x), y)", "np.arctan2(x, y)", "x // y", "x % y", "np.maximum(x, y)",
    "np.minimum(x, y)", "x < y", "x == y", "x >= y", "np.where(x > y, x, y * 2)",
    "np.where(x > 0, x, 0.0)", "np.clip(x, -1, 1)", "x ** 2", "x ** 0.5", "-x"])
def test_binary_ops(rng, expr):
    x = make(rng, (23, 19), F16, "mixed", specials=0.03)
    y = make(rng, (23, 19), F16, "pos")
    fn = eval(f"lambda x, y: {expr}")
    check(fn, x, y)


@pytest.mark.parametrize("other_dtype, other_kind", [
    ("float32", "normal"), ("float64", "normal"), ("int8", "small"), ("uint8", "nonneg"),
    ("int16", "normal"), ("int64", "normal"), ("bool", None)])
def test_promotion_with_other_dtypes(rng, other_dtype, other_kind):
    x = make(rng, (9, 8), F16, "normal")
    y = make(rng, (8,), other_dtype, other_kind or "normal")
    check(lambda a, b: a * b + a, x, y, ops=2)
    check(lambda a, b: np.float16(1.5) * a - b, x, y, ops=2)


def test_float16_results_of_small_integers_and_bools(rng):
    i = make(rng, (17,), "int8", "pos")
    b = make(rng, (17,), "bool")
    check(lambda a: np.sqrt(a), i)                 # NumPy: float16 for int8
    check(lambda a: np.exp(a) + 1, b, ops=2)       # and for bool
    check(lambda a: a / np.int8(3), i)             # true division of int8 is float16
    check(lambda a: np.round(a), b, rtol=0, atol=0)  # NumPy rounds bools in float16


def test_python_and_numpy_scalars(rng):
    x = make(rng, (31,), F16, "normal")
    check(lambda a: a * 2.5 + 1, x, rtol=0, atol=0)              # weak Python floats stay float16
    check(lambda a, s: a * s, x, F16(0.3), rtol=0, atol=0)       # a float16 scalar argument
    check(lambda a, s: a * s, x, np.float32(0.3))                # float32 scalar: float32 result
    check(lambda a: a * np.float16(70000.0), x, rtol=0, atol=0)  # inf


def test_conversions_exact(rng):
    # float64 values just beside float16's halfway points: rounded once, as NumPy rounds them.
    base = make(rng, (4000,), F16, "normal").astype(np.float64)
    half_ulp = np.spacing(base.astype(F16)).astype(np.float64) / 2
    near = np.concatenate([base + half_ulp, base + half_ulp * (1 + 1e-9), base + half_ulp * (1 - 1e-9),
                           [65504.0, 65519.99, 65520.0, 1e300, -1e300, np.inf, -np.inf, np.nan, 0.0, -0.0,
                            2.0**-25, 2.0**-25 * (1 + 1e-9), 1e-40]])
    for dtype in ["float64", "float32", "int64", "int32", "uint64", "uint16", "int8", "bool"]:
        with np.errstate(all="ignore"):
            src = near.astype(dtype)
        check(lambda a: a.astype(np.float16), src, rtol=0, atol=0)
    x = np.concatenate([make(rng, (500,), F16, "normal") * 100, np.array([np.inf, -np.inf, np.nan, 65504, -0.0], F16)])
    for dtype in ["float64", "float32", "int64", "int32", "uint8", "int16", "bool"]:
        check(lambda a, d=dtype: a.astype(d), x, rtol=0, atol=0)


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "var", "std"])
@pytest.mark.parametrize("axis", [None, -1, 0, (0, 1)])
def test_reductions(rng, op, axis):
    # Sums accumulate in float32 (NumPy: along the contiguous axis; along others it rounds to
    # float16 every step, so the tolerance there grows with the reduced length).
    kind = "pos" if op == "prod" else "normal"
    x = make(rng, (24, 40), F16, kind)
    if op == "prod":
        x = (x / 4 + 0.8).astype(F16)
    n = x.size if axis in (None, (0, 1)) else x.shape[axis]
    fn = (lambda a: getattr(np, op)(a, axis=axis)) if op not in ("argmax", "argmin") or axis != (0, 1) else None
    if fn is None:
        pytest.skip("argmax over a tuple of axes is not NumPy")
    check(fn, x, reduce=n, ops=3)


def test_mean_accumulates_in_float32(rng):
    # 4096 values near 1000: a float16 running sum would stop growing at 2048 * 1000 > 65504.
    x = (1000 + make(rng, (4096,), F16, "unit")).astype(F16)
    check(lambda a: a.mean(), x, reduce=x.size)
    check(lambda a: np.mean(a.reshape(64, 64), axis=1, keepdims=True), x)


@pytest.mark.parametrize("m, k, n", [(1, 8, 1), (16, 64, 8), (65, 33, 17), (128, 256, 64)])
def test_matrix_products(rng, m, k, n):
    a = make(rng, (m, k), F16, "unit")
    b = make(rng, (k, n), F16, "unit")
    check(lambda x, y: x @ y, a, b, reduce=k)
    check(lambda x, y: np.maximum(x @ y, 0) * 2, a, b, reduce=k, ops=2)
    check(lambda x, y: x.T @ x, a, b, reduce=m)


def test_softmax_and_layernorm(rng):
    x = make(rng, (33, 128), F16, "normal")
    w = make(rng, (128,), F16, "normal")

    def softmax(v):
        e = np.exp(v - v.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def layernorm(v, g):
        mu = v.mean(axis=-1, keepdims=True)
        var = ((v - mu) ** 2).mean(axis=-1, keepdims=True)
        return (v - mu) / np.sqrt(var + 1e-5) * g

    check(softmax, x, ops=4, reduce=128)
    check(layernorm, x, w, ops=6, reduce=128)


def test_slices_broadcasts_and_writes(rng):
    x = make(rng, (12, 10), F16, "normal")
    v = make(rng, (10,), F16, "normal")

    def stencil(a):
        return (a[:-2, 1:-1] + a[1:-1, 1:-1] + a[2:, 1:-1]) / 3

    def write(a, row):
        a[2:5] = a[2:5] * 2 + row
        return a.sum()

    check(stencil, x, rtol=0, atol=0)
    check(lambda a, r: a + r[None, :] * a[:, :1], x, v, rtol=0, atol=0)
    check(write, x, v, reduce=x.size, ops=2)
