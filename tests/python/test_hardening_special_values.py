"""Signs and special values of elementwise ops, powers and casts, compared bit for bit with NumPy.

The bug class: lowering rules that compute the right number but the wrong special value:
negation as 0 - x (-(+0) gave +0), odd powers and reciprocals losing -0.0, (-inf)**0.5 taken
from C pow where NumPy takes sqrt, out-of-range float -> int casts, integer reciprocal(0).
Every op runs on every special value (NaN, +-inf, +-0, subnormals, extremes), and every binary
op on every pair of them, in both float widths. Exact ops must match bit for bit (NaN
positions, signed zeros); transcendentals within a few ulp with the same special values.
"""
import numpy as np
import pytest

import numpy_oracle as O
from ieee_oracle import check_ieee, special_values

FLOATS = ["float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]

EXACT_UNARY = ["np.negative", "np.absolute", "np.square", "np.sign", "np.reciprocal", "np.sqrt",
               "np.floor", "np.ceil", "np.rint", "np.trunc", "np.isnan", "np.isinf", "np.isfinite",
               "np.positive"]
# NumPy's SIMD transcendentals and ours are each within ~2-3 ulp of the true value.
TRANSCENDENTAL_UNARY = ["np.exp", "np.log", "np.log1p", "np.expm1", "np.sin", "np.cos", "np.tan",
                        "np.tanh", "np.sinh", "np.cosh", "np.arcsin", "np.arccos", "np.arctan"]
EXACT_BINARY = ["np.add", "np.subtract", "np.multiply", "np.true_divide", "np.floor_divide",
                "np.remainder", "np.maximum", "np.minimum", "np.equal", "np.not_equal", "np.less",
                "np.less_equal", "np.greater", "np.greater_equal"]
TRANSCENDENTAL_BINARY = ["np.power", "np.arctan2"]
TRANSCENDENTAL_ULPS = 4


def _fn(body, args="x"):
    return O.fn_from_src(f"def f({args}):\n    return {body}\n")


def _pairs(dtype):
    """Every (a, b) pair of special values, as two flat arrays."""
    v = special_values(dtype)
    a, b = np.meshgrid(v, v, indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", EXACT_UNARY + TRANSCENDENTAL_UNARY)
def test_unary_special_values(op, dtype):
    ulps = TRANSCENDENTAL_ULPS if op in TRANSCENDENTAL_UNARY else 0
    x = special_values(dtype)
    check_ieee(_fn(f"{op}(x)"), x, ulps=ulps)
    check_ieee(_fn(f"{op}(x[::-1])"), x, ulps=ulps)     # other lanes of the vector loop


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", EXACT_BINARY + TRANSCENDENTAL_BINARY)
def test_binary_special_value_pairs(op, dtype):
    ulps = TRANSCENDENTAL_ULPS if op in TRANSCENDENTAL_BINARY else 0
    a, b = _pairs(dtype)
    check_ieee(_fn(f"{op}(a, b)", "a, b"), a, b, ulps=ulps)


@pytest.mark.parametrize("dtype", FLOATS)
def test_negation_flips_the_sign_bit(dtype):
    x = special_values(dtype)
    for body in ["-x", "1.0 / -x", "-(-x)", "1.0 / -(x * 0.0)", "-x * 1.0", "np.negative(x) + 0.0",
                 "(-x).sum() if False else -x"]:
        check_ieee(_fn(body), x)


# x ** e for a scalar e: NumPy's power loop takes a fast path for a stride-0 exponent of -1, 0,
# 0.5, 1, 2 (1/x, 1, sqrt, x, x*x); other exponents go through pow (C99 special values).
EXPONENTS = [-1, 0, 0.5, 1, 2, 3, -2, -3, 0.25, 1.5, -0.5, 4, 1e10, -np.inf, np.inf, np.nan, -0.0,
             0.5000000001]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("e", EXPONENTS)
def test_power_by_a_scalar_exponent(e, dtype):
    x = special_values(dtype)
    ulps = 0 if e in (-1, 0, 0.5, 1, 2, -0.0) else TRANSCENDENTAL_ULPS
    check_ieee(_fn(f"x ** {e!r}".replace("nan", "np.nan").replace("inf", "np.inf")), x, ulps=ulps)
    check_ieee(_fn(f"np.power(x, np.{dtype}({e!r}))".replace("(nan", "(np.nan").replace("(inf", "(np.inf")
                   .replace("(-inf", "(-np.inf")), x, ulps=ulps)


@pytest.mark.parametrize("dtype", FLOATS)
def test_power_by_a_0d_array_exponent_follows_the_fast_path(dtype):
    # The exponent is a 0-d array argument, known only at run time: each call must pick NumPy's
    # op for its value.
    def f(x, e):
        return x ** e

    cf = O.compiled(f)
    x = special_values(dtype)
    for e in [0.5, -1.0, 2.0, 1.0, 0.0, 3.0, 0.25, -0.0, np.nan]:
        exact = e in (0.5, -1.0, 2.0, 1.0, 0.0, -0.0)
        check_ieee(f, x, np.array(e, dtype), cfn=cf, ulps=0 if exact else TRANSCENDENTAL_ULPS)


@pytest.mark.parametrize("dtype", FLOATS)
def test_power_of_numpy_scalars_is_c_pow(dtype):
    # Two scalars skip the ufunc loop (NumPy's scalar math calls C pow): (-inf) ** 0.5 is inf.
    def f(x):
        s = x.sum()            # a NumPy scalar
        return s ** 0.5, s ** -1.0, s ** 2.0

    for v in [-np.inf, np.inf, -0.0, 0.0, np.nan, -4.0, 4.0]:
        check_ieee(f, np.array([v], dtype))


def test_power_with_array_exponents_is_c_pow():
    for dtype in FLOATS:
        a, b = _pairs(dtype)
        check_ieee(_fn("a ** b", "a, b"), a, b, ulps=TRANSCENDENTAL_ULPS)
        check_ieee(_fn("a ** (b * 0.0 + 0.5)", "a, b"), a, b, ulps=TRANSCENDENTAL_ULPS)


# Float -> integer casts: values inside and outside every integer range.
CAST_VALUES = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 0.99, -0.99, -1.0, -1.5,
               127.9, 128.0, 255.5, 256.0, 300.0, -129.0, -300.0, 32767.5, 32768.0, 65535.0,
               65536.0, 70000.5, 2.0**31 - 1, 2.0**31, -2.0**31, -2.0**31 - 1, 2.0**32 - 1, 2.0**32,
               5e9, -5e9, 2.0**63, -2.0**63, 2.0**63 + 4096, 2.0**64, -2.0**64, 1.8e19, 1e30, -1e30,
               1e300, 5e-324, -3e-310, 1e-40, 7.0, -7.0, 100.25, -100.75]


@pytest.mark.parametrize("to", INTS + ["bool"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_to_int_casts_match_numpy(dtype, to):
    with np.errstate(all="ignore"):
        x = np.array(CAST_VALUES + [0.0] * (-len(CAST_VALUES) % 4), dtype)
    # float -> uint32 out of range: NumPy's own answer depends on memory layout (core/OPS.md);
    # we match its vectorised loop, which runs for contiguous, aligned arrays in blocks of 4
    # elements: compare on such an array only.
    layouts = [x] if to == "uint32" else [x, x[::-1], x.reshape(4, -1).T, x[1:]]
    for a in layouts:
        check_ieee(_fn(f"x.astype(np.{to})"), a)
    check_ieee(_fn(f"(x * 255).astype(np.{to})"), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_float_to_float_and_int_to_float_casts(dtype):
    x = special_values("float64")
    check_ieee(_fn(f"x.astype(np.{dtype})"), x)
    for it in INTS:
        info = np.iinfo(it)
        v = np.array([0, 1, -1 if info.min else 2, info.min, info.max, info.max - 1, 12345 % (info.max + 1)],
                     dtype=it)
        check_ieee(_fn(f"x.astype(np.{dtype})  # from {it}"), v)


@pytest.mark.parametrize("dtype", INTS + ["bool"])
def test_integer_reciprocal(dtype):
    # NumPy computes 1.0 / x in double and casts back: 0 gives the cast of +inf.
    if dtype == "bool":
        x = np.array([True, False])
    else:
        info = np.iinfo(dtype)
        x = np.array([0, 1, 2, 3, info.max, info.min] + ([-1, -2, -3] if info.min else []), dtype)
    check_ieee(_fn("np.reciprocal(x)"), x)
    check_ieee(_fn("np.reciprocal(x[::-1])"), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_special_values_through_chains(dtype, rng):
    # A few fused chains mixing the ops above, on random data with specials sprinkled in.
    x = O.make(rng, (7, 9), dtype, kind="mixed", specials=0.3)
    y = O.make(rng, (7, 9), dtype, kind="mixed", specials=0.3)
    for body in ["np.maximum(x, y) * -1.0 + np.minimum(-x, y)", "np.where(x > y, -x, y ** 2) / (x - y)",
                 "np.abs(-x) - np.abs(x) + np.sign(-y)", "np.floor(-x) + np.ceil(-y) * 0.0",
                 "(x // y, x % y, -(x // y))"]:
        check_ieee(_fn(body, "x, y"), x, y)
