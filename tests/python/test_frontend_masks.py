"""Boolean masks: ``x[mask] = scalar``, ``x[m] = y[m]``, ``x[m] op= v``, ``x[m] = f(x[m])``
compiled as ``where``, and ``x[m].sum()``/``any()``/``all()`` as reductions with the identity
where the mask is False; other uses of ``x[mask]`` (returning it, other reductions, reductions
with arguments) break and get the compacted array. Checked against NumPy (results and the
arguments after the call)."""
import numpy as np
import pytest

import hcompile as hc
import numpy_oracle as O

COMPILED = [
    "x[x > 0.5] = 0\n    return x",
    "x[x < y] = y[x < y]\n    return x",
    "m = x > 0.3\n    x[m] *= 2\n    x[m] += y[m]\n    return x",
    "x[x > 0] = 1.0 / x[x > 0]\n    return x",
    "m = ~(x > y)\n    x[m] = -x[m] + np.sqrt(np.abs(y[m]))\n    return x, y",
    "z = x * 2\n    z[z > 1] = np.nan\n    return z",
    "x[x > 0.5] = y[0, 0]\n    return x",
    "x[y > 0.5] = True\n    return x",
    "x[:, ::2][y[:, ::2] > 0.5] = 7\n    return x",
    "m = x > 0.5\n    s = x[m]\n    t = s\n    t *= 3\n    x[m] = s\n    return x",
    "x[x > 0.5] = np.maximum(x[x > 0.5], 0.75) - 0.25\n    return x",
]
REDUCED = [
    "s = x[x > 0.5]\n    return s.sum() + y.mean()",
    "return x[x < y].sum(), np.sum(x[x > 0.5] * 2), (x > 0.5)[y > 0.5].sum()",
    "return x[x != x].sum(), x[x == 0].sum(), np.sum(-x[x > 1e9])",   # NaNs; -0.0s; none selected
    "return x[x > 0.5].any(), np.any(x[y > 0.5] > 0.75), x[x > 0.5].all(), np.all(x[y < 0.5] < 0.75)",
    "m = x > 0.5\n    return x[m].sum(), m.sum(), x[m].sum() + x[~m].sum()",
    "return x[x > 0.5].mean(), np.mean(x[x < y] * 2), x[x != x].mean(), x[x > 1e9].mean()",  # none: nan
    "m = y > 0.25\n    return x[m].mean() - x.mean(), (x > 0.5)[m].mean()",
]
BREAKING = [
    "return x[x > 0.5]",
    "return x[x > 0.5].sum(axis=0), x[x > 0.5].mean(dtype=np.float32)",   # reductions with arguments
    "return x[x > 0.5].max()",                        # a reduction without an identity
    "x[x > 0.5] = y[y > 0.5]\n    return x",         # another mask: sizes may differ
    "x[x > 0.5] = x[x > 0.5] + y[0]\n    return x",   # a row broadcast against a selection
    "x[x > 2] = y\n    return x",                      # an array through a mask
    "x[x > 0.5] = np.nan\n    return x",               # NaN into an int array raises
]


def fn(body):
    return O.fn_from_src(f"def f(x, y):\n    {body}\n")


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("body", COMPILED)
def test_masked_updates_compile(body, dtype, rng):
    for shape in [(4, 6), (1, 1), (0, 4), (3, 1)]:
        x, y = O.make(rng, shape, dtype), O.make(rng, shape, dtype, layout="F")
        O.check(fn(body), x, y)
    x = O.make(rng, (4, 6), dtype)
    O.check(fn(body), x, np.ones_like(x))       # every element selected, or none


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("body", REDUCED)
def test_reductions_of_selections_compile(body, dtype, rng):
    # Float sums in another order than NumPy's: within a sum's error bound, scaled by the
    # magnitudes summed (a sum of mixed signs may cancel).
    for shape in [(4, 6), (1, 1), (0, 4), (3, 1)]:
        x, y = O.make(rng, shape, dtype), O.make(rng, shape, dtype, layout="F")
        magnitude = float(np.abs(x.astype(np.float64)).sum() + np.abs(y.astype(np.float64)).sum())
        O.check(fn(body), x, y, reduce=max(x.size, 2), scale=magnitude)
    x = O.make(rng, (4, 6), dtype)
    O.check(fn(body), x, np.ones_like(x), reduce=x.size, scale=float(np.abs(x.astype(np.float64)).sum()) + x.size)


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
@pytest.mark.parametrize("body", BREAKING)
def test_other_uses_of_a_selection_give_numpys_answer(body, dtype, rng):
    f = fn(body)
    cf = hc.hcompile(f)
    for shape in [(4, 6), (0, 6)]:
        x, y = O.make(rng, shape, dtype), O.make(rng, shape, dtype)
        O.check(f, x, y, cfn=cf)


def test_the_masked_updates_are_one_graph(rng):
    for body in COMPILED + REDUCED:
        cf = hc.hcompile(fn(body), fullgraph=True)       # raises if anything breaks
        cf(O.make(rng, (4, 6), "float64"), O.make(rng, (4, 6), "float64"))


def test_a_mask_of_another_shape_raises_as_numpy(rng):
    O.check_raises_same(fn("x[y[:2] > 0] = 1\n    return x"), O.make(rng, (4, 6), "float64"),
                        O.make(rng, (4, 6), "float64"))
