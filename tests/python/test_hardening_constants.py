"""NaN, infinities and signed zeros introduced through constants: Python scalars, NumPy scalars,
np.where, np.full/zeros/ones, divisions by zero, and specialised float arguments.

The bug class: constants were keyed by their float value, under which NaN equals every constant
and -0.0 equals 0.0, so CSE merged them (x * 2.0 + nan gave numbers). Every case compares bit
for bit with NumPy where NumPy's result is exact (NaN positions, infinities, signed zeros) and
within a few ulp otherwise (core/src/passes.cpp, core/src/graph.cpp).
"""
import numpy as np
import pytest

import numpy_oracle as O
from ieee_oracle import check_ieee, special_values

FLOATS = ["float32", "float64"]

# Each body uses `x` (a float array holding the special values) and literal constants.
CASES = [
    "x * 2.0 + np.nan",
    "np.nan + x * 2.0",
    "(x * 0.0, x * -0.0, x * np.nan)",
    "np.where(x > 0, x, np.nan)",
    "np.where(x > 0, np.nan, 0.0)",
    "np.where(x > 0, -0.0, 0.0)",
    "np.where(x != x, 1.0, np.nan) + np.where(x > 1, 0.0, -0.0)",
    "1.0 / (x + 0.0)",
    "1.0 / (x + -0.0)",
    "1.0 / (x - 0.0)",
    "(x + 0.0, x + -0.0, x - 0.0, x - -0.0)",
    "x * np.inf + x * -np.inf",
    "(x / 0.0, x / -0.0, 0.0 / x, -0.0 / x)",
    "(x // 0.0, x % 0.0, x // -0.0, x % -0.0)",
    "np.full(x.shape, np.nan) + x",
    "np.full(x.shape, -0.0) + np.full(x.shape, -0.0) * x",
    "1.0 / np.full(x.shape, -0.0) + 1.0 / np.zeros_like(x)",
    "np.ones_like(x) * np.nan - np.zeros(x.shape)",
    "np.maximum(x, np.nan) + np.minimum(x, -0.0)",
    "np.abs(np.clip(x, -0.0, 0.0))",   # NumPy's clip gives either zero at a zero bound
    "x * np.float32(np.nan) + np.float64(-0.0)",
    "(x == np.nan, x != np.nan, x < np.inf, x >= -np.inf)",
    "1.0 / (0.0 * x + -0.0)",
    "(-x, 1.0 / -x, 0.0 - x, -(x * 0.0))",
    "np.where(x > 0, 2.0, np.nan) * np.where(x < 0, np.nan, 2.0)",
]


def _fn(body):
    return O.fn_from_src(f"def f(x):\n    return {body}\n")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("body", CASES)
def test_constants_keep_their_bits(body, dtype, rng):
    x = special_values(dtype)
    check_ieee(_fn(body), x)
    check_ieee(_fn(body), rng.permutation(x).reshape(4, 5))


@pytest.mark.parametrize("dtype", FLOATS)
def test_float32_constants_are_numpys_float32_values(dtype):
    # Python floats become float32 by NumPy's rounding (NEP 50 weak scalars): 0.1 rounds, 1e40
    # overflows to inf, 1e-50 underflows to a signed zero, and the boundary of float32's range.
    x = special_values(dtype)
    for body in ["x + 0.1", "x * 1e40", "x * -1e-50", "x + 3.4028235677973366e38",
                 "x - 3.4028235677973366e38", "1.0 / (x * 0.0 + -1e-50)", "x * 0.1 + 0.2"]:
        check_ieee(_fn(body), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_specialised_float_arguments_are_told_apart_by_bits(dtype):
    # One compiled function called with Python floats that compare equal (-0.0 == 0.0) or never
    # equal (NaN): each call must answer for its own argument.
    def f(x, c):
        return 1.0 / (x * 0.0 + c) + c * 2.0

    cf = O.compiled(f)
    x = special_values(dtype)
    for c in [0.0, -0.0, np.nan, 0.0, 2.0, -np.nan, np.inf, -0.0, -np.inf, np.nan]:
        check_ieee(f, x, c, cfn=cf)


def test_many_nan_and_zero_constants_in_one_graph():
    # Folding and CSE over a graph full of constants that compare equal as floats.
    def f(x):
        a = x * 0.0 + -0.0
        b = x * -0.0 + 0.0
        c = (x + np.nan) * 0.0
        d = np.where(x > 0, np.nan, -0.0) + np.where(x > 0, -0.0, np.nan)
        return a, b, c, d, 1.0 / a, 1.0 / b

    for dtype in FLOATS:
        check_ieee(f, special_values(dtype))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32", "int64",
                                   "uint64", "bool"])
def test_creation_with_out_of_range_python_ints_raises_like_numpy(dtype):
    # NumPy 2 (NEP 50) raises OverflowError for a Python int out of the dtype's range; a NumPy
    # scalar of another dtype is cast unsafely. The capture must do what NumPy does.
    x = np.zeros(3, dtype)
    for body in ["np.full(x.shape, 300, dtype=x.dtype)", "np.full(x.shape, -1, dtype=x.dtype)",
                 "np.full_like(x, 70000)", "np.full(x.shape, 2**64, dtype=x.dtype)",
                 "np.full(x.shape, np.int64(300), dtype=x.dtype)", "np.full(x.shape, 2.5, dtype=x.dtype)",
                 "np.full(x.shape, np.nan, dtype=x.dtype)", "np.full_like(x, -np.inf)",
                 "np.zeros(x.shape, x.dtype) + np.ones(x.shape, x.dtype)", "x + 300", "x - 129",
                 "x * 2**40", "np.where(x > 0, x, 300)", "np.maximum(x, -1)",
                 "x + x.dtype.type(300)", "x + x.dtype.type(-1)", "(x + 1).astype(x.dtype.type)"]:
        check_ieee(_fn(body), x)


# Constants the lowering makes: a predicate that is constant for an integer array (np.isnan of
# ints is all False), cast to float, is a float constant Halide would fold into a division by a
# constant zero, which its code generator refuses (a compile error where NumPy gives inf/nan).
CONSTANT_DIVISORS = [
    "x / np.isnan(i)",
    "x / np.isnan(i * 2 + 1) + x / np.isinf(i // 3).astype(x.dtype)",
    "x / np.isinf(i).astype(x.dtype)",
    "x / (1.0 - np.isfinite(i))",
    "(x // np.isnan(i), x % np.isnan(i))",
    "np.reciprocal(np.isnan(i).astype(x.dtype)) * x",
    "np.arctan2(x, np.isnan(i)) + np.arctan2(np.isinf(i), x)",
    "x / np.maximum(np.isnan(i), np.isinf(i))",
    "x / np.where(np.isnan(i), 1.0, 0.0)",
    "np.tan(np.isnan(i) * x) + np.log(np.isinf(i) + x * 0.0)",
    "(i / np.isnan(i), i // np.isnan(i), i % np.isnan(i))",
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("body", CONSTANT_DIVISORS)
def test_divisions_by_constants_the_lowering_folds(body, dtype):
    x = special_values(dtype)
    i = np.arange(x.size, dtype=np.uint16)
    check_ieee(O.fn_from_src(f"def f(x, i):\n    return {body}\n"), x, i)


# Divisors that become a constant zero only in Halide's own simplification, after the lowering
# has run (a select on a 0-d bool, an integer product with 0, a math function's inner division
# of constants): Halide's code generator refused them. Found by the fuzzer (seed 2).
LATE_ZERO_DIVISORS = [
    "np.where(s, False, s) ** np.where(s, np.inf, s)",
    "x / (0 * i).astype(x.dtype)",
    "x / (i - i)",
    "np.float64(1.0) / np.where(s, 0.0, -0.0) + x",
    "x // ((i * 0) + s * 0) + x % (i * 0 - 0.0)",
    "np.arctan2(x, np.where(s, 0.0, x)) * np.tan(np.where(s, 0.0, x) * np.inf)",
    "np.reciprocal(np.where(s, -0.0, 0.0)) * x",
]


@pytest.mark.parametrize("s", [np.bool_(True), np.bool_(False)])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("body", LATE_ZERO_DIVISORS)
def test_divisions_by_zeros_halide_folds_late(body, dtype, s):
    x = special_values(dtype)
    i = np.arange(x.size, dtype=np.int16)
    check_ieee(O.fn_from_src(f"def f(x, i, s):\n    return {body}\n"), x, i, s)
