"""NumPy ufuncs, operators, ``where`` and ``clip`` as explicit graph ops.

NumPy's implicit steps become explicit nodes: each operand is cast to the loop dtype NumPy
resolves and broadcast to the common shape, then the strict IR op is emitted. When no operand
is abstract the real NumPy (or Python) operation is run on the constants instead.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from ..errors import Unsupported
from .errors import numpy_raises
from . import numpy_rules as rules
from .values import ArrayValue

# ufunc -> IR kind. Kinds of identity operations are None.
UNARY_KINDS = {
    np.negative: "neg", np.absolute: "abs", np.fabs: "abs", np.square: "square",
    np.sign: "sign", np.exp: "exp", np.log: "log", np.log1p: "log1p", np.expm1: "expm1",
    np.log2: "log2", np.log10: "log10", np.exp2: "exp2", np.cbrt: "cbrt",
    np.sqrt: "sqrt", np.sin: "sin", np.cos: "cos", np.tan: "tan", np.tanh: "tanh",
    np.sinh: "sinh", np.cosh: "cosh", np.arcsin: "arcsin", np.arccos: "arccos",
    np.arctan: "arctan", np.arcsinh: "arcsinh", np.arccosh: "arccosh", np.arctanh: "arctanh",
    np.reciprocal: "reciprocal", np.floor: "floor", np.ceil: "ceil",
    np.rint: "rint", np.trunc: "trunc", np.isnan: "isnan", np.isfinite: "isfinite",
    np.isinf: "isinf", np.invert: "invert", np.positive: None, np.deg2rad: "mul_by",
    np.radians: "mul_by", np.rad2deg: "mul_by", np.degrees: "mul_by", np.signbit: "signbit",
    np.conjugate: None, np.bitwise_count: "popcount",
}
# Unary ufuncs NumPy's loops compute as one multiply by a constant, (numerator, denominator)
# divided in the loop's float type: float64's, else float32's (float16 and bfloat16 loops
# compute in float32 and round once; float32's degrees factor is 180f / pi_f, one float32 ulp
# from float32(180 / pi)).
_MULTIPLIERS = {np.deg2rad: (np.pi, 180.0), np.radians: (np.pi, 180.0), np.rad2deg: (180.0, np.pi),
                np.degrees: (180.0, np.pi)}
# Binary ufuncs NumPy computes as a few of the IR's ops (_composite).
COMPOSITE = {np.fmax, np.fmin, np.heaviside, np.logaddexp, np.logaddexp2, np.float_power, np.fmod}
BINARY_KINDS = {
    np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div",
    np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow",
    np.maximum: "maximum", np.minimum: "minimum", np.arctan2: "arctan2", np.hypot: "hypot",
    np.copysign: "copysign",
    np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor",
    np.equal: "eq", np.not_equal: "ne", np.less: "lt", np.less_equal: "le",
    np.greater: "gt", np.greater_equal: "ge",
}
LOGICAL = {np.logical_and: "bitwise_and", np.logical_or: "bitwise_or",
           np.logical_xor: "bitwise_xor", np.logical_not: "invert"}
SHIFTS = {np.left_shift, np.right_shift}
# Ufuncs of two results, as the pair of single-result ufuncs or ops NumPy's loop computes.
PAIRS = {np.divmod, np.modf}
SUPPORTED_UFUNCS = set(UNARY_KINDS) | set(BINARY_KINDS) | set(LOGICAL) | SHIFTS | COMPOSITE | PAIRS

# Python operator symbol (canonical BINARY_OP / COMPARE_OP argument) -> ufunc.
BINARY_OPERATORS = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
    "//": np.floor_divide, "%": np.remainder, "**": np.power, "&": np.bitwise_and,
    "|": np.bitwise_or, "^": np.bitwise_xor, "<<": np.left_shift, ">>": np.right_shift,
}
PYTHON_BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "&": operator.and_,
    "|": operator.or_, "^": operator.xor, "@": operator.matmul, "<<": operator.lshift,
    ">>": operator.rshift,
}
COMPARISONS = {
    "<": np.less, "<=": np.less_equal, "==": np.equal, "!=": np.not_equal,
    ">": np.greater, ">=": np.greater_equal,
}
PYTHON_COMPARE = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
    ">": operator.gt, ">=": operator.ge,
}


def is_abstract(v):
    return isinstance(v, ArrayValue)


def check_operand(v):
    """Operands an array op accepts: arrays, Python scalars and NumPy scalars."""
    if isinstance(v, (ArrayValue, np.generic) + rules.PYTHON_SCALARS):
        return
    if isinstance(v, np.ndarray):
        raise Unsupported("a constant NumPy array (global, closure or default) in an array "
                          "operation")
    if isinstance(v, (list, tuple)):
        raise Unsupported("an array built from a Python sequence in an array operation")
    raise Unsupported(f"operand of type {type(v).__name__} in an array operation")


def run_concrete(fn, *args, **kwargs):
    """Run a real NumPy/Python operation on constants; failures run as plain Python instead."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            result = fn(*args, **kwargs)
        except Exception as e:
            raise numpy_raises(e, f"{getattr(fn, '__name__', fn)} on constants raises "
                              f"{type(e).__name__}: {e}") from e
    if isinstance(result, np.ndarray):
        raise Unsupported(f"{getattr(fn, '__name__', fn)} builds a constant array")
    return result


def to_array(b, v, dtype) -> ArrayValue:
    """Operand ``v`` as an ArrayValue of ``dtype`` (constants become 0-d constant nodes)."""
    if isinstance(v, ArrayValue):
        return b.cast(v, dtype)
    return b.constant(v, dtype)


def shape_of(v):
    return v.shape if isinstance(v, ArrayValue) else ()


_UFUNC_DEFAULT_KWARGS = {"out": None, "where": True, "dtype": None, "casting": "same_kind",
                         "order": "K", "subok": True}


def _is_default(val, default):
    return type(val) is type(default) and val == default


def apply_ufunc(b, ufunc, operands, **kwargs):
    """``ufunc(*operands)`` as graph ops (or run for real if every operand is a constant)."""
    for key, val in kwargs.items():
        # NumPy's defaults are harmless; anything else changes semantics we do not model.
        if key not in _UFUNC_DEFAULT_KWARGS or not _is_default(val, _UFUNC_DEFAULT_KWARGS[key]):
            raise Unsupported(f"np.{ufunc.__name__}(..., {key}=...) is not supported")
    if ufunc not in SUPPORTED_UFUNCS:
        raise Unsupported(f"np.{ufunc.__name__} is not supported")
    if len(operands) != ufunc.nin:
        raise Unsupported(f"np.{ufunc.__name__} takes {ufunc.nin} operands")
    for v in operands:
        try:
            check_operand(v)
        except Unsupported:
            _raise_if_numpy_rejects(ufunc, operands)
            raise
    if not any(is_abstract(v) for v in operands):
        return run_concrete(ufunc, *operands)
    if ufunc is np.divmod:       # NumPy's divmod loop gives floor_divide's and remainder's values
        return apply_ufunc(b, np.floor_divide, operands), apply_ufunc(b, np.remainder, operands)
    if ufunc is np.modf:
        return _modf(b, *operands)

    if ufunc in LOGICAL:
        # logical_* treat any value as its truth value: x != 0 (what cast-to-bool does).
        args = [to_array(b, v, np.bool_) for v in operands]
        shape = rules.broadcast_shapes(*(a.shape for a in args))
        args = [b.broadcast(a, shape) for a in args]
        return b.op(LOGICAL[ufunc], args, is_scalar=shape == ())

    in_dtypes, out_dtype = rules.resolve_ufunc(ufunc, operands)
    shape = rules.broadcast_shapes(*(shape_of(v) for v in operands))
    scalar = shape == ()
    if ufunc in _COMPARISON_OUTCOMES:
        known = _out_of_range_comparison(ufunc, operands, in_dtypes)
        if known is not None:
            return _copy(b.full(known, np.bool_, shape), scalar)

    if ufunc.nin == 1:
        (x,) = operands
        return _unary(b, ufunc, x, in_dtypes[0], out_dtype, shape, scalar)

    base, exponent = operands
    if ufunc in SHIFTS:
        return _shift(b, ufunc, base, exponent, in_dtypes[0], shape, scalar)
    if ufunc is np.float_power:      # NumPy's power loop over float64 (or wider) operands
        return apply_ufunc(b, np.power, [_cast_operand(b, v, dt) for v, dt in zip(operands, in_dtypes)])
    if ufunc is np.power:
        special = _power_special_case(b, base, exponent, in_dtypes[0], shape, scalar)
        if special is not None:
            return special
    if ufunc in COMPOSITE:
        args = [b.broadcast(to_array(b, v, dt), shape) for v, dt in zip(operands, in_dtypes)]
        return _copy(_composite(b, ufunc, *args, in_dtypes[0], shape), scalar)
    if in_dtypes[0] != in_dtypes[1]:
        return _mixed_sign_comparison(b, ufunc, operands, in_dtypes, shape, scalar)
    args = [b.broadcast(to_array(b, v, dt), shape) for v, dt in zip(operands, in_dtypes)]
    return b.op(BINARY_KINDS[ufunc], args, is_scalar=scalar)


# NumPy 2 compares int64 with uint64 exactly (its 'qQ->?' and 'Qq->?' loops) instead of through
# float64. A negative int64 is below every uint64; otherwise both sides compare as uint64.
# The answer for a negative signed side, when it is on the left:
_NEGATIVE_SIGNED_LEFT = {np.less: True, np.less_equal: True, np.greater: False,
                         np.greater_equal: False, np.equal: False, np.not_equal: True}


def _mixed_sign_comparison(b, ufunc, operands, in_dtypes, shape, scalar):
    if ufunc not in _NEGATIVE_SIGNED_LEFT or {d.kind for d in in_dtypes} != {"i", "u"}:
        raise Unsupported(f"np.{ufunc.__name__} on {in_dtypes[0]} and {in_dtypes[1]}")
    left, right = operands
    if in_dtypes[0].kind == "u":
        ufunc, left, right = _MIRRORED[ufunc], right, left
        in_dtypes = in_dtypes[::-1]
    signed_dtype, unsigned_dtype = in_dtypes
    signed = b.broadcast(to_array(b, left, signed_dtype), shape)
    unsigned = b.broadcast(to_array(b, right, unsigned_dtype), shape)
    as_unsigned = b.op(BINARY_KINDS[ufunc], [b.cast(signed, unsigned_dtype), unsigned])
    negative = b.op("lt", [signed, b.broadcast(b.constant(0, signed_dtype), shape)])
    if _NEGATIVE_SIGNED_LEFT[ufunc]:
        return b.op("bitwise_or", [negative, as_unsigned], is_scalar=scalar)
    return b.op("bitwise_and", [b.op("invert", [negative]), as_unsigned], is_scalar=scalar)


# For `array OP c` with a Python int c beyond the array dtype's range: the answer when c is
# above the range, and when it is below. (NumPy 2 compares such ints exactly.)
_COMPARISON_OUTCOMES = {
    np.less: (True, False), np.less_equal: (True, False), np.greater: (False, True),
    np.greater_equal: (False, True), np.equal: (False, False), np.not_equal: (True, True),
}
_MIRRORED = {np.less: np.greater, np.less_equal: np.greater_equal, np.greater: np.less,
             np.greater_equal: np.less_equal, np.equal: np.equal, np.not_equal: np.not_equal}


def _out_of_range_comparison(ufunc, operands, in_dtypes):
    left, right = operands
    if isinstance(left, int) and not isinstance(left, bool) and isinstance(right, ArrayValue):
        ufunc, left, right = _MIRRORED[ufunc], right, left      # c OP x  ==  x OP' c
        in_dtypes = in_dtypes[::-1]
    dtype = in_dtypes[1]
    if not (isinstance(right, int) and not isinstance(right, bool)):
        return None
    if isinstance(left, ArrayValue):
        # Only integer arrays compare with any Python int exactly; a bool array converts it to
        # int64 first and raises OverflowError past that range (as for `bool_array == 2**64 - 1`).
        run_concrete(lambda: ufunc(np.zeros((0,), left.dtype), right).dtype)
    if dtype.kind not in "iu":
        return None
    info = np.iinfo(dtype)
    above, below = _COMPARISON_OUTCOMES[ufunc]
    if right > info.max:
        return above
    if right < info.min:
        return below
    return None


def _raise_if_numpy_rejects(ufunc, operands):
    """For an operand we do not model (a string, None ...): if NumPy rejects the call anyway,
    raise NumPy's own error type (tried on 0-d stand-ins for the arrays, so it is cheap)."""
    stand_ins = [np.zeros((), v.dtype) if isinstance(v, ArrayValue) else v for v in operands]
    if any(isinstance(v, np.ndarray) and v.ndim for v in stand_ins):
        return
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ufunc(*stand_ins)
    except Exception as e:
        raise numpy_raises(e, f"np.{ufunc.__name__}: {e}") from e


def _shift(b, ufunc, x, amount, dtype, shape, scalar):
    """NumPy's shifts in the loop's integer dtype: by an amount past the width (or a negative
    one) 0, or -1 for a negative value shifted right (the IR's left_shift / right_shift)."""
    if dtype.kind not in "iu":
        raise Unsupported(f"np.{ufunc.__name__} in {dtype}")
    xs, ns = (b.broadcast(to_array(b, v, dtype), shape) for v in (x, amount))
    return b.op("left_shift" if ufunc is np.left_shift else "right_shift", [xs, ns], is_scalar=scalar)


def _cast_operand(b, v, dtype):
    """Operand ``v`` in ``dtype``: an array cast, a constant converted (a Python or NumPy scalar
    stays one, so NumPy's rules for scalars still see it)."""
    return b.cast(v, dtype) if is_abstract(v) else np.dtype(dtype).type(v)


def _modf(b, x):
    """C's modf: (x - trunc(x) with x's sign, trunc(x)); an infinity's fraction is a signed zero."""
    (dtype,), _ = rules.resolve_ufunc(np.modf, [x])
    shape = shape_of(x)
    x = b.broadcast(to_array(b, x, dtype), shape)
    whole = b.op("trunc", [x])
    fraction = b.op("where", [b.op("isinf", [x]), b.full(0, dtype, shape), b.op("sub", [x, whole])])
    scalar = shape == ()
    return _copy(b.op("copysign", [fraction, x]), scalar), _copy(whole, scalar)


def _composite(b, ufunc, x, y, dtype, shape):
    """``ufunc(x, y)`` of two arrays of ``dtype`` and ``shape`` from the IR's ops, as NumPy's
    loops compute it (numpy/_core/src/umath: npy_math's and the loops' definitions)."""
    if ufunc in (np.fmax, np.fmin):
        if np.dtype(dtype).kind not in "fV":
            return b.op("maximum" if ufunc is np.fmax else "minimum", [x, y])   # integers, booleans
        # The number where one side is NaN. Of two equal values (0.0 and -0.0): the second, as
        # NumPy's float32 and float64 array loops and ml_dtypes' bfloat16 give; NumPy's float16
        # loop (and its scalar ones) the first.
        if np.dtype(dtype) == np.float16:
            first = b.op("ge" if ufunc is np.fmax else "le", [x, y])
            return b.op("where", [b.op("bitwise_or", [first, b.op("isnan", [y])]), x, y])
        extreme = b.op("maximum" if ufunc is np.fmax else "minimum", [x, y])
        return b.op("where", [b.op("isnan", [y]), x, b.op("where", [b.op("isnan", [x]), y, extreme])])
    if ufunc is np.fmod:
        # C's remainder (the dividend's sign) from the IR's `mod` (the divisor's). Floats: the
        # remainder of the magnitudes, exact (NumPy's `mod` of two positives is C's fmod), with
        # x's sign (so fmod(-0.0, y) is -0.0, fmod(x, +-inf) is x). Integers: where r and x
        # differ in sign, r - y.
        if np.dtype(dtype).kind in "fV":
            magnitude = b.op("mod", [b.op("abs", [x]), b.op("abs", [y])])
            return b.op("copysign", [magnitude, x])
        r = b.op("mod", [x, y])
        zero = b.full(0, dtype, shape)
        differ = b.op("ne", [b.op("lt", [r, zero]), b.op("lt", [x, zero])])
        return b.op("where", [b.op("bitwise_and", [b.op("ne", [r, zero]), differ]), b.op("sub", [r, y]), r])
    if ufunc is np.heaviside:
        # x < 0: 0, x > 0: 1, x == 0: y, NaN: NaN.
        zero, one = b.full(0, dtype, shape), b.full(1, dtype, shape)
        steps = b.op("where", [b.op("gt", [x, zero]), one, b.op("where", [b.op("eq", [x, zero]), y, x])])
        return b.op("where", [b.op("lt", [x, zero]), zero, steps])
    # logaddexp, logaddexp2: npy_logaddexp's and npy_logaddexp2's steps. Equal sides (infinities
    # of one sign too) give x + log 2 (x + 1); otherwise the larger plus log1p(exp(-|x - y|))
    # (log2(1 + 2^-|x - y|) as LOG2E * log1p(exp2(...))); NaN where x - y is NaN. Half types in
    # float32, as their loops compute.
    compute = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
    wide_x, wide_y = b.cast(x, compute), b.cast(y, compute)
    difference = b.op("sub", [wide_x, wide_y])
    zero = b.full(0, compute, shape)
    base_two = ufunc is np.logaddexp2

    def plus_log1p_exp(base, exponent):
        if not base_two:
            return b.op("add", [base, b.op("log1p", [b.op("exp", [exponent])])])
        log2_1p = b.op("mul", [b.full(compute.type(np.log2(np.e)), compute, shape),
                               b.op("log1p", [b.op("exp2", [exponent])])])
        return b.op("add", [base, log2_1p])
    result = b.op("where", [b.op("le", [difference, zero]), plus_log1p_exp(wide_y, difference), difference])
    result = b.op("where", [b.op("gt", [difference, zero]), plus_log1p_exp(wide_x, b.op("neg", [difference])),
                            result])
    log_of_two = b.full(compute.type(1.0 if base_two else np.log(2.0)), compute, shape)
    result = b.op("where", [b.op("eq", [wide_x, wide_y]), b.op("add", [wide_x, log_of_two]), result])
    return b.cast(result, dtype)


def _copy(v: ArrayValue, scalar: bool) -> ArrayValue:
    """A new array object with the same data (NumPy returns a fresh array)."""
    return ArrayValue(v.node, v.dtype, v.shape, is_scalar=scalar)


def _unary(b, ufunc, x, dtype, out_dtype, shape, scalar):
    x = to_array(b, x, dtype)
    kind = UNARY_KINDS[ufunc]
    int_like = dtype.kind in "biu"
    if kind is None or (kind == "abs" and dtype.kind in "bu") or \
            (kind in ("floor", "ceil", "trunc") and int_like):
        return _copy(x, scalar)                   # identities (abs of unsigned, floor of int)
    if kind in ("isnan", "isinf", "isfinite") and int_like:
        return _copy(b.full(kind == "isfinite", np.bool_, shape), scalar)   # ints are finite
    if kind == "popcount":          # the magnitude's set bits (NumPy's bitwise_count), as uint8
        magnitude = b.op("abs", [x]) if dtype.kind == "i" else x
        return _copy(b.cast(b.op("popcount", [magnitude]), out_dtype), scalar)
    if kind == "mul_by":
        compute = np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)
        numerator, denominator = _MULTIPLIERS[ufunc]
        factor = compute.type(numerator) / compute.type(denominator)
        product = b.op("mul", [b.cast(x, compute), b.full(factor, compute, shape)])
        return _copy(b.cast(product, dtype), scalar)
    return b.op(kind, [x], is_scalar=scalar)


def _power_special_case(b, base, exponent, dtype, shape, scalar):
    """Integer powers need a known non-negative exponent (NumPy raises for negative ones at
    run time); ``x ** 2`` becomes ``square`` as in NumPy's fast scalar power; float powers by
    a 0-d exponent follow NumPy's fast path (``_float_power_fast_path``)."""
    if dtype.kind == "f" and _takes_float_power_fast_path(base, exponent):
        return _float_power_fast_path(b, base, exponent, dtype, shape, scalar)
    if is_abstract(exponent):
        if dtype.kind in "biu" and exponent.dtype.kind not in "bu":
            raise Unsupported("integer power with a signed array exponent (may be negative)")
        return None
    exp_value = exponent.item() if isinstance(exponent, np.generic) else exponent
    if dtype.kind in "biu":
        if not isinstance(exp_value, int) or exp_value < 0:
            if isinstance(exp_value, int):   # NumPy: "Integers to negative integer powers ..."
                # (for unsigned bases the exponent does not even convert: OverflowError)
                raise numpy_raises(OverflowError if dtype.kind == "u" else ValueError,
                                   "integer power with a negative exponent")
            raise Unsupported("integer power needs a non-negative constant integer exponent")
    if exp_value == 2 and is_abstract(base):
        x = b.broadcast(to_array(b, base, dtype), shape)
        return b.op("square", [x], is_scalar=scalar)
    return None


def _is_numpy_or_python_scalar(v):
    return (isinstance(v, ArrayValue) and v.is_scalar) or isinstance(v, (np.generic, bool, int, float))


def _takes_float_power_fast_path(base, exponent):
    """NumPy's float power loop has a fast path for an exponent that is the same for every
    element (stride 0: a 0-d operand). Two scalars (NumPy or Python) skip the ufunc loop for
    NumPy's scalar math, which calls C pow."""
    if _is_numpy_or_python_scalar(base) and _is_numpy_or_python_scalar(exponent):
        return False
    return not is_abstract(exponent) or exponent.ndim == 0


def _float_power_fast_path(b, base, exponent, dtype, shape, scalar):
    """NumPy's float power loop (loops_umath_fp.dispatch.c.src, POWER_FAST_PATH), for an
    exponent e of stride 0, computes e == -1: 1/x, 0: 1, 0.5: sqrt(x), 1: x, 2: x*x, and C pow
    otherwise. sqrt differs from pow in special values ((-inf)**0.5 is nan, (-0.0)**0.5 is
    -0.0), 1/x and x*x in rounding. A constant exponent picks its op now; a 0-d array exponent
    selects among them per call."""
    x = b.broadcast(to_array(b, base, dtype), shape)

    def fast_op(value):
        if value == -1:
            return b.op("reciprocal", [x])
        if value == 0:
            return b.full(1, dtype, shape)
        if value == 0.5:
            return b.op("sqrt", [x])
        if value == 1:
            return _copy(x, False)
        if value == 2:
            return b.op("square", [x])
        return None

    if not is_abstract(exponent):
        try:
            value = dtype.type(exponent)      # compared in the loop dtype, as NumPy does
        except (OverflowError, ValueError) as e:    # a Python int past the float range
            raise numpy_raises(e, f"np.power exponent {exponent!r} as {dtype}: {e}") from e
        result = fast_op(value)
        if result is None:
            result = b.op("pow", [x, b.full(value, dtype, shape)])
        return _copy(result, scalar)
    e = b.cast(exponent, dtype)
    result = b.op("pow", [x, b.broadcast(e, shape)])
    for value in (2, 1, 0.5, 0, -1):
        is_value = b.broadcast(b.op("eq", [e, b.constant(value, dtype)]), shape)
        result = b.op("where", [is_value, fast_op(value), result])
    return _copy(result, scalar)


def binary_operator(b, symbol, left, right):
    """``left <symbol> right`` for the Python binary operators."""
    if symbol == "@":
        from .matmul import matmul
        if is_abstract(left) or is_abstract(right):
            return matmul(b, left, right)
    if symbol == "**" and isinstance(left, ArrayValue) and not left.is_scalar and \
            left.dtype == np.bool_ and type(right) is int and right == 2:
        # ndarray.__pow__ takes a fast path to np.square for a Python 2, which for bool arrays
        # gives int8 (np.power would give int64).
        return apply_ufunc(b, np.square, [left])
    if is_abstract(left) or is_abstract(right):
        if symbol not in BINARY_OPERATORS:
            raise Unsupported(f"operator {symbol} on arrays is not supported")
        return apply_ufunc(b, BINARY_OPERATORS[symbol], [left, right])
    return run_concrete(PYTHON_BINARY[symbol], left, right)


def compare_operator(b, symbol, left, right):
    if is_abstract(left) or is_abstract(right):
        return apply_ufunc(b, COMPARISONS[symbol], [left, right])
    return run_concrete(PYTHON_COMPARE[symbol], left, right)


def where(b, cond, x=None, y=None):
    if x is None or y is None:
        raise Unsupported("np.where with one argument (data-dependent shape)")
    for v in (cond, x, y):
        check_operand(v)
    if not any(is_abstract(v) for v in (cond, x, y)):
        return run_concrete(np.where, cond, x, y)
    # NumPy's own where on 0-d stand-ins for the arrays gives the result dtype and the value of
    # a scalar operand as NumPy converts it, or NumPy's error: the rule changed between
    # versions (np.where(int8_x > 0, int8_x, 300) holds 44 in NumPy 2.4 and raises
    # OverflowError in 2.5).
    x_st, y_st = (np.zeros((), v.dtype) if is_abstract(v) else v for v in (x, y))
    dtype = rules.check_supported_dtype(run_concrete(lambda: np.where(True, x_st, y_st).dtype))
    shape = rules.broadcast_shapes(shape_of(cond), shape_of(x), shape_of(y))
    c = b.broadcast(to_array(b, cond, np.bool_), shape)
    xs = b.broadcast(_where_operand(b, x, dtype, lambda: np.where(True, x_st, y_st)), shape)
    ys = b.broadcast(_where_operand(b, y, dtype, lambda: np.where(False, x_st, y_st)), shape)
    return b.op("where", [c, xs, ys])          # np.where returns an array even when 0-d


def _where_operand(b, v, dtype, picked):
    """An operand of np.where as ``dtype``; a scalar is the value NumPy's where picks for it."""
    if is_abstract(v):
        return b.cast(v, dtype)
    return b.constant(run_concrete(lambda: picked()[()]), dtype)


def clip(b, a, a_min=None, a_max=None, **kwargs):
    if kwargs.get("out") is not None:
        raise Unsupported("np.clip(..., out=...) is not supported")
    for v in (a, a_min, a_max):
        if v is not None:
            check_operand(v)
    if type(a) in (bool, int, float):
        # np.clip calls a.clip(); a Python number has none, so NumPy makes it an array first
        # (int64, float64, bool): a strong dtype (a NumPy scalar here), not a weak NEP 50 one.
        a = run_concrete(lambda v: np.asarray(v)[()], a)
    if not any(is_abstract(v) for v in (a, a_min, a_max)):
        return run_concrete(np.clip, a, a_min, a_max)
    if a_min is None and a_max is None:
        raise Unsupported("np.clip needs a_min or a_max")
    a_min, a_max = _clip_bounds_numpy_keeps(a, a_min, a_max)
    bounds = [v for v in (a_min, a_max) if v is not None]
    if not bounds:
        return _copy(a, shape_of(a) == ())       # np.positive(a): a new array, a ufunc's 0-d rule
    # NumPy's clip is maximum-then-minimum in the common dtype of all three operands.
    dtype = rules.result_type(a, *bounds)
    if rules.is_bfloat16(dtype) and len(bounds) == 2:
        # With both bounds NumPy calls its clip ufunc, which has no bfloat16 loop (ml_dtypes):
        # the call clips in the dtype of the loop it finds, float32.
        dtype = rules.call_result_dtype(np.clip, [rules.dtype_spec(v) for v in (a, *bounds)])
    shape = rules.broadcast_shapes(*(shape_of(v) for v in (a, *bounds)))
    out = b.broadcast(to_array(b, a, dtype), shape)
    if len(bounds) == 2 and dtype.kind == "f" and all(np.prod(shape_of(v)) == 1 for v in bounds):
        out = _clip_by_constant_bounds(b, out, *(b.broadcast(to_array(b, v, dtype), shape) for v in bounds))
        out.is_scalar = shape == ()
        return out
    if a_min is not None:
        out = b.op("maximum", [out, b.broadcast(to_array(b, a_min, dtype), shape)])
    if a_max is not None:
        out = b.op("minimum", [out, b.broadcast(to_array(b, a_max, dtype), shape)])
    out.is_scalar = shape == ()
    return out


def _clip_by_constant_bounds(b, x, lo, hi):
    """NumPy's loop for one-element bounds (its common case): an element equal to a bound is
    kept (clip(-0.0, 0.0, 0.0) is -0.0; with array bounds, maximum/minimum give the bound), and
    a NaN bound makes every element NaN."""
    out = b.op("where", [b.op("lt", [x, lo]), lo, x])
    out = b.op("where", [b.op("gt", [out, hi]), hi, out])
    nan_bound = b.op("bitwise_or", [b.op("isnan", [lo]), b.op("isnan", [hi])])
    return b.op("where", [nan_bound, b.op("add", [lo, hi]), out])


def _clip_bounds_numpy_keeps(a, a_min, a_max):
    """NumPy drops a Python-int bound outside an integer array's own dtype before promoting
    (np.clip(uint8_x, int64_t, 32767) is maximum(uint8_x, int64_t): 32767 >= 255 is no bound),
    even where the other operands promote the result to a wider type."""
    if np.dtype(a.dtype).kind not in "iu":
        return a_min, a_max
    info = np.iinfo(a.dtype)
    if type(a_min) is int and a_min <= info.min:
        a_min = None
    if type(a_max) is int and a_max >= info.max:
        a_max = None
    return a_min, a_max


def astype(b, x, dtype, *, copy=True, casting="unsafe", **kwargs):
    if kwargs:
        raise Unsupported(f"astype(..., {', '.join(kwargs)}=...) is not supported")
    if casting != "unsafe":
        raise Unsupported("astype(casting=...) is not supported")
    dtype = rules.as_dtype(dtype)
    if not is_abstract(x):
        return run_concrete(lambda v: v.astype(dtype), x)
    if x.dtype == dtype:
        if copy:
            return _copy(x, x.is_scalar)
        return x
    return b.cast(x, dtype) if not x.is_scalar else _as_scalar(b.cast(x, dtype))


def _as_scalar(v):
    v.is_scalar = True
    return v


def _power_of_ten(n):
    """NumPy's power_of_ten: 10.0 multiplied in n times (not 10.0 ** n, which rounds once)."""
    value = 1.0
    for _ in range(n):
        value *= 10.0
    return value


def round_(b, a, decimals=0, out=None):
    if out is not None:
        raise Unsupported("np.round(..., out=...) is not supported")
    decimals = rules.int_index(decimals)
    if not is_abstract(a):
        return run_concrete(np.round, a, decimals)
    if decimals != 0 and not (a.dtype.kind in "iu" and decimals > 0):
        # NumPy's PyArray_Round: x * 10^d, rinted, / 10^d (for d < 0: / then *), in the array's
        # float dtype with the factor a Python float; integers through float64 and back.
        if a.dtype.kind == "b":        # NumPy raises (its float64 product does not cast to bool)
            run_concrete(np.round, np.zeros((), np.bool_), decimals)
        first, second = (np.multiply, np.true_divide) if decimals > 0 else (np.true_divide, np.multiply)
        factor = _power_of_ten(abs(decimals))
        x = a if a.dtype.kind not in "iu" else b.cast(a, np.float64)
        y = b.op("rint", [apply_ufunc(b, first, [x, factor])])
        y = apply_ufunc(b, second, [y, factor])
        r = b.cast(y, a.dtype) if y.dtype != a.dtype else y
        return ArrayValue(r.node, r.dtype, r.shape, is_scalar=a.ndim == 0)
    if a.dtype.kind in "biu":
        if a.dtype.kind == "b":
            # np.round on bool goes through the float16 loop: 0.0 and 1.0 in float16.
            v = b.cast(a, np.float16)
            v.is_scalar = a.ndim == 0
            return v
        return _copy(a, a.ndim == 0)
    return b.op("rint", [a], is_scalar=a.ndim == 0)


def outer(b, ufunc, a, c, **kwargs):
    """``ufunc.outer(a, c)``: ``ufunc`` of every element of ``a`` with every element of ``c``
    (``a`` gets ``c.ndim`` trailing unit axes, then the two broadcast)."""
    if ufunc.nin != 2 or ufunc not in BINARY_KINDS:
        raise Unsupported(f"np.{ufunc.__name__}.outer is not supported")
    if not is_abstract(a) and not is_abstract(c):
        return run_concrete(ufunc.outer, a, c, **kwargs)
    for v in (a, c):
        check_operand(v)
    # outer converts its operands to arrays first: a Python scalar is a strong int64/float64.
    a, c = (v if is_abstract(v) else run_concrete(lambda: np.asarray(v)[()]) for v in (a, c))
    if is_abstract(a):
        a = ArrayValue(b.reshape(a, a.shape + (1,) * len(shape_of(c))).node, a.dtype,
                       a.shape + (1,) * len(shape_of(c)))
    return apply_ufunc(b, ufunc, [a, c], **kwargs)


def numpy_outer(b, a, c, out=None):
    """``np.outer``: the product of the flattened operands as a column times a row."""
    if out is not None:
        raise Unsupported("np.outer(out=...) is not supported")
    if not is_abstract(a) or not is_abstract(c):
        raise Unsupported("np.outer of a constant builds a constant array")
    return outer(b, np.multiply, b.reshape(a, (a.size,)), b.reshape(c, (c.size,)))
