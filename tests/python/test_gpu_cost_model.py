"""The GPU cost model (autoscheduler gpu_cost_model.h), compile-only on the reference device: what
it predicts moves the way the device would, its alternatives come ranked, and a list it cannot
predict still compiles. Its ranking against measured times is apps/gpu_cost_model_ranking.py's
(on the GPU machine)."""
import numpy as np
import pytest

import hcompile as hc

CUDA_TARGET = "host-cuda-cuda_capability_86"


def _report(fn, *args, schedule=None):
    f = hc.hcompile(fn, target=CUDA_TARGET, schedule=schedule, fullgraph=True)
    f.compile_only(*args)
    return f.compile_records[-1]["report"]


def _tinyops(x):
    y = 1 / (1 + np.exp(-(x * 2 + 1)))
    y = np.tanh(y * y)
    return y / (np.abs(y) + 1)


def _row_sums(x):
    return x.sum(axis=-1)


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_the_prediction_and_the_device_are_reported():
    report = _report(_softmax_rows, np.ones((1024, 2048), np.float32))
    assert "device: reference H100 (not measured)" in report["analysis"]
    assert "GPU cost model:" in report["analysis"] and "blocks of 128 threads" in report["analysis"]
    assert report["predicted_seconds"] > 0


def test_more_data_takes_longer_and_memory_bound_work_runs_near_the_copy_bandwidth():
    small = _report(lambda x: x * 2 + 1, np.ones((256, 256), np.float32))["predicted_seconds"]
    big = _report(lambda x: x * 2 + 1, np.ones((8192, 8192), np.float32))["predicted_seconds"]
    assert big > 10 * small
    # 8192² float32 read and written once at the reference's 3 TB/s copy, plus a launch.
    assert 2 * 8192 * 8192 * 4 / 3e12 < big < 1.3 * 2 * 8192 * 8192 * 4 / 3e12 + 5e-6


def test_float64_arithmetic_costs_more_than_float32():
    f32 = _report(_tinyops, np.ones((4096, 4096), np.float32))["predicted_seconds"]
    f64 = _report(_tinyops, np.ones((4096, 4096), np.float64))["predicted_seconds"]
    assert f64 > 1.5 * f32


def test_a_thread_per_row_reads_uncoalesced_and_is_predicted_slower_than_a_block_per_row():
    x = np.ones((8192, 8192), np.float32)
    rule = _report(_row_sums, x)
    assert any(d[1] == "gpu_rows" for d in rule["decisions"])
    thread_per_row = [tuple(d) for d in rule["decisions"] if d[1] != "gpu_rows"] + [(0, "gpu_tile", -1, 256, 0)]
    slow = _report(_row_sums, x, schedule=thread_per_row)
    assert "the list given" in slow["analysis"]
    assert slow["predicted_seconds"] > 3 * rule["predicted_seconds"]


def test_stored_lanes_and_short_rows_read_in_vectors_are_predicted_near_the_bandwidth():
    """Measured on an H200 (apps/RESULTS.md gpu-reductions): np.argmax of 128M float32 in stored
    lanes 149 us, argmax(axis=0) of 8M x 16 149, sums over 8M rows of 16 (a vector a step) 137. The
    model took the first two for one thread an output (60 ms) and the last for scalar loads."""
    read_once = 2 ** 27 * 4 / 3e12   # the input, at the reference's 3 TB/s copy
    for fn, shape in ((lambda a: np.argmax(a), (2 ** 27,)), (lambda a: a.argmax(axis=0), (2 ** 23, 16)),
                      (lambda a: a.sum(axis=1), (2 ** 23, 16)), (lambda a: a.max(axis=1), (2 ** 23, 16))):
        predicted = _report(fn, np.ones(shape, np.float32))["predicted_seconds"]
        assert read_once < predicted < 4 * read_once, (shape, predicted)



def test_a_row_group_a_thread_a_row_is_predicted_from_its_bytes_and_its_layout():
    """Softmax over 4M rows of 12, a thread a row (no shared memory, one pass over each row's
    loads; rows of 16 measured 195 us on an H200, apps/RESULTS.md gpu-thread-rows), so within 4x
    of moving its bytes once; the same rows a thread each without vectors are predicted slower (a
    warp's scalar loads take a sector each)."""
    _check_row_layout(np.ones((2 ** 22, 12), np.float32), "a thread a row", "gpu_vector")


def _check_row_layout(x, layout, dropped):
    """Softmax over `x`: the rule's schedule says `layout`, is predicted within 4x of moving its
    bytes once (read and written, at the reference's 3 TB/s copy), and faster than the same
    decisions without those of kind `dropped`."""
    moved_once = 2 * x.nbytes / 3e12
    report = _report(_softmax_rows, x)
    assert layout in report["schedule"], report["schedule"]
    assert moved_once < report["predicted_seconds"] < 4 * moved_once, report["predicted_seconds"]
    other = [tuple(d) for d in report["decisions"] if d[1] != dropped]
    assert _report(_softmax_rows, x, schedule=other)["predicted_seconds"] > report["predicted_seconds"]

def test_rows_in_a_warps_lanes_are_predicted_faster_than_combined_in_shared_memory():
    """Softmax over 1M rows of 64 in 8 lanes of a warp (gpu_warp_rows: no shared memory, no
    barrier, one pass over each row's loads), measured 160 us on an H200 against 257 for the block's
    threads combining in shared memory (apps/RESULTS.md gpu-warp-rows): predicted within 4x of
    moving its bytes once, and faster than the shared-memory layout."""
    _check_row_layout(np.ones((2 ** 20, 64), np.float32), "gpu_warp_rows", "gpu_warp_rows")


def test_alternatives_come_ranked_by_the_prediction():
    # (A row max: its block's threads are a choice. A float sum's are its lanes, whatever the
    # list says: no alternative of them is listed.)
    report = _report(lambda x: x.max(axis=-1), np.ones((8192, 8192), np.float32))
    predicted = [p for _, p in report["variants"]]
    assert predicted and predicted == sorted(predicted)
    sums = _report(_row_sums, np.ones((8192, 8192), np.float32))
    rule = {tuple(d) for d in sums["decisions"]}
    assert all(tuple(d) in rule for variant, _ in sums["variants"] for d in variant if d[1] == "gpu_rows")


@pytest.mark.parametrize("shape", [(0, 8), (1,), (3, 1, 5), ()])
def test_odd_shapes_are_predicted_without_failing(shape):
    report = _report(lambda x: np.exp(x).sum(axis=-1) if x.ndim else x + 1, np.ones(shape, np.float32))
    assert np.isfinite(report["predicted_seconds"]) and report["predicted_seconds"] >= 0


@pytest.mark.gpu
def test_on_a_gpu_the_model_predicts_for_the_measured_device():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU with PyTorch")
    f = hc.hcompile(lambda x: x * 2 + 1)
    f(torch.ones(1024, 1024, device="cuda"))
    analysis = f.compile_records[-1]["report"]["analysis"]
    device = next(line for line in analysis.splitlines() if line.startswith("device:"))
    assert torch.cuda.get_device_name() in device and "(measured)" in device, analysis
    copy = float(device.split("copy ")[1].split(" TB/s")[0])
    assert 0.1 < copy < 20, device        # a device-to-device copy, in TB/s


def _transpose_scale(x):
    return x.T * 2 + 1


def test_a_transposed_read_is_predicted_slower_unstaged():
    """Coalescing: a warp reading an array across its rows, where the rule's list stages the
    array's tile in shared memory (gpu_stage_transposed), is predicted slower read where it lies,
    and that alternative is among the ranked variants, after the rule's."""
    x = np.ones((8192, 8192), np.float32)
    rule = _report(_transpose_scale, x)
    assert any(d[1] == "gpu_stage_transposed" for d in rule["decisions"])
    unstaged = [tuple(d) for d in rule["decisions"] if d[1] != "gpu_stage_transposed"]
    slow = _report(_transpose_scale, x, schedule=unstaged)
    assert slow["predicted_seconds"] > 1.5 * rule["predicted_seconds"]
    variants = {tuple(map(tuple, s)): p for s, p in rule["variants"]}
    assert tuple(unstaged) in variants and variants[tuple(unstaged)] > rule["predicted_seconds"]


def test_a_chain_of_row_reductions_is_predicted_as_one_pass_over_its_rows():
    """A point-rows group (x.var(axis=-1): a block per block of rows, each row one output point)
    reads its input about once: near the copy time, where counting a block per row of the output's
    innermost axis (one block for 4096 outputs) predicted 50 times that. Its alternatives for
    max-autotune are predicted and compile."""
    from hcompile import _C, guards
    from hcompile.capture import capture
    x = np.ones((4096, 1024), np.float32)
    predicted = _report(lambda a: a.var(axis=-1), x)["predicted_seconds"]
    copy = x.nbytes / 3e12
    assert copy < predicted < 3 * copy + 10e-6, predicted
    cap = capture(lambda a: a.var(axis=-1), (x,))
    _, report = _C.compile_graph(cap.graph, CUDA_TARGET, layouts=guards.layouts((x,)), tuning_candidates=16)
    assert report["candidates"]
    for candidate, seconds in report["candidates"]:
        assert copy < seconds < 10 * copy + 20e-6, (candidate, seconds)
        _C.compile_graph(cap.graph, CUDA_TARGET, layouts=guards.layouts((x,)), schedule=[tuple(d) for d in candidate])
