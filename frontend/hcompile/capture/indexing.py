"""Basic NumPy indexing (integers, slices, ``None``, ``...``) as ``slice`` + ``reshape``.

Each index is normalised the way NumPy does it (``slice.indices``; negative integers count from
the end), all dims are sliced by one ``slice`` node, then one ``reshape`` drops the dims indexed
by integers and inserts the ``None`` dims. Advanced (array / boolean / list) indexing is not
supported.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from .errors import numpy_raises
from . import numpy_rules as rules
from .values import ArrayValue
from .views import make_view


def _classify(item):
    if item is None:
        return "newaxis"
    if item is Ellipsis:
        return "ellipsis"
    if isinstance(item, slice):
        for part in (item.start, item.stop, item.step):
            if part is not None and (isinstance(part, (ArrayValue, bool)) or
                                     not hasattr(type(part), "__index__")):
                raise Unsupported("slice bounds must be constant integers")
        return "slice"
    if isinstance(item, ArrayValue):
        raise Unsupported("indexing with an array (advanced indexing)")
    if isinstance(item, (bool, np.bool_)):
        raise Unsupported("indexing with a boolean (advanced indexing)")
    if hasattr(type(item), "__index__"):
        return "int"
    raise Unsupported(f"indexing with a {type(item).__name__} (advanced indexing)")


class BasicIndex:
    """A basic index resolved against a shape, NumPy's way: per indexed axis a start, stop and
    step (an integer index is ``[i, i + 1, 1]``); ``shape`` of the result; ``selection`` per axis
    (``("int", i)`` or ``("slice", start, step, result axis)``, see ``views.ViewMap.index``)."""

    def __init__(self, shape, key):
        items = key if isinstance(key, tuple) else (key,)
        kinds = [_classify(it) for it in items]
        if kinds.count("ellipsis") > 1:
            raise numpy_raises(IndexError, "an index can only have a single ellipsis")
        ndim = len(shape)
        consumed = sum(k in ("int", "slice") for k in kinds)
        if consumed > ndim:
            raise numpy_raises(IndexError, f"too many indices for a {ndim}-d array")
        # NumPy gives a scalar only for a full set of integer indices (``z[()]`` on 0-d
        # included); any ``...`` or ``None`` keeps an array (``z[...]`` is a 0-d array view).
        self.gives_scalar = all(k == "int" for k in kinds) and consumed == ndim
        if "ellipsis" in kinds:
            pos = kinds.index("ellipsis")
            fill = ndim - consumed
            items = items[:pos] + (slice(None),) * fill + items[pos + 1:]
            kinds = kinds[:pos] + ["slice"] * fill + kinds[pos + 1:]
        else:
            items = items + (slice(None),) * (ndim - consumed)
            kinds = kinds + ["slice"] * (ndim - consumed)

        self.starts, self.stops, self.steps, self.selection = [], [], [], []
        out_shape = []
        dim = 0
        for item, kind in zip(items, kinds):
            if kind == "newaxis":
                out_shape.append(1)
                continue
            size = shape[dim]
            if kind == "int":
                i = int(rules.int_index(item))
                if not -size <= i < size:
                    raise numpy_raises(IndexError,
                                       f"index {i} is out of bounds for axis {dim} with size {size}")
                i %= size
                start, stop, step = i, i + 1, 1
                self.selection.append(("int", i))
            else:
                try:
                    start, stop, step = item.indices(size)
                except ValueError as e:
                    raise numpy_raises(e, f"bad slice {item}: {e}") from e
                self.selection.append(("slice", start, step, len(out_shape)))
                out_shape.append(len(range(start, stop, step)))
            self.starts.append(start)
            self.stops.append(stop)
            self.steps.append(step)
            dim += 1
        self.shape = tuple(out_shape)
        self.trivial = all(st == 0 and sp == n and sd == 1
                           for st, sp, sd, n in zip(self.starts, self.stops, self.steps, shape))


def getitem(b, a: ArrayValue, key):
    index = BasicIndex(a.shape, key)
    r = a
    if not index.trivial:
        r = b.op("slice", [a], {"starts": index.starts, "stops": index.stops, "steps": index.steps})
    r = b.reshape(r, index.shape)
    if index.gives_scalar:          # a copy; everything else is a view
        return ArrayValue(r.node, r.dtype, r.shape, is_scalar=True)
    return make_view(b, r, a, lambda m: m.index(index.selection, index.shape))


class ArrayRows:
    """Iterator over ``x[0], x[1], …`` (``for row in x``, unpacking), made lazily so each row's
    nodes carry the location of the loop step that uses it."""

    def __init__(self, b, a: ArrayValue):
        self.b, self.a, self.i = b, a, 0

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.a.shape[0]:
            raise StopIteration
        self.i += 1
        return getitem(self.b, self.a, self.i - 1)


def iterate_rows(b, a: ArrayValue, limit=4096) -> ArrayRows:
    if a.ndim == 0:
        raise numpy_raises(TypeError, "iteration over a 0-d array")
    if a.shape[0] > limit:
        raise Unsupported(f"iteration over {a.shape[0]} rows of an array is too long to unroll")
    return ArrayRows(b, a)
