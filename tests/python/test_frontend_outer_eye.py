"""np.outer, ufunc.outer, np.eye and np.identity, compiled (fullgraph) against NumPy."""
import numpy as np
import pytest

import numpy_oracle as O


@pytest.mark.parametrize("dtype", O.DTYPES)
@pytest.mark.parametrize("body", [
    "np.outer(a, b)", "np.add.outer(a, b)", "np.subtract.outer(b, a)", "np.maximum.outer(a, a)",
    "np.less.outer(a, b)", "np.multiply.outer(a, 2)", "np.add.outer(a[0, 0], b)",
    "np.minimum(a[:, :1], np.add.outer(a[:, 0], a[0, :]))",
])
def test_outer_products(body, dtype, rng):
    for sa, sb in [((3, 4), (5,)), ((1, 1), (1,)), ((2, 3), (0,)), ((4, 4), (3,))]:
        O.check(O.fn_from_src(f"def f(a, b):\n    return {body}\n"),
                O.make(rng, sa, dtype), O.make(rng, sb, dtype, layout="C"))


def test_floyd_warshall_compiles(rng):
    f = O.fn_from_src(
        "def f(path):\n"
        "    for k in range(path.shape[0]):\n"
        "        path[:] = np.minimum(path[:], np.add.outer(path[:, k], path[k, :]))\n"
        "    return path\n")
    O.check(f, O.make(rng, (12, 12), "float64"))
    O.check(f, O.make(rng, (12, 12), "int32"))


@pytest.mark.parametrize("call", [
    "np.eye(4)", "np.eye(3, 5)", "np.eye(5, 3)", "np.eye(4, k=1)", "np.eye(4, k=-2)", "np.eye(3, 4, 3)",
    "np.eye(3, k=5)", "np.eye(3, k=-5)", "np.eye(0)", "np.eye(1)", "np.eye(4, dtype=np.int32)",
    "np.eye(2, 6, k=-1, dtype=bool)", "np.identity(3)", "np.identity(4, dtype=np.float32)",
    "np.eye(-1)",
])
def test_eye(call):
    O.check(O.fn_from_src(f"def f(x):\n    return {call} + x\n"), np.float32(0.5))

