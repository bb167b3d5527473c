"""Row groups whose root loads inputs only after the row's reductions (a layer norm's weight and
bias) over few rows: the block's threads across each row in vectors of four points, not a warp's
lanes, whose points each waited a load's latency (autoscheduler/src/gpu_schedule.cpp's
`loads_late_over_few_rows`).

Without a GPU the kernels are compiled for CUDA (the schedules checked by Halide's CUDA code
generator); with one (the `gpu` marker) every result is compared with NumPy's, and with the same
group run in a warp's lanes bit for bit."""
import numpy as np
import pytest

import hcompile as hc
from apps import workloads as W
from apps.gpu_few_rows_bench import _residual_layer_norm, _scaled_softmax, in_warp_lanes
from tests.python.test_cuda import CUDA_TARGET, gpu


_layer_norm = W._layer_norm
_softmax = W.softmax_rows


def _scaled_by_row_norm(x, w):
    """Its weight read by the row's reduction too: nothing is loaded late."""
    return x * w / np.sqrt((x * w * x).sum(axis=-1, keepdims=True))


def _inputs(fn, shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    rows = [rng.standard_normal(shape).astype(dtype)]
    if fn is _residual_layer_norm:
        rows.append(rng.standard_normal(shape).astype(dtype))
    count = {_layer_norm: 2, _residual_layer_norm: 2, _scaled_softmax: 1, _softmax: 0, _scaled_by_row_norm: 1}[fn]
    return rows + [rng.standard_normal(shape[-1]).astype(dtype) for _ in range(count)]


def _row_layout(decisions):
    """(threads a row, rows a block, in a warp's lanes, in vectors) of the group's root."""
    root = next(d for d in decisions if d[1] == "gpu_rows")
    return (root[3], max(root[4], 1), any(d[1] == "gpu_warp_rows" for d in decisions),
            any(d[1] == "gpu_vector" and d[0] == root[0] for d in decisions))


def _compiled_layout(fn, shape, dtype=np.float32, any_rows=False):
    """The row layout compiled for `shape`; `any_rows`: then for more rows, any count of them."""
    f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(*_inputs(fn, shape, dtype))
    if any_rows:
        f.compile_only(*_inputs(fn, (shape[0] + 100,) + shape[1:], dtype))
    return _row_layout(f.compile_records[-1]["report"]["decisions"])


@pytest.mark.parametrize("fn,shape,layout", [
    (_layer_norm, (1024, 512), (64, 2, False, True)),          # 32 lanes a row: 32768 threads
    (_layer_norm, (2048, 512), (64, 2, False, True)),          # 65536
    (_layer_norm, (2048, 768), (64, 2, False, True)),
    (_layer_norm, (1024, 1024), (128, 1, False, True)),
    (_layer_norm, (1024, 256), (64, 2, False, True)),
    (_layer_norm, (256, 512), (64, 1, False, True)),           # too few rows for two a block
    (_layer_norm, (3, 300, 512), (64, 2, False, True)),
    (_residual_layer_norm, (1024, 512), (64, 2, False, True)),
    (_scaled_softmax, (1024, 512), (64, 2, False, True)),
])
def test_few_rows_loading_inputs_after_their_reductions_take_threads_across_each_row(fn, shape, layout):
    assert _compiled_layout(fn, shape) == layout


@pytest.mark.parametrize("fn,shape,dtype,any_rows", [
    (_layer_norm, (4096, 768), np.float32, False),    # 131072 threads in lanes: enough
    (_layer_norm, (4096, 512), np.float32, False),
    (_layer_norm, (8192, 1024), np.float32, False),
    (_layer_norm, (1024, 64), np.float32, False),     # rows shorter than 64 threads' vectors
    (_softmax, (1024, 512), np.float32, False),       # nothing loaded after the reductions
    (_scaled_by_row_norm, (1024, 512), np.float32, False),
    (_layer_norm, (1024, 512), np.float32, True),     # rows of any count (compiled again for more)
])
def test_other_row_groups_keep_a_warps_lanes(fn, shape, dtype, any_rows):
    threads, rows, lanes, _ = _compiled_layout(fn, shape, dtype, any_rows)
    assert lanes, (threads, rows)


# (function, shape, the lanes its float sums take in a warp) for the test on the GPU.
_ON_THE_GPU = ((_layer_norm, (1024, 512), 32), (_layer_norm, (1021, 768), 32), (_layer_norm, (3, 300, 512), 32),
               (_layer_norm, (1024, 1024), 32), (_layer_norm, (255, 256), 16), (_residual_layer_norm, (1024, 512), 32),
               (_scaled_softmax, (1000, 512), 32))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_the_gpu_tests_warp_lanes_layouts_compile(dtype):
    """The same groups in a warp's lanes, which the GPU test compares bit for bit, are schedules
    the plan takes (their lanes the float sums'): checked without a GPU."""
    for fn, shape, lanes in _ON_THE_GPU:
        host = _inputs(fn, shape, dtype)
        rule = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
        rule.compile_only(*host)
        decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
        assert not _row_layout(decisions)[2], (fn.__name__, shape)
        hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True, schedule=in_warp_lanes(decisions, lanes, 4)).compile_only(*host)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_few_rows_loading_late_give_numpys_answer_on_the_gpu(dtype, torch_cuda):
    """NumPy's answer, NaN and infinity in a row, rows the blocks do not divide, rows along several
    axes; the same bits as the group in a warp's lanes (the same sums, combined elsewhere)."""
    torch = torch_cuda
    tolerance = {np.float32: (2e-5, 1e-6), np.float16: (4e-3, 4e-3)}[dtype]
    for fn, shape, lanes in _ON_THE_GPU:
        host = _inputs(fn, shape, dtype, seed=7)
        host[0][(0,) * (len(shape) - 2) + (3, 1)] = np.nan
        host[0][(0,) * (len(shape) - 2) + (5, 2)] = np.inf
        args = [torch.from_numpy(a).cuda() for a in host]
        rule = hc.hcompile(fn, fullgraph=True)
        got = rule(*args).cpu().numpy()
        with np.errstate(all="ignore"):
            want = fn(*host)
        np.testing.assert_allclose(got, want, rtol=tolerance[0], atol=tolerance[1], err_msg=f"{fn.__name__} {shape}")
        decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
        threads, rows, in_lanes, _ = _row_layout(decisions)
        assert not in_lanes and threads >= 64, (fn.__name__, shape, decisions)
        warp = hc.hcompile(fn, fullgraph=True, schedule=in_warp_lanes(decisions, lanes, 4))(*args)
        np.testing.assert_array_equal(got, warp.cpu().numpy(), err_msg=f"{fn.__name__} {shape}")
