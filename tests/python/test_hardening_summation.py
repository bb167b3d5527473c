"""Accuracy of float sums (and mean/var/std built on them) for any number of terms.

The bug class: a sum reduced in vector lanes, each lane sequential over n/16 terms, has an
error growing with n (np.full(10**7, 0.1, np.float32).mean() was off by ~1%). Float sums are
now blocked and compensated (core/OPS.md, "Summation"): for any n,

    |computed - exact| <= SUM_BOUND_EPS * eps * sum(|x_i|)   (+ the final rounding, + O(n eps^2))

checked here against exact sums (math.fsum), for full, row, column and multi-axis reductions,
lengths around the lane (16) and block (16 * 32) sizes, both float widths.
"""
import math

import numpy as np
import pytest

import numpy_oracle as O

FLOATS = ["float32", "float64"]
SUM_BOUND_EPS = 19      # (K + 2 + log2 L) / 2 with K = 32 elements per block, L = 16 lanes


def _exact_sums(x, axis):
    """Exact sums (math.fsum) of x over `axis` (an int, or None for all) and sums of |x|."""
    x64 = np.asarray(x, np.float64)
    moved = x64.reshape(1, -1) if axis is None else np.moveaxis(x64, axis, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    exact = np.array([math.fsum(r) for r in rows]).reshape(moved.shape[:-1])
    absum = np.array([math.fsum(np.abs(r)) for r in rows]).reshape(moved.shape[:-1])
    return (exact[0], absum[0]) if axis is None else (exact, absum)


def _assert_within_bound(got, exact, absum, dtype):
    eps = float(np.finfo(dtype).eps)
    got = np.asarray(got, np.float64)
    bound = SUM_BOUND_EPS * eps * absum + eps * np.abs(exact) + float(np.finfo(dtype).tiny)
    err = np.abs(got - exact)
    assert (err <= bound).all(), (f"sum error {err.max():.3g} > bound {bound[np.argmax(err - bound)]:.3g} "
                                  f"{O.context()}")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 31, 511, 512, 513, 1000, 16 * 32 * 3 + 7, 100_003])
def test_full_and_row_sums_stay_within_the_bound(n, dtype, rng):
    f_full = O.compiled(O.fn_from_src("def f(x):\n    return x.sum()\n"))
    f_rows = O.compiled(O.fn_from_src("def f(x):\n    return x.sum(axis=1)\n"))
    f_cols = O.compiled(O.fn_from_src("def f(x):\n    return x.sum(axis=0)\n"))
    for kind in ["normal", "pos", "mixed"]:
        x = O.make(rng, (n,), dtype, kind=kind)
        x = np.where(np.isfinite(x), x, 1.0).astype(dtype)
        exact, absum = _exact_sums(x, None)
        _assert_within_bound(f_full(x), exact, absum, dtype)
        rows = np.stack([x, -x[::-1], x * 3])
        exact, absum = _exact_sums(rows, 1)
        _assert_within_bound(f_rows(rows), exact, absum, dtype)
        exact, absum = _exact_sums(rows.T.copy(), 0)
        _assert_within_bound(f_cols(rows.T.copy()), exact, absum, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_error_does_not_grow_with_n(dtype):
    # The same value n times: every block rounds the same way, the worst case for blocked sums
    # without compensation (10**7 * 0.1 in float32 was off by ~1%).
    f = O.compiled(O.fn_from_src("def f(x):\n    return x.mean(), x.sum()\n"))
    for n in [10**3, 10**5, 10**7]:
        x = np.full(n, 0.1, dtype)
        mean, total = f(x)
        exact = float(x[0]) * n
        _assert_within_bound(total, exact, exact, dtype)
        assert abs(float(mean) - float(x[0])) <= (SUM_BOUND_EPS + 2) * float(np.finfo(dtype).eps) * float(x[0])
        O.check(O.fn_from_src("def g(x):\n    return x.mean()\n", "g"), x, reduce=n, scale=0.1 / n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,axis", [((3, 4, 700), (0, 2)), ((5, 3, 40), (1, 2)), ((2, 3, 4, 37), (0, 1, 3)),
                                        ((600, 7), (0, 1)), ((1, 1), None), ((4, 1, 33), 1)])
def test_multi_axis_sums_and_moments(shape, axis, dtype, rng):
    x = O.make(rng, shape, dtype, kind="normal")
    n = int(np.prod([shape[a] for a in (axis if isinstance(axis, tuple) else ((axis,) if axis is not None else range(len(shape))))]))
    for body in [f"x.sum(axis={axis!r})", f"x.mean(axis={axis!r})", f"x.var(axis={axis!r})",
                 f"x.std(axis={axis!r}, keepdims=True)", f"np.sum(x * x, axis={axis!r})"]:
        O.check(O.fn_from_src(f"def f(x):\n    return {body}\n"), x, reduce=n,
                scale=O.finite_max_abs(x) ** (2 if "var" in body or "x * x" in body else 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_sums_of_empty_zero_and_signed_zero_inputs(dtype):
    for shape, body in [((0,), "x.sum()"), ((0, 5), "x.sum(axis=0)"), ((0, 5), "x.sum(axis=1)"),
                        ((5, 0), "x.sum(axis=1)"), ((3, 0, 2), "x.sum(axis=(0, 1))"), ((), "x.sum()"),
                        ((1,), "x.sum()"), ((40,), "x.sum()"), ((3, 40), "x.sum(axis=1)"), ((40, 3), "x.sum(axis=0)")]:
        f = O.fn_from_src(f"def f(x):\n    return {body}\n")
        for fill in [0.0, -0.0, np.nan, np.inf]:
            x = np.full(shape, fill, dtype)
            expected = f(x)
            got = O.compiled(f)(x)
            assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
            assert np.array_equal(got, expected, equal_nan=True), (shape, body, fill, got, expected)
            assert np.array_equal(np.signbit(got), np.signbit(expected)), (shape, body, fill, got, expected)
