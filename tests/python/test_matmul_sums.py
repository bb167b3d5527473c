"""Sums of matrix products (`c + a0 @ b0 + a1 @ b1 + ...`) accumulate in one matmul_sum region
(core/src/matmul_sums.cpp): compiled against NumPy for convolutions written as shifted
products, recurrent-cell gates, batched products, odd sizes and layouts, special values; and
which sums combine (products read only by the sum, 256 contracted elements at most)."""

import numpy as np
import pytest

import hcompile as hc
from numpy_oracle import check, fn_from_src, make

from apps.pipelines import conv_layer  # noqa: E402  (nine shifted products and a bias)

def _tol(k, scale=1.0):
    return dict(reduce=k, scale=scale)


def _regions(fn, *args, **options):
    """The compiled regions' text, after one call checked against NumPy."""
    cf = hc.hcompile(fn, fullgraph=True, **options)
    check(fn, *args, cfn=cf, **_tol(64, 4.0))
    return cf.compile_records[0]["report"]["regions"]


@pytest.mark.parametrize("shape", [(2, 7, 9, 5, 6), (1, 1, 1, 3, 2), (1, 5, 5, 1, 1), (2, 6, 13, 16, 33)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_convolution_as_shifted_products(shape, dtype, rng):
    n, h, w, c, k = shape
    x = make(rng, (n, h, w, c), dtype)
    wt = make(rng, (3, 3, c, k), dtype)
    b = make(rng, (k,), dtype)
    check(conv_layer, x, wt, b, **_tol(9 * c, 4.0))


def test_convolution_is_one_matmul_sum(rng):
    x, wt, b = make(rng, (2, 7, 9, 5), "float32"), make(rng, (3, 3, 5, 6), "float32"), make(rng, (6,), "float32")
    regions = _regions(conv_layer, x, wt, b)
    assert regions.count("(matmul_sum)") == 1 and "(matmul)" not in regions, regions


GATES = "def f(x, h, wx, wh, b):\n    return np.tanh(x @ wx + h @ wh + b)\n"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("m,kx,kh,n", [(5, 7, 3, 12), (1, 1, 1, 1), (33, 20, 40, 65), (6, 256, 17, 8)])
def test_recurrent_gates(dtype, m, kx, kh, n, rng):
    args = (make(rng, (m, kx), dtype), make(rng, (m, kh), dtype), make(rng, (kx, n), dtype),
            make(rng, (kh, n), dtype), make(rng, (n,), dtype))
    check(fn_from_src(GATES), *args, **_tol(kx + kh, 4.0))


SUMS = {
    "no_addend": "a @ b + c @ d",
    "addend_between": "(a @ b + e) + c @ d",
    "addend_last": "a @ b + c @ d + e",
    "reversed": "e + (c @ d + a @ b)",
    "twice": "a @ b + a @ b",
    "three": "a @ b + c @ d + a @ (b * 2.0)",
}


@pytest.mark.parametrize("form", list(SUMS))
@pytest.mark.parametrize("layout", ["C", "F", "step", "rev"])
def test_sum_forms_and_layouts(form, layout, rng):
    f = fn_from_src(f"def f(a, b, c, d, e):\n    return {SUMS[form]}\n")
    args = (make(rng, (9, 4), "float32", layout=layout), make(rng, (4, 11), "float32", layout=layout),
            make(rng, (9, 6), "float32", layout=layout), make(rng, (6, 11), "float32", layout=layout),
            make(rng, (9, 11), "float32", layout=layout))
    check(f, *args, **_tol(10, 4.0))


def test_batched_products(rng):
    f = fn_from_src("def f(a, b, c, d):\n    return a @ b + c @ d + 1.5\n")
    args = (make(rng, (3, 4, 5), "float64"), make(rng, (3, 5, 7), "float64"),
            make(rng, (3, 4, 2), "float64"), make(rng, (3, 2, 7), "float64"))
    check(f, *args, **_tol(7, 4.0))


def test_special_values_in_addend_and_operands(rng):
    f = fn_from_src("def f(a, b, c, d, e):\n    return e + a @ b + c @ d\n")
    args = (make(rng, (8, 5), "float32", specials=0.2), make(rng, (5, 7), "float32"),
            make(rng, (8, 3), "float32"), make(rng, (3, 7), "float32", specials=0.2),
            make(rng, (8, 7), "float32", specials=0.3))
    check(f, *args, **_tol(8, 4.0))


def test_zero_result_is_positive_zero():
    """NumPy's last addition is of a BLAS product (a sum from +0.0): -0.0 addends give +0.0."""
    f = fn_from_src("def f(a, b, c, d, e):\n    return e + a @ b + c @ d\n")
    a, b = np.zeros((3, 4), np.float32), np.ones((4, 5), np.float32)
    e = np.full((3, 5), -0.0, np.float32)
    got = hc.hcompile(f, fullgraph=True)(a, b, a, b, e)
    expected = f(a, b, a, b, e)
    assert np.array_equal(np.signbit(got), np.signbit(expected)) and not np.signbit(got).any()


def test_what_stays_apart(rng):
    """A product read elsewhere stays a product (the sum adds it as its addend); one over 256
    contracted elements, a product cast to the sum's dtype and a difference are not combined.
    Each still gives NumPy's result."""
    a, b = make(rng, (6, 5), "float32"), make(rng, (5, 4), "float32")
    c, d = make(rng, (6, 3), "float32"), make(rng, (3, 4), "float32")
    shared = fn_from_src("def f(a, b, c, d):\n    p = a @ b\n    return p + c @ d, p * 2.0\n")
    regions = _regions(shared, a, b, c, d)
    assert regions.count("(matmul)") == 1 and regions.count("(matmul_sum)") == 1, regions
    big_k = make(rng, (6, 300), "float32"), make(rng, (300, 4), "float32")
    wide = fn_from_src("def f(a, b, c, d):\n    return a @ b + c @ d\n")
    assert "(matmul_sum)" not in _regions(wide, *big_k, *big_k)
    cast = fn_from_src("def f(a, b, c, d):\n    return a @ b + (c @ d).astype(np.float64)\n")
    assert "(matmul_sum)" not in _regions(cast, a, b, c, d)
    difference = fn_from_src("def f(a, b, c, d):\n    return a @ b - c @ d\n")
    assert "(matmul_sum)" not in _regions(difference, a, b, c, d)


def test_peers_get_the_products_apart(rng):
    """Combining is hcompile's algorithm choice: the baseline schedules the graph as written."""
    f = fn_from_src("def f(a, b, c, d):\n    return a @ b + c @ d\n")
    a, b = make(rng, (6, 5), "float32"), make(rng, (5, 4), "float32")
    assert "(matmul_sum)" in _regions(f, a, b, a, b)
    assert "(matmul_sum)" not in _regions(f, a, b, a, b, autoscheduler="baseline")


def test_dynamic_shapes(rng):
    f = fn_from_src(GATES)
    cf = hc.hcompile(f, fullgraph=True, dynamic=True)
    for m in (5, 9, 17):
        args = (make(rng, (m, 7), "float32"), make(rng, (m, 3), "float32"), make(rng, (7, 12), "float32"),
                make(rng, (3, 12), "float32"), make(rng, (12,), "float32"))
        check(f, *args, cfn=cf, **_tol(10, 4.0))
