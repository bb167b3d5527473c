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
