"""matmul / np.dot / @, compiled vs NumPy: 1-D and 2-D operands, batched with broadcast batch
dims, dtypes (bool matmul is logical or-of-ands, int wraps, int @ float promotes), empty K."""

import numpy as np
import pytest

from numpy_oracle import DTYPES, check, fn_from_src, make

SHAPES = {
    "1d.1d": ((7,), (7,)),  # -> NumPy scalar
    "1d.2d": ((5,), (5, 3)),
    "2d.1d": ((4, 5), (5,)),
    "2d.2d": ((4, 5), (5, 3)),
    "batched": ((3, 4, 5), (3, 5, 2)),
    "bcast_batch": ((2, 1, 3, 4), (5, 4, 2)),
    "batched.1d": ((3, 4, 5), (5,)),
    "1d.batched": ((4,), (2, 4, 3)),
    "emptyK": ((3, 0), (0, 4)),  # zeros
    "emptyM": ((0, 5), (5, 2)),
    "large": ((65, 129), (129, 33)),
}

FORMS = {"at": "a @ b", "matmul": "np.matmul(a, b)", "dot": "np.dot(a, b)",
         "method": "a.dot(b)"}


def _tol(a, b):
    k = a.shape[-1] if a.ndim else 1
    m = float(np.max(np.abs(a.astype(np.float64)), initial=1.0)) * \
        float(np.max(np.abs(b.astype(np.float64)), initial=1.0))
    return dict(reduce=max(k, 1), scale=m)


@pytest.mark.parametrize("case", list(SHAPES))
def test_matmul_shapes(case, rng):
    sa, sb = SHAPES[case]
    f = fn_from_src("def f(a, b):\n    return a @ b\n")
    a, b = make(rng, sa, "float32"), make(rng, sb, "float32")
    check(f, a, b, **_tol(a, b))


@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("case", ["1d.1d", "2d.1d", "2d.2d"])
def test_matmul_forms(form, case, rng):
    sa, sb = SHAPES[case]
    f = fn_from_src(f"def f(a, b):\n    return {FORMS[form]}\n")
    a, b = make(rng, sa, "float64"), make(rng, sb, "float64")
    check(f, a, b, **_tol(a, b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_dtypes(dtype, rng):
    f = fn_from_src("def f(a, b, v):\n    return a @ b, v @ v, a @ v[:5]\n")
    kind = "wide" if dtype == "int32" else "normal"  # int32 products wrap
    a, b = make(rng, (4, 5), dtype, kind), make(rng, (5, 6), dtype, kind)
    v = make(rng, (5,), dtype, kind)
    check(f, a, b, v, **_tol(a, b))


@pytest.mark.parametrize("da,db", [("int32", "float32"), ("float32", "float64"),
                                   ("bool", "int64"), ("int64", "float32")])
def test_matmul_mixed(da, db, rng):
    f = fn_from_src("def f(a, b):\n    return a @ b\n")
    a, b = make(rng, (3, 4), da), make(rng, (4, 2), db)
    check(f, a, b, **_tol(a, b))


def test_dot_nd_and_scalar(rng):
    """np.dot is not matmul for N-D (sum over a's last and b's second-to-last axis) and
    multiplies by a 0-d operand; matmul rejects 0-d (ValueError)."""
    a, b = make(rng, (2, 3, 4), "float64"), make(rng, (4, 5), "float64")
    check(fn_from_src("def f(a, b):\n    return np.dot(a, b)\n"), a, b, **_tol(a, b))
    s = make(rng, (), "float64")
    check(fn_from_src("def f(a, s):\n    return np.dot(s, a)\n"), a, s)
    check(fn_from_src("def f(a, s):\n    return np.matmul(a, s)\n"), a, s)


def test_linear_layer(rng):
    f = fn_from_src("def f(x, w, b):\n    return np.maximum(x @ w + b, 0.0)\n")
    x, w, b = make(rng, (16, 32), "float32"), make(rng, (32, 8), "float32"), \
        make(rng, (8,), "float32")
    check(f, x, w, b, ops=3, **_tol(x, w))


# A consumer that reads part of a product: the product's register tiles must still fit inside it
# ((c @ c.T)[:, :-1] read column -1: a tile shifted inward to cover 7 of 8 columns).
PARTIAL_READS = ["(a @ b)[:, :-1]", "(a @ b)[::-1, None, :-1]", "(a @ b)[1:, 2:]",
                 "(a @ b)[:1]", "(a @ b)[:, 3]", "(a @ b)[::2, ::3] + 1"]


@pytest.mark.parametrize("dtype", ["uint16", "int32", "float32", "float64"])
@pytest.mark.parametrize("n", [8, 17, 40])
def test_matmul_read_in_part(dtype, n, rng):
    a = make(rng, (n, 5), dtype, "small", low=0, high=5)
    b = make(rng, (5, n), dtype, "small", low=0, high=5)
    f = fn_from_src("def f(a, b):\n    return (" + ", ".join(PARTIAL_READS) + ",)\n")
    check(f, a, b, **_tol(a, b))
