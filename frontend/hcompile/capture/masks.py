"""Boolean-mask selections: ``x[mask]`` where ``mask`` is a bool array of ``x``'s shape.

NumPy's ``x[mask]`` is a new 1-D array of the selected elements; how many there are only the
data knows, so the graph cannot hold it as an array. It can hold it as the pair it comes from
(``MaskedSelection``: the full-shape values, and the mask): elementwise operations with scalars,
or with selections by the same mask, apply to every element (the selected ones are the same
values NumPy computes; the others are never looked at), and storing it back through the same mask
is ``where(mask, values, target)``. That covers ``x[m] = y[m]``, ``x[m] *= 2`` and
``x[m] = 1 / x[m]``. Its sum, any and all (``x[m].sum()``, ``np.any(x[m] > 0)``) are the
reduction of the full-shape values with every unselected element replaced by the reduction's
identity; its mean is that sum divided by the mask's count. Any other use is a graph break,
where Python gets ``values[mask]`` (the runtime compacts it: ``breaks.MaskRef``); returning a
selection does the same.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import elementwise as ew
from . import stores
from .reductions import REDUCTIONS
from .values import ArrayValue, BoundArrayMethod, MaskedSelection, SymbolicFloat, opaque_use


def is_full_mask(container, key) -> bool:
    """Whether ``container[key]`` selects through a boolean mask of the container's shape."""
    return isinstance(container, ArrayValue) and isinstance(key, ArrayValue) and \
        key.dtype == np.bool_ and not key.is_scalar and not container.is_scalar and \
        container.ndim > 0 and key.shape == container.shape


def select(container: ArrayValue, mask: ArrayValue) -> MaskedSelection:
    """``container[mask]``: a copy in NumPy, so the values are the container's as they are now."""
    values = ArrayValue(container.node, container.dtype, container.shape)
    return MaskedSelection(values, mask)


def same_values(graph, a: int, c: int, budget=64) -> bool:
    """Whether graph nodes ``a`` and ``c`` compute the same values: one node, or the same op on
    inputs that do (``x[x > 0] = 1 / x[x > 0]`` builds its mask twice). Nodes are values (a write
    makes a new node), so equal structure means equal contents. Constants compare by bits; a
    search past ``budget`` nodes answers no, which only costs a graph break."""
    pending, seen = [(a, c)], set()
    while pending:
        a, c = pending.pop()
        if a == c or (a, c) in seen:
            continue
        seen.add((a, c))
        if len(seen) > budget or graph.kind(a) != graph.kind(c) or \
                _attr_key(graph.attrs(a)) != _attr_key(graph.attrs(c)) or \
                graph.dtype(a) != graph.dtype(c) or len(graph.inputs(a)) != len(graph.inputs(c)):
            return False
        pending.extend(zip(graph.inputs(a), graph.inputs(c)))
    return True


def _attr_key(attrs):
    def key(v):
        if isinstance(v, float):
            return ("float", np.float64(v).tobytes())
        if isinstance(v, (list, tuple)):
            return tuple(key(x) for x in v)
        return v
    return sorted((k, key(v)) for k, v in attrs.items())


def _same_mask(b, m1, m2) -> bool:
    return same_values(b.graph, m1.node, m2.node)


def involved(*values) -> bool:
    return any(isinstance(v, MaskedSelection) for v in values)


def _operands(b, values, what):
    """The full-shape operands of an elementwise operation on selections, and their mask; raises
    Unsupported (a break) unless every selection has one mask and the rest are scalars."""
    selections = [v for v in values if isinstance(v, MaskedSelection)]
    mask = selections[0].mask
    if any(not _same_mask(b, s.mask, mask) for s in selections):
        raise Unsupported(opaque_use(what, selections[-1]))
    out = []
    for v in values:
        if isinstance(v, MaskedSelection):
            out.append(v.values)
        elif isinstance(v, SymbolicFloat):
            out.append(v.operand())
        elif isinstance(v, ArrayValue) and v.ndim == 0 or isinstance(v, (bool, int, float, np.generic)):
            out.append(v)
        else:      # an array broadcasts against the selection's data-dependent length
            raise Unsupported(opaque_use(what, selections[0]))
    return out, mask


def binary(b, symbol, left, right, in_place=False):
    """``left <symbol> right`` (or ``<symbol>=``) with a selection on at least one side."""
    (l, r), mask = _operands(b, (left, right), f"operator {symbol} on")
    if in_place and isinstance(left, MaskedSelection):
        # The selection is an array of its own: NumPy updates that array (same_kind casting),
        # and every name bound to it sees the update.
        stores.inplace_operator(b, symbol, left.values, r)
        return left
    return MaskedSelection(ew.binary_operator(b, symbol, l, r), mask)


def compare(b, symbol, left, right):
    (l, r), mask = _operands(b, (left, right), f"comparison {symbol} on")
    return MaskedSelection(ew.compare_operator(b, symbol, l, r), mask)


def unary(b, ufunc, value):
    (v,), mask = _operands(b, (value,), "unary operator on")
    return MaskedSelection(ew.apply_ufunc(b, ufunc, [v]), mask)


# What a reduction over a selection puts where the mask is False: its identity. A float sum's
# is -0.0 (x + -0.0 is x for every x, signed zeros included; +0.0 would turn a sum of -0.0s
# positive). A bool array keeps bools (a 0 would promote it to int64).
_IDENTITY = {"sum": lambda dt: -0.0 if dt.kind in "fc" else (False if dt == np.bool_ else 0),
             "any": lambda dt: False, "all": lambda dt: True}
_NUMPY_REDUCTIONS = {np.sum: "sum", np.any: "any", np.all: "all", np.mean: "mean"}
_REDUCIBLE = set(_IDENTITY) | {"mean"}


class SelectionMethod(BoundArrayMethod):
    """``x[mask].sum`` before it is called (a reduction in ``_REDUCIBLE``)."""


def method(selection: MaskedSelection, name: str):
    """``selection.name``: its reductions; any other attribute is a graph break."""
    if name not in _REDUCIBLE:
        raise Unsupported(opaque_use(f"attribute .{name} of", selection))
    return SelectionMethod(selection, name)


def reduce(b, name, selection, args, kwargs):
    """``selection.sum()`` / ``any()`` / ``all()`` / ``mean()`` with NumPy's defaults (over the
    one axis, its dtype rules); None (a graph break) with arguments."""
    if args or kwargs:
        return None
    if name == "mean":
        return _mean(b, selection)
    values = selection.values
    filled = ew.where(b, selection.mask, values, _IDENTITY[name](values.dtype))
    return REDUCTIONS[name](b, filled)


def _mean(b, selection):
    """NumPy's mean of the 1-D selection: its sum in the accumulation dtype (float64 for bool and
    integer values) divided by its length, the mask's count (converted to that dtype, as NumPy
    converts the Python int it divides by). No elements: 0 / 0, NaN (NumPy also warns)."""
    values, mask = selection.values, selection.mask
    acc = np.dtype(np.float64) if values.dtype.kind in "biu" else values.dtype
    if acc.kind != "f":
        raise Unsupported(opaque_use(f"mean of {values.dtype}", selection))
    total = REDUCTIONS["sum"](b, ew.where(b, mask, b.cast(values, acc), -0.0))
    count = b.cast(REDUCTIONS["sum"](b, b.cast(mask, np.dtype(np.int64))), acc)
    r = b.op("div", [total, count])
    r.is_scalar = True
    return r


def call(b, fn, args, kwargs):
    """A ufunc called on selections (no keywords), ``np.sum``/``any``/``all`` of a selection, or
    None where that is a graph break."""
    reduction = _NUMPY_REDUCTIONS.get(fn) if not isinstance(fn, np.ufunc) else None
    if reduction and args and isinstance(args[0], MaskedSelection):
        return reduce(b, reduction, args[0], args[1:], kwargs)
    if kwargs or not isinstance(fn, np.ufunc) or len(args) != fn.nin:
        return None
    operands, mask = _operands(b, args, f"call to np.{fn.__name__}() with")
    return MaskedSelection(ew.apply_ufunc(b, fn, operands), mask)


def store(b, target, key, value):
    """``target[key] = value`` where ``value`` is a selection: through the same mask only."""
    if not (is_full_mask(target, key) and _same_mask(b, key, value.mask)):
        raise Unsupported(opaque_use("item assignment with", value))
    stores.write_all(b, target, b.op("where", [key, b.cast(value.values, target.dtype), target]))
