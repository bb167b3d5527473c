"""NumPy's typing rules, asked of NumPy itself.

Nothing here is a hand-written promotion table: dtypes come from ``ufunc.resolve_dtypes`` (which
implements NEP 50, with Python scalars as weak operands) or from running the real NumPy function
on a tiny dummy array of the right dtype; axes are normalised by NumPy's own helpers. Whatever
NumPy rejects becomes ``Unsupported``, so the user's code runs as plain Python and NumPy raises
its own error there.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..errors import Unsupported
from .errors import numpy_raises

SUPPORTED_DTYPES = frozenset(np.dtype(n) for n in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64"))

PYTHON_SCALARS = (bool, int, float)


def is_bfloat16(dtype) -> bool:
    """ml_dtypes' bfloat16 (NumPy knows it only once ml_dtypes is imported, which a bfloat16
    array or a torch.bfloat16 tensor's stand-in implies; hcompile does not import it itself)."""
    return dtype.name == "bfloat16"


def is_supported_dtype(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype in SUPPORTED_DTYPES or is_bfloat16(dtype)


def check_supported_dtype(dtype, what="value"):
    dtype = np.dtype(dtype)
    if not is_supported_dtype(dtype):
        raise Unsupported(f"dtype {dtype} is not supported (in {what})")
    return dtype


def python_constant_for(value, dtype):
    """``value`` as the Python bool/int/float that becomes a constant of ``dtype``.

    Python ints that do not fit an integer dtype make NumPy 2 raise OverflowError (NEP 50), so
    they are refused here rather than silently wrapped.
    """
    dtype = np.dtype(dtype)
    if isinstance(value, np.generic):
        value = value.item()
    if dtype.kind == "b":
        return bool(value)
    if dtype.kind in "iu":
        if isinstance(value, float):
            raise Unsupported(f"float constant {value!r} used as {dtype}")
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise numpy_raises(OverflowError, f"Python integer {value} out of bounds for {dtype}")
        return int(value)
    return float(value)


def dtype_spec(operand):
    """What ``resolve_dtypes`` needs for one operand: a dtype, or ``int``/``float`` for weak
    Python scalars."""
    from .values import ArrayValue
    if isinstance(operand, ArrayValue):
        return float if operand.weak else operand.dtype
    if isinstance(operand, np.generic):
        return check_supported_dtype(operand.dtype, "a NumPy scalar constant")
    if isinstance(operand, bool):       # bool is the lowest kind: strong == weak here
        return np.dtype(bool)
    if isinstance(operand, int):
        return int
    if isinstance(operand, float):
        return float
    raise Unsupported(f"operand of type {type(operand).__name__} in an array operation")


def resolve_ufunc(ufunc: np.ufunc, operands, out_dtype=None):
    """(input loop dtypes, output dtype) NumPy would use for ``ufunc(*operands)``."""
    specs = tuple(dtype_spec(o) for o in operands)
    sig = specs + ((out_dtype,) if out_dtype is not None else (None,) * ufunc.nout)
    kwargs = {"casting": "same_kind"} if out_dtype is not None else {}
    try:
        dtypes = ufunc.resolve_dtypes(sig, **kwargs)
    except Exception as e:   # UFuncTypeError / TypeError: NumPy would raise at run time
        names = ", ".join(getattr(s, "__name__", str(s)) for s in specs)
        raise numpy_raises(e, f"np.{ufunc.__name__} on ({names}): {e}") from e
    ins, outs = dtypes[:ufunc.nin], dtypes[ufunc.nin:]
    if out_dtype is None and any(isinstance(d, np.dtype) and is_bfloat16(d) for d in specs):
        # ml_dtypes' bfloat16 is a dtype NumPy's own promotion does not know (np.result_type
        # refuses bfloat16 with int16, whose sum the call computes in float32): the result dtype
        # is the call's, on one-element dummies.
        outs = (call_result_dtype(ufunc, specs),) + tuple(outs[1:])
    for d in outs:
        check_supported_dtype(d, f"result of np.{ufunc.__name__}")
    return list(ins), outs[0]


def call_result_dtype(fn, specs):
    """The dtype of ``fn`` called on one-element arrays of ``specs``' dtypes (Python ``int`` and
    ``float`` specs as weak scalars); NumPy's error if the call raises."""
    dummies = [s(1) if s is int or s is float else np.ones((1,), s) for s in specs]
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            result = fn(*dummies)
    except Exception as e:
        names = ", ".join(getattr(s, "__name__", str(s)) for s in specs)
        raise numpy_raises(e, f"np.{fn.__name__} on ({names}): {e}") from e
    return np.asarray(result[0] if isinstance(result, tuple) else result).dtype


@functools.lru_cache(maxsize=None)
def _dummy_result_dtype(fn_name, dtype_names, kwargs_items):
    fn = getattr(np, fn_name)
    dummies = [np.ones((1,), dtype=d) for d in dtype_names]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(*dummies, **dict(kwargs_items))).dtype


def result_dtype_of(fn_name: str, dtypes, **kwargs) -> np.dtype:
    """Result dtype of ``np.<fn_name>`` on arrays of ``dtypes``, by running it on tiny dummies
    (reductions' accumulator dtypes, mean's float64-for-ints, ...)."""
    key = tuple(np.dtype(d).name for d in dtypes)
    try:
        dt = _dummy_result_dtype(fn_name, key, tuple(sorted(kwargs.items())))
    except Exception as e:
        raise numpy_raises(e, f"np.{fn_name} on {', '.join(key)}: {e}") from e
    return check_supported_dtype(dt, f"result of np.{fn_name}")


def result_type(*operands) -> np.dtype:
    """``np.result_type`` with weak Python scalars (NEP 50)."""
    from .values import ArrayValue
    specs = []
    for o in operands:
        s = dtype_spec(o)
        # result_type takes the Python scalar itself (a weak operand's value does not matter)
        specs.append(s if isinstance(s, np.dtype) else 0.0 if isinstance(o, ArrayValue) else o)
    try:
        dt = np.result_type(*specs)
    except Exception as e:
        raise numpy_raises(e, f"no common dtype: {e}") from e
    return check_supported_dtype(dt)


def broadcast_shapes(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError as e:
        raise numpy_raises(e, f"shapes {', '.join(map(str, shapes))} do not broadcast: {e}") from e


def normalize_axes(axis, ndim):
    """Reduction axes as a sorted tuple; ``None`` means all."""
    if axis is None:
        return tuple(range(ndim))
    try:
        return tuple(sorted(normalize_axis_tuple(operator_index_tuple(axis), ndim)))
    except (np.exceptions.AxisError, ValueError, TypeError) as e:
        raise numpy_raises(e, f"bad axis {axis!r} for a {ndim}-d array: {e}") from e


def normalize_axis(axis, ndim):
    try:
        return normalize_axis_index(int_index(axis), ndim)
    except (np.exceptions.AxisError, TypeError) as e:
        raise numpy_raises(e, f"bad axis {axis!r} for a {ndim}-d array: {e}") from e


def int_index(v):
    import operator
    if isinstance(v, bool) or not hasattr(type(v), "__index__"):
        raise numpy_raises(TypeError, f"expected an integer, got {type(v).__name__}")
    return operator.index(v)


def operator_index_tuple(axis):
    if isinstance(axis, (tuple, list)):
        return tuple(int_index(a) for a in axis)
    return int_index(axis)


def as_dtype(obj) -> np.dtype:
    """``np.dtype(obj)`` for a dtype-like argument (``np.float32``, ``'int8'``, ``float`` ...)."""
    try:
        dt = np.dtype(obj)
    except TypeError as e:
        raise Unsupported(f"not a dtype: {obj!r}") from e
    return check_supported_dtype(dt)
