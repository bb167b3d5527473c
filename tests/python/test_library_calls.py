"""Large float matrix products call BLAS (NumPy's own OpenBLAS) as a Halide extern stage, one
call per parallel tile. Every case is compared with NumPy on fresh inputs: operands that are
inputs, strided views, transposes and fused expressions; outputs read in part; dynamic sizes;
writes into arguments. Products below the size, integer and batched products stay Halide loops."""
from __future__ import annotations

import numpy as np
import pytest

import hcompile as hc
from apps.workloads import _layer_norm
from hcompile import _C

pytestmark = pytest.mark.skipif(not _C.blas_available(), reason="NumPy ships no OpenBLAS here")

DEEP = 1024   # with 64 x 64 outputs, 4M multiply-adds: enough to call BLAS (library_calls.h)


def _schedule(compiled):
    return "\n".join(r["report"]["schedule"] for r in compiled.compile_records if r.get("report"))


def _operands_copied(compiled):
    """Whether some call's operand is stored by a stage of its own first (Halide's schedule names it)."""
    return any("blas_operand" in r["report"]["schedule_source"] for r in compiled.compile_records if r.get("report"))


def _check(fn, *args, library=True, **options):
    compiled = hc.hcompile(fn, **options)
    mine = [a.copy() for a in args]
    want = fn(*args)
    got = compiled(*mine)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        tol = 2e-4 if np.asarray(w).dtype == np.float32 else 1e-10
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * 8)
    assert ("call_library" in _schedule(compiled)) == library, _schedule(compiled)
    return compiled, mine


def rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("m, n", [(64, 64), (3, 1500), (61, 73), (1, 4100)])
def test_products_of_inputs(dtype, m, n):
    _check(lambda a, b: a @ b, rand(m, DEEP, dtype=dtype), rand(DEEP, n, dtype=dtype))


def test_fused_operands_and_consumers():
    _check(lambda a, b, c: np.tanh((a * 2 - 1) @ b.T + c), rand(64, DEEP), rand(70, DEEP), rand(70))


def test_strided_and_transposed_views():
    a, b = rand(130, 2 * DEEP), rand(DEEP, 90)
    _check(lambda a, b: a @ b, a[::2, ::2], b)           # no unit stride: stored first
    _check(lambda a, b: a @ b, a[:, :DEEP], b[:, ::-1])   # a row slice; reversed columns
    _check(lambda a, b: a.T @ b, rand(DEEP, 50), b)       # a transposed input


def _rows(x):
    return x.reshape(-1, x.shape[-1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 16, DEEP), (2, 3, 11, DEEP), (1, 64, DEEP), (64, 1, DEEP), (3, 1, 1, 40, DEEP)])
def test_an_input_reshaped_into_rows_is_read_as_it_is(dtype, shape):
    """`x.reshape(-1, k) @ w` of a C-contiguous x: BLAS reads x's own memory as the matrix, its
    leading axes merged into rows (runtime gemm::as_matrix), with no copy first; so does a
    right operand whose leading axes merge into the contraction."""
    compiled, _ = _check(lambda x, w: _rows(x) @ w + 1, rand(*shape, dtype=dtype), rand(DEEP, 70, dtype=dtype))
    assert not _operands_copied(compiled)
    compiled, _ = _check(lambda a, w: a @ _rows(w), rand(70, DEEP, dtype=dtype), rand(8, DEEP // 8, 66, dtype=dtype))
    assert not _operands_copied(compiled)


def test_inputs_reshaped_into_rows_that_are_no_one_matrix_are_copied_first():
    """A stepped or transposed x is not one matrix in memory: stored first, then the call."""
    w = rand(DEEP, 70)
    for x in (rand(8, 16, DEEP)[::2], rand(16, 4, DEEP).transpose(1, 0, 2), rand(4, 16, 2 * DEEP)[:, :, ::2]):
        compiled = hc.hcompile(lambda x, w: _rows(x) @ w)
        np.testing.assert_allclose(compiled(x, w), _rows(x) @ w, rtol=1e-10, atol=1e-10)
        assert _operands_copied(compiled)


def test_inputs_reshaped_into_rows_at_every_size():
    compiled = hc.hcompile(lambda x, w: np.maximum(_rows(x) @ w, 0))
    for batch, tokens in [(4, 40), (3, 41), (5, 37), (2, 90)]:
        x, w = rand(batch, tokens, DEEP), rand(DEEP, 40)
        np.testing.assert_allclose(compiled(x, w), np.maximum(_rows(x) @ w, 0), rtol=1e-10, atol=1e-10)
    assert "call_library" in _schedule(compiled)


def _joined_heads(p, v, w):
    o = (p @ v).transpose(0, 2, 1, 3)
    return o.reshape(o.shape[0] * o.shape[1], -1) @ w


def _joined_heads_also_returned(p, v, w):
    return _joined_heads(p, v, w), p @ v


def _joined_heads_and_stacked_heads(p, v, w, u):
    r = p @ v
    return r.transpose(0, 2, 1, 3).reshape(-1, w.shape[0]) @ w, r.reshape(-1, r.shape[-1]) @ u


def test_a_region_read_through_a_transpose_is_laid_out_as_the_matrix():
    """An attention's heads joined for the output projection, (p @ v).transpose(0, 2, 1, 3)
    .reshape(rows, width) @ w: the batched product (a Halide kernel) stores its result with the
    heads inside the tokens, so BLAS reads it as it is. Where the product is also returned (its
    layout the caller's), or another call reads it in another order (a region has one layout), a
    copy is made first instead."""
    p, v, w = rand(2, 8, 64, 64), rand(2, 8, 64, DEEP // 8), rand(DEEP, 70)
    compiled, _ = _check(_joined_heads, p, v, w)
    assert not _operands_copied(compiled)
    compiled, _ = _check(_joined_heads_also_returned, p, v, w)
    assert _operands_copied(compiled)
    compiled, _ = _check(_joined_heads_and_stacked_heads, p, v, w, rand(DEEP // 8, 1200))
    assert _operands_copied(compiled)


def test_rows_blas_cannot_take_go_through_loops():
    """A broadcast row (stride 0) and reversed rows have a unit inner stride but rows BLAS
    cannot step through (fuzz seed 3, program 2023317: a.T @ a of a broadcast row)."""
    row = rand(1, DEEP)
    _check(lambda a, b: a @ b, np.broadcast_to(row, (64, DEEP)), rand(DEEP, 70))
    _check(lambda a, b: a.T @ b, np.broadcast_to(row.T, (DEEP, 64)), rand(DEEP, 70))
    _check(lambda a, b: a @ b, rand(64, DEEP)[::-1], rand(DEEP, 70)[::-1])
    _check(lambda a: a.T @ a, np.broadcast_to(rand(1, 80), (DEEP, 80)))


def test_part_of_the_product_is_read():
    _check(lambda a, b: (a @ b)[1:-1, ::3], rand(66, DEEP), rand(DEEP, 71))


def test_write_into_an_argument():
    def gemm(c, a, b):
        c[:] = 0.5 * (a @ b) + c
        return c
    c = rand(64, 66)
    compiled, (c_after, _, _) = _check(gemm, c, rand(64, DEEP), rand(DEEP, 66))
    np.testing.assert_allclose(c_after, c, rtol=1e-10, atol=1e-10)   # the reference call updated `c`


def test_dynamic_sizes_call_the_library_at_every_size():
    compiled = hc.hcompile(lambda a, b: np.maximum(a @ b, 0))
    for m in [170, 133, 102, 229]:
        a, b = rand(m, DEEP), rand(DEEP, 40)
        np.testing.assert_allclose(compiled(a, b), np.maximum(a @ b, 0), rtol=1e-10, atol=1e-10)
    assert compiled.cache_info().entries == 2 and "call_library" in _schedule(compiled)


def test_an_operand_also_read_elementwise_is_stored_whole_before_the_call():
    """A region both a product's operand and read by an elementwise region tiled over rows (a
    residual add): stored whole first, not in the other region's tiles, where Halide refused the
    pipeline and the function ran as Python (a transformer layer's layer norm, 1024 rows of 512)."""
    def residual(x, w, g, b):
        y = _layer_norm(x, g, b)
        return y + np.tanh(y @ w)

    def two_norms(x, w, g, b):
        y = _layer_norm(x, g, b)
        return _layer_norm(y + np.tanh(y @ w), g, b)

    for fn in (residual, two_norms):
        _check(fn, rand(1024, 512, dtype=np.float32), rand(512, 512, dtype=np.float32) / 20,
               rand(512, dtype=np.float32), rand(512, dtype=np.float32, seed=1), fullgraph=True)


def test_special_values_pass_through():
    a, b = rand(64, DEEP), rand(DEEP, 64)
    a[3, 5], a[7, 0], b[2, 9] = np.nan, np.inf, -np.inf
    with np.errstate(all="ignore"):
        _check(lambda a, b: a @ b, a, b)


@pytest.mark.parametrize("fn, args", [
    (lambda a, b: a @ b, (rand(20, 64), rand(64, 20))),                         # small
    (lambda a, b: a @ b, (np.ones((64, DEEP), np.int64), np.ones((DEEP, 64), np.int64))),
    (lambda a, b: a @ b, (rand(2, 48, DEEP), rand(2, DEEP, 48))),                # batched
])
def test_other_products_stay_halide_loops(fn, args):
    _check(fn, *args, library=False)


def test_baseline_and_halide_peers_keep_halide_loops():
    a, b = rand(64, DEEP), rand(DEEP, 64)
    _check(lambda a, b: a @ b, a, b, library=False, autoscheduler="baseline")
