"""Shape-only operations: transpose, reshape, expand_dims, squeeze, broadcast_to, copies and
array creation (zeros/ones/full and their ``_like`` forms).

Results that NumPy returns as *views* are made with ``views.make_view``, so that writes through
them reach their base and writes to the base reach them.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from .errors import numpy_raises
from . import numpy_rules as rules
from .elementwise import check_operand, run_concrete
from .values import ArrayValue
from .views import make_view


def copy_of(v: ArrayValue) -> ArrayValue:
    return ArrayValue(v.node, v.dtype, v.shape)


def _require_array(name, a):
    if isinstance(a, ArrayValue):
        return a
    if isinstance(a, (np.generic, bool, int, float)):
        return None       # caller runs NumPy on the constant
    raise Unsupported(f"np.{name} of a {type(a).__name__}")


def _shape_tuple(shape):
    if isinstance(shape, (tuple, list)):
        return tuple(rules.int_index(s) for s in shape)
    return (rules.int_index(shape),)


def transpose(b, a, axes=None):
    if _require_array("transpose", a) is None:
        return run_concrete(np.transpose, a, axes)
    if axes is None:
        perm = tuple(reversed(range(a.ndim)))
    else:
        axes = _shape_tuple(axes)
        if len(axes) != a.ndim:
            raise numpy_raises(ValueError, f"transpose: axes {axes} don't match a {a.ndim}-d array")
        perm = tuple(rules.normalize_axis(ax, a.ndim) for ax in axes)
        if sorted(perm) != list(range(a.ndim)):
            raise numpy_raises(ValueError, f"transpose: repeated axis in {axes}")
    if perm == tuple(range(a.ndim)):
        return make_view(b, a, a, lambda m: m)
    return make_view(b, b.op("transpose", [a], {"perm": list(perm)}), a, lambda m: m.transpose(perm))


def method_transpose(b, a, *axes):
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
        axes = axes[0]
    return transpose(b, a, axes if axes != () else None)


def swapaxes(b, a, axis1, axis2):
    if _require_array("swapaxes", a) is None:
        return run_concrete(np.swapaxes, a, axis1, axis2)
    perm = list(range(a.ndim))
    i, j = rules.normalize_axis(axis1, a.ndim), rules.normalize_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return transpose(b, a, perm)


def resolve_reshape(shape, size, old_shape):
    """NumPy's new shape with one ``-1`` filled in."""
    shape = list(_shape_tuple(shape))
    unknown = [i for i, s in enumerate(shape) if s == -1]
    if len(unknown) > 1 or any(s < -1 for s in shape):
        raise numpy_raises(ValueError, f"cannot reshape {old_shape} into {tuple(shape)}")
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if unknown:
        if known == 0 or size % known:
            raise numpy_raises(ValueError, f"cannot reshape {old_shape} into {tuple(shape)}")
        shape[unknown[0]] = size // known
    elif known != size:
        raise numpy_raises(ValueError,
                           f"cannot reshape array of size {size} into shape {tuple(shape)}")
    return tuple(shape)


def reshape(b, a, shape=None, order="C", *, newshape=None, copy=None):
    if newshape is not None:
        shape = newshape
    if order != "C":
        raise Unsupported(f"reshape(order={order!r}) is not supported")
    if copy is False:
        raise Unsupported("reshape(copy=False) is not supported")
    if _require_array("reshape", a) is None:
        return run_concrete(np.reshape, a, shape)
    new = resolve_reshape(shape, a.size, a.shape)
    return make_view(b, b.reshape(a, new), a, lambda m: m.regroup(new))


def method_reshape(b, a, *shape, order="C", copy=None):
    if len(shape) == 1:
        shape = shape[0]
    return reshape(b, a, shape, order, copy=copy)


def ravel(b, a, order="C"):
    return reshape(b, a, (-1,), order)


def flatten(b, a, order="C"):
    return copy_of(reshape(b, a, (-1,), order))


def expand_dims(b, a, axis):
    if _require_array("expand_dims", a) is None:
        return run_concrete(np.expand_dims, a, axis)
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out_ndim = a.ndim + len(axes)
    new_axes = rules.normalize_axes(tuple(axes), out_ndim)
    if len(set(new_axes)) != len(axes):
        raise numpy_raises(ValueError, f"expand_dims: repeated axis in {axis}")
    it = iter(a.shape)
    shape = tuple(1 if i in new_axes else next(it) for i in range(out_ndim))
    return make_view(b, b.reshape(a, shape), a, lambda m: m.regroup(shape))


def squeeze(b, a, axis=None):
    if _require_array("squeeze", a) is None:
        return run_concrete(np.squeeze, a, axis)
    if axis is None:
        drop = {i for i, s in enumerate(a.shape) if s == 1}
    else:
        drop = set(rules.normalize_axes(axis, a.ndim))
        if any(a.shape[i] != 1 for i in drop):
            raise numpy_raises(ValueError, "squeeze: cannot select an axis whose size is not one")
    shape = tuple(s for i, s in enumerate(a.shape) if i not in drop)
    return make_view(b, b.reshape(a, shape), a, lambda m: m.regroup(shape))


def broadcast_to(b, array, shape, subok=False):
    if _require_array("broadcast_to", array) is None:
        raise Unsupported("np.broadcast_to of a constant builds a constant array")
    shape = _shape_tuple(shape)
    if rules.broadcast_shapes(array.shape, shape) != shape:
        raise numpy_raises(ValueError, f"cannot broadcast {array.shape} to {shape}")
    return make_view(b, b.broadcast(array, shape), array)   # read-only in NumPy: opaque


def copy(b, a, order="K", subok=False):
    if _require_array("copy", a) is None:
        return run_concrete(np.copy, a)
    return copy_of(a)


def method_copy(b, a, order="C"):
    return copy_of(a)


def asarray(b, a, dtype=None, order=None, *, like=None, copy=None, device=None):
    """``np.asarray``: the same array object when nothing changes; a NumPy or Python scalar
    becomes a 0-d array (a constant if it is one)."""
    if order not in (None, "C", "K", "A") or like is not None:
        raise Unsupported("np.asarray(order=/like=) is not supported")
    if isinstance(a, ArrayValue):
        if dtype is not None and rules.as_dtype(dtype) != a.dtype:
            return ArrayValue(*_cast_parts(b, a, dtype))
        if copy:
            return copy_of(a)
        if a.is_scalar:
            return ArrayValue(a.node, a.dtype, a.shape)     # a scalar becomes a 0-d array
        return a
    check_operand(a)
    dt = rules.as_dtype(dtype) if dtype is not None else \
        run_concrete(lambda: np.asarray(a).dtype)
    return b.constant(run_concrete(lambda: np.asarray(a, dtype=dt)[()]), dt)


def ascontiguousarray(b, a, dtype=None, *, like=None):
    """``np.ascontiguousarray``: ``np.asarray`` with at least one dimension (0-d gives (1,))."""
    r = asarray(b, a, dtype, like=like)
    return make_view(b, b.reshape(r, (1,)), r, lambda m: m.regroup((1,))) if r.ndim == 0 else r


def _cast_parts(b, a, dtype):
    r = b.cast(a, rules.as_dtype(dtype))
    return r.node, r.dtype, r.shape


def array(b, a, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    if ndmin:
        raise Unsupported("np.array(ndmin=...) is not supported")
    return asarray(b, a, dtype, None if order == "K" else order, like=like, copy=copy)


# -- creation ----------------------------------------------------------------------------------

def _fill(b, value, dtype, shape):
    shape = _shape_tuple(shape)
    if any(s < 0 for s in shape):
        raise numpy_raises(ValueError, f"negative dimensions in {shape}")
    if isinstance(value, ArrayValue):
        if value.ndim != 0:
            raise Unsupported("fill value must be a scalar")
        return copy_of(b.broadcast(b.cast(value, dtype), shape))
    check_operand(value)
    # The fill value as NumPy converts it: NumPy's own full on a 0-d shape. (An unsafe cast of
    # a NumPy scalar, 2.5 -> 2 for an int array, but NEP 50 rejects a Python int out of the
    # dtype's range with OverflowError, which np.array(value).astype(dtype) would wrap.)
    cast_value = run_concrete(lambda: np.full((), value, dtype)[()])
    return copy_of(b.full(cast_value, dtype, shape))


def _creation_dtype(dtype, default):
    return rules.as_dtype(default if dtype is None else dtype)


def zeros(b, shape, dtype=float, order="C", *, like=None):
    return _fill(b, 0, _creation_dtype(dtype, float), shape)


def ones(b, shape, dtype=None, order="C", *, like=None):
    return _fill(b, 1, _creation_dtype(dtype, float), shape)


def full(b, shape, fill_value, dtype=None, order="C", *, like=None):
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, ArrayValue) else \
            run_concrete(lambda: np.array(fill_value).dtype)
    return _fill(b, fill_value, rules.as_dtype(dtype), shape)


def _like(name, value):
    def creator(b, a, *rest, dtype=None, order="K", subok=True, shape=None, device=None):
        fill_value = rest[0] if rest else value
        if fill_value is None or len(rest) > 1:
            raise Unsupported(f"np.{name}: too many positional arguments")
        if not isinstance(a, ArrayValue):
            raise Unsupported(f"np.{name} of a {type(a).__name__}")
        out_shape = a.shape if shape is None else shape
        return _fill(b, fill_value, _creation_dtype(dtype, a.dtype), out_shape)
    creator.__name__ = name
    return creator


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", 0)     # any contents are valid for empty; zeros are simplest
full_like = _like("full_like", None)


def eye(b, N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    """``np.eye``: ones on diagonal ``k``, written into the flattened zero array as one stepped
    slice (element (i, i + k) is at i * M + i + k: a step of M + 1)."""
    n = rules.int_index(N)
    m = n if M is None else rules.int_index(M)
    k = rules.int_index(k)
    dtype = _creation_dtype(dtype, float)
    if n < 0 or m < 0:
        raise numpy_raises(ValueError, f"negative dimensions are not allowed")
    first_row, first_col = (0, k) if k >= 0 else (-k, 0)
    count = max(0, min(n - first_row, m - first_col))
    result = b.full(0, dtype, (n * m,))
    if count:
        start = first_row * m + first_col
        ones = b.full(1, dtype, (count,))
        result = b.op("slice_update", [result, ones], {
            "starts": [start], "stops": [start + (count - 1) * (m + 1) + 1], "steps": [m + 1]})
    return copy_of(b.reshape(result, (n, m)))


def identity(b, n, dtype=None, *, like=None):
    return eye(b, n, dtype=dtype)
