"""NaN and inf tests on reduction and matmul results.

The bug class: Halide's default float mode gave the reduction updates LLVM's "no NaN, no inf"
flags, so isnan(x.sum()) folded to False (LLVM even deleted the loop), isfinite(inf sum) to
True, s != s to False. Pipelines now compile with IEEE semantics throughout (ieee_target in
core/include/hcompile/lowering.h); matmul keeps FMA contraction through explicit FMAs.

NaN/inf are placed first, in the middle and last (the last elements go through the tail of
the vectorised loop), in every float width, for full and axis reductions.
"""
import numpy as np
import pytest

import numpy_oracle as O
from ieee_oracle import check_ieee

FLOATS = ["float32", "float64"]
SIZES = [1, 5, 16, 17, 100, 600]
PLACES = ["first", "middle", "last"]
SPECIALS = ["nan", "inf", "-inf", "inf,-inf", "none"]

REDUCTIONS = ["x.sum()", "x.sum(axis=-1)", "x.sum(axis=0)", "x.prod(axis=-1)", "x.mean(axis=-1)",
              "x.max()", "x.min(axis=-1)", "x.max(axis=0)", "x.std(axis=-1)", "x.var()"]


def _input(rng, n, dtype, special, place):
    # Values near 1, so that products neither overflow nor underflow on their own.
    x = rng.uniform(0.5, 1.5, (3, n)).astype(dtype)
    pos = {"first": 0, "middle": n // 2, "last": n - 1}[place]
    for s in (special.split(",") if special != "none" else []):
        x[1, pos] = float(s)
        pos = (pos + 1) % n
    return x


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nan_inf_tests_of_reductions(reduction, dtype, rng):
    # Only boolean outputs: NaN/inf tests must be exact whatever the summation order.
    f = O.fn_from_src(f"def f(x):\n    s = {reduction}\n"
                      f"    return np.isnan(s), np.isinf(s), np.isfinite(s), s != s, s == s, s > 0\n")
    cf = O.compiled(f)
    for n in SIZES:
        for special in SPECIALS:
            for place in PLACES:
                check_ieee(f, _input(rng, n, dtype, special, place), cfn=cf)


@pytest.mark.parametrize("dtype", FLOATS)
def test_reduction_values_with_nan_and_inf(dtype, rng):
    # The values themselves: NaN/inf exact, finite ones within the reduction tolerance.
    for reduction in ["x.sum(axis=-1)", "x.prod(axis=-1)", "x.max(axis=-1)", "x.min(axis=0)",
                      "x.mean(axis=-1)"]:
        f = O.fn_from_src(f"def f(x):\n    return {reduction}\n")
        for special in SPECIALS:
            x = _input(rng, 100, dtype, special, "middle")
            expected = f(x)
            got = O.compiled(f)(x)
            assert np.array_equal(np.isnan(got), np.isnan(expected)), (reduction, special, got, expected)
            assert np.array_equal(got[np.isinf(got)], expected[np.isinf(expected)]), (reduction, special)
            assert np.array_equal(np.isinf(got), np.isinf(expected)), (reduction, special, got, expected)
            fin = np.isfinite(expected)
            np.testing.assert_allclose(got[fin], expected[fin], rtol=O.tolerance(dtype, reduce=100)[0])


@pytest.mark.parametrize("dtype", FLOATS)
def test_argmax_argmin_with_nan_and_inf(dtype, rng):
    for body in ["x.argmax(axis=-1)", "x.argmin(axis=-1)", "x.argmax()", "x.argmin(axis=0)"]:
        f = O.fn_from_src(f"def f(x):\n    return {body}\n")
        cf = O.compiled(f)
        for special in SPECIALS:
            for place in PLACES:
                check_ieee(f, _input(rng, 17, dtype, special, place), cfn=cf)


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_nan_and_inf(dtype, rng):
    def vv(v):
        s = v @ v
        return np.isnan(s), np.isinf(s), s != s

    def mm(a, b):
        c = a @ b
        return np.isnan(c), np.isinf(c), np.isfinite(c)

    for n in [1, 7, 64]:
        for special in ["nan", "inf", "-inf", "none"]:
            v = _input(rng, n, dtype, special, "middle")[1]
            check_ieee(vv, v)
            a = _input(rng, n, dtype, special, "last")
            b = rng.uniform(0.5, 1.5, (n, 5)).astype(dtype)
            check_ieee(mm, a, b)
    # inf * 0 is NaN inside a dot product; inf - inf too.
    a = np.array([[np.inf, 1.0], [1.0, np.inf], [np.inf, -np.inf]], dtype)
    b = np.array([[0.0, 1.0], [1.0, 1.0]], dtype)
    check_ieee(mm, a, b)


def test_scalar_comparisons_of_reduction_results():
    def f(x):
        s = x.sum()
        m = x.max()
        return s != s, m != m, s == np.inf, np.isinf(m)

    for dtype in FLOATS:
        for special in ["nan", "inf", "none"]:
            check_ieee(f, _input(np.random.default_rng(0), 40, dtype, special, "last"))


# A float compared with itself, reduced: Halide's simplifier folded x == x to true inside the
# update ((x == x).prod() was 1 with a NaN in x). Every comparison, directly and through a shared
# computed operand, under every reduction kind that reads booleans or their integer casts.
SELF_COMPARISONS = ["(x == x).prod()", "(x == x).astype(np.int64).prod(axis=-1)",
                    "(x != x).sum(axis=0)", "(x <= x).all(axis=-1)", "(x >= x).prod(axis=0)",
                    "(x < x).any()", "(x > x).sum()", "(np.exp(x) == np.exp(x)).prod(axis=-1)",
                    "(x * 2 != x * 2).astype(np.int32).max()", "np.minimum(x == x, x <= x).prod()",
                    "(x == x, x != x, x < x, x <= x, x > x, x >= x)"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("expr", SELF_COMPARISONS)
def test_self_comparisons_keep_nan(expr, dtype, rng):
    f = O.fn_from_src(f"def f(x):\n    return {expr}\n")
    cf = O.compiled(f)
    for n in [1, 16, 17]:
        for special in SPECIALS:
            check_ieee(f, _input(rng, n, dtype, special, "middle"), cfn=cf)
