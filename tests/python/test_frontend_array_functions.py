"""np.diff, np.diag / diagonal, np.trace, np.linalg.norm and np.deg2rad, compiled (fullgraph)
against NumPy."""
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
    O.check(O.fn_from_src("def f(a):\n    return np.deg2rad(a), np.radians(a)\n"), a)


def test_writing_into_a_diagonal_raises_as_numpy(rng):
    # NumPy's diagonal is a read-only view: the write breaks to Python, which raises.
    f = O.fn_from_src("def f(a):\n    d = np.diag(a)\n    d[0] = 1\n    return d\n")
    O.check_raises_same(f, O.make(rng, (3, 3), "float64"), cfn=hc.hcompile(f))
