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


def _copied(b, v):
    return ArrayValue(v.node, v.dtype, v.shape)


def tile(b, A, reps):
    """``A`` repeated ``reps`` times along each axis (leading axes added as NumPy's ndmin adds them):
    each axis of A beside one of its copies, broadcast, then merged. A copy."""
    A = _array("tile", A)
    reps = tuple(rules.int_index(r) for r in (reps if isinstance(reps, (tuple, list)) else (reps,)))
    if any(r < 0 for r in reps):
        raise numpy_raises(ValueError, "negative dimensions are not allowed")
    ndim = max(len(reps), A.ndim)
    shape = (1,) * (ndim - A.ndim) + A.shape
    reps = (1,) * (ndim - len(reps)) + reps
    paired = reshape(b, A, tuple(x for s in shape for x in (1, s)))
    spread = b.broadcast(paired, tuple(x for r, s in zip(reps, shape) for x in (r, s)))
    return _copied(b, reshape(b, spread, tuple(r * s for r, s in zip(reps, shape))))


def repeat(b, a, repeats, axis=None):
    """Each element ``repeats`` times in a row along ``axis`` (of the flattened array for None);
    one count for all elements (a count per element runs as Python). A copy."""
    a = _array("repeat", a)
    if not isinstance(repeats, (int, np.integer)) or isinstance(repeats, bool):
        raise Unsupported("np.repeat with a count per element")
    n = int(repeats)
    if n < 0:
        raise numpy_raises(ValueError, "repeats may not contain negative values.")
    if axis is None:
        a, axis = reshape(b, a, (a.size,)), 0
    axis = rules.normalize_axis(axis, a.ndim)
    beside = reshape(b, a, a.shape[:axis + 1] + (1,) + a.shape[axis + 1:])
    spread = b.broadcast(beside, a.shape[:axis + 1] + (n,) + a.shape[axis + 1:])
    return _copied(b, reshape(b, spread, a.shape[:axis] + (a.shape[axis] * n,) + a.shape[axis + 1:]))


def meshgrid(b, *xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays: the i-th input flattened along axis i (axes 0 and 1 swapped for 'xy'),
    broadcast to the full grid unless ``sparse``; copies (``copy=False`` views run as Python)."""
    if indexing not in ("xy", "ij"):
        raise numpy_raises(ValueError, "Valid values for `indexing` are 'xy' and 'ij'.")
    if copy is not True:
        raise Unsupported("np.meshgrid(copy=False) returns read-only views")
    arrays = [_array("meshgrid", x) for x in xi]
    ndim = len(arrays)
    shapes = []
    for i, x in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and ndim > 1 else i
        shapes.append(tuple(x.size if d == axis else 1 for d in range(ndim)))
    output = [reshape(b, x, s) for x, s in zip(arrays, shapes)]
    if not sparse:
        full = rules.broadcast_shapes(*shapes)
        output = [b.broadcast(o, full) for o in output]
    return tuple(_copied(b, o) for o in output)


def _split_points(size, sections):
    if isinstance(sections, (int, np.integer)) and not isinstance(sections, bool):
        count = int(sections)
        if count <= 0:
            raise numpy_raises(ValueError, "number sections must be larger than 0.")
        each, extras = divmod(size, count)
        sizes = [0] + extras * [each + 1] + (count - extras) * [each]
        return [int(p) for p in np.cumsum(sizes)]
    if isinstance(sections, (tuple, list)):
        return [0] + [rules.int_index(i) for i in sections] + [size]
    raise Unsupported(f"np.split at a {type(sections).__name__}")


def array_split(b, ary, indices_or_sections, axis=0):
    """Views of consecutive pieces along ``axis`` (NumPy's Python slices of each piece)."""
    ary = _array("array_split", ary)
    axis = rules.normalize_axis(axis, ary.ndim)
    points = _split_points(ary.shape[axis], indices_or_sections)
    return [getitem(b, ary, (slice(None),) * axis + (slice(start, stop),)) for start, stop in zip(points, points[1:])]


def split(b, ary, indices_or_sections, axis=0):
    ary = _array("split", ary)
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        size = ary.shape[rules.normalize_axis(axis, ary.ndim)]
        if indices_or_sections == 0:     # NumPy's own N % sections
            raise numpy_raises(ZeroDivisionError, "integer modulo by zero")
        if size % indices_or_sections:
            raise numpy_raises(ValueError, "array split does not result in an equal division")
    return array_split(b, ary, indices_or_sections, axis)


def split_along(name, axis_of, least):
    """hsplit / vsplit / dsplit: split along the axis NumPy picks for the array's dimensions."""
    def function(b, ary, indices_or_sections):
        ary = _array(name, ary)
        if ary.ndim < least:
            raise numpy_raises(ValueError, f"{name} only works on arrays of {least} or more dimensions")
        return split(b, ary, indices_or_sections, axis_of(ary.ndim))
    function.__name__ = name
    return function
