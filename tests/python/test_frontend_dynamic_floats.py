"""Float arguments read at run time: a step size or time that changes between calls compiles
once more (dynamic=None) or once (dynamic=True), never once per value, and gives exactly what
Python and NumPy give: the float stays a weak Python scalar in array operations (NEP 50), Python
arithmetic on it stays Python floats, and everything else about it runs as Python."""
import math

import numpy as np
import pytest

import hcompile as hc

SPECIAL = [0.0, -0.0, 0.1, -2.5, 1e300, -1e-320, float("inf"), float("-inf"), float("nan"), 3.0]


def same(got, want):
    """Same type, dtype, shape and bits (NaN payloads aside)."""
    if isinstance(want, tuple):
        return type(got) is tuple and len(got) == len(want) and all(map(same, got, want))
    if type(got) is not type(want):
        return False
    if isinstance(want, float):
        return (math.isnan(got) and math.isnan(want)) or \
            np.float64(got).tobytes() == np.float64(want).tobytes()
    if isinstance(want, (np.ndarray, np.generic)):
        got, want = np.asarray(got), np.asarray(want)
        if got.dtype != want.dtype or got.shape != want.shape:
            return False
        if want.dtype.kind == "f":
            nan = np.isnan(want)
            return np.array_equal(nan, np.isnan(got)) and \
                np.array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))
        return np.array_equal(got, want)
    return got == want


def check_calls(fn, cf, arrays, values):
    for v in values:
        with np.errstate(all="ignore"):
            want = fn(*[a.copy() for a in arrays], v)
            got = cf(*[a.copy() for a in arrays], v)
        assert same(got, want), (v, got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool"])
def test_a_float_with_arrays_is_the_weak_python_scalar(dtype):
    def f(x, dt):
        return x * dt + dt, x > dt, np.maximum(x, dt), x - dt, dt * x[:2]
    x = (np.arange(-3, 5) * 1.5).astype(dtype)
    cf = hc.hcompile(f, dynamic=True, fullgraph=True)
    check_calls(f, cf, [x], SPECIAL)
    assert cf.cache_info().entries == 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_division_by_a_run_time_zero_is_numpys(dtype):
    def f(x, d):
        return x / d, x // d, x % d, d / x
    x = np.array([1.0, -1.0, 0.0, np.nan, np.inf, -0.0], dtype)
    cf = hc.hcompile(f, dynamic=True, fullgraph=True)
    check_calls(f, cf, [x], SPECIAL)


def test_python_arithmetic_stays_python_floats():
    def f(x, t):
        s = t + 1
        s -= 2.5
        return s * t, -t, +t, abs(t), float(t), t * True, 3 - t, x * s
    x = np.ones(3, np.float32)
    cf = hc.hcompile(f, dynamic=True, fullgraph=True)
    check_calls(f, cf, [x], SPECIAL)
    got = cf(x, 0.5)
    assert all(type(v) is float for v in got[:-1])


def test_returning_the_argument_hands_back_the_same_object():
    def f(x, t):
        return x + t, t
    cf = hc.hcompile(f, dynamic=True, fullgraph=True)
    t = 12345.5
    assert cf(np.ones(2), t)[1] is t


@pytest.mark.parametrize("body", [
    "return x * 2 if t > 0.5 else x",        # a branch on the value
    "return x + t / 2",                      # ZeroDivisionError for t == 0 in Python
    "return x + t ** 2",                     # OverflowError for large t in Python
    "return x ** t",                         # NumPy's operator takes value-dependent fast paths
    "return x + math.sin(t)",
    "return x[:int(t) if t == t and abs(t) < 9 else 1]",
    "x[0] = t\n    return x",
    "return x + round(t) if t == t and abs(t) < 1e9 else x",
    "return x + t.is_integer()",
    "print(t)\n    return x + t",
    "return x + (t // 2 if t else 1.0)",
])
def test_other_uses_run_as_python(body, capsys):
    ns = {"np": np, "math": math}
    exec(f"def f(x, t):\n    {body}\n", ns)
    f = ns["f"]
    cf = hc.hcompile(f, dynamic=True)
    x = np.array([1.5, -2.0, 0.25])
    for v in SPECIAL:
        try:
            want = f(x.copy(), v)
        except Exception as e:          # noqa: BLE001
            with pytest.raises(type(e)):
                cf(x.copy(), v)
            continue
        assert same(cf(x.copy(), v), want), v
    capsys.readouterr()


def test_in_place_updates_with_a_run_time_float():
    def f(x, t):
        x += t
        x *= t
        return x
    x = np.linspace(-1, 1, 7).astype(np.float32)
    cf = hc.hcompile(f, dynamic=True, fullgraph=True)
    for v in SPECIAL:
        a, b = x.copy(), x.copy()
        with np.errstate(all="ignore"):
            want, got = f(a, v), cf(b, v)
        assert same(got, want) and same(b, a) and got is b, v


def test_in_place_update_numpy_rejects_raises_its_error():
    def f(x, t):
        x += t
        return x
    cf = hc.hcompile(f, dynamic=True)
    with pytest.raises(TypeError):      # NumPy's UFuncOutputCastingError is a TypeError
        f(np.arange(3), 0.5)
    with pytest.raises(TypeError):
        cf(np.arange(3), 0.5)


def test_numpy_scalars_and_ufunc_calls():
    def f(x, t):
        return np.float32(2) * t, np.add(x, t), np.float64(1.5) + t, np.sqrt(t) * x, np.abs(t)
    cf = hc.hcompile(f, dynamic=True, fullgraph=True)
    check_calls(f, cf, [np.arange(3, dtype=np.float32)], SPECIAL)
    # Math functions hold to the stated 3-ulp tolerance, not bits.
    sin = hc.hcompile(lambda t: np.sin(t), dynamic=True, fullgraph=True)
    for v in SPECIAL[:6]:
        got = sin(v)
        assert type(got) is np.float64 and np.allclose(got, np.sin(v), rtol=1e-15, atol=0), v


def test_a_changing_float_compiles_twice_not_per_value():
    def step(u, dt, c):
        return u + dt * c * (u[::-1] - 2 * u)
    cf = hc.hcompile(step)
    u = np.random.default_rng(0).random(64)
    for k in range(20):
        assert same(cf(u, 0.1 + k * 0.01, 2), step(u, 0.1 + k * 0.01, 2))
    assert cf.cache_info().entries == 2
    # An int that changes is still specialised on (ints size arrays and drive loops).
    cf(u, 0.5, 3)
    assert cf.cache_info().entries == 3


def test_dynamic_false_specialises_on_every_value():
    cf = hc.hcompile(lambda x, t: x * t, dynamic=False)
    for k in range(4):
        cf(np.ones(3), float(k))
    assert cf.cache_info().entries == 4


def test_a_time_loop_carrying_a_float_compiles_its_body_twice():
    def sim(u, n, dt):
        t = 0.0
        for _ in range(n):
            u = u + dt * np.sin(t) * u
            t += dt
        return u, t
    cf = hc.hcompile(sim)
    u = np.linspace(0, 1, 50)
    for dt in (0.01, 0.02):
        assert same(cf(u, 40, dt), sim(u, 40, dt))
    body = [r for r in cf.compile_records if r["graph"] is not None]
    assert len(body) <= 6, len(body)


def test_bool_arguments_are_not_floats():
    cf = hc.hcompile(lambda x, flag: x * 2 if flag else x, dynamic=True)
    x = np.arange(3.0)
    assert same(cf(x, True), x * 2) and same(cf(x, False), x)
