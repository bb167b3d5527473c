"""Reductions, compiled vs NumPy: sum mean max min prod argmax argmin var std any all.

Axis None / int / negative / tuple, keepdims, function and method forms, accumulator dtypes
(int32 sum -> int64, int mean -> float64, bool sum -> int64), NaN propagation, ties (first
occurrence wins for argmax/argmin), empty inputs (sum -> 0, mean -> nan, max -> ValueError).
"""

import math

import numpy as np
import pytest

from numpy_oracle import DTYPES, check, fn_from_src, make

REDUCTIONS = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "var", "std", "any",
              "all"]
_ARG = ("argmax", "argmin")


def _expr(op, axis, keepdims, form):
    kw = []
    if axis != "default":
        kw.append(f"axis={axis!r}")
    if keepdims:
        kw.append("keepdims=True")
    kws = ", ".join(kw)
    if form == "method":
        return f"x.{op}({kws})"
    return f"np.{op}(x{', ' + kws if kws else ''})"


def _n_reduced(shape, axis):
    if axis in ("default", None):
        return max(1, math.prod(shape))
    axes = axis if isinstance(axis, tuple) else (axis,)
    return max(1, math.prod(shape[a] for a in axes))


def _tol_args(op, x, n):
    """reduce/scale for tolerance(): typical magnitude of what is accumulated (numpy_oracle)."""
    if x.dtype.kind != "f":
        return dict(reduce=n, scale=float(np.max(np.abs(x.astype(np.float64)), initial=1.0)))
    m = float(np.max(np.abs(np.where(np.isfinite(x), x, 0)), initial=0.0))
    if op == "sum":
        return dict(reduce=n, scale=m)
    if op == "mean":
        return dict(reduce=n, scale=m / n)
    if op in ("var", "std"):
        # var = mean(|x - mean|^2); std's error is var's error / (2 std)
        s = 4 * m * m / n
        if op == "std":
            sd = np.std(x.astype(np.float64))
            s = s / max(2 * sd, 1e-3)
        return dict(reduce=n, scale=s)
    if op == "prod":
        return dict(rtol=None if n < 2 else None, reduce=n, ops=2)
    return {}


# Axis/keepdims/form variants on a 3-D float32 array (one compiled function per variant).
AXES = [("default", False, "func"), (None, True, "method"), (0, False, "method"),
        (-1, True, "func"), ((0, 2), False, "func"), ((-1, 0), True, "method"),
        ((0, 1, 2), False, "method")]


@pytest.mark.parametrize("axis,keepdims,form", AXES, ids=[f"{a}-{k}-{f}" for a, k, f in AXES])
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_axes(op, axis, keepdims, form, rng):
    if op in _ARG and isinstance(axis, tuple):
        # NumPy raises TypeError ('tuple' object cannot be interpreted as an integer)
        axis = (0, 2)
        keepdims = False
    shape = (4, 5, 6)
    dtype = "bool" if op in ("any", "all") else "float32"
    x = make(rng, shape, dtype, "normal")
    if op in ("any", "all"):
        x = x | (rng.random(shape) < (0.6 if op == "all" else 0.0))
        x[0, 0, :] = op == "any"  # a reduced line where every element agrees
    f = fn_from_src(f"def f(x):\n    return {_expr(op, axis, keepdims, form)}\n")
    check(f, x, **_tol_args(op, x, _n_reduced(shape, axis)))


# Dtype sweep: whole-array and last-axis reductions of every dtype (accumulator dtypes).
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reduction_dtypes(op, dtype, rng):
    shape = (7, 33)
    kind = "small" if op == "prod" else "normal"
    x = make(rng, shape, dtype, kind)
    if op == "prod" and dtype.startswith("float"):
        x = (1.0 + x / 8).astype(dtype)  # keep the product in range
    if op in ("argmax", "argmin") and dtype.startswith("int"):
        x = make(rng, shape, dtype, "small")  # many ties: first occurrence must win
    f = fn_from_src(f"def f(x):\n    return np.{op}(x), x.{op}(axis=-1)\n")
    t = _tol_args(op, x, shape[1] * shape[0])
    check(f, x, **t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reduction_nan_inf(dtype, rng):
    """max/min/argmax/argmin propagate NaN (first NaN wins); sum/mean become nan/inf."""
    x = make(rng, (6, 10), dtype, "normal")
    x[1, 3] = np.nan
    x[2, [2, 7]] = np.nan
    x[3, 4] = np.inf
    x[4, [1, 8]] = -np.inf
    x[5, :] = np.inf
    f = fn_from_src(
        "def f(x):\n"
        "    return (np.max(x, axis=1), np.min(x, axis=1), np.argmax(x, axis=1),\n"
        "            np.argmin(x, axis=1), np.sum(x, axis=1), x.mean(axis=1), np.max(x),\n"
        "            np.argmin(x), np.any(x, axis=1), np.all(x, axis=0), np.prod(x, axis=1))\n")
    check(f, x, reduce=10, scale=8.0)


@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_reduction_ties(dtype, rng):
    x = make(rng, (5, 12), dtype, "halves" if dtype == "float32" else "small")
    x[0, :] = x[0, 0]  # all equal: index 0
    f = fn_from_src("def f(x):\n    return np.argmax(x, axis=1), np.argmin(x, axis=-1), "
                    "x.argmax(axis=0), np.argmax(x), np.argmin(x, axis=0, keepdims=True)\n")
    check(f, x)


EMPTY = {
    "sum0": ("np.sum(x, axis=0)", (0, 3)),
    "sum_all": ("np.sum(x)", (0, 3)),
    "prod": ("np.prod(x, axis=1)", (2, 0)),
    "any_all": ("(np.any(x > 0, axis=1), np.all(x > 0, axis=1))", (2, 0)),
    "max_empty_axis": ("np.max(x, axis=1)", (2, 0)),  # ValueError (no identity)
    "max_nonempty_axis": ("np.max(x, axis=0)", (2, 0)),  # fine: result shape (0,)
    "argmax_empty": ("np.argmax(x)", (0, 3)),  # ValueError
    "mean_empty": ("np.mean(x, axis=0)", (0, 3)),  # nan (RuntimeWarning)
    "min_all": ("x.min()", (3, 0)),  # ValueError
}


@pytest.mark.parametrize("case", list(EMPTY))
def test_reduction_empty(case, rng):
    expr, shape = EMPTY[case]
    f = fn_from_src(f"def f(x):\n    return {expr}\n")
    check(f, make(rng, shape, "float32", "normal"))


def test_reduction_ddof_and_dtype_arg(rng):
    x = make(rng, (6, 9), "float64", "normal")
    xi = make(rng, (6, 9), "int32", "normal")
    f = fn_from_src(
        "def f(x, xi):\n"
        "    return (np.var(x, axis=0, ddof=1), x.std(ddof=1), np.sum(xi, dtype=np.int32),\n"
        "            np.mean(xi, axis=1, dtype=np.float32), xi.sum(axis=0, keepdims=True))\n")
    check(f, x, xi, reduce=9, scale=16.0)


def test_reduction_large_float32(rng):
    """257x129 float32: accumulation order differs between NumPy (pairwise) and Halide."""
    x = make(rng, (257, 129), "float32", "normal")
    f = fn_from_src("def f(x):\n    return np.sum(x, axis=0), x.sum(axis=1), np.max(x, axis=0), "
                    "np.argmin(x, axis=1)\n")
    check(f, x, reduce=257, scale=float(np.abs(x).max()))
    g = fn_from_src("def f(x):\n    return np.sum(x)\n")
    check(g, x, reduce=x.size, scale=float(np.abs(x).max()))
    h = fn_from_src("def f(x):\n    return x.mean(), x.var(axis=0)\n")
    check(h, x, reduce=x.size, scale=float(4 * np.abs(x).max() ** 2 / 257))


def test_reduction_int_overflow_wraps(rng):
    """int64 sum/prod wrap; int32 sum accumulates in int64 (no wrap), int32 prod in int64."""
    x = make(rng, (4, 16), "int64", "wide")
    y = make(rng, (4, 16), "int32", "wide")
    f = fn_from_src("def f(x, y):\n    return np.sum(x, axis=1), np.prod(x, axis=1), "
                    "np.sum(y, axis=1), np.prod(y, axis=0), y.sum()\n")
    check(f, x, y)


# Values that do not vary along the reduced axis: constants, broadcasts, and size-1 axes read at
# index 0. Built in place, such a value mentions no reduction variable, and Halide then ran the
# update once instead of once per element (np.full((2, 16), -2).var(axis=0, ddof=1) gave 1 per
# column; v @ v on a size-1 v failed to schedule). Every reduction kind, over several extents.
INVARIANT = {
    "full_sum": "np.full((n, 5), 3.0).sum(axis=0) + x.sum()",
    "full_var_ddof": "np.negative(np.full((n, 16), 2)).var(axis=-2, ddof=1).sum()",
    "broadcast_mean": "(x[:1] * np.ones((n, 4))).mean(axis=0)",
    "const_prod": "(np.ones((n, 3)) * 2.0).prod(axis=0)",
    "const_argmax": "np.argmax(np.zeros((n, 3)) + x[:1, None], axis=0)",
    "const_max_int": "np.full((n, 3), 7).max(axis=0) + np.full((n,), 2).sum()",
    "dot_self": "x @ x",
    "outer_k1": "np.expand_dims(x, -1).T @ np.expand_dims(x, -1)",
    "matmul_const": "np.ones((2, n)) @ np.full((n, 3), 0.5)",
    "size1_axis": "x.reshape(1, -1).sum(axis=0) + x.reshape(-1, 1).sum(axis=1)",
}


@pytest.mark.parametrize("n", [1, 2, 7])
@pytest.mark.parametrize("case", list(INVARIANT))
def test_reduction_of_values_invariant_along_the_axis(case, n, rng):
    f = fn_from_src(f"def f(x):\n    n = {n}\n    return {INVARIANT[case]}\n")
    check(f, make(rng, (n,), "float32", "normal"), reduce=16, scale=16.0)


@pytest.mark.parametrize("dtype", ["bool", "int32", "float32"])
@pytest.mark.parametrize("call", ["np.sum(a, dtype=bool)", "a.sum(axis=0, dtype=np.bool_)", "np.prod(a, 1, dtype=bool)",
                                  "np.sum(a, axis=1, dtype=bool, keepdims=True)"])
def test_sums_accumulated_as_booleans_are_logical(call, dtype, rng):
    """NumPy's add over booleans is a logical or, its multiply a logical and (12 Trues summed as
    bool are True; the IR's sum counted them in one bit)."""
    f = fn_from_src(f"def f(a):\n    return {call}\n")
    for shape in [(4, 3), (1, 1), (0, 2)]:
        check(f, make(rng, shape, dtype, kind="small"))
        check(f, np.ones(shape, dtype))
