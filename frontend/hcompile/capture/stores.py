"""Writes into arrays: ``x[key] = v``, in-place operators (``x += y``) and ufuncs' ``out=``.

The graph is functional: a write gives the written array's *root* (the array owning the
memory, see ``views.py``) a new node, ``slice_update(old, value)`` or the value itself when the
whole root is replaced. Every alias then reads the new node (views are rebuilt from their root),
a right-hand side that read the old contents keeps reading them (NumPy's temporary copy for
overlapping operands), and a written argument is copied back into the caller's array after the
kernel has run (``capture.Capture.writebacks``), so a failed call writes nothing.

NumPy's value conversion is followed exactly: arrays are cast unsafely and broadcast after
dropping leading size-1 axes; Python and NumPy scalar constants convert as NumPy converts them
(``int8_array[0] = 300`` raises OverflowError, ``= np.nan`` ValueError); a computed NumPy scalar
whose conversion could raise (a float into an integer array) runs as Python.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import numpy_rules as rules
from .elementwise import BINARY_OPERATORS, apply_ufunc, check_operand, run_concrete
from .errors import numpy_raises
from .indexing import BasicIndex
from .values import ArrayValue
from .views import ViewMap


def setitem(b, target: ArrayValue, key, value):
    """``target[key] = value``."""
    if target.is_scalar:
        raise numpy_raises(TypeError, f"'{target.dtype.type.__name__}' object does not support item "
                                      "assignment")
    if isinstance(key, ArrayValue) and key.dtype == np.bool_ and not key.is_scalar:
        masked_write(b, target, key, value)
        return
    write(b, target, BasicIndex(target.shape, key), value)


def masked_write(b, target: ArrayValue, mask: ArrayValue, value):
    """``target[mask] = value`` for a boolean mask of the target's shape and one value for every
    selected element (a scalar or a one-element array): ``where(mask, value, target)``. A value
    of one element per selected element has a size only the data knows: not captured."""
    if mask.shape != target.shape or target.ndim == 0:
        if mask.ndim <= target.ndim and mask.shape == target.shape[:mask.ndim]:
            raise Unsupported(f"boolean mask of shape {mask.shape} for an array of shape "
                              f"{target.shape} (over the leading axes)")
        raise numpy_raises(IndexError, f"boolean index of shape {mask.shape} does not match the "
                                       f"indexed array of shape {target.shape}")
    if isinstance(value, ArrayValue) and value.size != 1:
        raise Unsupported("storing an array through a boolean mask (its size must match the "
                          "number of selected elements, which only the data knows)")
    v = _stored_value(b, value, target.dtype, target.shape)
    write_all(b, target, b.op("where", [mask, v, target]))


def write_all(b, target: ArrayValue, value):
    """``target[...] = value``."""
    write(b, target, BasicIndex(target.shape, Ellipsis), value)


def write(b, target: ArrayValue, index: BasicIndex, value):
    root = target.root()
    if target.view_of is None:
        target_map = ViewMap.identity(root.shape)
    elif target.view_map is None:
        raise Unsupported("a write through a reshaped or broadcast view of an array")
    else:
        target_map = target.view_map
    if root.opaque_views:
        raise Unsupported("a write into an array that has a reshaped or broadcast view")
    region = target_map.index(index.selection, index.shape)    # the written elements, in the root
    v = _stored_value(b, value, root.dtype, index.shape)
    if 0 in index.shape:
        return                              # no element written (the value was still checked)
    if region.covers(root.shape):
        root.write(b.reshape(v, root.shape).node)
        return
    starts, stops, steps, v = region.root_slice(b, v, root.shape)
    root.write(b.op("slice_update", [root, v], {"starts": starts, "stops": stops, "steps": steps}).node)


def inplace_operator(b, symbol, target: ArrayValue, other):
    """``target <symbol>= other`` on an array: NumPy computes ``target <symbol> other`` into
    ``target`` itself (casting ``same_kind``), so every alias sees the update."""
    if symbol not in BINARY_OPERATORS:
        raise Unsupported(f"in-place operator {symbol}= on arrays is not supported")
    return ufunc_into(b, BINARY_OPERATORS[symbol], [target, other], target)


def ufunc_into(b, ufunc, operands, out: ArrayValue):
    """``ufunc(*operands, out=out)``: the result written into ``out``, which is returned."""
    if not isinstance(out, ArrayValue) or out.is_scalar:
        raise numpy_raises(TypeError, "return arrays must be of ArrayType")
    for v in operands:
        check_operand(v)
    rules.resolve_ufunc(ufunc, operands, out_dtype=out.dtype)      # NumPy's casting check
    shape = rules.broadcast_shapes(*(v.shape if isinstance(v, ArrayValue) else () for v in operands))
    if rules.broadcast_shapes(shape, out.shape) != out.shape:
        raise numpy_raises(ValueError, f"non-broadcastable output operand with shape {out.shape} "
                                       f"doesn't match the broadcast shape {shape}")
    result = apply_ufunc(b, ufunc, operands)
    if isinstance(result, ArrayValue):
        result = b.cast(result, out.dtype)
    else:   # constants only: NumPy's own result, cast as the out= loop casts it
        result = run_concrete(lambda r: np.asarray(r).astype(out.dtype), result)
        result = b.constant(result[()], out.dtype)
    write_all(b, out, result)
    return out


def copyto(b, dst, src, casting="same_kind", where=True):
    """``np.copyto(dst, src)``: ``src`` broadcast into ``dst``, cast if ``casting`` allows it
    (NumPy's check, made before anything is written)."""
    if where is not True:
        raise Unsupported("np.copyto(..., where=...) is not supported")
    if not isinstance(dst, ArrayValue) or dst.is_scalar:
        raise numpy_raises(TypeError, f"copyto() argument 1 must be numpy.ndarray, not {type(dst).__name__}")
    check_operand(src)
    if isinstance(src, ArrayValue):
        if not np.can_cast(src.dtype, dst.dtype, casting):
            raise numpy_raises(TypeError, f"Cannot cast array data from {src.dtype!r} to {dst.dtype!r} "
                                          f"according to the rule {casting!r}")
        src_shape = src.shape
    else:    # a Python or NumPy scalar, or a constant array: NumPy's own check on one element
        run_concrete(lambda: np.copyto(np.empty(1, dst.dtype), src, casting=casting))
        src_shape = np.shape(src)
    if rules.broadcast_shapes(src_shape, dst.shape) != dst.shape:
        raise numpy_raises(ValueError, f"could not broadcast input array from shape {src_shape} into "
                                       f"shape {dst.shape}")
    write_all(b, dst, src)


def _stored_value(b, value, dtype, shape) -> ArrayValue:
    """``value`` as NumPy stores it into an array of ``dtype`` at a selection of ``shape``."""
    if isinstance(value, ArrayValue):
        if value.is_scalar and not _scalar_converts_silently(value.dtype, dtype):
            raise Unsupported(f"storing a computed {value.dtype} scalar into a {dtype} array "
                              "(NumPy raises for values that do not fit)")
        v = b.cast(value, dtype)
    else:
        check_operand(value)        # lists, tuples, constant arrays: not captured
        v = b.constant(run_concrete(_convert_constant, value, dtype), dtype)
    vshape = v.shape
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    if len(vshape) > len(shape) or rules.broadcast_shapes(vshape, shape) != tuple(shape):
        raise numpy_raises(ValueError, f"could not broadcast input array from shape {v.shape} into "
                                       f"shape {tuple(shape)}")
    return b.broadcast(b.reshape(v, vshape), shape)


def _convert_constant(value, dtype):
    """NumPy's conversion of a Python or NumPy scalar stored into an array (raises as NumPy
    does: OverflowError for an int out of range, ValueError for NaN into an integer array)."""
    cell = np.zeros((), dtype)
    cell[()] = value
    return cell[()]


def _scalar_converts_silently(src, dst) -> bool:
    """A NumPy scalar stored into an array converts without raising for every value: into float
    and bool arrays always; into integer arrays only from types that fit."""
    return dst.kind in "fb" or np.can_cast(src, dst, "safe")
