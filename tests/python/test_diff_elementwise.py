"""Elementwise ops, compiled vs NumPy: unary, binary (same and mixed dtypes), odd values."""

import itertools

import numpy as np
import pytest

from numpy_oracle import DTYPES, INT_DTYPES, check, fn_from_src, make, unclaimed

# core/OPS.md: integer `pow` needs a non-negative exponent the frontend can guarantee; an integer
# array exponent is reported Unsupported ("integer power with an array exponent")
INT_POW = unclaimed("integer ** integer array exponent (core/OPS.md: exponent must be known >= 0)")

# name -> (expression in x, float input kind, int input kind, float specials fraction)
UNARY = {
    "neg": ("-x", "mixed", "normal", 0.1),
    "pos": ("+x", "mixed", "normal", 0.1),
    "abs": ("abs(x)", "mixed", "normal", 0.1),
    "np.abs": ("np.abs(x)", "mixed", "normal", 0.1),
    "exp": ("np.exp(x)", "small", "small", 0.1),
    "log": ("np.log(x)", "mixed", "normal", 0.1),  # negatives -> nan, 0 -> -inf
    "log1p": ("np.log1p(x)", "small", "small", 0.1),
    "log2": ("np.log2(x)", "mixed", "normal", 0.1),
    "exp2": ("np.exp2(x)", "small", "small", 0.1),
    "cbrt": ("np.cbrt(x)", "mixed", "normal", 0.1),
    "log10": ("np.log10(x)", "mixed", "normal", 0.1),
    "expm1": ("np.expm1(x)", "small", "small", 0.1),
    "sqrt": ("np.sqrt(x)", "mixed", "normal", 0.1),
    "sin": ("np.sin(x)", "small", "small", 0.1),
    "cos": ("np.cos(x)", "small", "small", 0.1),
    "tan": ("np.tan(x)", "small", "small", 0.1),
    "tanh": ("np.tanh(x)", "mixed", "small", 0.1),
    "sinh": ("np.sinh(x)", "small", "small", 0.1),
    "cosh": ("np.cosh(x)", "small", "small", 0.1),
    "arcsin": ("np.arcsin(x)", "unit", "small", 0.1),
    "arccos": ("np.arccos(x)", "unit", "small", 0.1),
    "arctan": ("np.arctan(x)", "mixed", "normal", 0.1),
    "arcsinh": ("np.arcsinh(x)", "mixed", "normal", 0.1),
    "arccosh": ("np.arccosh(x)", "mixed", "normal", 0.1),  # below 1 -> nan
    "arctanh": ("np.arctanh(x)", "unit", "small", 0.1),
    "floor": ("np.floor(x)", "mixed", "normal", 0.1),
    "ceil": ("np.ceil(x)", "mixed", "normal", 0.1),
    "round": ("np.round(x)", "halves", "normal", 0.1),  # ties to even
    "rint": ("np.rint(x)", "halves", "normal", 0.1),
    "trunc": ("np.trunc(x)", "mixed", "normal", 0.1),
    "square": ("np.square(x)", "mixed", "normal", 0.1),
    "reciprocal": ("np.reciprocal(x)", "mixed", "nonzero", 0.1),  # 1/0 -> inf for floats
    "sign": ("np.sign(x)", "mixed", "normal", 0.1),
    "isnan": ("np.isnan(x)", "mixed", "normal", 0.2),
    "isfinite": ("np.isfinite(x)", "mixed", "normal", 0.2),
    "isinf": ("np.isinf(x)", "mixed", "normal", 0.2),
    "invert": ("~x", "mixed", "wide", 0.0),  # floats: TypeError
    "logical_not": ("np.logical_not(x)", "mixed", "normal", 0.1),
    "signbit": ("np.signbit(x)", "mixed", "normal", 0.2),
    "modf": ("np.modf(x)", "mixed", "normal", 0.2),
}


FLOAT_ONLY = ["exp", "exp2", "cbrt", "log", "log1p", "log2", "log10", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
              "cosh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"]
# float-only ops promote ints to float64 (int32 and int64 alike) and bool to float16
_UNARY_CASES = [(op, dt) for op in UNARY
                for dt in (["float32", "float64", "int32"] if op in FLOAT_ONLY else DTYPES)]
_UNARY_CASES += [("exp", "bool"), ("sqrt", "int64")]


@pytest.mark.parametrize("op,dtype", _UNARY_CASES)
def test_unary(op, dtype, rng):
    expr, fkind, ikind, specials = UNARY[op]
    if op == "reciprocal" and dtype == "bool":
        pytest.skip("integer reciprocal of 0 (False) is implementation-defined in NumPy")
    f = fn_from_src(f"def f(x):\n    return {expr}\n")
    kind = fkind if dtype.startswith("float") else ikind
    x = make(rng, (4, 9), dtype, kind, specials=specials)
    check(f, x)


# operator / function -> expression in a, b
BINARY = {
    "add": "a + b", "sub": "a - b", "mul": "a * b", "truediv": "a / b",
    "floordiv": "a // b", "mod": "a % b", "pow": "a ** b",
    "eq": "a == b", "ne": "a != b", "lt": "a < b", "le": "a <= b", "gt": "a > b",
    "ge": "a >= b", "and": "a & b", "or": "a | b", "xor": "a ^ b",
    "minimum": "np.minimum(a, b)", "maximum": "np.maximum(a, b)",
    "arctan2": "np.arctan2(a, b)",
    "where": "np.where(a > b, a, b)",
    "fmax": "np.fmax(a, b)", "fmin": "np.fmin(a, b)", "heaviside": "np.heaviside(a, b)",
    "logaddexp": "np.logaddexp(a, b)", "float_power": "np.float_power(a, b)",
    "hypot": "np.hypot(a, b)", "copysign": "np.copysign(a, b)", "fmod": "np.fmod(a, b)",
    "divmod": "np.divmod(a, b)",
}


def _binary_inputs(rng, op, dtype, shape=(5, 8)):
    """Operands that exercise each op's interesting region (zeros, negatives, NaN)."""
    if dtype == "bool":
        return make(rng, shape, dtype), make(rng, shape, dtype)
    if dtype.startswith("int"):
        if op in ("pow", "float_power"):
            return make(rng, shape, dtype, "small"), make(rng, shape, dtype, "nonneg")
        if op in ("and", "or", "xor"):
            return make(rng, shape, dtype, "wide"), make(rng, shape, dtype, "wide")
        if op in ("floordiv", "mod", "truediv", "fmod", "divmod"):
            return make(rng, shape, dtype, "normal"), make(rng, shape, dtype, "small")
        return make(rng, shape, dtype, "normal"), make(rng, shape, dtype, "normal")
    # floats
    if op in ("pow", "float_power"):
        return make(rng, shape, dtype, "pos", specials=0.1), make(rng, shape, dtype, "small",
                                                                  specials=0.1)
    a = make(rng, shape, dtype, "mixed", specials=0.1)
    b = make(rng, shape, dtype, "mixed", specials=0.1)
    if op in ("eq", "ne", "le", "ge", "minimum", "maximum", "fmax", "fmin", "logaddexp"):
        b = np.where(rng.random(shape) < 0.3, a, b).astype(dtype)  # ties
    return a, b


_BINARY_CASES = [pytest.param(op, dt, marks=INT_POW) if op == "pow" and dt in INT_DTYPES
                 else (op, dt) for op in BINARY for dt in DTYPES]


@pytest.mark.parametrize("op,dtype", _BINARY_CASES)
def test_binary_same_dtype(op, dtype, rng):
    f = fn_from_src(f"def f(a, b):\n    return {BINARY[op]}\n")
    a, b = _binary_inputs(rng, op, dtype)
    # float % and // are exact in NumPy (fmod based); a remainder computed as a - b*floor(a/b)
    # differs by ~eps*|a|, which the absolute tolerance allows, a wrong quotient it does not
    scale = float(np.nanmax(np.abs(np.where(np.isfinite(a), a, 0)))) if op == "mod" and \
        dtype.startswith("float") else None
    check(f, a, b, scale=scale)


# one function per dtype pair (a tuple of results) keeps the number of compiles down
PROMOTION = ("a + b, b + a, a * b, a / b, a // b, a % b, a < b, b >= a, np.maximum(a, b), "
             "np.minimum(b, a), np.where(a > 0, a, b), a == b")


@pytest.mark.parametrize("da,db", list(itertools.combinations(DTYPES, 2)))
def test_binary_mixed_dtype(da, db, rng):
    f = fn_from_src(f"def f(a, b):\n    return ({PROMOTION})\n")
    # shapes broadcast too: (3, 1) with (1, 4)
    a = make(rng, (3, 1), da, "normal" if da.startswith("int") else "mixed")
    b = make(rng, (1, 4), db, "small" if db.startswith("int") else "mixed")
    check(f, a, b, scale=200.0)  # scale: float % is exact in NumPy; see test_binary_same_dtype


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_division_signs_and_zero(dtype):
    """Floor semantics for negatives, x//0 == x%0 == 0, INT_MIN // -1 wraps, INT_MIN % -1 == 0."""
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 0, 5, -5, info.min, info.min, info.max, 1, -1], dtype=dtype)
    b = np.array([2, 2, -2, -2, 0, 0, 0, -1, 0, -1, 3, 3], dtype=dtype)
    check(fn_from_src("def f(a, b):\n    return a // b, a % b, np.floor_divide(a, b), np.remainder(a, b), np.mod(a, b)\n"), a, b)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_overflow_wraps(dtype, rng):
    """NumPy array arithmetic wraps modulo 2**bits; Halide treats signed int32 overflow as UB."""
    info = np.iinfo(dtype)
    a = make(rng, (64,), dtype, "wide")
    b = make(rng, (64,), dtype, "wide")
    a[:4] = [info.max, info.min, info.max, info.min]
    b[:4] = [1, -1, info.max, info.min]
    f = fn_from_src("def f(a, b):\n    return a + b, a - b, a * b, -a, abs(a), a * 3 + 7\n")
    check(f, a, b)


@INT_POW
@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_power_overflow_and_negative_exponent(dtype, rng):
    a = make(rng, (40,), dtype, "small")
    e = make(rng, (40,), dtype, "nonneg", high=40)
    f = fn_from_src("def f(a, e):\n    return a ** e\n")
    check(f, a, e)  # wraps like repeated multiplication
    e[3] = -1
    check(f, a, e)  # ValueError: Integers to negative integer powers are not allowed.


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_float_floordiv_mod_exactness(dtype):
    """NumPy's float // and % are fmod-based: 1.0 // 0.1 == 9.0 (not floor(1.0 / 0.1) == 10),
    1.0 % 0.1 == 0.09999..., results take the divisor's sign, x % 0 and x // 0 give nan/inf."""
    a = np.array([1.0, -1.0, 5.3, 0.7, 7.0, -7.0, 7.0, -7.0, 1.0, 0.0, np.inf, 3.0, -0.0],
                 dtype=dtype)
    b = np.array([0.1, 0.1, 0.2, 0.1, 2.0, 2.0, -2.0, -2.0, 0.0, 0.0, 2.0, np.inf, 3.0],
                 dtype=dtype)
    f = fn_from_src("def f(a, b):\n    return a // b, a % b\n")
    check(f, a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_inf_propagation(dtype):
    nan, inf = np.nan, np.inf
    a = np.array([nan, 1.0, nan, inf, -inf, 0.0, -0.0, inf, 2.0, -inf], dtype=dtype)
    b = np.array([1.0, nan, nan, -inf, inf, -0.0, 0.0, inf, 2.0, nan], dtype=dtype)
    f = fn_from_src(
        "def f(a, b):\n"
        "    return (np.maximum(a, b), np.minimum(a, b), np.isnan(a + b), np.isfinite(a * b),\n"
        "            np.exp(a), np.log(b), np.where(np.isnan(a), b, a),\n"
        "            a < b, a == b, np.clip(a, -1.0, 1.0))\n")
    check(f, a, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip(dtype, rng):
    f = fn_from_src("def f(x, lo, hi):\n    return (np.clip(x, -1, 1), x.clip(-0.5, 2), "
                    "np.clip(x, lo, hi), np.clip(x, lo, None), np.clip(x, None, hi))\n")
    kind = "mixed" if dtype.startswith("float") else "normal"
    x = make(rng, (6, 7), dtype, kind, specials=0.05)
    lo = make(rng, (7,), dtype, kind)
    hi = lo + (make(rng, (6, 1), dtype, "pos") if dtype != "bool" else lo)
    check(f, x, lo, hi)


@pytest.mark.parametrize("dtype", DTYPES)
def test_astype(dtype, rng):
    """Casts to every dtype: float->int truncates toward zero (in-range values), x->bool is x!=0."""
    common = ("x.astype(np.float32), x.astype(np.float64), x.astype(np.int32), "
              "x.astype(np.int64), x.astype(bool), x.astype(float), x.astype(int)")
    if dtype.startswith("float"):
        # finite values within int32 range: out-of-range float->int casts are undefined in C
        x = np.clip(make(rng, (5, 6), dtype, "mixed") * 1e4, -2e9, 2e9).astype(dtype)
        f = fn_from_src(f"def f(x):\n    return ({common})\n")
    else:
        # integer narrowing wraps (defined), also to unsigned
        x = make(rng, (5, 6), dtype, "wide")
        f = fn_from_src(f"def f(x):\n    return ({common}, x.astype('int8'), x.astype(np.uint8))\n")
    check(f, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_logical(dtype, rng):
    f = fn_from_src("def f(a, b):\n    return np.logical_and(a, b), np.logical_or(a, b > 0), "
                    "np.logical_xor(a, b)\n")
    kind = "small" if dtype != "float32" and dtype != "float64" else "mixed"
    check(f, make(rng, (4, 5), dtype, kind), make(rng, (4, 5), dtype, kind))
