"""NumPy functions written in terms of others, captured the way NumPy computes them: ``np.diff``,
``np.diag`` / ``ndarray.diagonal``, ``np.trace``, ``np.linalg.norm`` (the orders that are sums
of squares; the others break) and ``np.isclose``."""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import elementwise as ew
from . import numpy_rules as rules
from .errors import numpy_raises
from .joins import take_along
from .matmul import dot
from .reductions import REDUCTIONS
from .values import ArrayValue
from .views import make_view


def _array(name, a) -> ArrayValue:
    if not isinstance(a, ArrayValue):
        raise Unsupported(f"np.{name} of a {type(a).__name__} (a constant array)")
    return a


def diff(b, a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """``a[1:] - a[:-1]`` along ``axis``, ``n`` times (``!=`` for booleans, as NumPy does)."""
    if prepend is not np._NoValue or append is not np._NoValue:
        raise Unsupported("np.diff(prepend=/append=) is not supported")
    a = _array("diff", a)
    n = rules.int_index(n)
    if n < 0:
        raise numpy_raises(ValueError, f"order must be non-negative but got {n}")
    if a.ndim == 0:
        raise numpy_raises(ValueError, "diff requires input that is at least one dimensional")
    axis = rules.normalize_axis(axis, a.ndim)
    op = np.not_equal if a.dtype == np.bool_ else np.subtract
    result = a                  # n == 0: NumPy hands back the argument itself
    for _ in range(n):
        size = result.shape[axis]
        result = ew.apply_ufunc(b, op, [take_along(b, result, axis, 1, size),
                                        take_along(b, result, axis, 0, max(size - 1, 0))])
    return result


def diagonal(b, a, offset=0, axis1=0, axis2=1):
    """``a.diagonal()`` of a 2-D array: a stepped slice of the flattened array, read-only in
    NumPy (an opaque view here: writes through it run as Python, where NumPy raises)."""
    a = _array("diagonal", a)
    if a.ndim != 2 or {rules.normalize_axis(axis1, 2), rules.normalize_axis(axis2, 2)} != {0, 1}:
        raise Unsupported("diagonal of other than a 2-d array's two axes")
    if rules.normalize_axis(axis1, 2) != 0:
        a = ArrayValue(b.op("transpose", [a], {"perm": [1, 0]}).node, a.dtype, a.shape[::-1])
    k = rules.int_index(offset)
    n, m = a.shape
    first_row, first_col = (0, k) if k >= 0 else (-k, 0)
    count = max(0, min(n - first_row, m - first_col))
    flat = b.reshape(a, (n * m,))
    start = first_row * m + first_col if count else 0
    picked = b.op("slice", [flat], {"starts": [start], "stops": [start + (count - 1) * (m + 1) + 1 if count else 0],
                                    "steps": [m + 1]})
    return make_view(b, picked, a)


def diag(b, v, k=0):
    """``np.diag``: the diagonal of a 2-D array, or a 2-D array with a 1-D one on diagonal k."""
    v = _array("diag", v)
    if v.ndim == 2:
        return diagonal(b, v, k)
    if v.ndim != 1:
        raise numpy_raises(ValueError, "Input must be 1- or 2-d.")
    k = rules.int_index(k)
    n = v.shape[0] + abs(k)
    result = b.full(0, v.dtype, (n * n,))
    if v.shape[0]:
        start = k if k >= 0 else -k * n
        result = b.op("slice_update", [result, v], {
            "starts": [start], "stops": [start + (v.shape[0] - 1) * (n + 1) + 1], "steps": [n + 1]})
    return ArrayValue(b.reshape(result, (n, n)).node, v.dtype, (n, n))


def trace(b, a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise Unsupported("np.trace(out=...) is not supported")
    return REDUCTIONS["sum"](b, diagonal(b, _array("trace", a), offset, axis1, axis2), dtype=dtype)


def norm(b, x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm`` for the 2-norm of vectors and the Frobenius norm (``ord`` None, or 2 /
    'fro' where NumPy treats them alike): ``sqrt(x @ x)`` over the flattened array for
    ``axis=None``, else ``sqrt(sum(x * x, axis))``, as NumPy computes them."""
    x = _array("linalg.norm", x)
    if x.dtype.kind not in "f":
        x = ew.astype(b, x, np.float64)
    if axis is None and (ord is None or (ord in ("f", "fro") and x.ndim == 2) or (ord == 2 and x.ndim == 1)):
        flat = b.reshape(x, (x.size,))
        flat = ArrayValue(flat.node, x.dtype, (x.size,))
        result = ew.apply_ufunc(b, np.sqrt, [dot(b, flat, flat)])
        if keepdims:
            result = ArrayValue(b.reshape(result, (1,) * x.ndim).node, result.dtype, (1,) * x.ndim)
        return result
    axes = tuple(range(x.ndim)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    if len(axes) > 2:
        raise numpy_raises(ValueError, "Improper number of dimensions to norm.")
    if ord not in ((None, 2) if len(axes) == 1 else (None, "fro", "f")):
        raise Unsupported(f"np.linalg.norm(ord={ord!r}) over {len(axes)} axes is not supported")
    squares = ew.apply_ufunc(b, np.multiply, [x, x])
    return ew.apply_ufunc(b, np.sqrt, [REDUCTIONS["sum"](b, squares, axis=axes, keepdims=keepdims)])


def isclose(b, a, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``np.isclose`` step by step as NumPy computes it: ``other`` made inexact (its dtype with a
    Python float), then ``|a - other| <= atol + rtol * |other|`` where ``other`` is finite, or
    ``a == other``; with ``equal_nan``, two NaNs are close too. Without an array among ``a`` and
    ``other`` the answer is NumPy's own."""
    if not isinstance(a, ArrayValue) and not isinstance(other, ArrayValue):
        return np.isclose(a, other, rtol, atol, equal_nan)
    for name, value in (("a", a), ("b", other)):
        if not isinstance(value, (ArrayValue, bool, int, float)):
            raise Unsupported(f"np.isclose with {name} a {type(value).__name__}")
    # Array tolerances, or ones NumPy warns about (not finite), run as Python.
    for name, value in (("rtol", rtol), ("atol", atol)):
        if type(value) not in (int, float) or not np.isfinite(value):
            raise Unsupported(f"np.isclose({name}={value!r})")
    if type(equal_nan) is not bool:
        raise Unsupported("np.isclose with a computed equal_nan")
    if isinstance(other, ArrayValue):
        if other.dtype.kind == "m":
            raise Unsupported("np.isclose of timedeltas")
        other = ew.astype(b, other, np.result_type(other.dtype, 1.0))
    elif isinstance(other, int):  # a Python int or bool becomes a float, as in NumPy
        other = float(other)

    def u(ufunc, *args):
        return ew.apply_ufunc(b, ufunc, list(args))

    within = u(np.less_equal, u(np.absolute, u(np.subtract, a, other)),
               u(np.add, atol, u(np.multiply, rtol, u(np.absolute, other))))
    result = u(np.bitwise_or, u(np.bitwise_and, within, u(np.isfinite, other)), u(np.equal, a, other))
    if equal_nan:
        result = u(np.bitwise_or, result, u(np.bitwise_and, u(np.isnan, a), u(np.isnan, other)))
    return result


def nan_to_num(b, x, copy=True, nan=0.0, posinf=None, neginf=None):
    """A copy with NaN, +inf and -inf replaced (by default 0 and the dtype's largest and lowest
    finite values), each value converted to the array's dtype as NumPy's copyto converts it.
    Arrays of other dtypes come back as copies (NumPy tests for its own inexact types: an ml_dtypes
    bfloat16 array is copied unchanged)."""
    x = _array("nan_to_num", x)
    if copy is not True:
        raise Unsupported("np.nan_to_num(copy=False) writes into its argument")
    if not issubclass(x.dtype.type, np.inexact):
        return ArrayValue(x.node, x.dtype, x.shape, is_scalar=x.ndim == 0)
    info = np.finfo(x.dtype)

    def u(ufunc, *args):
        return ew.apply_ufunc(b, ufunc, list(args))
    infinite = u(np.isinf, x)
    result = x
    for mask, value in ((u(np.isnan, x), nan),
                        (u(np.logical_and, infinite, u(np.greater, x, 0)), info.max if posinf is None else posinf),
                        (u(np.logical_and, infinite, u(np.less, x, 0)), info.min if neginf is None else neginf)):
        if not isinstance(value, (bool, int, float, np.integer, np.floating)):
            raise Unsupported(f"np.nan_to_num with a replacement of type {type(value).__name__}")
        with np.errstate(over="ignore"):
            converted = np.array(value).astype(x.dtype)[()]
        result = b.op("where", [mask, b.full(converted, x.dtype, x.shape), result])
    result.is_scalar = x.ndim == 0
    return result


def select(b, condlist, choicelist, default=0):
    """The first choice whose condition holds, else ``default``, in the dtype of all of them
    (Python numbers weakly typed, as NumPy's select types them)."""
    if not isinstance(condlist, (list, tuple)) or not isinstance(choicelist, (list, tuple)):
        raise Unsupported("np.select of other than lists")
    if len(condlist) != len(choicelist):
        raise numpy_raises(ValueError, "list of cases must be same length as list of conditions")
    if not condlist:
        raise numpy_raises(ValueError, "select with an empty condition list is not possible")
    values = list(choicelist) + [default]
    for v in list(condlist) + values:
        ew.check_operand(v)
    if not any(isinstance(v, ArrayValue) for v in list(condlist) + values):
        return np.select(condlist, choicelist, default)
    for i, cond in enumerate(condlist):
        if (cond.dtype if isinstance(cond, ArrayValue) else np.asarray(cond).dtype) != np.bool_:
            raise numpy_raises(TypeError, f"invalid entry {i} in condlist: should be boolean ndarray")
    strong = [v if isinstance(v, ArrayValue) or type(v) in (int, float) else np.asarray(v) for v in values]
    dtype = rules.check_supported_dtype(rules.result_type(*strong))
    shape = rules.broadcast_shapes(*(ew.shape_of(v) for v in list(condlist) + values))
    result = b.broadcast(ew.to_array(b, default, dtype), shape)
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        result = b.op("where", [b.broadcast(ew.to_array(b, cond, np.bool_), shape),
                                b.broadcast(ew.to_array(b, choice, dtype), shape), result])
    return result
