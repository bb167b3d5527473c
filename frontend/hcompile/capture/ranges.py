"""Index-valued arrays: ``np.arange`` (integers), ``np.linspace``, ``np.tri``, ``np.tril`` and
``np.triu``.

The IR has no index op; a ramp 0, 1, ..., n-1 is built from digits (``ramp``), a few ops that
fuse into one loop. Everything else is computed from the ramp with
the operations NumPy itself uses, in the same order, so the values are NumPy's to the bit:
``linspace`` is ``ramp * step + start`` (or ``ramp / div * delta`` for a zero step) with the last
element set to ``stop``; ``tri`` compares two ramps; ``tril``/``triu`` select with it.
"""
from __future__ import annotations

import operator

import numpy as np

from ..errors import Unsupported
from . import elementwise as ew
from . import numpy_rules as rules
from .errors import numpy_raises
from .joins import take_along
from .shape_ops import copy_of
from .values import ArrayValue

_EXACT = 2 ** 53        # integers a float64 holds exactly


_DIGITS = 16


def ramp(b, n: int) -> ArrayValue:
    """int64 ``[0, 1, ..., n - 1]``: up to 16 elements, one constant written per element; past
    that, ``high * 16 + low`` over a (ceil(n / 16), 16) grid of two smaller ramps, flattened.
    Each ramp is read once, so the fused expression grows with log(n), not n."""
    if n <= _DIGITS:
        r = b.full(0, np.int64, (n,))
        for i in range(1, n):
            r = b.op("slice_update", [r, b.full(i, np.int64, (1,))], {"starts": [i], "stops": [i + 1], "steps": [1]})
        return r
    rows = -(-n // _DIGITS)
    high = b.op("mul", [b.reshape(ramp(b, rows), (rows, 1)), b.full(_DIGITS, np.int64, (rows, 1))])
    low = b.reshape(ramp(b, _DIGITS), (1, _DIGITS))
    grid = b.op("add", [b.broadcast(high, (rows, _DIGITS)), b.broadcast(low, (rows, _DIGITS))])
    return take_along(b, b.reshape(grid, (rows * _DIGITS,)), 0, 0, n)


def _python_int(v, what):
    if isinstance(v, ArrayValue):
        raise Unsupported(f"{what} from an array value (data-dependent size)")
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise Unsupported(f"{what} with a {type(v).__name__} (only integers are supported)")
    return operator.index(v)


def arange(b, start, stop=None, step=None, dtype=None, *, like=None, device=None):
    if stop is None:
        start, stop = 0, start
    start, stop = _python_int(start, "np.arange"), _python_int(stop, "np.arange")
    step = 1 if step is None else _python_int(step, "np.arange")
    if step == 0:
        ew.run_concrete(np.arange, 0, 1, 0)                 # NumPy's own error
    n = max(0, -((start - stop) // step))
    last = start + (n - 1) * step
    if max(abs(start), abs(last)) >= _EXACT:
        raise Unsupported("np.arange with values past 2**53")
    out_dtype = np.dtype(np.int64) if dtype is None else rules.as_dtype(dtype)
    # Values the dtype holds exactly (NumPy fills narrower types in their own arithmetic).
    # float32 holds every integer up to 2**24, so NumPy's float32 fill (start + i * step in
    # float32) is exact there and equals the cast of the integer ramp.
    fits = out_dtype == np.float64 or (out_dtype == np.float32 and max(abs(start), abs(last)) <= 2**24) or (
        out_dtype.kind in "iu" and n and np.iinfo(out_dtype).min <= min(start, last) and
        max(start, last) <= np.iinfo(out_dtype).max)
    if not fits and not (n == 0 and out_dtype.kind in "iuf"):
        raise Unsupported(f"np.arange(dtype={out_dtype}) over [{start}, {last}] is not supported")
    r = ramp(b, n)
    if step != 1:
        r = b.op("mul", [r, b.full(step, np.int64, r.shape)])
    if start:
        r = b.op("add", [r, b.full(start, np.int64, r.shape)])
    return copy_of(b.cast(r, out_dtype))


def linspace(b, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    for v in (start, stop):
        number = type(v) in (int, float, np.float64) or (isinstance(v, np.integer) and abs(int(v)) < _EXACT)
        if not number or (type(v) is int and abs(v) >= _EXACT):
            # NumPy computes in a float32 start's own dtype; arrays give arrays of samples.
            raise Unsupported(f"np.linspace from a {type(v).__name__} (only Python numbers are supported)")
    if retstep or axis != 0:
        raise Unsupported("np.linspace(retstep=/axis=) is not supported")
    out_dtype = np.dtype(np.float64) if dtype is None else rules.as_dtype(dtype)
    if out_dtype.kind not in "iuf":
        raise Unsupported(f"np.linspace(dtype={out_dtype}) is not supported")
    num = _python_int(num, "np.linspace")
    if num < 0:
        raise numpy_raises(ValueError, f"Number of samples, {num}, must be non-negative.")
    div = (num - 1) if endpoint else num
    first, last = np.float64(start), np.float64(stop)
    delta = last - first
    y = b.cast(ramp(b, num), np.float64)
    if div > 0:
        step = delta / div
        if step == 0:       # NumPy's path for denormal steps (gh-5437)
            y = b.op("mul", [b.op("div", [y, b.full(float(div), np.float64, y.shape)]),
                             b.full(float(delta), np.float64, y.shape)])
        else:
            y = b.op("mul", [y, b.full(float(step), np.float64, y.shape)])
    else:
        y = b.op("mul", [y, b.full(float(delta), np.float64, y.shape)])
    y = b.op("add", [y, b.full(float(first), np.float64, y.shape)])
    if endpoint and num > 1:
        y = b.op("slice_update", [y, b.full(float(last), np.float64, (1,))],
                 {"starts": [num - 1], "stops": [num], "steps": [1]})
    # NumPy samples in float64, floors for an integer dtype, then casts.
    if out_dtype.kind in "iu":
        y = b.op("floor", [y])
    return copy_of(b.cast(y, out_dtype) if out_dtype != np.float64 else y)


def _tri_mask(b, n, m, k) -> ArrayValue:
    """Bool ``(n, m)``: True where ``j <= i + k`` (NumPy's ``tri``)."""
    rows = b.broadcast(b.reshape(ramp(b, n), (n, 1)), (n, m))
    cols = b.broadcast(b.reshape(ramp(b, m), (1, m)), (n, m))
    shifted = b.op("sub", [cols, b.full(k, np.int64, (n, m))]) if k else cols
    return b.op("ge", [rows, shifted])


def tri(b, N, M=None, k=0, dtype=float, *, like=None):
    n = _python_int(N, "np.tri")
    m = n if M is None else _python_int(M, "np.tri")
    k = _python_int(k, "np.tri")
    if n < 0 or m < 0:
        raise numpy_raises(ValueError, "negative dimensions are not allowed")
    if abs(k) >= _EXACT or max(n, m) >= _EXACT:
        raise Unsupported("np.tri with an offset past 2**53")
    return copy_of(b.cast(_tri_mask(b, n, m, k), rules.as_dtype(dtype)))


def _triangle(name, keep_lower):
    def handler(b, m, k=0):
        if not isinstance(m, ArrayValue):
            raise Unsupported(f"np.{name} of a constant builds a constant array")
        if m.ndim == 0:
            raise numpy_raises(TypeError, f"np.{name} of a 0-d array")
        k = _python_int(k, f"np.{name}")
        if abs(k) >= _EXACT:
            raise Unsupported(f"np.{name} with an offset past 2**53")
        n, cols = (m.shape[-2], m.shape[-1]) if m.ndim >= 2 else (m.shape[-1], m.shape[-1])
        zero = b.constant(0, m.dtype)
        if keep_lower:       # tril: keep j <= i + k
            return ew.where(b, _tri_mask(b, n, cols, k), m, zero)
        return ew.where(b, _tri_mask(b, n, cols, k - 1), zero, m)     # triu: drop j <= i + k - 1
    handler.__name__ = name
    return handler


tril = _triangle("tril", True)
triu = _triangle("triu", False)
