"""What the capture compiles of a Python float kept symbolic (``values.SymbolicFloat``).

With an array or a NumPy scalar, the float is NumPy's weak Python scalar (NEP 50): the same
ufunc loop NumPy picks for the value, whatever the value is. Between Python numbers only
``+ - *``, unary ``-``/``+``, ``abs()`` and ``float()`` are compiled: they are IEEE operations
that never raise (``/``, ``//``, ``%`` and ``**`` can raise ZeroDivisionError or OverflowError,
or give a complex number, depending on the value). Comparisons between Python numbers, branches,
``**`` with an array (NumPy's operator takes fast paths that depend on the exponent's value),
and every other use are graph breaks, where Python gets the float itself.
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from . import elementwise as ew
from .lookaside import resolve_call
from .values import ArrayValue, SymbolicFloat, opaque_use

_PYTHON_ARITHMETIC = {"+": "add", "-": "sub", "*": "mul"}
_EXACT_INT = 2 ** 53           # ints up to this convert to float exactly (and cannot overflow)
_VALUE_DEPENDENT_UFUNCS = {np.power, np.float_power}


def involved(*values) -> bool:
    return any(isinstance(v, SymbolicFloat) for v in values)


def _operands(values):
    return [v.operand() if isinstance(v, SymbolicFloat) else v for v in values]


def _symbolic(values):
    return next(v for v in values if isinstance(v, SymbolicFloat))


def _python_number(v) -> bool:
    return isinstance(v, SymbolicFloat) or type(v) is float or (
        type(v) in (int, bool) and abs(v) <= _EXACT_INT)


def _float64(b, v) -> ArrayValue:
    return v.value if isinstance(v, SymbolicFloat) else b.constant(float(v), np.float64)


def _numpy(v) -> bool:
    """An array or NumPy scalar: the operator is then NumPy's."""
    return isinstance(v, (ArrayValue, np.generic))


def binary(b, symbol, left, right):
    """``left <symbol> right`` with a SymbolicFloat on at least one side."""
    if _numpy(left) or _numpy(right):
        if symbol != "**":
            return ew.binary_operator(b, symbol, *_operands((left, right)))
    elif symbol in _PYTHON_ARITHMETIC and _python_number(left) and _python_number(right):
        node = b.op(_PYTHON_ARITHMETIC[symbol], [_float64(b, left), _float64(b, right)],
                    is_scalar=True)
        return SymbolicFloat(node)
    raise Unsupported(opaque_use(f"operator {symbol} on", _symbolic((left, right))))


def in_place_operand(symbol, value):
    """The right side of ``array <symbol>= value`` (NumPy's ufunc with ``out=``)."""
    if symbol == "**":
        raise Unsupported(opaque_use(f"operator {symbol}= with", value))
    return value.operand()


def compare(b, symbol, left, right):
    if _numpy(left) or _numpy(right):
        return ew.compare_operator(b, symbol, *_operands((left, right)))
    raise Unsupported(opaque_use(f"comparison {symbol} on", _symbolic((left, right))))


def unary(b, opname, value):
    if opname == "UNARY_POSITIVE":
        return value
    if opname == "UNARY_NEGATIVE":
        return SymbolicFloat(b.op("neg", [value.value], is_scalar=True))
    raise Unsupported(opaque_use("unary operator on", value))


def call(b, fn, args, kwargs):
    """``fn(*args, **kwargs)`` with a SymbolicFloat among the arguments, or None where that is a
    graph break."""
    if kwargs:
        return None
    if fn is float and len(args) == 1:
        return args[0]                       # float(x) is x for a float
    if fn is abs and len(args) == 1:
        return SymbolicFloat(b.op("abs", [args[0].value], is_scalar=True))
    if isinstance(fn, np.ufunc) and fn not in _VALUE_DEPENDENT_UFUNCS:
        return resolve_call(b, fn, _operands(args), kwargs)
    return None
