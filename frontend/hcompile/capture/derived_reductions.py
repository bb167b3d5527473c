"""Reductions NumPy writes in Python on top of others, captured step by step as NumPy's own code
takes them, so dtypes and rounding are NumPy's: the NaN-ignoring ``np.nansum``, ``nanprod``,
``nanmean``, ``nanvar``, ``nanstd``, ``nanmax`` and ``nanmin`` (numpy/lib/_nanfunctions_impl.py),
``np.count_nonzero``, ``np.ptp`` and the unweighted ``np.average``.

What depends on the data NumPy only warns about (an all-NaN slice, a mean of nothing), so none of
these raise where NumPy would not. ``nanargmax`` / ``nanargmin`` raise for an all-NaN slice, and
``average`` with weights for weights summing to zero: those run as Python."""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import elementwise as ew
from .errors import numpy_raises
from . import numpy_rules as rules
from .reductions import REDUCTIONS, mean
from .values import ArrayValue

_NO_VALUE = np._NoValue


def _array(name, a) -> ArrayValue:
    if not isinstance(a, ArrayValue):
        raise Unsupported(f"np.{name} of a {type(a).__name__} (a constant array)")
    return a


def _plain_call(name, out=None, where=_NO_VALUE, **more):
    if out is not None:
        raise Unsupported(f"np.{name}(..., out=...) is not supported")
    if where is not _NO_VALUE and where is not True:
        raise Unsupported(f"np.{name}(..., where=...) is not supported")
    for key, value in more.items():
        if value is not _NO_VALUE:
            raise Unsupported(f"np.{name}(..., {key}=...) is not supported")


def _u(b, ufunc, *operands):
    return ew.apply_ufunc(b, ufunc, list(operands))


def _nan_mask(b, a):
    """NumPy's _replace_nan: where ``a``'s NaNs are (None for dtypes that hold none)."""
    return _u(b, np.isnan, a) if a.dtype.kind == "f" or a.dtype.name == "bfloat16" else None


def _replaced(b, a, mask, value):
    return a if mask is None else ew.where(b, mask, value, a)


def _divide_by_count(b, total, count):
    """NumPy's _divide_by_count: the true division (through float64 where the count is an intp),
    put back in the total's dtype (``out=total, casting='unsafe'``, or the scalar's own type)."""
    quotient = _u(b, np.true_divide, total, count)
    return ew.astype(b, quotient, total.dtype) if quotient.dtype != total.dtype else quotient


def nan_sum_or_prod(kind):
    identity = 0 if kind == "sum" else 1

    def reduction(b, a, axis=None, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
                  where=_NO_VALUE):
        a = _array(f"nan{kind}", a)
        _plain_call(f"nan{kind}", out, where, initial=initial)
        return REDUCTIONS[kind](b, _replaced(b, a, _nan_mask(b, a), identity), axis=axis, dtype=dtype,
                                keepdims=keepdims)
    reduction.__name__ = f"nan{kind}"
    return reduction


def _nan_count(b, mask, axis, keepdims):
    return REDUCTIONS["sum"](b, _u(b, np.logical_not, mask), axis=axis, dtype=np.intp, keepdims=keepdims)


def nanmean(b, a, axis=None, dtype=None, out=None, keepdims=False, *, where=_NO_VALUE):
    a = _array("nanmean", a)
    _plain_call("nanmean", out, where)
    mask = _nan_mask(b, a)
    if mask is None:
        return mean(b, a, axis=axis, dtype=dtype, keepdims=keepdims)
    if dtype is not None and np.dtype(dtype).kind != "f":   # (NumPy raises for other dtypes)
        raise Unsupported(f"np.nanmean(..., dtype={dtype!r})")
    total = REDUCTIONS["sum"](b, _replaced(b, a, mask, 0), axis=axis, dtype=dtype, keepdims=keepdims)
    return _divide_by_count(b, total, _nan_count(b, mask, axis, keepdims))


def nanvar(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO_VALUE,
           mean=_NO_VALUE, correction=_NO_VALUE, _name="nanvar"):
    a = _array(_name, a)
    _plain_call(_name, out, where, mean=mean)
    if correction is not _NO_VALUE:
        if ddof != 0:
            raise Unsupported(f"np.{_name}: ddof and correction both given")
        ddof = correction
    if not isinstance(ddof, (int, float, np.integer, np.floating)) or isinstance(ddof, bool):
        raise Unsupported(f"np.{_name}(ddof=...) must be a constant number")
    mask = _nan_mask(b, a)
    if mask is None:
        return REDUCTIONS[_name[3:]](b, a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    if dtype is not None:
        raise Unsupported(f"np.{_name}(..., dtype=...) is not supported")
    # NumPy's steps: the mean with kept dimensions, the deviations (NaNs then 0), their squares
    # summed, divided by the count less ddof; NaN where that is not positive.
    values = _replaced(b, a, mask, 0)
    count = _nan_count(b, mask, axis, True)
    average = _divide_by_count(b, REDUCTIONS["sum"](b, values, axis=axis, keepdims=True), count)
    deviations = _replaced(b, ew.astype(b, _u(b, np.subtract, values, average), a.dtype), mask, 0)
    squares = _u(b, np.multiply, deviations, deviations)
    total = REDUCTIONS["sum"](b, squares, axis=axis, keepdims=keepdims)
    if not keepdims:
        count = REDUCTIONS["sum"](b, _u(b, np.logical_not, mask), axis=axis, dtype=np.intp)
    freedom = _u(b, np.subtract, count, ddof)
    result = _divide_by_count(b, total, freedom)
    result = ew.where(b, _u(b, np.less_equal, freedom, 0), np.nan, result)
    result = ew.astype(b, result, total.dtype) if result.dtype != total.dtype else result
    if _name == "nanstd":
        result = _u(b, np.sqrt, result)
    result.is_scalar = result.ndim == 0
    return result


def nanstd(b, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=_NO_VALUE,
           mean=_NO_VALUE, correction=_NO_VALUE):
    return nanvar(b, a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction,
                  _name="nanstd")


def nan_extreme(kind):
    """``np.fmax.reduce`` / ``np.fmin.reduce`` for floats: the extreme of the numbers, NaN where a
    slice has none; ``np.max`` / ``np.min`` for other dtypes."""
    def reduction(b, a, axis=None, out=None, keepdims=False, initial=_NO_VALUE, where=_NO_VALUE):
        a = _array(f"nan{kind}", a)
        _plain_call(f"nan{kind}", out, where, initial=initial)
        mask = _nan_mask(b, a)
        if mask is None:
            return REDUCTIONS[kind](b, a, axis=axis, keepdims=keepdims)
        extreme = REDUCTIONS[kind](b, _replaced(b, a, mask, -np.inf if kind == "max" else np.inf), axis=axis,
                                   keepdims=keepdims)
        all_nan = REDUCTIONS["all"](b, mask, axis=axis, keepdims=keepdims)
        result = ew.where(b, all_nan, np.nan, extreme)
        result.is_scalar = result.ndim == 0
        return result
    reduction.__name__ = f"nan{kind}"
    return reduction


def count_nonzero(b, a, axis=None, *, keepdims=False):
    """``a.astype(bool).sum(axis, dtype=np.intp)`` (NumPy's count for any axis)."""
    a = _array("count_nonzero", a)
    return REDUCTIONS["sum"](b, ew.astype(b, a, np.bool_), axis=axis, dtype=np.intp, keepdims=keepdims)


def ptp(b, a, axis=None, out=None, keepdims=False):
    a = _array("ptp", a)
    _plain_call("ptp", out)
    return _u(b, np.subtract, REDUCTIONS["max"](b, a, axis=axis, keepdims=keepdims),
              REDUCTIONS["min"](b, a, axis=axis, keepdims=keepdims))


def average(b, a, axis=None, weights=None, returned=False, *, keepdims=_NO_VALUE):
    a = _array("average", a)
    if weights is not None or returned:
        raise Unsupported("np.average with weights= or returned=")
    result = mean(b, a, axis=axis, keepdims=False if keepdims is _NO_VALUE else keepdims)
    if result.size == 0:      # NumPy's a.size / avg.size, a Python division, before it returns
        raise numpy_raises(ZeroDivisionError, "np.average of no elements per result (NumPy raises)")
    return result




# ufunc.reduce for the ufuncs NumPy's own reductions are: np.sum is add.reduce, np.max
# maximum.reduce (the same dtypes: add and multiply accumulate small integers in the platform's),
# np.any logical_or.reduce; fmax and fmin skip NaNs as nanmax and nanmin do.
_REDUCED_BY = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
               np.logical_or: "any", np.logical_and: "all"}


def ufunc_reduce(b, ufunc, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE,
                 where=True):
    """``ufunc.reduce(array, axis=0)``: the reduction NumPy's function of that ufunc is."""
    _plain_call(f"{ufunc.__name__}.reduce", out, where, initial=initial)
    a = _array(f"{ufunc.__name__}.reduce", array)
    if ufunc in (np.fmax, np.fmin):
        if dtype is not None:
            raise Unsupported(f"np.{ufunc.__name__}.reduce(..., dtype=...) is not supported")
        return nan_extreme("max" if ufunc is np.fmax else "min")(b, a, axis=axis, keepdims=keepdims)
    if ufunc not in _REDUCED_BY:
        raise Unsupported(f"np.{ufunc.__name__}.reduce is not supported")
    kind = _REDUCED_BY[ufunc]
    if kind in ("sum", "prod"):
        return REDUCTIONS[kind](b, a, axis=axis, dtype=dtype, keepdims=keepdims)
    if dtype is not None:
        raise Unsupported(f"np.{ufunc.__name__}.reduce(..., dtype=...) is not supported")
    return REDUCTIONS[kind](b, a, axis=axis, keepdims=keepdims)


def _at_least_2d(b, a):
    return b.reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a


def cov(b, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """NumPy's cov without weights: the variables as rows (in float64, or the inputs' wider
    float), each less its mean, their products summed by a matrix product and scaled by
    1 / (samples - ddof); size-1 axes squeezed (one variable: a 0-d array)."""
    if fweights is not None or aweights is not None:
        raise Unsupported("np.cov with fweights= or aweights=")
    m = _array("cov", m)
    arrays = [m] + ([_array("cov", y)] if y is not None else [])
    for name, a in zip(("m", "y"), arrays):
        if a.ndim > 2:
            raise numpy_raises(ValueError, f"{name} has more than 2 dimensions")
    dtype = np.dtype(np.result_type(*(a.dtype for a in arrays), np.float64) if dtype is None else dtype)
    if dtype.kind != "f":
        raise Unsupported(f"np.cov in {dtype}")
    X = _at_least_2d(b, ew.astype(b, m, dtype))
    if not rowvar and m.ndim != 1:
        X = _transposed(b, X)
    if X.shape[0] == 0:
        return b.full(0, np.float64, (0, 0))
    if y is not None:
        Y = _at_least_2d(b, ew.astype(b, arrays[1], dtype))
        if not rowvar and Y.shape[0] != 1:
            Y = _transposed(b, Y)
        from .joins import concatenate
        X = concatenate(b, [X, Y], 0)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = X.shape[1] - ddof
    if fact <= 0:
        fact = 0.0
    average = mean(b, X, axis=1)
    centred = _u(b, np.subtract, X, b.reshape(average, average.shape + (1,)))
    from .matmul import dot
    products = dot(b, centred, _transposed(b, centred))
    with np.errstate(divide="ignore"):
        scale = np.true_divide(1, fact)
    c = _u(b, np.multiply, products, scale)
    c = ew.astype(b, c, products.dtype) if c.dtype != products.dtype else c
    squeezed = tuple(s for s in c.shape if s != 1)
    return ArrayValue(b.reshape(c, squeezed).node, c.dtype, squeezed)


def _transposed(b, a):
    return ArrayValue(b.op("transpose", [a], {"perm": [1, 0]}).node, a.dtype, a.shape[::-1])


def corrcoef(b, x, y=None, rowvar=True, bias=_NO_VALUE, ddof=_NO_VALUE, *, dtype=None):
    """cov, divided by the outer product of its diagonal's square roots, clipped to [-1, 1];
    one variable: c / c."""
    if bias is not _NO_VALUE or ddof is not _NO_VALUE:
        raise Unsupported("np.corrcoef with the deprecated bias= or ddof=")
    c = cov(b, x, y, rowvar, dtype=dtype)
    if c.ndim != 2:
        return _u(b, np.true_divide, c, c)
    from .array_functions import diagonal
    stddev = _u(b, np.sqrt, diagonal(b, c))
    c = _u(b, np.true_divide, c, b.reshape(stddev, stddev.shape + (1,)))
    c = _u(b, np.true_divide, c, b.reshape(stddev, (1,) + stddev.shape))
    return ArrayValue(ew.clip(b, c, -1, 1).node, c.dtype, c.shape)


def trapezoid(b, y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule as NumPy writes it: (d * (y[1:] + y[:-1]) / 2.0).sum(axis), d the
    sample spacing dx or x's differences."""
    y = _array("trapezoid", y)
    axis = rules.normalize_axis(axis, y.ndim)
    if x is None:
        if not isinstance(dx, (int, float, np.integer, np.floating)) or isinstance(dx, bool):
            raise Unsupported(f"np.trapezoid with dx of type {type(dx).__name__}")
        d = dx
    else:
        from .array_functions import diff
        x = _array("trapezoid", x)
        if x.ndim == 1:
            d = diff(b, x)
            d = b.reshape(d, tuple(d.shape[0] if i == axis else 1 for i in range(y.ndim)))
        else:
            d = diff(b, x, axis=axis)
    from .joins import take_along
    n = y.shape[axis]
    pairs = _u(b, np.add, take_along(b, y, axis, min(1, n), n), take_along(b, y, axis, 0, max(n - 1, 0)))
    return REDUCTIONS["sum"](b, _u(b, np.true_divide, _u(b, np.multiply, d, pairs), 2.0), axis=axis)


DERIVED_FUNCTIONS = {
    np.nansum: nan_sum_or_prod("sum"), np.nanprod: nan_sum_or_prod("prod"), np.nanmean: nanmean,
    np.nanvar: nanvar, np.nanstd: nanstd, np.nanmax: nan_extreme("max"), np.nanmin: nan_extreme("min"),
    np.count_nonzero: count_nonzero, np.ptp: ptp, np.average: average, np.cov: cov, np.corrcoef: corrcoef,
    **({np.trapezoid: trapezoid} if hasattr(np, "trapezoid") else {}),
}
