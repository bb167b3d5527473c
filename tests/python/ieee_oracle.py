"""Bit-level comparison of compiled results against NumPy for IEEE special values.

numpy_oracle.check compares floats with allclose(equal_nan=True), which cannot see the sign of
a zero and accepts any float within tolerance. The hardening tests of NaN, inf and signed
zeros need more: `assert_ieee_same` requires, element for element, the same dtype and shape,
NaN exactly where NumPy has NaN, the same infinities, zeros of the same sign, and finite values
equal (exact ops) or within `ulps` units in the last place (everything else). Integer and bool
results must be equal.
"""
from __future__ import annotations

import warnings

import numpy as np

import numpy_oracle as O

# Odd values placed into float inputs: NaN, both infinities, both zeros, subnormals (smallest
# and largest), the largest finite value, and ordinary numbers of both signs.
def special_values(dtype):
    f = np.finfo(dtype)
    return np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, f.smallest_subnormal, -f.smallest_subnormal,
                     f.smallest_normal * 0.5, -f.smallest_normal * 0.5, f.max, -f.max, 1.0, -1.0, 0.5,
                     -0.5, 2.0, -3.0, 1.5, 1e-3, -7.25], dtype=dtype)


def _ulp_distance(a, b):
    """|a - b| in units in the last place (finite, same-dtype float arrays)."""
    a = np.asarray(a)
    b = np.asarray(b)
    ints = {4: np.int32, 8: np.int64}[a.dtype.itemsize]
    def ordered(x):
        i = x.view(ints).astype(np.int64)
        return np.where(i < 0, np.iinfo(ints).min - i, i)   # monotone in the float value
    return np.abs(ordered(a) - ordered(b))


def assert_ieee_same(got, expected, ulps=0, what="result"):
    where = f"{what} {O.context()}"
    if isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected), where
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_ieee_same(g, e, ulps, f"{what}[{i}]")
        return
    assert type(got) is type(expected), f"{where}: type {type(got).__name__} != {type(expected).__name__}"
    g, e = np.asarray(got), np.asarray(expected)
    assert g.dtype == e.dtype, f"{where}: dtype {g.dtype} != NumPy's {e.dtype}"
    assert g.shape == e.shape, f"{where}: shape {g.shape} != NumPy's {e.shape}"
    if e.dtype.kind != "f":
        bad = g != e
        assert not bad.any(), (f"{where}: {int(bad.sum())} of {e.size} differ; first at "
                               f"{tuple(np.argwhere(bad)[0])}: got {g[bad][0]!r}, NumPy {e[bad][0]!r}")
        return
    nan_g, nan_e = np.isnan(g), np.isnan(e)
    problems = []
    if (nan_g != nan_e).any():
        problems.append(("NaN positions", nan_g != nan_e))
    both = ~nan_g & ~nan_e
    inf_e = np.isinf(e) & both
    if (inf_e & (g != e)).any():
        problems.append(("infinities", inf_e & (g != e)))
    zero_e = (e == 0) & both
    sign_bad = zero_e & ((g != 0) | (np.signbit(g) != np.signbit(e)))
    if sign_bad.any():
        problems.append(("zeros (value or sign)", sign_bad))
    finite = both & np.isfinite(e) & (e != 0)
    if finite.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            far = np.zeros(e.shape, bool)
            far[finite] = ~np.isfinite(g[finite]) | (_ulp_distance(g[finite], e[finite]) > ulps)
        if far.any():
            problems.append((f"finite values (> {ulps} ulp)", far))
    if problems:
        lines = []
        for name, mask in problems:
            idx = tuple(np.argwhere(mask)[0])
            lines.append(f"{name}: {int(mask.sum())} of {e.size}; first at {idx}: got {g[idx]!r}, "
                         f"NumPy {e[idx]!r}")
        raise AssertionError(f"{where}:\n  " + "\n  ".join(lines) + f"\ngot:\n{g!r}\nNumPy:\n{e!r}")


def check_ieee(fn, *args, ulps=0, cfn=None):
    """Run `fn` with NumPy and compiled (fullgraph=True) on copies of `args`; same exception type
    if NumPy raises, else `assert_ieee_same`. Returns NumPy's result."""
    cfn = cfn if cfn is not None else O.compiled(fn)
    expected, np_exc = O.run_numpy(fn, O.clone(args))
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            got, hc_exc = cfn(*O.clone(args)), None
        except Exception as e:  # noqa: BLE001
            got, hc_exc = None, e
    if np_exc is not None:
        assert hc_exc is not None, f"NumPy raised {np_exc!r}; compiled returned {got!r} {O.context()}"
        assert isinstance(hc_exc, O._public_type(type(np_exc))), (
            f"NumPy raised {type(np_exc).__name__}, compiled {type(hc_exc).__name__}: {hc_exc} {O.context()}")
        return None
    if hc_exc is not None:
        raise hc_exc
    assert_ieee_same(got, expected, ulps)
    return expected
