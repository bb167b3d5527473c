"""Batched products of short contractions on the GPU: Halide kernels whose blocks copy their tiles
of both operands into shared memory first (GpuStageOperands: autoscheduler/src/gpu_directives.cpp,
the rule in gpu_schedule.cpp, the routing in library_calls.h). Their operands are read where they
lie, views included (an attention's heads split out of one product's rows, k transposed), where
cuBLAS's strided batched call needed copies of them.

Without a GPU the kernels are compiled for CUDA (the schedules checked by Halide's CUDA code
generator); with one (the `gpu` marker) every result is compared with NumPy's."""
import numpy as np
import pytest

import hcompile as hc
from apps import workloads as W
from tests.python.test_cuda import CUDA_TARGET, _schedules, _torch_cuda, gpu


def _product(a, b):
    return a @ b


def _scores(x):
    """Two heads of 64 features split out of x's rows (4 x 64 tokens), q @ k^T scaled."""
    q = x[:, :128].reshape(4, 64, 2, 64).transpose(0, 2, 1, 3)
    k = x[:, 128:].reshape(4, 64, 2, 64).transpose(0, 2, 1, 3)
    return q @ k.transpose(0, 1, 3, 2) * 0.125


def _attention(x, bias, heads=2):
    """Self-attention over x's rows (2 x tokens) with a bias added to q, k and v: tokens and head
    widths no tile divides."""
    tokens = x.shape[0] // 2
    width = x.shape[1] // 3
    hd = width // heads
    qkv = x + bias

    def split(part):
        return qkv[:, part * width:(part + 1) * width].reshape(2, tokens, heads, hd).transpose(0, 2, 1, 3)

    s = split(0) @ split(1).transpose(0, 1, 3, 2) * (1.0 / np.sqrt(hd))
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return (p @ split(2)).transpose(0, 2, 1, 3).reshape(2 * tokens, width)


def _tanh_then_product(a, w):
    return np.tanh(a) @ w


# (function, shapes): float32 batched products of contractions up to 64, all staged.
STAGED_CASES = [
    (_product, [(16, 8, 64, 64), (16, 8, 64, 64)]),
    (_scores, [(256, 256)]),
    (_tanh_then_product, [(6, 100, 64), (64, 300)]),          # b one matrix for the whole batch
    (_product, [(3, 1, 50, 64), (4, 64, 70)]),                # batches broadcast; tiles cut at 50, 70
    (_attention, [(154, 240), (240,)]),                       # 77 tokens, heads of 40: k 40, then 77
    (_product, [(5, 40, 1), (5, 1, 40)]),                     # a contraction of one
    (_product, [(2, 7, 64, 9), (2, 7, 9, 3)]),                # tiles of fewer threads than a warp: unstaged
]


def _inputs(rng, shapes, dtype=np.float32):
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("fn,shapes", STAGED_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_batched_float32_products_of_short_contractions_stage_their_operands(fn, shapes):
    """No cuBLAS call; each product's blocks stage a and b (a tile of fewer than a warp's threads
    does not: the unstaged tiles then, still no library call). Compiles without a GPU."""
    f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(*_inputs(np.random.default_rng(0), shapes))
    schedule = _schedules(f)
    assert "call_library" not in schedule, schedule
    tiny = len(shapes) > 1 and shapes[1][-1] <= 3
    assert ("gpu_stage_operands" in schedule) == (not tiny), schedule
    if not tiny:
        source = f.compile_records[-1]["report"]["schedule_source"]
        assert ".in(acc_" in source and "bound_storage" in source, source


def test_what_the_staged_kernel_does_not_take_calls_cublas():
    """float64 (Halide's CUDA vectors of doubles), contractions past 64, float16 operands (cuBLAS's
    tensor cores) and products of sizes known only at run time keep the strided batched call
    (where cuBLAS is loaded: on a GPU machine; without one Halide's tiles, unstaged but for float16,
    whose product is a float32 one of its widened values)."""
    rng = np.random.default_rng(1)
    cases = [([(16, 8, 64, 64), (16, 8, 64, 64)], np.float64, False),
             ([(16, 8, 64, 128), (16, 8, 128, 64)], np.float32, False),
             ([(16, 8, 64, 64), (16, 8, 64, 64)], np.float16, False),
             ([(16, 8, 64, 64), (16, 8, 64, 64)], np.float32, True)]
    for shapes, dtype, dynamic in cases:
        f = hc.hcompile(_product, target=CUDA_TARGET, fullgraph=True, dynamic=dynamic or None)
        f.compile_only(*_inputs(rng, shapes, dtype))
        schedule = _schedules(f)
        if _torch_cuda() is not None:
            assert "call_library" in schedule and "gpu_stage_operands" not in schedule, (dtype, dynamic, schedule)
        elif dtype != np.float16:
            assert "gpu_stage_operands" not in schedule, (dtype, dynamic, schedule)


def test_integer_batched_products_keep_unstaged_tiles():
    """Only float32 products stage (what the GPU tests check); int32 ones keep Halide's tiles."""
    f = hc.hcompile(_product, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(*[np.ones(s, np.int32) for s in [(16, 8, 64, 64), (16, 8, 64, 64)]])
    schedule = _schedules(f)
    assert "gpu_stage_operands" not in schedule and "call_library" not in schedule, schedule


def test_a_stage_that_does_not_fit_shared_memory_is_refused():
    """A list may ask for staged tiles too large for a block's shared memory: refused with the
    limit, not compiled into a kernel that cannot launch."""
    x = _inputs(np.random.default_rng(2), [(16, 8, 64, 64), (16, 8, 64, 64)])
    rule = hc.hcompile(_product, target=CUDA_TARGET, fullgraph=True)
    rule.compile_only(*x)
    decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
    assert any(d[1] == "gpu_stage_operands" for d in decisions)
    wide = [(r, c, a, 32 if c == "gpu_tile" else v, 32 if c == "gpu_tile" else b) for (r, c, a, v, b) in decisions]
    with pytest.raises(hc.CompileError, match="shared memory"):
        hc.hcompile(_product, target=CUDA_TARGET, fullgraph=True, schedule=wide).compile_only(*x)


@gpu
@pytest.mark.parametrize("fn,shapes", STAGED_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_staged_products_match_numpy_on_the_gpu(fn, shapes, torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(3)
    f = hc.hcompile(fn, fullgraph=True)
    for _ in range(2):   # the compile, then the cached kernel on new values
        args = _inputs(rng, shapes)
        got = f(*[torch.from_numpy(a).cuda() for a in args]).cpu().numpy()
        want = fn(*[a.astype(np.float64) for a in args])
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * max(1.0, np.abs(want).max()))


@gpu
def test_staged_products_read_strided_tensors_on_the_gpu(torch_cuda):
    """Operands that are views of the caller's tensors (transposed, every other column): read where
    they lie."""
    torch = torch_cuda
    rng = np.random.default_rng(4)
    a = torch.from_numpy(rng.standard_normal((8, 64, 48), np.float32)).cuda()
    b = torch.from_numpy(rng.standard_normal((8, 80, 64), np.float32)).cuda()
    f = hc.hcompile(_product, fullgraph=True)
    a_view, b_view = a[:, :, ::2].transpose(1, 2), b[:, ::2, :].transpose(1, 2)   # (8, 24, 64), (8, 64, 40)
    got = f(a_view, b_view).cpu().numpy()
    want = a_view.cpu().numpy().astype(np.float64) @ b_view.cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4 * np.abs(want).max())
    assert "gpu_stage_operands" in _schedules(f)


@gpu
def test_the_transformer_layer_with_staged_attention_matches_numpy(torch_cuda):
    torch = torch_cuda
    for size in ("small", "bench"):
        args = W.inputs_transformer_layer(size)
        f = hc.hcompile(W.transformer_layer, fullgraph=True)
        got = f(*[torch.from_numpy(a).cuda() for a in args]).cpu().numpy()
        want = W.transformer_layer(*[a.astype(np.float64) for a in args])
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
        if size == "bench":
            assert _schedules(f).count("gpu_stage_operands") == 2
