"""Shapes and memory layouts, compiled vs NumPy: 0-d, size-1 dims, empty arrays, broadcasting
pairs, non-contiguous inputs (transposed, stepped, negative stride, stride-0 broadcast views,
read-only), largish non-multiple-of-vector-width sizes, NumPy scalars as arguments."""

import numpy as np
import pytest

from numpy_oracle import check, fn_from_src, make

CHAIN = "def f(a, b):\n    return (np.exp(a * 0.5) - b, np.maximum(a, b) * 2, a < b)\n"

SHAPES = [(), (1,), (1, 1), (0,), (3, 0), (0, 4), (7,), (1, 5), (2, 3, 4, 5), (257, 129)]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_shapes(shape, dtype, rng):
    f = fn_from_src(CHAIN)
    # exp(a * 0.5) - b cancels when the two are close (|each| <= e**1.5 for "small" inputs); on a
    # one-element array the largest |expected| is that cancelled value, so the absolute tolerance
    # is scaled by the operands' bound instead.
    check(f, make(rng, shape, dtype, "small"), make(rng, shape, dtype, "small"), ops=3, scale=4.5)


BROADCAST = [((3, 1), (1, 4)), ((5,), (2, 5)), ((), (4, 4)), ((4, 4), ()), ((2, 1, 3), (4, 1)),
             ((1,), (3, 0)), ((0, 1), (1, 5)), ((1, 1, 1), (6,)), ((2, 3), (5, 1, 3))]


@pytest.mark.parametrize("sa,sb", BROADCAST, ids=str)
def test_broadcasting(sa, sb, rng):
    f = fn_from_src("def f(a, b):\n    return (a + b, np.where(a > b, a, b), a * b - a, "
                    "np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)) + 0)\n")
    check(f, make(rng, sa, "float64"), make(rng, sb, "float64"), ops=2)


LAYOUTS = ["C", "F", "step", "rev", "bcast"]


@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", ["C", "rev"])
def test_layouts_elementwise(la, lb, rng):
    f = fn_from_src("def f(a, b):\n    return np.sqrt(np.abs(a)) + b * 2, a.sum(axis=0)\n")
    a, b = make(rng, (6, 9), "float32", layout=la), make(rng, (6, 9), "float32", layout=lb)
    check(f, a, b, ops=3, reduce=6, scale=8.0)


@pytest.mark.parametrize("layout", ["F", "step", "rev"])
def test_layouts_matmul_and_slices(layout, rng):
    f = fn_from_src("def f(a, b):\n    return a @ b, a[::-1, 1:] * 2, a.T.reshape(-1)\n")
    a = make(rng, (5, 7), "float64", layout=layout)
    b = make(rng, (7, 3), "float64", layout=layout)
    check(f, a, b, reduce=7, scale=16.0)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_layout_int_bool_views(dtype, rng):
    f = fn_from_src("def f(a, b):\n    return a ^ b if a.dtype != np.float32 else a - b\n")
    kind = "wide" if dtype == "int64" else "normal"
    check(f, make(rng, (8, 5), dtype, kind, layout="step"), make(rng, (8, 5), dtype, kind,
                                                               layout="F"))


def test_numpy_scalar_args(rng):
    """NumPy scalars are strongly typed (unlike Python scalars): f32 array * f64 scalar -> f64."""
    f = fn_from_src("def f(a, s, t):\n    return a * s, a + t, s * t\n")
    a = make(rng, (3, 4), "float32")
    check(f, a, np.float64(1.5), np.int32(3))
    check(f, a, np.float32(2.5), np.int64(-2))
    check(f, a, np.array(0.5), np.array(3, dtype=np.int8))  # 0-d arrays: strong as well


def test_readonly_input(rng):
    a = make(rng, (4, 6), "float64")
    a.flags.writeable = False
    check(fn_from_src("def f(a):\n    return a * 3 + 1\n"), a, ops=2)
