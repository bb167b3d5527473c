"""Joining arrays: ``np.concatenate``, ``np.stack``, ``np.hstack``, ``np.vstack`` and
``np.roll``, as existing graph ops.

The IR has no concatenation: the result starts as a zero array of the joined shape and each
piece is written into its place along the axis (``slice_update``), which lowers to one select
per element, fused into whatever reads the result. ``np.roll`` is the concatenation of the
array's two halves around the shift. Shapes and dtypes follow NumPy (``np.result_type`` of the
pieces; errors of NumPy's types for mismatched shapes and bad axes).
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import numpy_rules as rules
from .errors import numpy_raises
from .shape_ops import copy_of, expand_dims, reshape
from .values import ArrayValue


def _pieces(name, arrays):
    if not isinstance(arrays, (tuple, list)):
        raise Unsupported(f"np.{name} of a {type(arrays).__name__} (a sequence of arrays is needed)")
    if not arrays:
        raise numpy_raises(ValueError, "need at least one array to concatenate")
    for a in arrays:
        if not isinstance(a, ArrayValue):
            if isinstance(a, (tuple, list)):
                raise Unsupported(f"np.{name} of a Python list (constant arrays are not supported)")
            if isinstance(a, (bool, int, float, np.generic)):
                raise numpy_raises(ValueError, "zero-dimensional arrays cannot be concatenated")
            raise Unsupported(f"np.{name} of a {type(a).__name__}")
    return list(arrays)


def _slice_attrs(shape, axis, start, stop):
    return {"starts": [start if d == axis else 0 for d in range(len(shape))],
            "stops": [stop if d == axis else s for d, s in enumerate(shape)],
            "steps": [1] * len(shape)}


def take_along(b, a, axis, start, stop):
    """``a[..., start:stop, ...]`` along ``axis`` (``start`` and ``stop`` non-negative; past the
    end they stop there, as a slice does)."""
    stop = min(stop, a.shape[axis])
    start = min(start, stop)
    if start == 0 and stop == a.shape[axis]:
        return a
    return b.op("slice", [a], _slice_attrs(a.shape, axis, start, stop))


def join(b, arrays, axis, dtype):
    """The pieces (already checked) laid end to end along ``axis``, as ``dtype``."""
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    nonempty = [a for a in arrays if a.shape[axis]]
    if len(nonempty) == 1 or 0 in shape:
        return copy_of(b.full(0, dtype, shape) if 0 in shape else b.cast(nonempty[0], dtype))
    result = b.full(0, dtype, shape)
    at = 0
    for a in nonempty:
        size = a.shape[axis]
        result = b.op("slice_update", [result, b.cast(a, dtype)], _slice_attrs(shape, axis, at, at + size))
        at += size
    return copy_of(result)


def concatenate(b, arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    if out is not None or dtype is not None or casting != "same_kind":
        raise Unsupported("np.concatenate(out=/dtype=/casting=) is not supported")
    arrays = _pieces("concatenate", arrays)
    if axis is None:
        arrays = [reshape(b, a, (-1,)) for a in arrays]
        axis = 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise numpy_raises(ValueError, "zero-dimensional arrays cannot be concatenated")
    axis = rules.normalize_axis(axis, ndim)
    for i, a in enumerate(arrays):
        if a.ndim != ndim:
            raise numpy_raises(ValueError, "all the input arrays must have same number of dimensions, "
                                           f"but the array at index 0 has {ndim} dimension(s) and the "
                                           f"array at index {i} has {a.ndim} dimension(s)")
        for d in range(ndim):
            if d != axis and a.shape[d] != arrays[0].shape[d]:
                raise numpy_raises(ValueError, "all the input array dimensions except for the "
                                               f"concatenation axis must match exactly, but along "
                                               f"dimension {d}, the array at index 0 has size "
                                               f"{arrays[0].shape[d]} and the array at index {i} "
                                               f"has size {a.shape[d]}")
    result_dtype = rules.check_supported_dtype(np.result_type(*(a.dtype for a in arrays)),
                                               "result of np.concatenate")
    return join(b, arrays, axis, result_dtype)


def stack(b, arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    if out is not None or dtype is not None or casting != "same_kind":
        raise Unsupported("np.stack(out=/dtype=/casting=) is not supported")
    arrays = _pieces("stack", arrays)
    if any(a.shape != arrays[0].shape for a in arrays):
        raise numpy_raises(ValueError, "all input arrays must have the same shape")
    axis = rules.normalize_axis(axis, arrays[0].ndim + 1)
    return concatenate(b, [expand_dims(b, a, axis) for a in arrays], axis)


def _at_least(b, a, ndim):
    """``np.atleast_1d`` / ``np.atleast_2d``: leading unit axes up to ``ndim``."""
    return a if a.ndim >= ndim else reshape(b, a, (1,) * (ndim - a.ndim) + a.shape)


def hstack(b, tup, *, dtype=None, casting="same_kind"):
    arrays = [_at_least(b, a, 1) for a in _pieces("hstack", tup)]
    return concatenate(b, arrays, 0 if arrays[0].ndim == 1 else 1, dtype=dtype, casting=casting)


def vstack(b, tup, *, dtype=None, casting="same_kind"):
    arrays = [_at_least(b, a, 2) for a in _pieces("vstack", tup)]
    return concatenate(b, arrays, 0, dtype=dtype, casting=casting)


def roll(b, a, shift, axis=None):
    if not isinstance(a, ArrayValue):
        raise Unsupported("np.roll of a constant builds a constant array")
    if axis is None:
        flat = roll(b, reshape(b, a, (-1,)), shift, 0)
        return copy_of(reshape(b, flat, a.shape))
    try:
        pairs = list(np.broadcast(shift, axis))        # NumPy pairs shifts with axes so
    except ValueError as e:
        raise numpy_raises(e, f"np.roll: {e}") from e
    total = {}
    for s, ax in pairs:
        ax = rules.normalize_axis(ax, a.ndim)
        total[ax] = total.get(ax, 0) + rules.int_index(s)
    result = a
    for ax, s in total.items():
        n = a.shape[ax]
        s = s % n if n else 0
        if s:
            result = join(b, [take_along(b, result, ax, n - s, n), take_along(b, result, ax, 0, n - s)], ax,
                           a.dtype)
    return copy_of(result)
