"""Reductions with NumPy's dtype and shape conventions made explicit.

The IR's reductions keep their input's dtype, so the accumulator dtype NumPy would use (int64
for ``sum`` of int32, float64 for ``mean`` of ints, ...) is a ``cast`` in front, found by asking
NumPy. ``mean``/``var``/``std`` are decomposed the way NumPy's own ``_methods.py`` computes them
(sum, then divide by the count), so float32 stays float32 exactly where NumPy's does.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from .errors import numpy_raises
from . import numpy_rules as rules
from .elementwise import run_concrete
from .values import ArrayValue, contains_abstract

_NO_VALUE = np._NoValue


def _check_common(name, a, out=None, initial=_NO_VALUE, where=_NO_VALUE):
    if out is not None:
        raise Unsupported(f"np.{name}(..., out=...) is not supported")
    if initial is not _NO_VALUE:
        raise Unsupported(f"np.{name}(..., initial=...) is not supported")
    if where is not _NO_VALUE and where is not True:
        raise Unsupported(f"np.{name}(..., where=...) is not supported")


def _concrete(name, a, **kwargs):
    # Scalars and tuples of numbers (``np.prod(x.shape)``) are constants: ask NumPy directly.
    if isinstance(a, (np.generic, bool, int, float, tuple, list)) and not contains_abstract(a):
        return run_concrete(getattr(np, name), a, **kwargs)
    if isinstance(a, np.ndarray):
        raise Unsupported(f"np.{name} of a constant NumPy array")
    raise Unsupported(f"np.{name} of a {type(a).__name__}")


def _dtype_key(dtype):
    return None if dtype is None else rules.as_dtype(dtype).name


def _reduce(b, kind, x: ArrayValue, axes, keepdims) -> ArrayValue:
    r = b.op(kind, [x], {"axes": list(axes), "keepdims": int(bool(keepdims))})
    r.is_scalar = r.ndim == 0      # NumPy reductions hand back scalars, not 0-d arrays
    return r


def _count(shape, axes):
    return int(np.prod([shape[ax] for ax in axes], dtype=np.int64))


def sum_or_prod(kind):
    def reduction(b, a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
                  where=_NO_VALUE):
        _check_common(kind, a, out, initial, where)
        if not isinstance(a, ArrayValue):
            return _concrete(kind, a, axis=axis, dtype=dtype, keepdims=keepdims)
        acc = rules.result_dtype_of(kind, [a.dtype], dtype=_dtype_key(dtype))
        axes = rules.normalize_axes(axis, a.ndim)
        # Accumulated as booleans (dtype=bool), NumPy's add is a logical or and its multiply a
        # logical and: the IR's any and all. (Its sum of booleans counted in one bit: 12 Trues
        # summed to False.)
        reduced = kind if acc != np.bool_ else {"sum": "any", "prod": "all"}[kind]
        return _reduce(b, reduced, b.cast(a, acc), axes, keepdims)
    reduction.__name__ = kind
    return reduction


def max_or_min(kind):
    def reduction(b, a, axis=None, out=None, keepdims=False, initial=_NO_VALUE,
                  where=_NO_VALUE):
        _check_common(kind, a, out, initial, where)
        if not isinstance(a, ArrayValue):
            return _concrete(kind, a, axis=axis, keepdims=keepdims)
        axes = rules.normalize_axes(axis, a.ndim)
        if any(a.shape[ax] == 0 for ax in axes):
            raise numpy_raises(ValueError, f"np.{kind} over an empty axis (NumPy raises)")
        return _reduce(b, kind, a, axes, keepdims)
    reduction.__name__ = kind
    return reduction


def any_or_all(kind):
    def reduction(b, a, axis=None, out=None, keepdims=False, *, where=_NO_VALUE):
        _check_common(kind, a, out, where=where)
        if not isinstance(a, ArrayValue):
            return _concrete(kind, a, axis=axis, keepdims=keepdims)
        axes = rules.normalize_axes(axis, a.ndim)
        return _reduce(b, kind, b.cast(a, np.bool_), axes, keepdims)
    reduction.__name__ = kind
    return reduction


def arg_extreme(kind):
    def reduction(b, a, axis=None, out=None, *, keepdims=False):
        _check_common(kind, a, out)
        if not isinstance(a, ArrayValue):
            return _concrete(kind, a, axis=axis, keepdims=keepdims)
        if axis is None:
            # NumPy flattens; keepdims then restores a shape of all ones.
            if a.size == 0:
                raise numpy_raises(ValueError, f"np.{kind} of an empty array (NumPy raises)")
            flat = b.reshape(a, (a.size,))
            r = b.op(kind, [flat], {"axis": 0, "keepdims": 0})
            if keepdims:
                r = b.reshape(r, (1,) * a.ndim)
        else:
            ax = rules.normalize_axis(axis, a.ndim)
            if a.shape[ax] == 0:
                raise numpy_raises(ValueError, f"np.{kind} over an empty axis (NumPy raises)")
            r = b.op(kind, [a], {"axis": ax, "keepdims": int(bool(keepdims))})
        r.is_scalar = r.ndim == 0
        return r
    reduction.__name__ = kind
    return reduction


def _mean_parts(b, a, axis, dtype):
    """(axes, count, dtype NumPy accumulates in) shared by mean/var/std."""
    axes = rules.normalize_axes(axis, a.ndim)
    n = _count(a.shape, axes)      # 0 for an empty axis: NumPy warns and divides by 0 (nan)
    if dtype is not None:
        acc = rules.as_dtype(dtype)
    elif a.dtype.kind in "biu":
        acc = np.dtype(np.float64)
    else:
        acc = a.dtype
    if acc.kind != "f" and not rules.is_bfloat16(acc):
        raise Unsupported(f"mean/var/std accumulating in {acc}")
    return axes, n, acc


def _divide(b, v: ArrayValue, count) -> ArrayValue:
    return b.op("div", [v, b.broadcast(b.constant(count, v.dtype), v.shape)])


def mean(b, a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO_VALUE):
    _check_common("mean", a, out, where=where)
    if not isinstance(a, ArrayValue):
        return _concrete("mean", a, axis=axis, dtype=dtype, keepdims=keepdims)
    expected = rules.result_dtype_of("mean", [a.dtype], dtype=_dtype_key(dtype))
    axes, n, acc = _mean_parts(b, a, axis, dtype)
    if (acc == np.float16 or rules.is_bfloat16(acc)) and dtype is None:
        acc = np.dtype(np.float32)      # NumPy's _mean sums and divides float16 in float32
    total = b.op("sum", [b.cast(a, acc)], {"axes": list(axes), "keepdims": int(bool(keepdims))})
    r = b.cast(_divide(b, total, n), expected)
    if r.dtype != expected:
        raise Unsupported(f"internal: mean of {a.dtype} gave {r.dtype}, NumPy gives {expected}")
    r.is_scalar = r.ndim == 0
    return r


def var(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO_VALUE,
        mean=_NO_VALUE, correction=_NO_VALUE, _name="var"):
    _check_common(_name, a, out, where=where)
    if mean is not _NO_VALUE:
        raise Unsupported(f"np.{_name}(..., mean=...) is not supported")
    if correction is not _NO_VALUE:
        if ddof != 0:
            raise Unsupported(f"np.{_name}: ddof and correction both given")
        ddof = correction
    if not isinstance(ddof, (int, float, np.integer, np.floating)) or isinstance(ddof, bool):
        raise Unsupported(f"np.{_name}(ddof=...) must be a constant number")
    if not isinstance(a, ArrayValue):
        return _concrete(_name, a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    expected = rules.result_dtype_of(_name, [a.dtype], dtype=_dtype_key(dtype))
    axes, n, acc = _mean_parts(b, a, axis, dtype)
    # Same steps as NumPy's _var: mean with keepdims, deviation in the promoted dtype, square,
    # sum, divide by n - ddof.
    total = b.op("sum", [b.cast(a, acc)], {"axes": list(axes), "keepdims": 1})
    mu = _divide(b, total, n)
    dev_dtype = rules.result_type(a, mu)
    dev = b.op("sub", [b.cast(a, dev_dtype), b.broadcast(b.cast(mu, dev_dtype), a.shape)])
    sq = b.op("mul", [dev, dev])
    sq = b.cast(sq, acc) if dtype is not None else sq
    ssum = b.op("sum", [sq], {"axes": list(axes), "keepdims": int(bool(keepdims))})
    r = _divide(b, ssum, max(n - ddof, 0))    # NumPy: warns, then divides by max(n - ddof, 0)
    if _name == "std":
        r = b.op("sqrt", [r])
    if r.dtype != expected:
        raise Unsupported(f"internal: {_name} of {a.dtype} gave {r.dtype}, NumPy gives {expected}")
    r.is_scalar = r.ndim == 0
    return r


def std(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO_VALUE,
        mean=_NO_VALUE, correction=_NO_VALUE):
    return var(b, a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
               correction=correction, _name="std")


REDUCTIONS = {
    "sum": sum_or_prod("sum"), "prod": sum_or_prod("prod"),
    "max": max_or_min("max"), "min": max_or_min("min"),
    "any": any_or_all("any"), "all": any_or_all("all"),
    "argmax": arg_extreme("argmax"), "argmin": arg_extreme("argmin"),
    "mean": mean, "var": var, "std": std,
}
