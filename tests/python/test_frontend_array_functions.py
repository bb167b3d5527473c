"""np.diff, np.diag / diagonal, np.trace, np.linalg.norm, angle conversions, nan-aware extremes,
np.hypot, np.copysign, np.signbit, np.log2, np.log10, np.exp2, np.cbrt and np.isclose, compiled
(fullgraph) against NumPy."""
import ml_dtypes
import numpy as np
import pytest

import hcompile as hc
import numpy_oracle as O


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("call", [
    "np.diff(a)", "np.diff(a, axis=0)", "np.diff(a, 2)", "np.diff(a, n=3, axis=0)", "np.diff(a, 0)",
    "np.diff(a, 9)", "np.diag(a)", "np.diag(a, 1)", "np.diag(a, -2)", "np.diag(a[0])", "np.diag(a[:, 0], -1)",
    "np.trace(a)", "a.trace(1)", "a.diagonal()", "a.diagonal(-1)", "np.trace(a, dtype=np.float32)",
    "np.diagonal(a, 0, 1, 0)",
])
def test_differences_and_diagonals(call, dtype, rng):
    for shape in [(4, 5), (5, 4), (1, 1), (0, 3), (3, 0)]:
        O.check(O.fn_from_src(f"def f(a):\n    return {call}\n"), O.make(rng, shape, dtype))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
@pytest.mark.parametrize("call", [
    "np.linalg.norm(a)", "np.linalg.norm(a, axis=1)", "np.linalg.norm(a, axis=0, keepdims=True)",
    "np.linalg.norm(a, keepdims=True)", "np.linalg.norm(a[0])", "np.linalg.norm(a[0], 2)",
    "np.linalg.norm(a, 'fro')", "np.linalg.norm(a, axis=(0, 1))", "np.linalg.norm(a, 2, axis=-1)",
    "a / np.linalg.norm(a, axis=1, keepdims=True)",
])
def test_norms(call, dtype, rng):
    for shape in [(4, 5), (1, 1), (2, 0)]:
        O.check(O.fn_from_src(f"def f(a):\n    return {call}\n"), O.make(rng, shape, dtype), reduce=5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_degrees_to_radians_are_exact(dtype, rng):
    a = O.make(rng, (50,), dtype) * (360 if dtype != "bool" else 1)
    O.check(O.fn_from_src("def f(a):\n    return np.deg2rad(a), np.radians(a), np.degrees(a), np.rad2deg(a)\n"), a)


def _same_bits(got, want):
    """Equal values with equal signs (-0.0 is not 0.0), NaN where NaN (of any sign)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.astype(np.float64), want.astype(np.float64)
    numbers = ~np.isnan(w)
    assert np.array_equal(g, w, equal_nan=True) and np.array_equal(np.signbit(g)[numbers], np.signbit(w)[numbers]), \
        (got, want)


@pytest.mark.skipif(O.IDENTITY, reason="checks the compiler's bits")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "int32"])
def test_angle_conversions_and_nan_aware_extremes_give_numpys_bits(dtype, rng):
    """NumPy multiplies by (pi / 180) and (180 / pi) divided in the loop's float type, float32 for
    float16 and bfloat16 (float32's degrees factor is 180f / pi_f, one ulp from float32(180 / pi));
    fmax and fmin take the number where one side is NaN; heaviside is 0, h or 1; fmod is C's exact
    remainder with the dividend's sign."""
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    values = rng.standard_normal(500) * 200
    values[:8] = [0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 180.0]
    a = (values if dt.kind == "f" or dtype == "bfloat16" else np.rint(values)).astype(dt)
    b = a[::-1].copy()
    b[:8] = np.array([-0.0, 0.0, 1.0, np.nan, np.nan, 0.5, np.nan, 180.0]).astype(dt) if dt.kind != "i" else b[:8]
    f = O.fn_from_src("def f(a, b):\n    return (np.deg2rad(a), np.radians(a), np.degrees(a), np.rad2deg(a),\n"
                      "            np.fmax(a, b), np.fmin(a, b), np.heaviside(a, b), np.fmax(a, 2), np.fmod(a, b))\n")
    with np.errstate(all="ignore"):
        want = f(a, b)
        got = hc.hcompile(f, fullgraph=True)(a, b)
    for g, w in zip(got, want):
        _same_bits(g, w)


def test_writing_into_a_diagonal_raises_as_numpy(rng):
    # NumPy's diagonal is a read-only view: the write breaks to Python, which raises.
    f = O.fn_from_src("def f(a):\n    d = np.diag(a)\n    d[0] = 1\n    return d\n")
    O.check_raises_same(f, O.make(rng, (3, 3), "float64"), cfn=hc.hcompile(f))


def _near(rng, a):
    """`a` with about half its elements nudged by up to 2e-5 relative, some copied exactly."""
    if a.dtype.kind not in "f":
        return a.copy()
    with np.errstate(invalid="ignore"):  # inf * 0 where an inf is left alone
        nudge = (rng.random(a.shape) - 0.5) * 4e-5 * np.abs(a) * (rng.random(a.shape) < 0.5)
        return (a + np.nan_to_num(nudge).astype(a.dtype)).astype(a.dtype)


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("call", [
    "np.isclose(a, b)", "np.isclose(a, b, equal_nan=True)", "np.isclose(a, b, rtol=1e-3, atol=0)",
    "np.isclose(a, b, 0.0, 0.5)", "np.isclose(a, 0.5, atol=0.6)", "np.isclose(2, a)",
    "np.isclose(a, True)", "np.isclose(a[:, None], b[None, -1])", "np.isclose(a[::2], b[::2])",
    "np.isclose(a, b.astype(np.float32))", "np.isclose(a.sum(), b.sum())", "np.isclose(a[0], b[0])",
    "np.where(np.isclose(a, b), a, b)",
])
def test_isclose_as_numpy(call, dtype, rng):
    f = O.fn_from_src(f"def f(a, b):\n    return {call}\n")
    for shape in [(6,), (1,), (0,), ()]:
        if shape == () and ("[" in call):
            continue
        a = O.make(rng, shape, dtype, specials=0.2 if dtype.startswith("float") else 0.0)
        O.check(f, a, _near(rng, np.asarray(a)))


def test_isclose_of_integer_extremes_and_scalars(rng):
    a = np.array([np.iinfo(np.int64).min, -1, 0, 1, np.iinfo(np.int64).max])
    O.check(O.fn_from_src("def f(a, b):\n    return np.isclose(a, b), np.isclose(b, a), np.isclose(a, 3)\n"),
            a, a[::-1].copy())
    O.check(O.fn_from_src("def f(a):\n    return np.isclose(1.0, 1.0 + 1e-9), np.isclose(a, a)\n"),
            np.array([np.nan, np.inf, -np.inf, -0.0]))


@pytest.mark.parametrize("call", ["np.isclose(a, b, rtol=np.inf)", "np.isclose(a, b, atol=np.nan)",
                                  "np.isclose(a, b, atol=b)"])
def test_isclose_with_tolerances_numpy_warns_about_or_arrays_runs_as_python(call, rng):
    a = O.make(rng, (5,), "float64")
    f = O.fn_from_src(f"def f(a, b):\n    return {call}\n")
    compiled = hc.hcompile(f)
    with np.errstate(invalid="ignore"):
        assert np.array_equal(compiled(a, a + 1e-9), f(a, a + 1e-9))


@pytest.mark.skipif(O.IDENTITY, reason="checks the compiler's bits")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_hypot_copysign_and_signbit_of_special_values(dtype, rng):
    """copysign and signbit read the sign bit (of -0.0 and of a negative NaN too); hypot is +inf
    where a side is infinite, even beside a NaN, and float32's is C's hypotf to the bit."""
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    special = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 1.0, -3.0, 0.5]
    a = np.array([x for x in special for _ in special]).astype(dt)
    b = np.array([y for _ in special for y in special]).astype(dt)
    f = O.fn_from_src("def f(a, b):\n    return np.hypot(a, b), np.copysign(a, b), np.signbit(a), np.signbit(b)\n")
    with np.errstate(all="ignore"):
        want = f(a, b)
        got = hc.hcompile(f, fullgraph=True)(a, b)
    for g, w in zip(got[:2], want[:2]):
        _same_bits(g, w)
    copysign, want_copysign = got[1].astype(np.float64), want[1].astype(np.float64)
    assert np.array_equal(np.signbit(copysign), np.signbit(want_copysign))        # a NaN's sign too
    assert np.array_equal(got[2], want[2]) and np.array_equal(got[3], want[3])
    x = (rng.standard_normal(4000) * 2.0 ** rng.uniform(-60, 60, 4000)).astype(dt)
    y = (rng.standard_normal(4000) * 2.0 ** rng.uniform(-60, 60, 4000)).astype(dt)
    got = hc.hcompile(f, fullgraph=True)(x, y)[0]
    if dtype == "float64":
        _within_one_ulp(got, x, y)
    else:
        _same_bits(got, np.hypot(x, y))


def _within_one_ulp(got, x, y):
    """float64 hypot within one ulp of sqrt(x^2 + y^2) computed in long double (its 64-bit
    significand; not bit-exact with the platform's hypot, which is not correctly rounded either)."""
    wide = np.sqrt(x.astype(np.longdouble) ** 2 + y.astype(np.longdouble) ** 2)
    error = np.abs(got.astype(np.longdouble) - wide) / np.spacing(wide.astype(np.float64)).astype(np.longdouble)
    assert float(error.max()) <= 1.0, float(error.max())


@pytest.mark.skipif(O.IDENTITY, reason="checks the compiler's bits")
def test_float64_hypot_is_within_one_ulp_from_the_smallest_to_the_largest_values(rng):
    """Sides near the overflow and underflow thresholds (scaled by a power of two inside), sides
    of very different sizes, subnormals."""
    n = 20000
    x = rng.standard_normal(n) * 2.0 ** rng.uniform(-1070, 1020, n)
    y = x * rng.standard_normal(n) * 2.0 ** rng.uniform(-70, 70, n)
    x[:6] = [1.7e308, 1e-310, 5e-324, 2.0 ** 500, 2.0 ** -450, 3.0]
    y[:6] = [1.7e308, 1e-310, 5e-324, 2.0 ** 500, 2.0 ** -450, 4.0]
    with np.errstate(all="ignore"):
        got = hc.hcompile(lambda a, b: np.hypot(a, b), fullgraph=True)(x, y)
        assert np.isinf(got[0]) and got[5] == 5.0 and got[2] == np.hypot(5e-324, 5e-324)
        finite = np.isfinite(np.hypot(x, y))
        _within_one_ulp(got[finite & (np.abs(x) > 1e-300)], x[finite & (np.abs(x) > 1e-300)],
                        y[finite & (np.abs(x) > 1e-300)])


@pytest.mark.skipif(O.IDENTITY, reason="checks the compiler's bits")
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_log2_log10_exp2_and_cbrt_are_exact_where_the_answer_is_an_integer(dtype):
    """log2 of every power of two and log10 of every power of ten the dtype holds exactly are the
    integers (floor(np.log10(x)) counts digits); 0, -0.0, negatives, inf and NaN as C99 says.
    (NumPy's own float32 log10 gives 2.0000002 for 100 on AVX2 machines: it is not the oracle here.)"""
    dt = np.dtype(dtype)
    info = np.finfo(dt)
    twos = np.arange(info.minexp - info.nmant, info.maxexp)
    tens = np.arange(0, {"float16": 5, "float32": 11, "float64": 23}[dtype])
    f = hc.hcompile(lambda a, b: (np.log2(a), np.log10(b)), fullgraph=True)
    got2, got10 = f(np.ldexp(np.ones(len(twos)), twos).astype(dt), (10.0 ** tens).astype(dt))
    assert np.array_equal(got2, twos.astype(dt)) and np.array_equal(got10, tens.astype(dt))
    # And back: exp2 of an integer is that power of two exactly (NumPy's own float32 exp2 is not:
    # 2^127 one ulp low on AVX2 machines).
    powers = hc.hcompile(lambda a: np.exp2(a), fullgraph=True)(twos.astype(dt))
    assert np.array_equal(powers, np.ldexp(np.ones(len(twos)), twos).astype(dt))
    # The cube root of a cube (as far as the dtype holds cubes exactly).
    n = np.arange(-40 if dtype == "float16" else -200, 41 if dtype == "float16" else 201).astype(np.float64)
    n = n[np.abs(n) ** 3 < 2.0 ** (info.nmant + 1)]
    assert np.array_equal(hc.hcompile(lambda a: np.cbrt(a), fullgraph=True)((n ** 3).astype(dt)), n.astype(dt))
    special = np.array([0.0, -0.0, -1.0, np.inf, -np.inf, np.nan, 1.0], dt)
    with np.errstate(all="ignore"):
        for g, w in zip(f(special, special), (np.log2(special), np.log10(special))):
            _same_bits(g, w)


@pytest.mark.skipif(O.IDENTITY, reason="checks the compiler's bits")
def test_float64_log2_and_log10_are_within_two_ulps(rng):
    x = 2.0 ** rng.uniform(-1074, 1023, 20000) * rng.uniform(1, 2, 20000)
    got2, got10 = hc.hcompile(lambda a: (np.log2(a), np.log10(a)), fullgraph=True)(x)
    wide = np.log(x.astype(np.longdouble))
    for got, per_log in ((got2, 1 / np.log(np.longdouble(2))), (got10, 1 / np.log(np.longdouble(10)))):
        want = wide * per_log
        nonzero = want != 0
        error = np.abs(got.astype(np.longdouble) - want)[nonzero] / np.spacing(np.abs(want.astype(np.float64)))[nonzero]
        assert float(error.max()) <= 2.0, float(error.max())


@pytest.mark.parametrize("call", ["np.cbrt(a)", "np.exp2(a)", "np.log2(a)", "np.log10(a)", "np.arcsinh(a)",
                                  "np.arccosh(a + 1)", "np.arctanh(a / 4)", "np.hypot(a, a)"])
def test_extremes_of_the_math_functions_compile_promptly(call, rng):
    """max and argmin read their operand several times: the cube root inlined its logarithm into
    exp (which reads its argument several times too), and the max of a cube root compiled for
    minutes."""
    f = O.fn_from_src(f"def f(a):\n    v = {call}\n    return v.max(), v.argmin(), v.min()\n")
    for shape in [(), (7,), (3, 5)]:
        O.check(f, O.make(rng, shape, "float32", "pos") if shape else np.float32(1.5) * np.ones((), np.float32))
