"""``@``, ``np.matmul`` and ``np.dot``: the IR's matmul wants ndim >= 2 on both sides and equal
batch dims, so 1-D operands are reshaped to a row/column (and the unit dim dropped afterwards)
and batch dims are broadcast explicitly."""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from .errors import numpy_raises
from . import numpy_rules as rules
from .elementwise import apply_ufunc, check_operand, run_concrete
from .values import ArrayValue


def matmul(b, a, c, **kwargs):
    if kwargs:
        raise Unsupported(f"np.matmul(..., {', '.join(kwargs)}=...) is not supported")
    check_operand(a)
    check_operand(c)
    if not isinstance(a, ArrayValue) and not isinstance(c, ArrayValue):
        return run_concrete(np.matmul, a, c)
    if not (isinstance(a, ArrayValue) and isinstance(c, ArrayValue)) or a.ndim == 0 or c.ndim == 0:
        raise numpy_raises(ValueError, "matmul of a 0-d operand (NumPy raises)")
    in_dtypes, _ = rules.resolve_ufunc(np.matmul, [a, c])
    a_vec, c_vec = a.ndim == 1, c.ndim == 1
    a2 = b.reshape(a, (1,) + a.shape) if a_vec else a
    c2 = b.reshape(c, c.shape + (1,)) if c_vec else c
    m, k = a2.shape[-2:]
    k2, n = c2.shape[-2:]
    if k != k2:
        raise numpy_raises(ValueError, f"matmul: contraction sizes differ ({a.shape} @ {c.shape})")
    batch = rules.broadcast_shapes(a2.shape[:-2], c2.shape[:-2])
    a2 = b.broadcast(b.cast(a2, in_dtypes[0]), batch + (m, k))
    c2 = b.broadcast(b.cast(c2, in_dtypes[1]), batch + (k, n))
    r = b.op("matmul", [a2, c2])
    final = batch + (() if a_vec else (m,)) + (() if c_vec else (n,))
    r = b.reshape(r, final)
    r.is_scalar = final == ()
    return r


def _strong(v):
    return np.asarray(v)[()] if isinstance(v, (bool, int, float)) else v


def dot(b, a, c, out=None):
    if out is not None:
        raise Unsupported("np.dot(..., out=...) is not supported")
    check_operand(a)
    check_operand(c)
    if not isinstance(a, ArrayValue) and not isinstance(c, ArrayValue):
        return run_concrete(np.dot, a, c)
    ndim = lambda v: v.ndim if isinstance(v, ArrayValue) else 0   # noqa: E731
    if ndim(a) == 0 or ndim(c) == 0:
        # dot with a scalar is multiplication; dot converts Python scalars to arrays first, so
        # they are strongly typed here (np.dot(float32 array, 2.0) is float64), unlike in ufuncs.
        a, c = (_strong(v) for v in (a, c))
        return apply_ufunc(b, np.multiply, [a, c])
    if ndim(c) > 2:
        # dot's N-d rule (sum over a's last and c's second-to-last axis, no batching) is not
        # matmul's; not supported yet.
        raise Unsupported("np.dot with a >2-d second operand")
    r = matmul(b, a, c)      # for ndim(c) <= 2 dot and matmul agree on values
    # ... and on dtypes, except for ml_dtypes' bfloat16: matmul has no bfloat16 loop (float32
    # result), dot rounds its float32 sums to bfloat16. NumPy says which.
    expected = run_concrete(lambda: np.dot(np.zeros((1, 1), a.dtype), np.zeros((1, 1), c.dtype)).dtype)
    return r if r.dtype == expected else b.cast(r, expected)


def _operand(name, v):
    check_operand(v)
    if not isinstance(v, ArrayValue):
        raise Unsupported(f"np.{name} of a constant")
    return v


def inner(b, a, c):
    """The sums over both operands' last axes: a's other axes, then c's (NumPy's inner, its
    products summed as dot's are)."""
    if not isinstance(a, ArrayValue) and not isinstance(c, ArrayValue):
        return run_concrete(np.inner, a, c)
    if not isinstance(a, ArrayValue) or not isinstance(c, ArrayValue) or a.ndim == 0 or c.ndim == 0:
        return dot(b, a, c)                  # a scalar side: a product
    if a.shape[-1] != c.shape[-1]:
        raise numpy_raises(ValueError, f"shapes {a.shape} and {c.shape} not aligned for np.inner")
    if a.ndim <= 2 and c.ndim == 1:
        return dot(b, a, c)
    k = a.shape[-1]
    rows = b.reshape(a, (int(np.prod(a.shape[:-1], dtype=np.int64)), k))
    columns = b.op("transpose", [b.reshape(c, (int(np.prod(c.shape[:-1], dtype=np.int64)), k))], {"perm": [1, 0]})
    r = dot(b, rows, columns)
    shape = a.shape[:-1] + c.shape[:-1]
    r = b.reshape(r, shape)
    r.is_scalar = shape == ()
    return r


def vdot(b, a, c):
    """The flattened operands' dot product (real arrays: no conjugate to take)."""
    a, c = _operand("vdot", a), _operand("vdot", c)
    if a.size != c.size:
        raise numpy_raises(ValueError, "cannot reshape array for np.vdot: sizes differ")
    flat = [ArrayValue(b.reshape(v, (v.size,)).node, v.dtype, (v.size,)) for v in (a, c)]
    return dot(b, *flat)


def _gufunc_dtype(fn, a, c):
    """The result dtype of NumPy's gufunc ``fn`` (vecdot, matvec, vecmat) on these dtypes."""
    return run_concrete(lambda: fn(np.zeros((1, 1), a.dtype), np.zeros((1, 1), c.dtype)).dtype)


def vecdot(b, a, c, axis=-1, **kwargs):
    """``np.vecdot``: the sums of products along ``axis`` of the broadcast operands, as a batch
    of (1, n) @ (n, 1) products."""
    if kwargs:
        raise Unsupported(f"np.vecdot(..., {', '.join(kwargs)}=...) is not supported")
    a, c = _operand("vecdot", a), _operand("vecdot", c)
    if a.ndim == 0 or c.ndim == 0:
        raise numpy_raises(ValueError, "vecdot: a 0-d operand has no core dimension")
    from .rearrange import moveaxis
    a = moveaxis(b, a, rules.normalize_axis(axis, a.ndim), -1)
    c = moveaxis(b, c, rules.normalize_axis(axis, c.ndim), -1)
    if a.shape[-1] != c.shape[-1]:
        raise numpy_raises(ValueError, f"vecdot: core dimensions differ ({a.shape[-1]} and {c.shape[-1]})")
    dtype = _gufunc_dtype(np.vecdot, a, c)
    r = matmul(b, b.reshape(a, a.shape[:-1] + (1, a.shape[-1])), b.reshape(c, c.shape + (1,)))
    r = b.reshape(r, r.shape[:-2])
    r = r if r.dtype == dtype else b.cast(r, dtype)
    r.is_scalar = r.ndim == 0
    return r


def matvec(b, a, v, **kwargs):
    """``np.matvec``: a batch of (m, n) matrices times n-vectors."""
    if kwargs:
        raise Unsupported(f"np.matvec(..., {', '.join(kwargs)}=...) is not supported")
    a, v = _operand("matvec", a), _operand("matvec", v)
    if a.ndim < 2 or v.ndim < 1:
        raise numpy_raises(ValueError, "matvec: the matrix needs 2 dimensions, the vector 1")
    dtype = _gufunc_dtype(np.matvec, a, v)
    r = matmul(b, a, b.reshape(v, v.shape + (1,)))
    r = b.reshape(r, r.shape[:-1])
    return r if r.dtype == dtype else b.cast(r, dtype)


def vecmat(b, v, a, **kwargs):
    """``np.vecmat``: a batch of n-vectors times (n, m) matrices."""
    if kwargs:
        raise Unsupported(f"np.vecmat(..., {', '.join(kwargs)}=...) is not supported")
    v, a = _operand("vecmat", v), _operand("vecmat", a)
    if a.ndim < 2 or v.ndim < 1:
        raise numpy_raises(ValueError, "vecmat: the vector needs 1 dimension, the matrix 2")
    dtype = _gufunc_dtype(np.vecmat, v, a)
    r = matmul(b, b.reshape(v, v.shape[:-1] + (1, v.shape[-1])), a)
    r = b.reshape(r, r.shape[:-2] + r.shape[-1:])
    return r if r.dtype == dtype else b.cast(r, dtype)
