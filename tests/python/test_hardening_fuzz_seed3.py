"""Bug classes the long fuzz run (``python -m tests.fuzz --seed 3``) found, each as a small family
of programs. Signed integer overflow is undefined in Halide and its simplifier reasons with that
(a sum of squares is never negative, abs is never negative, a constant arm that overflows is an
error), while NumPy wraps; float self-operations (x - x) were folded in reduction updates."""
import re

import numpy as np
import pytest

import numpy_oracle as O

I32_MIN, I32_MAX = np.iinfo(np.int32).min, np.iinfo(np.int32).max
I64_MIN, I64_MAX = np.iinfo(np.int64).min, np.iinfo(np.int64).max


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("body", [
    "np.dot(a, a) >= 0",
    "a @ a < 0",
    "np.dot(a, a.T) >= (a < 3)",
    "a[:4] // np.dot(a, a)",
    "np.sin(a @ a)",
    "(a[:, None] @ a[None, :]).max() < 0",
    "a.sum() < 0",
    "(a * a).sum() >= 0",
    "a.prod() >= 0",
    "a.prod() == 0",
    "np.abs(a) < 5",
    "abs(a) >= 0",
])
def test_integer_wrap_is_not_assumed_away(body, dtype):
    info = np.iinfo(dtype)
    a = np.array([info.max - 3, info.min + 1, 5, -7, info.max // 3, info.min, 2, 3], dtype)
    O.check(O.fn_from_src(f"def f(a):\n    return {body}\n"), a)


def test_wrapping_sum_of_casts_of_nan():
    f = O.fn_from_src("def f():\n    return np.full((2, 1, 8, 5), float('nan'), dtype=np.int64).sum(axis=0)\n")
    O.check(f)


@pytest.mark.parametrize("body,arg", [
    ("t // t", np.int32(I32_MAX)),
    ("t % 9223372036854775807", np.array([False, True])),
    ("t // 9223372036854775807", np.array(-2, np.int64)),
    ("t // 2147483647 + t % 2147483647", np.array([-5, 5, I32_MIN], np.int32)),
    ("t // -2147483648 + t % -2147483648", np.array([-5, 5, I32_MIN], np.int32)),
    ("np.full((), 2147483647, dtype=np.int32) // np.full((), 2147483647, dtype=np.int32) + t", np.int32(1)),
])
def test_floor_division_by_extreme_constants_compiles(body, arg):
    O.check(O.fn_from_src(f"def f(t):\n    return {body}\n"), arg)


@pytest.mark.parametrize("value", [2**64 - 1, 2**63, -2**63 - 1])
def test_bool_array_compared_with_a_huge_int_raises_as_numpy(value):
    f = O.fn_from_src(f"def f(a):\n    return (a != 2.0) == {value}\n")
    O.check(f, np.zeros((3, 0), np.float32))
    O.check(f, np.ones(3, np.float32))


@pytest.mark.parametrize("body", [
    "(a - a).mean(keepdims=True)",
    "(a - a).sum(axis=0)",
    "(a / a).sum()",
    "(a * 0.0).sum(axis=1)",
    "(a + 0.0).max()",
    "(a - a) @ a.T",
    "np.argmax(a - a, axis=0)",
])
def test_float_self_operations_keep_nan_in_reductions(body):
    a = np.array([[np.inf, 1.0, -0.0], [np.nan, -np.inf, 2.0], [0.0, 3.0, -1.0]] * 6)
    O.check(O.fn_from_src(f"def f(a):\n    return {body}\n"), a, reduce=18)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("stored", ["np.where(a > 0, 0.0, np.nan)", "a - a",   # a - a: program 28498
                                    "np.where(a > 0, np.inf, 1.0) - np.inf", "np.minimum(a * 0.0, 2.0)"])
@pytest.mark.parametrize("trig", ["cos", "sin"])
def test_stored_nan_select_feeding_trig(dtype, trig, stored):
    # Halide clamped a stored value that feeds a table index to its value bounds, which held NaN.
    a = np.array([-4.302868843078613, 0.0, -0.0, np.inf, np.nan, 1e30], dtype)
    O.check(O.fn_from_src(f"def f(a):\n    t = {stored}\n    return np.{trig}(t), t\n"), a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("body", [
    "t = a - a\n    return np.exp(t) + t, t",
    "t = a - a\n    return np.sin(t), t.sum()",
])
def test_stored_self_difference_feeding_math(body, dtype):
    a = np.array([-4.302868843078613, 0.0, -0.0, np.inf, np.nan, 1e30], dtype)
    O.check(O.fn_from_src(f"def f(a):\n    {body}\n"), a)
    O.check(O.fn_from_src(f"def f(a):\n    {body}\n"), a[0])


@pytest.mark.parametrize("slice_", ["[1::2, 2:0:-1]", "[:, 1:3]", "[::-1, 6:4:-1]", "[3:4, :1]"])
def test_few_elements_of_a_stored_intermediate_read_in_bounds(slice_):
    # program 29179: a vectorized intermediate shifted its last vector below index 0 when the
    # consumer needed fewer elements than one vector, and read the input out of bounds.
    a = np.arange(8 * 7 * 8, dtype=np.uint32).reshape(8, 7, 8) % 5
    O.check(O.fn_from_src(f"def f(a):\n    return np.mean(a ** a, axis=-2){slice_}\n"), a)
    O.check(O.fn_from_src(f"def f(a):\n    return np.sqrt(np.abs(np.tanh(a)))[:, :, 2:0:-1]\n"),
            a.astype(np.float32))


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int64", "uint64", "float32"])
@pytest.mark.parametrize("bounds", ["t, 32767", "-1000, 5", "-1000, 10**6", "None, 300", "-129, None",
                                    "0, 255", "-1000, np.int64(5)", "True, 300"])
def test_clip_drops_python_int_bounds_outside_the_arrays_dtype(dtype, bounds):
    # program 64125: np.clip(uint8_x, int64_t, 32767) is maximum(uint8_x, int64_t) in NumPy: a
    # Python-int bound past the integer array's own range is dropped before promotion.
    x = (np.arange(4).reshape(2, 2) * 50).astype(dtype)
    t = np.full((2,), 1679616, np.int64)
    O.check(O.fn_from_src(f"def f(x, t):\n    return np.clip(x, {bounds}), x.clip({bounds})\n"), x, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((8, 8, 1), (8, 1, 1)), ((4, 1), (1, 3)), ((1,), (1,)), ((3, 2), (2,))])
def test_matmul_of_underflowing_products_is_positive_zero(dtype, shapes):
    # program 71705: a fused multiply-add rounded tiny * -tiny to -0.0 where NumPy's +0.0-started
    # sum gives +0.0; arctan2 of the result told them apart (-pi against 0).
    tiny = np.finfo(dtype).tiny
    a = np.full(shapes[0], tiny, dtype)
    b = np.full(shapes[1], -np.finfo(dtype).smallest_subnormal, dtype)
    O.check(O.fn_from_src("def f(a, b):\n    t = a @ b\n    return np.arctan2(t, t), 1.0 / t\n"), a, b)


@pytest.mark.parametrize("dtype", ["uint64", "float32", "int8", "bool"])
@pytest.mark.parametrize("shape", [(8,), (40,), (3, 64)])
def test_reductions_of_values_folded_to_constants_compile(dtype, shape):
    # program 73987: np.prod(a > a) simplified to acc * 0, which Halide cannot prove associative;
    # the schedule asked for rfactor anyway and the compile stopped.
    a = np.ones(shape, dtype)
    O.check(O.fn_from_src("def f(a):\n    return (np.prod(a > a, axis=0, keepdims=True), np.prod(a * 0, axis=-1),\n"
                          "            np.sum(a > a, axis=0), (a * 0).max(axis=0))\n"), a)


def test_outputs_read_inside_the_pipeline_need_no_alignment():
    # program 86016: a reduction read a returned matmul result from the output array with aligned
    # vector loads; NumPy's small arrays are 16-byte aligned, and the kernel segfaulted. Many
    # calls (fresh outputs at varying alignment), in a child process that may crash.
    import subprocess
    import sys
    code = (
        "import numpy as np, hcompile as hc\n"
        "for red in ('max', 'prod', 'sum'):\n"
        "    for m, k in ((8, 4), (16, 4), (8, 8), (12, 3)):\n"
        "        b = (np.arange(m * k) % 7).reshape(m, k).astype(np.int64)\n"
        "        v = np.arange(k, dtype=np.int64)\n"
        "        ns = {'np': np}\n"
        "        exec(f'def f(b, v):\\n    t = b @ v\\n    return np.{red}(t, axis=0), t, t[::2] + 1\\n', ns)\n"
        "        f, cf = ns['f'], hc.hcompile(ns['f'])\n"
        "        for _ in range(40):\n"
        "            got, want = cf(b, v), f(b, v)\n"
        "            assert all(np.array_equal(g, w) for g, w in zip(got, want)), (red, m, k)\n"
        "print('ok')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == "ok", (run.returncode, run.stderr[-2000:])


def test_power_of_a_negative_base_agrees_given_the_same_exponent():
    # program 97319 (a fuzzer model gap, not a compiler bug): sinh(-35.27) is
    # -1034137271502721.9 in NumPy and one ulp away, the integer -1034137271502722.0, compiled
    # (within the 3-ulp math tolerance); a negative base to a non-integer power is NaN, to an
    # integer one a number. Given the same exponent, the compiled power is NumPy's; the
    # fuzzer's model now leaves such elements unchecked (tests/fuzz/model.py, _negative_base).
    b = np.array([-35.265491100484915, -2.5, -0.5])
    for y in (np.array([-1034137271502721.9, 3.0, 0.5]), np.array([-1034137271502722.0, 2.0, -3.0])):
        O.check(O.fn_from_src("def f(b, y):\n    return b ** y\n"), b, y)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bool", "int64"])
@pytest.mark.parametrize("body", ["t = a / a\n    return t % t", "t = a / a\n    return t // t, t % 2.0"])
def test_remainder_of_a_value_by_itself_keeps_nan(body, dtype):
    # program 99548: (c / c) % (c / c) gave 0.0 where NumPy gives NaN (0/0): LLVM folded
    # fmod(t, t) to 0 for one value t; the remainder now says NaN explicitly where fmod is NaN.
    a = np.array([0, 1, 3, -2, 0, 5]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        a = np.concatenate([a, np.array([np.nan, np.inf, -np.inf, -0.0], dtype)])
    O.check(O.fn_from_src(f"def f(a):\n    {body}\n"), a)


@pytest.mark.parametrize("op", ["<", "<=", ">", ">=", "==", "!="])
@pytest.mark.parametrize("left,right", [("int64", "uint64"), ("uint64", "int64"),
                                        ("int32", "uint64"), ("uint64", "int8")])
def test_signed_and_uint64_compare_exactly(op, left, right):
    # programs 158232 and 158475 ran as Python ("graph builder rejected eq: input dtypes
    # differ"): NumPy 2 compares int64 with uint64 through its exact mixed loops, not float64;
    # 2**63 and 2**63 - 1 are one float64 apart only at the top of the range.
    signed = np.array([I64_MIN, -1, 0, 1, 5, I64_MAX, 2**62, 2**53 + 1])
    unsigned = np.array([0, 1, 5, 2**63, 2**64 - 1, 2**63 - 1, 2**62, 2**53], np.uint64)
    a = signed.astype(left) if left != "uint64" else unsigned
    b = signed.astype(right) if right != "uint64" else unsigned
    f = O.fn_from_src(f"def f(a, b):\n    return a {op} b, a[3] {op} b, np.uint64(2**63) {op} b\n")
    O.check(f, a, b)
    O.check(f, a[::-1], b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("body", [
    "t1 = a - a\n    return np.where(t1 <= -0.0, np.any(t1, axis=0, keepdims=True), 2.0)",
    "t1 = a - a\n    return np.where(t1 <= 0, np.any(t1), 2.0)",
    "t1 = a - a\n    return np.where(t1 != 0, a.max(), 2.0)",
    "t1 = np.log(a)\n    return np.where(t1 >= 0, a.sum(), -1.0)",
    "t1 = a % a\n    return np.where(t1 == 0, np.all(a > -1), False)",
    "t1 = np.where(a > 1, np.nan, 0.0)\n    return np.where(t1 != 0, np.any(a < -1), 2.0)",
    "t1 = np.maximum.outer(a[:, 0], a[:, 0]).max(axis=0)\n    return np.where(t1 > 0, a.sum(), 0.0)",
])
def test_a_nan_arm_does_not_skip_a_stage_that_is_used(body, dtype):
    # program 167992: Halide's interval of select(c, NaN, 0) was [NaN, NaN], and skip_stages
    # concluded from it that the reduction read under `where` was never used: its value was
    # garbage (0.0 for NumPy's 1.0). Float scalars now reach Halide as bit patterns.
    a = np.array([[4.2e-45], [1e-30], [-2.5], [-np.inf], [0.0135], [1.0000001], [np.inf], [np.nan]], dtype)
    O.check(O.fn_from_src(f"def f(a):\n    {body}\n"), a)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bounds", ["5e-324, 1e-300", "0.0, 0.0", "-0.0, -0.0", "-0.0, 1.0", "-1.0, -0.0",
                                    "np.nan, 1.0", "0.0, np.nan", "np.zeros(1), np.zeros((1, 1))",
                                    "np.zeros(b.shape), np.zeros(b.shape)", "0.0, np.zeros(b.shape)",
                                    "2.0, 1.0", "-np.inf, np.inf"])
def test_clip_keeps_an_element_equal_to_a_one_element_bound(bounds, dtype):
    # program 323961 (device run): np.clip(-0.0, 0.0, 0.0) is -0.0 in NumPy (its loop for
    # one-element bounds keeps x on a tie) and was 0.0 compiled (maximum, then minimum).
    b = np.array([-0.0, 0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 5e-324], dtype)
    O.check(O.fn_from_src(f"def f(b):\n    return np.clip(b, {bounds})\n"), b)
    O.check(O.fn_from_src(f"def f(b):\n    return np.clip(b[3], {bounds})\n"), b)


# Operands Halide's simplifier finds equal only after simplifying (a where with a constant
# condition, a view that reads the same elements, minimum(b, b)): it folded their difference to 0
# and their comparison to true, assuming no NaN or inf, in reductions above all (device fuzz,
# seed 3, program 1419296: `(np.where(s, b, s) <= b).prod()` was 1 with a NaN in b).
@pytest.mark.parametrize("body", [
    "(np.where(s, b, s) <= b).prod(axis=(-1, 0))",
    "(np.where(s, b, 0.0) <= b).prod()",
    "(np.where(s, b, 0.0) >= b).sum()",
    "(np.where(s, b, 0.0) == b).all()",
    "(np.where(s, b, 0.0) != b).sum()",
    "(np.where(s, b, 0.0) - b).sum()",
    "(np.where(s, b, 0.0) - b).mean()",
    "(np.where(s, 0.0, b) - b).sum(axis=-1)",
    "(np.minimum(b, b) - b).sum()",
    "(np.maximum(b, b) <= b).all()",
    "(b.T.T - b).sum()",
    "(b.T.T != b).sum()",
    "(b[::-1][::-1] - b).sum(axis=0)",
    "(b.reshape(-1).reshape(b.shape) - b).sum()",
    "(b[:, None][:, 0] - b).prod()",
    "(b - 0.0 >= b).sum()",
    "np.where(s, b, 0.0) <= b",
    "b.T.T - b",
])
@pytest.mark.parametrize("special", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_operands_equal_only_after_simplifying_keep_nan_and_inf(body, special, dtype):
    b = np.array([[1.5, special, -0.0], [2.0, 0.5, -3.0]], dtype)
    O.check(O.fn_from_src(f"def f(b, s):\n    return {body}\n"), b, True)


@pytest.mark.parametrize("to", ["uint8", "int8", "uint16", "int16"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_float_to_narrow_int_stays_a_32_bit_conversion_in_tails(to, dynamic, tmp_path, monkeypatch):
    """Device fuzz, seed 3, program 1812370: in a guarded tail Halide saw the value's bounds,
    dropped the int32 range check and merged the two casts into one float -> uint16 conversion,
    which AVX-512 does unsigned (-5.0 gave 65535). The lowered code must keep converting to
    int32 first; the values must be NumPy's (which this AVX2 machine also gave before the fix)."""
    import hcompile as hc

    monkeypatch.setenv("HCOMPILE_DEBUG_DIR", str(tmp_path))
    f = O.fn_from_src(f"def f(a):\n    return np.round(a.astype(np.float32)).astype(np.{to})\n")
    a = ((np.arange(8 * 19, dtype=np.int16).reshape(8, 19) - 70) * 467).astype(np.int16)  # 19: a tail
    np.testing.assert_array_equal(hc.hcompile(f, dynamic=dynamic)(a), f(a))
    statements = [p.read_text() for p in tmp_path.glob("*/lowered_stmt.txt")]
    direct = re.compile(rf"\b{to}(x\d+)?\(\(float32(x\d+)?\)")
    assert statements and not any(direct.search(text) for text in statements)


@pytest.mark.parametrize("to", ["uint64", "uint32", "int64"])
@pytest.mark.parametrize("dynamic", [False, True])
def test_float_to_wide_int_keeps_its_nan_check_where_bounds_say_in_range(to, dynamic, tmp_path, monkeypatch):
    """Device fuzz, seed 3, program 2017365: Halide's bounds of a float ignore NaN; for a square
    root of an int16 they put the value in range, the range check went, and the conversions
    merged into one float -> uint64 conversion, which AVX-512 does unsigned (NaN gave 2^64 - 1,
    NumPy 2^63). The lowered code must not convert a float to the unsigned type directly."""
    import hcompile as hc

    monkeypatch.setenv("HCOMPILE_DEBUG_DIR", str(tmp_path))
    f = O.fn_from_src(f"def f(c):\n    return np.sqrt(c).astype(np.{to})\n")
    c = ((np.arange(8 * 19, dtype=np.int16).reshape(8, 19) - 70) * 211).astype(np.int16)   # negatives: NaN
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(hc.hcompile(f, dynamic=dynamic)(c), f(c))
    statements = [p.read_text() for p in tmp_path.glob("*/lowered_stmt.txt")]
    direct = re.compile(r"\buint(64|32)(x\d+)?\(\(float32(x\d+)?\)")
    assert statements and not any(direct.search(text) for text in statements)
    assert all("is_nan" in text for text in statements)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "uint64"])
def test_reciprocal_of_an_integer_constant_compiles(dtype):
    """Device fuzz, seed 3, program 2016972: np.reciprocal(np.full(..., nan, np.int64)) stopped
    the compile (Halide's simplifier rewrote INT64_MIN == 1 as INT64_MIN - 1 == 0 and refused the
    overflow). Every notable constant, against NumPy, under fullgraph."""
    import hcompile as hc

    info = np.iinfo(dtype)
    for value in sorted({0, 1, 2, int(info.min), int(info.max)} | ({-1} if info.min < 0 else set())):
        f = O.fn_from_src(f"def f():\n    return np.reciprocal(np.full((2, 1), {value}, dtype=np.{dtype}))\n")
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(hc.hcompile(f, fullgraph=True)(), f())
