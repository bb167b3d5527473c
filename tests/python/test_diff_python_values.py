"""Python int/float/bool constants and arguments, compiled vs NumPy (NEP 50 weak promotion):
x_f32 * 2.0 stays float32, x_i32 + 1.5 -> float64, x_i32 / 2 -> float64, x_bool + 1 -> int64,
out-of-range Python ints raise OverflowError; values that change between calls; closures,
globals, defaults and Python control flow on Python values."""

import numpy as np
import pytest

from numpy_oracle import DTYPES, check, compiled, fn_from_src, hc, make

CONST_EXPRS = ["x * 2.0", "x + 1", "x / 2", "x // 3", "x % 4", "2.0 - x", "1 - x", "x ** 2",
               "x + 1.5", "x * True", "x > 0.5", "x == 1", "x < -2", "np.maximum(x, 0)",
               "np.minimum(x, 1.0)", "np.where(x > 0, x, 0.0)", "-x if False else x + 0",
               "x ** 0.5", "x ** 3", "3.0 ** x", "np.float32(2) * x"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_constants(dtype, rng):
    """One function returning a tuple of every constant form (one compile per dtype)."""
    f = fn_from_src(f"def f(x):\n    return ({', '.join(CONST_EXPRS)},)\n")
    kind = "small" if dtype.startswith("int") else "normal"
    x = make(rng, (4, 6), dtype, kind)
    if dtype.startswith("int"):
        x = np.abs(x)  # 3 ** x and x ** 2 with x >= 0
    check(f, x, ops=2)


@pytest.mark.parametrize("dtype", ["int32", "bool", "float32"])
def test_constant_each_raising(dtype, rng):
    """Forms NumPy rejects: bool - int is fine, -bool is TypeError, int ** negative int
    ValueError, Python int out of int32 range OverflowError."""
    x = make(rng, (5,), dtype, "small")
    for expr in ["x - True", "-x", "x ** -1", "x + 2 ** 40", "x * 2 ** 31", "x + (2 ** 31 - 1)",
                 "x & 1"]:
        check(fn_from_src(f"def f(x):\n    return {expr}\n"), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_arguments(dtype, rng):
    """Python scalars passed as arguments are weak too; new values must not reuse stale ones."""
    f = fn_from_src("def f(x, s, n, flag):\n    return x * s + n, (x > s) == flag, x / n\n")
    kind = "small" if dtype.startswith("int") else "normal"
    x = make(rng, (3, 5), dtype, kind)
    cf = compiled(f)
    for s, n, flag in [(2.0, 3, True), (-0.5, 7, False), (2.0, 3, False), (1, 0, True)]:
        check(f, x, s, n, flag, cfn=cf, ops=2)


def test_int_arg_overflow_per_value(rng):
    """The same compiled function: an int32 array + Python int within range wraps, out of range
    raises OverflowError (NumPy 2), then within range again."""
    f = fn_from_src("def f(x, n):\n    return x + n\n")
    cf = compiled(f)
    x = make(rng, (6,), "int32", "wide")
    for n in [5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), -(2 ** 31) - 1, 3]:
        check(f, x, n, cfn=cf)


def test_python_control_flow_on_python_values(rng):
    """`if` on a Python argument is specialised per value (not a data-dependent branch)."""
    f = fn_from_src(
        "def f(x, mode, k):\n"
        "    if mode == 'relu':\n"
        "        y = np.maximum(x, 0)\n"
        "    elif mode:\n"
        "        y = np.tanh(x)\n"
        "    else:\n"
        "        y = x\n"
        "    for i in range(k):\n"
        "        y = y * 2 + i\n"
        "    return y\n")
    cf = compiled(f)
    x = make(rng, (4, 4), "float32")
    for mode, k in [("relu", 2), ("tanh", 0), ("", 3), ("relu", 2), ("relu", 3)]:
        check(f, x, mode, k, cfn=cf, ops=4)


SCALE = 2.0


def _uses_global(x):
    return x * SCALE


def test_global_changes_between_calls(rng):
    """A module global read by the function: changing it must change the compiled result."""
    global SCALE
    x = make(rng, (5,), "float64")
    cf = compiled(_uses_global)
    try:
        check(_uses_global, x, cfn=cf)
        SCALE = -3.5
        check(_uses_global, x, cfn=cf)
    finally:
        SCALE = 2.0


def test_closure_and_defaults(rng):
    def make_fn(axis, eps):
        def f(x, p=2.0):
            return x / (np.abs(x).sum(axis=axis, keepdims=True) + eps) * p
        return f

    x = make(rng, (4, 7), "float32")
    f0, f1 = make_fn(0, 1e-3), make_fn(1, 0.5)
    check(f0, x, ops=3, reduce=4, scale=8.0)
    check(f1, x, ops=3, reduce=7, scale=8.0)
    check(f1, x, 3.0, ops=3, reduce=7, scale=8.0)


def test_returns_python_values(rng):
    """Python values computed from shapes come back as the same Python types."""
    f = fn_from_src("def f(x):\n    return x.shape, x.ndim, x.shape[0] * 2, x * 1.0, len(x)\n")
    check(f, make(rng, (3, 4), "float32"))
    check(f, make(rng, (5, 2, 2), "float32"))


def test_hc_module_exports():
    assert callable(hc.hcompile) and callable(hc.explain) and callable(hc.reset)
    assert issubclass(hc.Unsupported, Exception) and issubclass(hc.CompileError, Exception)


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_of_a_python_number_is_a_strong_array(dtype, rng):
    """np.clip(s, x, ...) with a Python number first: NumPy calls np.asarray(s).clip(...), so the
    number is an int64/float64/bool array (strong), while bounds stay weak scalars."""
    x = make(rng, (4,), dtype, "small")
    for expr in ["np.clip(-2, x, 3)", "np.clip(2.5, x, None)", "np.clip(True, x, x)",
                 "np.clip(x, -2, 3)", "x.clip(0, 1)"]:
        check(fn_from_src(f"def f(x):\n    return {expr}\n"), x)
