"""NumPy functions that only rearrange an array's elements, as the views NumPy returns: ``np.flip``
(and ``fliplr`` / ``flipud``), ``np.rot90``, ``np.moveaxis``, ``np.atleast_1d/2d/3d``, and the
joins built on them, ``np.column_stack`` and ``np.dstack``. Each is written the way NumPy's own
Python code writes it (reversed slices, transposes, reshapes), so its errors are NumPy's too."""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import numpy_rules as rules
from .errors import numpy_raises
from .indexing import getitem
from .joins import _pieces, concatenate
from .shape_ops import reshape, transpose
from .values import ArrayValue


def _array(name, a) -> ArrayValue:
    if not isinstance(a, ArrayValue):
        raise Unsupported(f"np.{name} of a {type(a).__name__} (a constant array)")
    return a


def flip(b, m, axis=None):
    """``m[::-1]`` along each of ``axis`` (every axis for None): a view."""
    m = _array("flip", m)
    axes = range(m.ndim) if axis is None else rules.normalize_axes(axis, m.ndim)
    reversed_axes = set(axes)
    return getitem(b, m, tuple(slice(None, None, -1) if i in reversed_axes else slice(None)
                               for i in range(m.ndim)))


def fliplr(b, m):
    m = _array("fliplr", m)
    if m.ndim < 2:
        raise numpy_raises(ValueError, "Input must be >= 2-d.")
    return getitem(b, m, (slice(None), slice(None, None, -1)))


def flipud(b, m):
    m = _array("flipud", m)
    if m.ndim < 1:
        raise numpy_raises(ValueError, "Input must be >= 1-d.")
    return getitem(b, m, (slice(None, None, -1),))


def rot90(b, m, k=1, axes=(0, 1)):
    """A quarter turn k times in the plane of ``axes``, from axes[0] towards axes[1]."""
    m = _array("rot90", m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise numpy_raises(ValueError, "len(axes) must be 2.")
    first, second = (rules.int_index(ax) for ax in axes)
    if first == second or abs(first - second) == m.ndim:
        raise numpy_raises(ValueError, "Axes must be different.")
    if not (-m.ndim <= first < m.ndim and -m.ndim <= second < m.ndim):
        raise numpy_raises(ValueError, f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k = rules.int_index(k) % 4
    if k == 0:
        return getitem(b, m, (slice(None),))
    if k == 2:
        return flip(b, flip(b, m, first), second)
    order = list(range(m.ndim))
    order[first], order[second] = order[second], order[first]
    if k == 1:
        return transpose(b, flip(b, m, second), order)
    return flip(b, transpose(b, m, order), second)


def moveaxis(b, a, source, destination):
    a = _array("moveaxis", a)
    source = _axis_tuple(source, a.ndim, "source")
    destination = _axis_tuple(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise numpy_raises(ValueError, "`source` and `destination` arguments must have the same "
                                       "number of elements")
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(b, a, order)


def _axis_tuple(axis, ndim, name):
    try:
        return np.lib.array_utils.normalize_axis_tuple(rules.operator_index_tuple(axis), ndim, name)
    except (np.exceptions.AxisError, ValueError, TypeError) as e:
        raise numpy_raises(e, f"np.moveaxis: {e}") from e


def _at_least(b, a, ndim):
    """One array of ``np.atleast_{ndim}d``: a 0-d one as (1,)*ndim, a 1-d one as (1, n) or
    (1, n, 1), a 2-d one as (m, n, 1) for 3; higher ones as they are."""
    a = _array(f"atleast_{ndim}d", a)
    if a.ndim >= ndim:
        return a
    if a.ndim == 0:
        shape = (1,) * ndim
    elif ndim == 2:            # a 1-d array as a row
        shape = (1,) + a.shape
    elif a.ndim == 1:          # ... made 3-d: (1, n, 1)
        shape = (1,) + a.shape + (1,)
    else:                      # a 2-d array made 3-d: (m, n, 1)
        shape = a.shape + (1,)
    return reshape(b, a, shape)


def at_least(ndim):
    def function(b, *arys):
        results = tuple(_at_least(b, a, ndim) for a in arys)
        return results[0] if len(results) == 1 else results
    function.__name__ = f"atleast_{ndim}d"
    return function


def _arrays(name, tup):
    """The pieces of a join that makes its pieces' dimensions first (a number is a piece there,
    where concatenate refuses one): arrays, else the call runs as Python."""
    if isinstance(tup, (tuple, list)) and not all(isinstance(a, ArrayValue) for a in tup):
        raise Unsupported(f"np.{name} of constants")
    return _pieces(name, tup)


def column_stack(b, tup):
    """1-d and 0-d pieces as columns (n, 1), the rest as they are, joined along axis 1."""
    arrays = []
    for a in _arrays("column_stack", tup):
        if a.ndim < 2:
            a = transpose(b, _at_least(b, a, 2))
        arrays.append(a)
    return concatenate(b, arrays, 1)


def dstack(b, tup):
    return concatenate(b, [_at_least(b, a, 3) for a in _arrays("dstack", tup)], 2)
