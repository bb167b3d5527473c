"""np.arange (integers), np.linspace, np.tri, np.tril and np.triu, compiled (fullgraph) and
compared with NumPy to the bit."""
import numpy as np
import pytest

import numpy_oracle as O


@pytest.mark.parametrize("call", [
    "np.arange(10)", "np.arange(0)", "np.arange(1)", "np.arange(-3)", "np.arange(3, 17)", "np.arange(17, 3, -4)",
    "np.arange(5, 5)", "np.arange(-7, 40, 3)", "np.arange(1000)", "np.arange(10, dtype=np.float64)",
    "np.arange(4, dtype=np.int32)", "np.arange(2**40, 2**40 + 5)", "np.arange(3, 10, 0)",
    "np.arange(1, 9, 2, dtype=np.uint8)", "np.arange(1025)[::-3]",
    "np.arange(11, dtype=np.float32)", "np.arange(-5, 40, 3, dtype=np.float32)", "np.arange(0, dtype=np.float32)",
    "np.arange(2**24 - 3, 2**24 + 1, dtype=np.float32)",
])
def test_arange(call):
    O.check(O.fn_from_src(f"def f(x):\n    return {call} + x\n"), np.int64(1))
    O.check(O.fn_from_src(f"def f(x):\n    return {call} * x\n"), np.array(0.5))


@pytest.mark.parametrize("args", [
    "0, 1", "0, 1, 7", "-3.5, 2.25, 11", "1, 1, 5", "0, 1, 0", "0, 1, 1", "2, -7, 1", "0, 1, 5, False",
    "1e-310, 2e-310, 4", "0, 5e-324, 3", "-1.0, float('inf'), 4", "0.1, 0.7, 100", "3, 10, 8",
    "np.float64(0.5), 9, 13", "0, 1, -1",
])
def test_linspace(args):
    O.check(O.fn_from_src(f"def f(x):\n    return np.linspace({args}) + x\n"), 0.0)
    O.check(O.fn_from_src(f"def f(x):\n    return np.linspace({args}) * x\n"), np.float64(-0.0))


@pytest.mark.parametrize("dtype", ["np.float32", "np.float64", "np.int32", "np.int64", "np.uint8", "np.int8"])
@pytest.mark.parametrize("args", ["0, 1, 8", "-2.5, 9, 5", "-3.5, 2.25, 11", "0, 1, 0", "0, 1, 1", "2, 7, 4, False"])
def test_linspace_dtype(args, dtype):
    # NumPy samples in float64, floors for an integer dtype, then casts.
    O.check(O.fn_from_src(f"def f(x):\n    return np.linspace({args}, dtype={dtype}) + x\n"), np.int8(1))


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("call", [
    "np.tril(a)", "np.triu(a)", "np.tril(a, 1)", "np.triu(a, -1)", "np.triu(a, 2) + np.tril(a, -3)",
    "np.triu(a, 10)", "np.tril(a, -10)", "np.triu(a[0])", "np.tri(4, 5, 1) * a[:4, :5]",
    "np.tri(3, dtype=np.int32)", "np.tri(0, 3)",
])
def test_triangles(call, dtype, rng):
    for shape in [(5, 6), (6, 5), (1, 1), (2, 5, 6), (0, 3)]:
        if "a[:4, :5]" in call and (len(shape) != 2 or shape[0] < 4 or shape[1] < 5):
            continue
        O.check(O.fn_from_src(f"def f(a):\n    return {call}\n"), O.make(rng, shape, dtype))


def test_index_grids_build_stencil_weights(rng):
    f = O.fn_from_src(
        "def f(u, dx):\n"
        "    x = np.arange(u.shape[0]) * dx\n"
        "    w = np.exp(-x ** 2)\n"
        "    return u * w[:, None] + np.linspace(0.0, 1.0, u.shape[1])\n")
    O.check(f, O.make(rng, (40, 30), "float64"), 0.1)
