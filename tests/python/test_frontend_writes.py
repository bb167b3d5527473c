"""Writes into arrays (issue 6): ``x[key] = v``, in-place operators and ``out=``, compiled with
``fullgraph=True`` and compared with NumPy on fresh inputs, argument arrays included (the
oracle compares every argument after the call with what NumPy's call left)."""
import numpy as np
import pytest

import numpy_oracle as O
from numpy_oracle import IDENTITY, hc

needs_compiler = pytest.mark.skipif(IDENTITY, reason="checks the real compiler's entries")

# Each body writes into `x` (an argument, float64 (5, 6) unless the case says otherwise) or into
# arrays made inside the function; the function returns something built from them.
STORES = {
    "interior": "x[1:-1, 1:-1] = 0.25 * (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:])\n    return x",
    "row_int": "x[2] = y[0]\n    return x.sum()",
    "negative_index": "x[-1, -2] = 7.0\n    x[:, -1] = 0.0\n    return None",
    "stepped": "x[::2, 1::3] = -x[1::2, ::3]\n    return x",
    "reversed": "x[::-1] = x\n    return x[0]",
    "reversed_columns": "x[:, ::-2] = y[:3]\n    return x",
    "ellipsis": "x[...] = 3\n    return x",
    "newaxis": "x[None, 1:3, None] = y[:2, None, None]\n    return x",
    "broadcast_value": "x[:] = y[0]\n    return x",
    "leading_ones": "x[1:3] = y[None, 1:3]\n    return x",
    "reads_old_values": "x[1:] = x[:-1] * 2\n    return x",
    "scalar_into_empty": "x[3:3] = 5.0\n    return x",
    "twice": "x[0] = 1.0\n    x[0, 0] = 2.0\n    return x[0]",
    "local_zeros": "a = np.zeros((4, 6))\n    a[1:3] = x[:2]\n    a[-1, ::2] = 1.5\n    return a",
    "local_copy": "a = x.copy()\n    a[0] = 0\n    return a + x",
    "transposed_view": "t = x.T\n    t[1] = y[0, :5]\n    return x",
    "slice_view": "v = x[1:4, 2:]\n    v[0, 0] = -1.0\n    v[1:, ::2] = 9.0\n    return v.sum() + x.sum()",
    "view_of_view": "v = x[1:][::2]\n    w = v[:, 1:3].T\n    w[0] = 5.0\n    return x",
    "view_sees_write": "v = x[2]\n    x[2, 1] = 100.0\n    return v.copy()",
    "expand_dims_view": "v = np.expand_dims(x, 0)\n    v[0, 0] = 1.0\n    return x",
    "squeeze_view": "v = x[1:2].squeeze()\n    v[:] = 2.0\n    return x",
    "int_scalar_into_float": "x[0, 0] = 3\n    return x",
    "float_into_int": "i = x.astype(np.int32)\n    i[0] = 2.9\n    i[1] = x[1] * 10\n    return i",
    "bool_into_float": "x[x.shape[0] - 1] = True\n    return x",
    "nan_into_float": "x[1, ::2] = np.nan\n    x[2] = -0.0\n    return x",
    "computed_scalar": "x[0, 0] = x.sum()\n    return x",
}


@pytest.mark.parametrize("name", sorted(STORES))
def test_store(name, rng):
    f = O.fn_from_src(f"def f(x, y):\n    {STORES[name]}\n")
    O.check(f, O.make(rng, (5, 6), "float64"), O.make(rng, (6, 6), "float64"))


INPLACE = ["+", "-", "*", "/", "//", "%", "**"]
INT_INPLACE = ["+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"]


@pytest.mark.parametrize("op", INPLACE)
@pytest.mark.parametrize("dtype", O.FLOAT_DTYPES)
def test_inplace_operators_on_float_arguments(op, dtype, rng):
    f = O.fn_from_src(f"def f(x, y):\n    x {op}= y\n    x[1:] {op}= 2\n    return x\n")
    O.check(f, O.make(rng, (4, 5), dtype, kind="pos"), O.make(rng, (5,), dtype, kind="pos"))


@pytest.mark.parametrize("op", INT_INPLACE)
@pytest.mark.parametrize("dtype", O.INT_DTYPES)
def test_inplace_operators_on_int_arguments(op, dtype, rng):
    rhs = "2" if op in ("<<", ">>") else "y"      # shifts by an array run as Python (not captured)
    f = O.fn_from_src(f"def f(x, y):\n    x {op}= {rhs}\n    v = x[:, 1:]\n    v {op}= 3\n    return x.sum()\n")
    x = rng.integers(1, 50, (4, 5)).astype(dtype)
    y = rng.integers(1, 5, (5,)).astype(dtype)
    O.check(f, x, y)


@pytest.mark.parametrize("body", [
    "x += 1.5",                       # float into int: NumPy's same_kind casting raises
    "x[0] = 300",                     # int8 out of range: OverflowError
    "x[0] = np.nan",                  # NaN into an int array: ValueError
    "x[:3] = np.ones(4, np.int8)",    # shapes: ValueError
    "x[9] = 1",                       # IndexError
    "x.sum()[()] = 1",                # a NumPy scalar: TypeError
])
def test_store_errors_are_numpys(body):
    f = O.fn_from_src(f"def f(x):\n    {body}\n    return x\n")
    O.check_raises_same(f, np.arange(5, dtype=np.int8))


@pytest.mark.parametrize("dtype", O.DTYPES + ["uint8", "int8"])
def test_store_dtypes_and_casts(dtype, rng):
    f = O.fn_from_src("def f(x, y):\n    x[1::2] = y[1::2] * 100\n    x[0] = y[-1] > 0\n    return x\n")
    x = np.arange(7).astype(dtype) if dtype in ("uint8", "int8") else O.make(rng, (7,), dtype)
    O.check(f, x, O.make(rng, (7,), "float64", kind="small"))


@pytest.mark.parametrize("ufunc", ["add", "multiply", "maximum", "subtract", "true_divide"])
def test_ufunc_out(ufunc, rng):
    f = O.fn_from_src(f"def f(a, b, c):\n    r = np.{ufunc}(a, b, out=c)\n"
                      f"    np.{ufunc}(c, 2.0, c[::-1])\n    np.{ufunc}(a, 1.0, out=(a,))\n    return r is c\n")
    O.check(f, O.make(rng, (6,), "float64", kind="pos"), O.make(rng, (6,), "float64", kind="pos"),
            np.zeros(6))


def test_ufunc_out_into_int_raises_like_numpy():
    f = O.fn_from_src("def f(a, c):\n    np.add(a, 0.5, out=c)\n    return c\n")
    O.check_raises_same(f, np.ones(3), np.zeros(3, np.int64))


@pytest.mark.parametrize("layout", ["F", "T", "stride", "reverse"])
def test_written_arguments_of_any_layout(layout, rng):
    f = O.fn_from_src("def f(x):\n    x[1:, :2] *= -1.0\n    x[0] = 3.0\n    return x\n")
    O.check(f, O.make(rng, (5, 4), "float64", layout=layout))


@pytest.mark.parametrize("shape", [(), (1,), (0, 3), (1, 1)])
def test_writes_on_odd_shapes(shape, rng):
    f = O.fn_from_src("def f(x):\n    x[...] = x * 2 + 1\n    x += 1\n    return x\n")
    O.check(f, O.make(rng, shape, "float64"))


def test_gemm_with_store(rng):
    f = O.fn_from_src("def f(alpha, beta, C, A, B):\n    C[:] = alpha * A @ B + beta * C\n")
    # (A sum of 7 products and two scaled terms: an entry that cancels to near zero keeps the
    # terms' absolute error, 1.4e-12 of it relative at one seed, 2060795430.)
    O.check(f, 1.5, 1.2, O.make(rng, (8, 9), "float64"), O.make(rng, (8, 7), "float64"),
            O.make(rng, (7, 9), "float64"), ops=3, reduce=7)


def test_time_stepping_loop_writes_through(rng):
    f = O.fn_from_src(
        "def f(u):\n"
        "    for _ in range(3):\n"
        "        u[1:-1, 1:-1] = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])\n")
    O.check(f, O.make(rng, (10, 12), "float32"), ops=20)


@needs_compiler
def test_aliasing_arguments_run_as_python_and_the_rest_compiles(rng):
    """A written argument that shares memory with another argument is read by NumPy after the
    write; the graph would read it before. Such calls run as Python (a guard on the overlap);
    calls with separate arrays keep the compiled entry."""
    def f(x, y):
        x[1:] = x[:-1] + y[1:]
        return y.sum()
    cf = hc.hcompile(f)
    for _ in range(2):
        x = rng.random(6)
        for args in [(x, x[::-1]), (x, x), (x, rng.random(6))]:
            a1, a2 = O.clone(args[0]), O.clone(args[0])
            b1 = a1 if args[1] is args[0] else (a1[::-1] if args[1].base is args[0] else O.clone(args[1]))
            b2 = a2 if args[1] is args[0] else (a2[::-1] if args[1].base is args[0] else b1.copy())
            assert f(a1, b1) == cf(a2, b2)
            np.testing.assert_array_equal(a1, a2)
    overlapping = [r for r in cf.compile_records if r["break"] is not None]
    assert len(overlapping) == 2 and "shares memory" in overlapping[0]["break"].reason
    assert any(r["report"] is not None for r in cf.compile_records)


@needs_compiler
def test_read_only_argument_raises_numpys_error():
    def f(x):
        x[0] = 1.0
        return x
    x = np.zeros(3)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        hc.hcompile(f)(x)
    y = np.zeros(3)
    assert hc.hcompile(f)(y) is y and y[0] == 1.0


@needs_compiler
def test_every_call_writes_and_returns_the_argument_object(rng):
    def f(x, y):
        x += y
        return x
    cf = hc.hcompile(f, fullgraph=True)
    x, y = rng.random(4), rng.random(4)
    expected = x + y + y
    assert cf(x, y) is x and cf(x, y) is x
    np.testing.assert_array_equal(x, expected)
    assert cf.cache_info().entries == 1


@pytest.mark.parametrize("body, dtypes", [
    ("np.copyto(x, y * 3)", ("float64", "float64")),
    ("np.copyto(x, y)", ("float32", "float64")),                  # same_kind: float64 -> float32
    ("np.copyto(x, y)", ("int64", "float64")),                    # TypeError, as NumPy
    ("np.copyto(x, y, casting='unsafe')", ("int16", "float64")),
    ("np.copyto(x[1:], y[:-1])", ("float64", "int32")),
    ("np.copyto(x, y[0])", ("float64", "float64")),               # broadcast from 0-d
    ("np.copyto(x, 1.5)", ("int64", "int64")),                    # TypeError for the scalar
    ("np.copyto(x, 300)", ("int8", "int8")),                      # OverflowError
    ("np.copyto(x, y[:3])", ("float64", "float64")),              # ValueError: no broadcast
])
def test_copyto(body, dtypes, rng):
    x = (rng.standard_normal(6) * 10).astype(dtypes[0])
    y = (rng.standard_normal(6) * 10).astype(dtypes[1])
    O.check(O.fn_from_src(f"def f(x, y):\n    r = {body}\n    return r, x\n"), x, y)
