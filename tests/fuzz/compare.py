"""Compare a compiled result with NumPy's under the error model (model.py).

Exact everywhere: the Python type (tuple, ndarray, NumPy scalar, Python scalar: a 0-d array is
not a scalar), dtype, shape and the writeable flag. Per element, where the model checks it: the
class (NaN, +inf, -inf, finite), then bit for bit (signed zeros included) where the bound is 0,
else |compiled - NumPy| <= bound.
"""

from __future__ import annotations

import builtins

import numpy as np

from .model import LD, M


def public_type(cls):
    """NumPy raises private subclasses (numpy._core._exceptions._UFuncNoLoopError); the contract
    is the nearest public class in the MRO: a builtin or one of numpy.exceptions."""
    public = {c for c in vars(np.exceptions).values() if isinstance(c, type)}
    public |= {c for c in vars(builtins).values() if isinstance(c, type)}
    for c in cls.__mro__:
        if c in public:
            return c
    return cls


def same_exception(np_exc: BaseException, hc_exc: BaseException) -> bool:
    return isinstance(hc_exc, public_type(type(np_exc)))


def _kind(x) -> str:
    return "ndarray" if isinstance(x, np.ndarray) else type(x).__name__


def _show(x) -> str:
    if isinstance(x, np.ndarray) and x.size > 24:
        return f"array(shape={x.shape}, dtype={x.dtype})"
    return repr(x)


def _twin_scalar_types(got, ref) -> bool:
    """np.uint64 and np.ulonglong (np.int64 and np.longlong) are two scalar types of one dtype
    on Linux; NumPy hands back the second for an array it made from a Python int past int64
    (np.full((), 2**64 - 1)). The graph knows dtypes, not which of the twins NumPy picked."""
    return isinstance(got, np.generic) and isinstance(ref, np.generic) and got.dtype == ref.dtype


def compare(got, ref, models, path="result"):
    """None if `got` matches NumPy's `ref`, else (kind, description); kind is one of type,
    dtype, shape, readonly, value."""
    if type(got) is not type(ref) and not _twin_scalar_types(got, ref):
        return "type", (f"{path}: type {_kind(got)} != NumPy's {_kind(ref)} "
                         f"({_show(got)} vs {_show(ref)})")
    if isinstance(ref, tuple):
        if len(got) != len(ref):
            return "type", f"{path}: tuple of {len(got)} != NumPy's {len(ref)}"
        for i, (g, r, m) in enumerate(zip(got, ref, models)):
            bad = compare(g, r, m, f"{path}[{i}]")
            if bad:
                return bad
        return None
    m: M = models
    if isinstance(ref, (np.ndarray, np.generic)):
        if got.dtype != ref.dtype:
            return "dtype", f"{path}: dtype {got.dtype} != NumPy's {ref.dtype}"
        if got.shape != ref.shape:
            return "shape", f"{path}: shape {got.shape} != NumPy's {ref.shape}"
        if isinstance(ref, np.ndarray) and ref.flags.writeable and not got.flags.writeable:
            return "readonly", f"{path}: read-only, NumPy's result is writeable"
    return _values(np.asarray(got), np.asarray(ref), m, path)


def _values(g, r, m: M, path):
    s = np.broadcast_to(m.s, r.shape)
    if r.dtype.kind != "f":
        bad = s & (g != r)
        detail = ""
    else:
        e = np.broadcast_to(m.e, r.shape)
        gl, rl = g.astype(LD), r.astype(LD)
        gn, rn = np.isnan(g), np.isnan(r)
        same_class = (gn == rn) & (np.isinf(g) == np.isinf(r)) & (~np.isinf(r) | (g == r))
        with np.errstate(all="ignore"):
            bits = ((g == r) & (np.signbit(g) == np.signbit(r))) | (gn & rn)
            close = np.abs(gl - rl) <= e
        fin = np.isfinite(r)
        ok = same_class & np.where(fin, np.where(e == 0, bits, close), True)
        bad = s & ~ok
        detail = "bound {}"
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0]) if r.ndim else ()
    msg = (f"{path}: {int(bad.sum())} of {int(s.sum())} checked elements differ "
           f"(of {r.size}, dtype {r.dtype}); first at {idx}: compiled {g[idx]!r}, "
           f"NumPy {r[idx]!r}")
    if detail:
        msg += ", " + detail.format(repr(float(np.broadcast_to(m.e, r.shape)[idx])))
    return "value", msg
