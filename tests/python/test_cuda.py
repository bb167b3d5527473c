"""The GPU path (frontend/hcompile/cuda.py, the GPU schedule, runtime/cuda_call.h).

Without a GPU (CI) the kernels are still compiled for CUDA, so the GPU schedules are checked by
Halide's CUDA code generator; with one (the `gpu` marker; tests/gpu/run_on_gpu_machine.sh runs
them on the lent GPU machine) every result is compared with NumPy on the same inputs."""
import os
import pathlib
import re
import subprocess
import sys
import types

import ml_dtypes
import numpy as np
import pytest

import hcompile as hc
from apps import workloads as W

CUDA_TARGET = "host-cuda-cuda_capability_86"


def _elementwise(x, y):
    return np.exp(x) * y - np.sqrt(np.abs(x)) / (y + 2.0)


def _broadcast(x, b):
    return np.maximum(x + b, 0.0) * 0.5


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layernorm_rows(x):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5)


def _row_extremes(x):
    return x - x.max(axis=-1, keepdims=True) + x.min(axis=-1, keepdims=True)


def _total(x):
    return (x * 2).sum()


def _max_over_two_axes(x):
    return x.max(axis=(1, 2)) - x.min(axis=(1, 2), keepdims=True)[:, 0, 0]


def _blur3x3(x):
    return (x[:-2, :-2] + x[:-2, 1:-1] + x[:-2, 2:] + x[1:-1, :-2] + x[1:-1, 1:-1] + x[1:-1, 2:] +
            x[2:, :-2] + x[2:, 1:-1] + x[2:, 2:]) / 9.0


def _matmul_act(a, b):
    return np.tanh(a @ b + 1.0)


def _where_cast(x, y):
    return np.where(x > y, x, y * 2).astype(np.float32), (x < 0).sum(axis=0)


def _batched(x):
    return np.tanh(x) + x.sum(axis=(1, 2), keepdims=True)


def _rng_inputs(rng, shapes, dtype=np.float32):
    if np.dtype(dtype).kind == "i":
        return [rng.integers(-50, 50, s).astype(dtype) for s in shapes]
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


CASES = [
    (_elementwise, [(37, 129), (37, 129)]),
    (_elementwise, [(1000,), (1000,)]),
    (_elementwise, [(), ()]),
    (_elementwise, [(600000, 3), (600000, 3)]),   # more row tiles than a grid's y dimension holds
    (_broadcast, [(64, 33), (33,)]),
    (_softmax_rows, [(48, 300)]),
    (_softmax_rows, [(3, 5, 1000)]),          # rows over two fused outer axes
    (_softmax_rows, [(4, 12000)]),            # a row past shared memory: kernels per region
    (_softmax_rows, [(7, 1)]),
    (_softmax_rows, [(4, 3, 5, 64)]),         # short rows: a block of two warps per row, outer axes fused
    (_row_extremes, [(33, 65)]),              # NaN-aware max and min: two values per row
    (_row_extremes, [(2, 3, 2, 5, 33)]),      # a warp per row of 33, three outer axes fused into the grid's z
    (_row_extremes, [(8, 97)]),
    (_layernorm_rows, [(5, 7, 64)]),
    (_total, [(3, 5, 7)]),
    (_total, [(300, 400)]),                   # one value from many: reduced an axis at a time
    (_max_over_two_axes, [(3, 256, 300)]),
    (_blur3x3, [(50, 70)]),
    (_matmul_act, [(30, 40), (40, 20)]),
    (_matmul_act, [(70, 130), (130, 150)]),  # too few tiles: a thread per output
    (_matmul_act, [(600, 40), (40, 2100)]),  # many outputs, a short contraction: Halide's register tiles
    (_matmul_act, [(4, 600, 40), (40, 2100)]),  # batched: one strided batched cuBLAS call on the GPU
    (_matmul_act, [(600, 40), (40, 300)]),   # a short contraction, few outputs: Halide's kernel
    (_where_cast, [(17, 9), (17, 9)]),
    (_batched, [(2, 3, 4, 5, 6)]),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
@pytest.mark.parametrize("fn,shapes", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_gpu_schedules_compile_for_cuda(fn, shapes, dtype):
    """Every region runs in GPU blocks, and Halide's CUDA code generator accepts the schedule
    (LLVM's NVPTX back end aborted the process on vectors of doubles before computes_64_bit)."""
    args = _rng_inputs(np.random.default_rng(0), shapes, dtype)
    compiled = hc.hcompile(fn, target=CUDA_TARGET)
    compiled.compile_only(*args)
    record = compiled.compile_records[-1]
    assert record["break"] is None, record["break"]
    report = record["report"]
    assert "cuda" in report["target"]
    assert "gpu_tile" in report["schedule"]
    assert "gpu_blocks" in report["schedule_source"] or "gpu_single_thread" in report["schedule_source"]
    for forbidden in ("vectorize", "parallel"):     # (call_library: cuBLAS, where loaded)
        assert forbidden not in report["schedule"]


def test_rows_run_one_block_each_where_they_fit_in_shared_memory():
    x = np.ones((64, 2048), np.float32)
    f = hc.hcompile(_layernorm_rows, target=CUDA_TARGET)
    f.compile_only(x)
    schedule = f.compile_records[-1]["report"]["schedule"]
    assert "gpu_rows: a block of 128 threads per row" in schedule and "compute_at_row" in schedule
    # softmax stores exp(x - max) per row: 128 KiB a row is past shared memory.
    wide = hc.hcompile(_softmax_rows, target=CUDA_TARGET)
    wide.compile_only(np.ones((4, 32768), np.float32))
    schedule = wide.compile_records[-1]["report"]["schedule"]
    assert "compute_at_row" not in schedule           # no row blocks of the whole pipeline,
    assert "gpu_rows" in schedule                     # but each row reduction a block per row


def test_many_rows_too_long_for_shared_memory_run_a_block_each_their_members_recomputed():
    """Softmax over rows of 32768 floats (128 KiB a row of exp, past shared memory): with rows enough
    to fill the GPU, one block per row and exp recomputed where read (1024 rows of 32768 on an
    H200: 0.161 ms against 0.216 for a kernel per region); four such rows keep a kernel per
    region, whose elementwise kernels spread over the whole GPU."""
    many = hc.hcompile(_softmax_rows, target=CUDA_TARGET)
    many.compile_only(np.ones((512, 32768), np.float32))
    schedule = many.compile_records[-1]["report"]["schedule"]
    assert schedule.count("compute_at_row") == 2 and "inline into its consumers" in schedule, schedule
    assert schedule.count("gpu_rows") == 1, schedule
    few = hc.hcompile(_softmax_rows, target=CUDA_TARGET)
    few.compile_only(np.ones((4, 32768), np.float32))
    assert "compute_at_row" not in few.compile_records[-1]["report"]["schedule"]


def test_short_rows_take_a_block_of_warps_per_row():
    """A row group (softmax) takes a thread a lane of its sums (about the square root of a short
    row), and several rows a block where they divide its rows and leave blocks enough (128
    threads a block), else a warp a row; rows of 16 to 31 whose sums take 4 lanes as many lanes
    of a warp (gpu_warp_rows), other rows shorter than 32 a thread each, 128 a block where that
    leaves blocks enough. A reduction alone too where its rows are that short and many,
    else rows of a warp or more in a block per row (whole warps, up to 256 threads), its block
    loops past the grid's third fused into its z. A reduction over fewer short rows: a thread
    per row."""
    def row_sums(x):
        return x.sum(axis=-1, keepdims=True)

    for fn, shape, rows in ((_softmax_rows, (16, 8, 64, 64), "a block of 8 threads per row, 16 rows a block"),
                            (_softmax_rows, (262144, 16), "a block of 4 threads per row, 32 rows a block"),
                            (_softmax_rows, (262144, 12), "a thread a row, 128 rows a block"),
                            (_softmax_rows, (1000, 16), "a thread a row, 32 rows a block"),
                            (_softmax_rows, (7, 33), "a block of 32 threads per row\n"),
                            (_softmax_rows, (5, 200), "a block of 32 threads per row\n"),
                            (_softmax_rows, (8192, 512), "a block of 32 threads per row, 4 rows a block"),
                            (row_sums, (16, 8, 64, 64), "a block of 8 threads per row, 16 rows a block"),
                            (row_sums, (3, 2, 5, 7, 40), "a block of 32 threads per row\n"),
                            (row_sums, (65536, 32), "a block of 8 threads per row, 16 rows a block")):
        f = hc.hcompile(fn, target=CUDA_TARGET)
        f.compile_only(np.ones(shape, np.float32))
        schedule = f.compile_records[-1]["report"]["schedule"]
        assert f"gpu_rows: {rows}" in schedule, schedule
        assert "256" not in schedule, schedule
    f = hc.hcompile(row_sums, target=CUDA_TARGET)
    f.compile_only(np.ones((40, 31), np.float32))
    assert "gpu_rows" not in f.compile_records[-1]["report"]["schedule"]


def test_short_rows_compile_whatever_their_count_and_length():
    """Reductions over short rows run several rows a block only where the block keeps a warp of
    threads: 1000 rows of 32 made blocks of 2 rows of 8 threads, a decision the plan refused (the
    compile failed). Short rows a thread each read their lanes as vectors where lengths allow."""
    for fn in (lambda a: a.max(axis=1), lambda a: a.sum(axis=1), lambda a: a.argmax(axis=1),
               lambda a: a.prod(axis=1), lambda a: a.std(axis=1)):
        for shape in ((1000, 32), (6, 32), (3000, 48), (1000, 16), (7, 12), (4096, 24), (5, 3)):
            hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True).compile_only(np.ones(shape, np.float32))
    # Short arrays reduced whole (a 0-d output, a one-thread kernel): no vector reads there (its
    # accumulator has no loop to compute them in; Halide refused the schedule).
    for op in ("max", "min", "prod", "any", "all", "sum", "argmax"):
        for shape in ((16,), (3, 4, 5), (2, 3, 40), (7,)):
            f = hc.hcompile(lambda a, op=op: getattr(a, op)(), target=CUDA_TARGET, fullgraph=True)
            f.compile_only(np.ones(shape, np.float32))
    for op in ("max", "sum"):
        f = hc.hcompile(lambda a, op=op: getattr(a, op)(axis=1), target=CUDA_TARGET, fullgraph=True)
        f.compile_only(np.ones((1 << 16, 16), np.float32))
        source = f.compile_records[-1]["report"]["schedule_source"]
        assert re.search(r"\.vectorize\((gpu_vector_lane|n\d+_lane)\)", source), source


def test_few_outputs_of_a_long_axis_are_reduced_in_chunks_first():
    """A column sum of a tall array (a thread per column) and a row sum of few long rows (a block
    per row) first reduce chunks of the axis (split_reductions_for_gpu): a kernel of many threads,
    then the chunks' results. An arg reduction is not cut: its rows are reduced in lanes, a thread
    each, several rows a block where they are short (then a warp's lanes: GpuWarpRows)."""
    def kernels(fn, shape):
        f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
        f.compile_only(np.ones(shape, np.float32))
        return f.compile_records[-1]["report"]["schedule"].count("compute_root")

    assert kernels(lambda a: a.sum(axis=0), (1 << 20, 16)) >= 3
    assert kernels(lambda a: a.max(axis=0), (100003, 16)) >= 3     # with the rows past the last chunk
    assert kernels(lambda a: a.sum(axis=1), (4, 1 << 20)) == 2
    assert kernels(lambda a: a.sum(axis=0), (200, 16)) == 1         # short columns: as they are
    for shape, rows, lanes in (((4096, 1024), "32 threads per row, 4 rows a block", "gpu_lanes"),
                               ((8192, 64), "8 threads per row, 16 rows a block", "gpu_lanes"),
                               ((40, 8192), "256 threads per row\n", "gpu_threads")):
        f = hc.hcompile(lambda a: a.argmax(axis=-1), target=CUDA_TARGET, fullgraph=True)
        f.compile_only(np.ones(shape, np.float32))
        record = f.compile_records[-1]["report"]
        assert f"gpu_rows: a block of {rows}" in record["schedule"], record["schedule"]
        assert re.search(rf"lanes_\w+\.{lanes}", record["schedule_source"]), record["schedule_source"]
    # Down the columns of a tall array, along few long rows, and over a whole long array: its lanes
    # a kernel of their own (a thread a lane and output), then levels of lanes, a kernel each.
    for fn, shape in ((lambda a: a.argmin(axis=0), (1 << 20, 16)), (lambda a: a.argmax(axis=1), (4, 1 << 20)),
                      (lambda a: a.argmax(), (1 << 22,))):
        f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
        f.compile_only(np.ones(shape, np.float32))
        source = f.compile_records[-1]["report"]["schedule_source"]
        assert re.search(r"lanes_\d+(_\d+)?\.compute_root", source) and re.search(r"lanes_\w+_level2", source), source


def _schedule_source(fn, *args):
    f = hc.hcompile(fn, target=CUDA_TARGET)
    f.compile_only(*args)
    return f.compile_records[-1]["report"]["schedule_source"]


def _normalized_rows(x):
    return x / np.abs(x).sum(axis=-1)[..., None]     # a row reduction dropping its axis, read per row


def _rows_a_block(decisions, rows, threads=None):
    """`decisions` with the row root's gpu_rows taking `rows` rows a block (and `threads` a row,
    its members' too, where given). A row's threads are a warp's lanes (gpu_warp_rows) only as
    the rule gave them, several rows a block."""
    def threads_of(choice, value):
        return threads if threads is not None and choice in ("gpu_rows", "gpu_tile") else value
    def kept(choice):
        if choice == "gpu_warp_rows":
            return threads is None and rows > 1
        return threads is None or choice != "gpu_vector"
    return [(r, c, a, threads_of(c, v), rows if c == "gpu_rows" else b) for (r, c, a, v, b) in decisions if kept(c)]


def test_a_reshape_of_a_0d_value_compiles_for_the_gpu():
    """`np.linalg.norm(a, keepdims=True)` reshapes a 0-d value to (1, 1): no row group can root
    there (its input has no innermost axis to keep; reading it crashed the partitioner)."""
    for shape in [(4, 5), (1, 1), (2, 0)]:
        f = hc.hcompile(lambda a: np.linalg.norm(a, keepdims=True), target=CUDA_TARGET, fullgraph=True)
        f.compile_only(np.ones(shape, np.float32))
        assert "gpu_rows" not in f.compile_records[-1]["report"]["schedule"]


def test_rows_a_block_are_a_power_of_two_up_to_the_rows_within_a_blocks_threads():
    """gpu_rows' value2 (rows a block) is refused, with a clear error, where it is more than the
    root's rows (a reduction's outputs), is no power of two, or makes a block of over 1024 threads
    (a row's threads or a sum's lanes times the rows). Rows it does not divide are fine: the last
    block is shifted inwards to end at the last row."""
    x = np.ones((1024, 64), np.float32)
    rule = hc.hcompile(_softmax_rows, target=CUDA_TARGET, fullgraph=True)
    rule.compile_only(x)
    decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
    for rows, why in ((3, "power of two"), (64, "up to 32"), (32, "up to 1024 threads")):
        wide = [(r, c, a, 64 if c in ("gpu_rows", "gpu_tile") else v, b) for (r, c, a, v, b) in decisions]
        f = hc.hcompile(_softmax_rows, target=CUDA_TARGET, fullgraph=True, schedule=_rows_a_block(wide, rows))
        with pytest.raises(hc.CompileError, match=why):
            f.compile_only(x)
    odd = hc.hcompile(_softmax_rows, target=CUDA_TARGET, fullgraph=True, schedule=_rows_a_block(decisions, 8))
    odd.compile_only(np.ones((1020, 64), np.float32))
    assert "ShiftInwards" in odd.compile_records[-1]["report"]["schedule_source"]
    with pytest.raises(hc.CompileError, match="at most the root's rows"):
        odd.compile_only(np.ones((6, 64), np.float32))
    # A reduction alone: its rows are its outputs.
    sums = hc.hcompile(lambda a: a.sum(axis=-1), target=CUDA_TARGET, fullgraph=True,
                       schedule=[(0, "compute_root", -1, 0, 0), (0, "gpu_rows", -1, 8, 8)])
    sums.compile_only(np.ones((1020, 64), np.float32))
    with pytest.raises(hc.CompileError, match="at most the root's rows"):
        sums.compile_only(np.ones((6, 64), np.float32))


@pytest.mark.parametrize("columns,vector", [(8192, 4), (2048, 4), (1026, 1), (300, 4), (100, 1)])
def test_a_blocks_reduction_accumulates_each_threads_part_in_a_register(columns, vector):
    """A row's max by the block's threads (256 for rows of 8192, a warp for 16 rows of 300 or
    100): each thread's partial result is computed inside the thread
    loop of a wrapper (Func::in) that hands them on, so it is not kept in shared memory; so are
    the 16 combining threads' and the last thread's, their steps unrolled. Rows of a multiple of
    four, two steps a thread or more: four neighbours a step (16-byte loads), folded in the
    thread before the block's threads combine them."""
    source = _schedule_source(_row_extremes, np.ones((16, columns), np.float32))
    wrapped = {line.split(" = ")[1].split(".in(")[0]: line.split(" = ")[0].split()[-1]
               for line in source.splitlines() if ".in(" in line}
    assert len(wrapped) == 6, source   # two reductions: their threads', lanes' and last steps
    for inner, wrapper in wrapped.items():
        assert f"{inner}.compute_at({wrapper}, " in source and f"{wrapper}.gpu_threads(" in source
    lines = source.splitlines()
    assert sum(".update(0).unroll(r_member, 8," in line for line in lines) == 2, source   # the last steps
    assert not any(re.match(r"acc_[0-9_]+\.update\(0\)\.gpu_threads", line) for line in lines), source
    assert "_intm.update(0).gpu_threads" not in source
    assert bool(re.search(r"_intm\w*\.update\(0\)\.vectorize\(gpu_vector_lane, 4,", source)) == (vector > 1), source


@pytest.mark.parametrize("dtype,dynamic,vector", [(np.float32, False, True), (np.int32, False, True),
                                                  (np.float64, False, False), (np.int64, False, False),
                                                  (np.float32, True, False)])
def test_a_blocks_reduction_reads_four_neighbours_only_of_32_bit_values_in_rows_of_known_length(dtype, dynamic,
                                                                                               vector):
    """LLVM's NVPTX back end takes no vectors of 64-bit values (a float64 row min's vector NaN test
    aborted an LLVM built with assertions, the lent GPU machine's); a row whose length is known
    only at run time may not be a multiple of four."""
    f = hc.hcompile(lambda x: x.min(axis=-1), target=CUDA_TARGET, dynamic=dynamic)
    f.compile_only(np.ones((3, 8192), dtype))
    source = f.compile_records[-1]["report"]["schedule_source"]
    assert ("vectorize(gpu_vector_lane" in source) == vector, source


@pytest.mark.parametrize("columns,unroll", [(8192, 8), (4096, 4), (2048, 4), (1024, 8), (16, 1)])
def test_a_rows_threads_unroll_no_more_steps_than_they_have(columns, unroll):
    """A thread's steps along a row (columns / the row's threads: 256 from rows of 4096, 128 for
    2048, 32 for 1024; in 4-point vectors from two steps of them) are unrolled by at most their
    number: a longer unroll ran them all in its guarded tail."""
    source = _schedule_source(_layernorm_rows, np.ones((8, columns), np.float32))
    steps = [line for line in source.splitlines() if "unroll(gpu_step" in line]
    if unroll == 1:
        assert not steps, steps
    else:
        assert steps and all(f"unroll(gpu_step, {unroll}," in line for line in steps), steps


def _separable_blur(x):
    h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
    return (h[:-2, :] + h[1:-1, :] + h[2:, :]) / 3


def test_a_stencil_over_rows_takes_blocks_of_sixteen_rows():
    """Four rows a thread (their shared loads once), four rows of threads a block."""
    source = _schedule_source(_separable_blur, np.ones((512, 512), np.float32))
    assert "128, 16, TailStrategy" in source and "unroll(gpu_row)" in source


def _softmax_of_product(a, b):
    z = a @ b
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _layernorm_of_product(a, b):
    z = a @ b + 1.0
    mu = z.mean(axis=-1, keepdims=True)
    d = z - mu
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5)


def _rows_and_columns(x):
    return x - x.mean(axis=0) + x.max(axis=1, keepdims=True)


def _column_sum_of_a_row_member(x):
    m = x.max(axis=1, keepdims=True)
    return x - m + (x - m).sum(axis=0)


def _layernorm_read_by_a_product(x, w):
    y = _layernorm_rows(x * 2.0 + 1.0)
    return y @ w + y[:, :w.shape[1]]


def _attention(q, k, v):
    s = q @ k.transpose(0, 2, 1)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)) @ v


def _softmax_and_its_max(x):
    m = x.max(axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=-1, keepdims=True), m


def _two_layernorms(x, w):
    y = _layernorm_rows(x + 1.0)
    return _layernorm_rows(y @ w + y).reshape(2, -1, x.shape[1])


def _residual_layernorm_of_products(x, a, w):
    # The residual's inlined work is two adds: the products before it, and the tanh before them,
    # are stored whatever it costs, so neither the residual nor the centred rows are stored per row.
    return _layernorm_rows(x + np.tanh(a) @ w + np.tanh(x) @ w)


def _long_rows_reshaped(x):
    return _layernorm_rows(x * 2.0 + 1.0).reshape(4, -1, x.shape[1])


def _two_long_layernorms(x, w):
    return _layernorm_rows(w @ _layernorm_rows(x))


# (function, shapes, regions computed per row of some row group's root). The later ones root
# their groups at values other regions read (a layer norm or a softmax a product reads), or have
# an output that is no member (the softmax's max, returned too), or two groups, the second's root
# a reshape of its rows; the last two have rows too long for shared memory (members recomputed).
ROWS_AFTER_PRODUCERS = [(_softmax_of_product, [(64, 48), (48, 300)], 3), (_layernorm_of_product, [(40, 64), (64, 512)], 2),
                        (_rows_and_columns, [(50, 700)], 1), (_column_sum_of_a_row_member, [(50, 700)], 0),
                        (_layernorm_read_by_a_product, [(40, 64), (64, 32)], 2),
                        (_attention, [(4, 48, 32), (4, 48, 32), (4, 48, 32)], 3), (_softmax_and_its_max, [(50, 300)], 2),
                        (_two_layernorms, [(40, 64), (64, 64)], 4),
                        (_residual_layernorm_of_products, [(40, 64), (40, 64), (64, 64)], 2),
                        (_long_rows_reshaped, [(256, 12288)], 2), (_two_long_layernorms, [(256, 12288), (256, 256)], 4)]


@pytest.mark.parametrize("fn,shapes,members", ROWS_AFTER_PRODUCERS, ids=lambda c: getattr(c, "__name__", ""))
def test_rows_on_the_gpu_follow_regions_computed_before_them(fn, shapes, members):
    """On the GPU a softmax or layer norm of a matrix product is one block per row after the
    product's kernel (on the CPU row fusion needs every region row-aligned); a region computed
    before the rows never reads one computed per row (the column sum of x - max keeps the max out).
    A pipeline may hold several row groups, each rooted at a value stored whole: an output, or a
    layer norm or softmax that a product reads."""
    f = hc.hcompile(fn, target=CUDA_TARGET)
    f.compile_only(*[np.ones(s, np.float32) for s in shapes])
    regions = f.compile_records[-1]["report"]["regions"]
    assert regions.count("[computed per row of") == members, regions
    cpu = hc.hcompile(fn)
    cpu.compile_only(*[np.ones(s, np.float32) for s in shapes])
    assert "[computed per row of" not in cpu.compile_records[-1]["report"]["regions"]


def test_reductions_to_few_values_are_split_by_axis_for_the_gpu():
    x = np.ones((300, 400), np.float32)
    f = hc.hcompile(_total, target=CUDA_TARGET)
    f.compile_only(x)
    assert f.compile_records[-1]["report"]["regions"].count("(sum)") == 2
    g = hc.hcompile(_total)      # the CPU keeps one reduction
    g.compile_only(x)
    assert g.compile_records[-1]["report"]["regions"].count("(sum)") == 1


def test_gpu_and_cpu_decisions_do_not_mix():
    x = np.ones((8, 8), np.float32)
    f = hc.hcompile(lambda a: np.exp(a).sum(axis=0) + 1, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(x)
    regions = {d[0] for d in f.compile_records[-1]["report"]["decisions"]}
    assert len(regions) >= 2
    mixed = [(0, "compute_root", -1, 0, 0), (0, "gpu_tile", -1, 32, 0)] + \
            [(r, "compute_root", -1, 0, 0) for r in sorted(regions) if r != 0]
    g = hc.hcompile(lambda a: np.exp(a).sum(axis=0) + 1, target=CUDA_TARGET, fullgraph=True, schedule=mixed)
    with pytest.raises(hc.CompileError, match="wholly on the GPU or wholly on the CPU"):
        g.compile_only(x)


def _lowered_statements(monkeypatch, tmp_path, cases, dtype=np.float32):
    """Each case's lowered Halide statement for the CUDA target (HCOMPILE_DEBUG_DIR): no GPU needed."""
    monkeypatch.setenv("HCOMPILE_DEBUG_DIR", str(tmp_path))
    for i, (fn, shapes) in enumerate(cases):
        hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True).compile_only(*[np.ones(s, dtype) for s in shapes])
    return [p.read_text() for p in sorted(tmp_path.glob("*/lowered_stmt.txt"))]


# One value from few elements, and loads at constant indices: each had a stage the schedule left
# to the host (a sum's tail, the point loads' update), found by the differential suite run for the
# GPU (tests/gpu/run_on_gpu_machine.sh): "the host pointer of Input buffer arg0 is null".
HOST_STAGE_CASES = CASES + [
    (lambda a: np.trace(a), [(6, 6)]),
    (lambda a: a.sum(), [(2,)]),
    (lambda a: a.sum(), [(7,)]),
    (lambda a: a.sum(), [(31,)]),
    (lambda a: a.sum(), [(16,)]),             # its lanes one vector
    (lambda a: a.max(axis=1), [(64, 16)]),    # a vector a step, folded
    (lambda a: a.mean(), [(1,)]),
    (lambda a, b: np.isclose(a.sum(), b.sum()), [(5,), (5,)]),
    (lambda a: np.full(7, a.sum()), [(3,)]),
    (lambda a: a[0] + a[2] * a[1], [(3,)]),
    (lambda a: a[a > 0.5].sum(), [(40,)]),
    # an arg reduction's lanes and their levels to one index (not yet the long row's stored lanes)
    (lambda a: np.argmax(a), [(7, 33)]),
    (lambda a: a.argmin(), [(200,)]),
    (lambda a: a.argmax(axis=1), [(3, 5000)]),
]


def test_gpu_pipelines_touch_no_array_on_the_host(monkeypatch, tmp_path):
    """Every stage of a GPU pipeline is a kernel: a stage on the host reads its arrays there, and
    torch's and CuPy's arrays have no host memory (nor would a copy there and back be wanted)."""
    statements = _lowered_statements(monkeypatch, tmp_path, HOST_STAGE_CASES)
    assert len(statements) == len(HOST_STAGE_CASES)
    for (fn, shapes), stmt in zip(HOST_STAGE_CASES, statements):
        assert "halide_copy_to_host(" not in stmt, (getattr(fn, "__name__", fn), shapes)


def test_gpu_kernels_size_their_shared_memory_before_the_launch(monkeypatch, tmp_path):
    """A block's shared memory (and a thread's register tile) is one size for every block: where
    Halide cannot bound it, it sizes it on the host at each call by a loop over every block of the
    grid (and keeps a thread's tile in shared memory, not registers). Seen in the register tiles of
    matrix products with a partial last tile (1024³ in Halide's kernel: 1168 -> 123 µs on an H100)."""
    cases = CASES + [(fn, shapes) for fn, shapes, _ in TRANSPOSED_CASES]
    statements = _lowered_statements(monkeypatch, tmp_path, cases)
    assert len(statements) == len(cases)
    for (fn, shapes), stmt in zip(cases, statements):
        assert ".shared_size[0] = max(" not in stmt, (getattr(fn, "__name__", fn), shapes)


def test_cuda_entries_tell_python_floats_apart_by_their_bits():
    """A CUDA entry specialised on a Python float: -0.0 is not 0.0's (1 / (x * 0 + c) differs in
    sign), and NaN finds its own entry again (by ``==`` it never would, compiling every call)."""
    from hcompile import cuda_shapes
    spec = lambda v: cuda_shapes.specs_of([v], [None])  # noqa: E731
    assert spec(0.0) != spec(-0.0)
    assert spec(float("nan")) == spec(float("nan"))
    assert spec(2.5) == spec(2.5) and spec(2.5) != spec(2.5000000000000004)


def test_float_floor_division_and_remainder_call_libdevice_in_kernels(monkeypatch, tmp_path):
    """NumPy's float // and % are built on C's fmod; a kernel has no libm, and a call to `fmodf`
    made PTX the driver refused (CUDA_ERROR_INVALID_PTX). In kernels: libdevice's exact fmod,
    inlined (the statement's text ends with the kernels' PTX)."""
    for dtype in (np.float32, np.float64):
        folder = tmp_path / np.dtype(dtype).name
        [stmt] = _lowered_statements(monkeypatch, folder, [(lambda x, y: (x // y, x % y), [(10,), (10,)])], dtype)
        assert "__nv_fmod" in stmt and ".extern .func" not in stmt


def test_numpy_arguments_under_a_cuda_target_without_a_gpu_say_so():
    if _torch_cuda() or _cupy_cuda():
        pytest.skip("a GPU is present")
    f = hc.hcompile(lambda a: a + 1, target="cuda")
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        f(np.ones(3, np.float32))


def test_host_target_with_cuda_arrays_is_refused_clearly():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU")
    f = hc.hcompile(lambda a: a + 1, target="host")
    with pytest.raises(ValueError, match="called with CUDA arrays"):
        f(torch.ones(3, device="cuda"))


# -- on a GPU ----------------------------------------------------------------------------------

def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _cupy_cuda():
    try:
        import cupy
        return cupy if cupy.cuda.runtime.getDeviceCount() > 0 else None
    except Exception:
        return None


def _close(got, want, dtype):
    tol = {np.float16: 2e-4, np.float32: 2e-5}.get(dtype, 1e-12)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, dtype)
        return
    want = np.asarray(want)
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=tol * 50, atol=tol * 50, equal_nan=True), (got, want)


gpu = pytest.mark.gpu


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("fn,shapes", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_torch_cuda_tensors_match_numpy(fn, shapes, dtype, torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(1)
    args = _rng_inputs(rng, shapes, dtype)
    want = fn(*args)
    f = hc.hcompile(fn, fullgraph=True)
    got = f(*[torch.from_numpy(a).cuda() for a in args])
    outs = got if isinstance(got, tuple) else (got,)
    for o in outs:
        assert isinstance(o, torch.Tensor) and o.is_cuda
    _close(tuple(o.cpu().numpy() for o in outs) if isinstance(got, tuple) else got.cpu().numpy(), want, dtype)
    # Again on new values: the cached kernel.
    args = _rng_inputs(rng, shapes, dtype)
    got = f(*[torch.from_numpy(a).cuda() for a in args])
    _close(tuple(o.cpu().numpy() for o in got) if isinstance(got, tuple) else got.cpu().numpy(), fn(*args), dtype)


@gpu
def test_cupy_arrays_match_numpy():
    cupy = _cupy_cuda()
    if cupy is None:
        pytest.skip("no CUDA GPU with CuPy")
    rng = np.random.default_rng(2)
    for fn, shapes in CASES:
        args = _rng_inputs(rng, shapes)
        got = hc.hcompile(fn, fullgraph=True)(*[cupy.asarray(a) for a in args])
        outs = got if isinstance(got, tuple) else (got,)
        assert all(isinstance(o, cupy.ndarray) for o in outs)
        _close(tuple(cupy.asnumpy(o) for o in outs) if isinstance(got, tuple) else cupy.asnumpy(got), fn(*args),
               np.float32)


@gpu
def test_odd_inputs_on_the_gpu(torch_cuda):
    torch = torch_cuda
    f = hc.hcompile(lambda a, b: a * 2 + b, fullgraph=True)
    rng = np.random.default_rng(3)
    for a, b in [(rng.standard_normal((1, 1)), rng.standard_normal((1, 1))),
                 (rng.standard_normal((64, 48)).T, rng.standard_normal((48, 64))),       # non-contiguous
                 (rng.integers(-5, 5, (7, 3)).astype(np.int32), rng.integers(-5, 5, (3,)).astype(np.int32))]:
        got = f(torch.from_numpy(np.ascontiguousarray(a)).cuda().T.T if a.flags.c_contiguous
                else torch.from_numpy(np.ascontiguousarray(a.T)).cuda().T, torch.from_numpy(b).cuda())
        assert np.array_equal(got.cpu().numpy(), a * 2 + b) if a.dtype.kind == "i" else \
            np.allclose(got.cpu().numpy(), a * 2 + b)


@gpu
def test_kernels_run_on_the_callers_stream(torch_cuda):
    torch = torch_cuda
    f = hc.hcompile(lambda a: np.exp(a) + 1, fullgraph=True)
    x = torch.randn(2048, 2048, device="cuda")
    f(x)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        y = x * 3                     # queued on `stream`; the kernel must see it finished
        z = f(y)
        w = z * 2
    stream.synchronize()
    assert torch.allclose(w, (torch.exp(x * 3) + 1) * 2, rtol=1e-5)


@gpu
def test_numpy_arguments_under_a_cuda_target_are_copied_in_and_out():
    if _torch_cuda() is None and _cupy_cuda() is None:
        pytest.skip("no CUDA GPU")
    f = hc.hcompile(_softmax_rows, target="cuda")
    x = np.random.default_rng(4).standard_normal((33, 65)).astype(np.float32)
    got = f(x)
    assert isinstance(got, np.ndarray)
    assert np.allclose(got, _softmax_rows(x), rtol=1e-5, atol=1e-6)


@gpu
def test_nan_and_inf_rows_on_the_gpu_match_numpy(torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(5)
    for fn in (_row_extremes, _softmax_rows, _layernorm_rows):
        for shape in [(33, 65), (8, 97), (16, 2048)]:
            x = rng.standard_normal(shape).astype(np.float32)
            x[1, 3] = np.nan
            x[2, 0] = np.inf
            x[3, -1] = -np.inf
            want = fn(x)
            f = hc.hcompile(fn, fullgraph=True)
            for _ in range(4):      # a race would show as rows wrong at random
                got = f(torch.from_numpy(x).cuda()).cpu().numpy()
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, equal_nan=True)


def test_a_cuda_compile_failure_without_fullgraph_is_recorded_not_raised():
    x = np.ones((8, 8), np.float32)
    mixed = [(0, "compute_root", -1, 0, 0), (0, "gpu_tile", -1, 32, 0), (1, "compute_root", -1, 0, 0)]
    g = hc.hcompile(lambda a: np.exp(a).sum(axis=0) + 1, target=CUDA_TARGET, schedule=mixed)
    g.compile_only(x)
    assert "wholly on the GPU" in g.compile_records[-1]["compile_failure"]


class _FakeGraphLibrary:
    """Enough of cuda.py's _Library for cuda_graphs.GraphedEntry's bookkeeping, without a GPU:
    arrays are NumPy's, a pointer their data address."""
    name = "torch"

    @staticmethod
    def pointer(a):
        return a.ctypes.data


def test_reduce_overhead_captures_the_second_call_and_copies_only_moved_arguments(monkeypatch):
    """The first call of an entry runs as default mode; the second is captured, the arguments
    that were the same array both times read where they are, the others copied in; an argument
    read in place that moves later is recaptured as copied; past MAX_CAPTURES the entry runs as
    default mode."""
    from hcompile import cuda_graphs
    captured = []
    monkeypatch.setattr(cuda_graphs.GraphedEntry, "_capture",
                        lambda self, library, device, entry, inputs: captured.append(list(self._copied)) or
                        setattr(self, "_graph", object()) or setattr(self, "_read", inputs) or "captured")
    monkeypatch.setattr(cuda_graphs.GraphedEntry, "_replay", lambda self, inputs: "replayed")

    class Entry:
        input_args = [0, 1]
    weight, batch, other = np.ones(4), np.ones(4), np.ones(4)
    graphed = cuda_graphs.GraphedEntry("f")
    library = _FakeGraphLibrary()
    assert graphed.run(library, 0, Entry, [weight, batch]) is None          # default mode
    assert graphed.run(library, 0, Entry, [weight, other]) == "captured"
    assert captured == [[False, True]]
    assert graphed.run(library, 0, Entry, [weight, batch]) == "replayed"    # a copied argument may move
    assert graphed.run(library, 0, Entry, [other, batch]) == "captured"     # the weight moved
    assert captured[-1] == [True, True]
    graphed.captures = cuda_graphs.MAX_CAPTURES
    graphed._copied = [False, False]
    assert graphed.run(library, 0, Entry, [batch, other]) is None
    assert graphed.failure is not None and graphed.run(library, 0, Entry, [weight, batch]) is None


def test_gpu_schedules_have_alternatives_one_region_away_for_max_autotune():
    """max-autotune on the device measures the fixed rule's list against alternatives each one
    region away from it: a softmax's stored exp recomputed instead, other block shapes and
    vector widths; every one compiles for CUDA."""
    from hcompile import _C, guards
    from hcompile.capture import capture
    for fn, shapes, expected in ((_softmax_rows, [(64, 4096)], "inline"), (_separable_blur, [(256, 512)], "gpu_tile"),
                                 (_softmax_of_product, [(64, 48), (48, 300)], "inline")):
        args = tuple(np.ones(s, np.float32) for s in shapes)
        cap = capture(fn, args)
        kernel, report = _C.compile_graph(cap.graph, CUDA_TARGET, layouts=guards.layouts(args), tuning_candidates=16)
        base = {tuple(d) for d in report["decisions"]}
        assert report["candidates"], fn.__name__
        assert any(d[1] == expected for candidate, _ in report["candidates"] for d in candidate if tuple(d) not in base)
        for candidate, _ in report["candidates"]:
            changed = {tuple(d)[0] for d in set(map(tuple, candidate)) ^ base}
            assert len(changed) == 1, changed
            _C.compile_graph(cap.graph, CUDA_TARGET, layouts=guards.layouts(args), schedule=[tuple(d) for d in candidate])


@gpu
def test_eager_backend_and_returned_arguments_on_the_gpu(torch_cuda):
    torch = torch_cuda
    x = torch.randn(5, 7, device="cuda")
    eager = hc.hcompile(lambda a: a * 2 + 1, backend="eager")
    assert torch.equal(eager(x), x * 2 + 1)           # plain Python: torch's own operators
    assert not eager.compile_records
    both = hc.hcompile(lambda a, b: (np.exp(a), b), fullgraph=True)
    got, same = both(x, x)
    assert same is x and torch.allclose(got, torch.exp(x))
    host = np.ones(3, np.float32)
    on_gpu = hc.hcompile(lambda a, b: (a + 1, b), target="cuda")
    plus_one, returned = on_gpu(host, host)
    assert returned is host and np.array_equal(plus_one, host + 1)


# -- the dispatcher's CUDA entries (runtime/src/dispatch_cuda.h) --------------------------------

class _TensorLike:
    """What the C++ guards read of a PyTorch tensor: dtype, shape, get_device(), is_contiguous(),
    data_ptr(); no memory behind it (CI has no GPU)."""

    def __init__(self, shape, dtype="float32", device=0, contiguous=True, pointer=4096):
        self.shape, self.dtype = tuple(shape), dtype
        self._device, self._contiguous, self._pointer = device, contiguous, pointer

    def get_device(self):
        return self._device

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self._pointer


def _has_cuda_driver():
    import ctypes.util
    return ctypes.util.find_library("cuda") is not None


def _stand_in_dispatcher(like, library, dtype, options):
    """A dispatcher for `exp(a) + 1` over (4, 8) float32 stand-ins of class `like` (library
    'torch' or 'cupy'): a type-only entry that runs Python, and ahead of it the CUDA entry, whose
    outputs `empty` records in the list returned beside it. A guard of the other library's kind
    is refused when the entry is added."""
    from hcompile import _C
    f = hc.hcompile(lambda a: np.exp(a) + 1, target=CUDA_TARGET)
    kernel, _ = _C.compile_graph(_graph_of(f, np.ones((4, 8), np.float32)), CUDA_TARGET)
    made = []

    def empty(shape, dtype, device):
        made.append((shape, dtype, device))
        return like(shape, dtype, device)

    dispatcher = _C.Dispatcher(lambda a: "python")
    kind, other_kind = ("cuda_tensor", "cupy_array") if library == "torch" else ("cupy_array", "cuda_tensor")
    with pytest.raises(ValueError, match="not guarded as the library's CUDA array"):   # checked once, when added
        dispatcher.add_cuda_entry([(other_kind, like, dtype, (4, 8), 0)], [], kernel, None, [], 0, empty, [((4, 8),)],
                                  [options], lambda device: 0, library)
    dispatcher.add_entry([("type", like)], [], None, [], None)   # type-only: runs Python
    dispatcher.add_cuda_entry([(kind, like, dtype, (4, 8), 0)], [], kernel, None, [], 0, empty, [((4, 8),)],
                              [options], lambda device: 0, library)
    return dispatcher, made


@pytest.mark.skipif(_has_cuda_driver(), reason="runs the stand-in's fake pointer only where no driver can")
def test_cuda_entries_in_the_dispatcher_check_every_tensor_property():
    dispatcher, made = _stand_in_dispatcher(_TensorLike, "torch", "float32", {"dtype": "float32", "device": "cuda:0"})
    # What the kernel cannot take as it is goes to the type-only entry (the frontend's CUDA path
    # copies it there): another shape, dtype, device, a strided or misaligned tensor.
    for other in (_TensorLike((4, 9)), _TensorLike((4, 8), "float64"), _TensorLike((4, 8), device=1),
                  _TensorLike((4, 8), device=-1), _TensorLike((4, 8), contiguous=False),
                  _TensorLike((4, 8), pointer=4100)):
        assert dispatcher(other) == "python"
    # The entry itself (ahead of the type-only one) makes the output with `empty` and launches:
    # here no driver, said clearly.
    with pytest.raises(RuntimeError, match="CUDA driver"):
        dispatcher(_TensorLike((4, 8)))
    assert made == [((4, 8), "float32", "cuda:0")]


class _CupyLike:
    """What the C++ guards read of a CuPy array: dtype (a NumPy dtype), shape, data.ptr,
    data.device.id, flags.c_contiguous; no memory behind it (CI has no GPU)."""

    def __init__(self, shape, dtype=np.float32, device=0, contiguous=True, pointer=4096):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.data = types.SimpleNamespace(ptr=pointer, device=types.SimpleNamespace(id=device))
        self.flags = types.SimpleNamespace(c_contiguous=contiguous)


@pytest.mark.skipif(_has_cuda_driver(), reason="runs the stand-in's fake pointer only where no driver can")
def test_cupy_entries_in_the_dispatcher_check_every_array_property():
    dispatcher, made = _stand_in_dispatcher(_CupyLike, "cupy", np.dtype(np.float32),
                                            {"dtype": np.dtype(np.float32), "device": 0})
    # Another shape, dtype, device, a strided or misaligned array: the type-only entry.
    for other in (_CupyLike((4, 9)), _CupyLike((4, 8), np.float64), _CupyLike((4, 8), ">f4"),
                  _CupyLike((4, 8), device=1), _CupyLike((4, 8), contiguous=False), _CupyLike((4, 8), pointer=4100)):
        assert dispatcher(other) == "python"
    # An equal dtype that is not the same object (a NumPy dtype made anew) is the same dtype.
    other_dtype = _CupyLike((4, 8))
    other_dtype.dtype = np.dtype(np.float32).newbyteorder("=")
    assert other_dtype.dtype is not np.dtype(np.float32)
    for array in (_CupyLike((4, 8)), other_dtype):
        with pytest.raises(RuntimeError, match="CUDA driver"):
            dispatcher(array)
    assert made == [((4, 8), np.float32, 0)] * 2


def _graph_of(compiled, *args):
    from hcompile.capture import capture
    return capture(compiled._fn, args).graph


@gpu
def test_later_pytorch_calls_take_the_dispatchers_cuda_entry(torch_cuda):
    torch = torch_cuda
    f = hc.hcompile(lambda a, b: (np.tanh(a) * b, a.sum(axis=-1)), fullgraph=True)
    x, y = torch.randn(64, 300, device="cuda"), torch.randn(64, 300, device="cuda")
    f(x, y)
    hits = f._dispatcher.hits
    for _ in range(3):
        x, y = torch.randn(64, 300, device="cuda"), torch.randn(64, 300, device="cuda")
        got, sums = f(x, y)
        assert torch.allclose(got, torch.tanh(x) * y, rtol=1e-5, atol=1e-6)
        assert torch.allclose(sums, x.sum(-1), rtol=1e-4, atol=1e-4)
    assert f._dispatcher.hits == hits + 3
    # Views the kernel cannot read in place miss there and are copied by the Python path.
    flat = torch.randn(64 * 300 + 1, device="cuda")
    misaligned = flat[1:].view(64, 300)
    got, _ = f(misaligned, y)
    assert torch.allclose(got, torch.tanh(misaligned) * y, rtol=1e-5, atol=1e-6)
    strided = torch.randn(300, 64, device="cuda").T
    got, _ = f(strided, y)
    assert torch.allclose(got, torch.tanh(strided) * y, rtol=1e-5, atol=1e-6)
    f.reset()
    got, _ = f(x, y)
    assert torch.allclose(got, torch.tanh(x) * y, rtol=1e-5, atol=1e-6)


@gpu
def test_later_cupy_calls_take_the_dispatchers_cuda_entry():
    cupy = _cupy_cuda()
    if cupy is None:
        pytest.skip("no CUDA GPU with CuPy")
    f = hc.hcompile(lambda a, b: (np.tanh(a) * b, a.sum(axis=-1), a.max()), fullgraph=True)
    rng = np.random.default_rng(12)

    def check(x, y):
        got, sums, top = f(cupy.asarray(x) if isinstance(x, np.ndarray) else x, cupy.asarray(y))
        x = cupy.asnumpy(x) if not isinstance(x, np.ndarray) else x
        assert isinstance(got, cupy.ndarray) and isinstance(top, cupy.ndarray) and top.shape == ()
        _close((cupy.asnumpy(got), cupy.asnumpy(sums), cupy.asnumpy(top)), (np.tanh(x) * y, x.sum(axis=-1), x.max()),
               np.float32)

    def new():
        return rng.standard_normal((64, 300)).astype(np.float32)
    check(new(), new())
    hits = f._dispatcher.hits
    for _ in range(3):
        check(new(), new())
    assert f._dispatcher.hits == hits + 3
    # Views the kernel cannot read in place miss there and are copied by the Python path.
    flat = cupy.asarray(rng.standard_normal(64 * 300 + 1).astype(np.float32))
    check(flat[1:].reshape(64, 300), new())
    check(cupy.asarray(rng.standard_normal((300, 64)).astype(np.float32)).T, new())
    # A kernel on CuPy's current stream: ordered after the work queued there before the call.
    x = cupy.asarray(new())
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        y = x * 3
        got, _, _ = f(y, x)
        w = got * 2
    stream.synchronize()
    assert f._dispatcher.hits == hits + 4
    _close(cupy.asnumpy(w), np.tanh(cupy.asnumpy(x) * 3) * cupy.asnumpy(x) * 2, np.float32)


@gpu
def test_one_tensor_passed_twice_is_one_object_to_the_capture(torch_cuda):
    torch = torch_cuda

    def f(a, b):
        return a * 2 if a is b else a - b
    compiled = hc.hcompile(f, fullgraph=True)
    x, y = torch.randn(8, 8, device="cuda"), torch.randn(8, 8, device="cuda")
    for _ in range(2):
        assert torch.allclose(compiled(x, x), x * 2)
        assert torch.allclose(compiled(x, y), x - y)


@gpu
def test_rounding_subnormals_on_the_gpu_matches_numpy(torch_cuda):
    """CUDA's float32 floor and ceil read a subnormal as zero (cvt.rmi.ftz): numpy_math answers
    the one sign each gets wrong."""
    torch = torch_cuda
    x = np.array([-1e-40, 1e-40, -1e-45, 1e-45, -0.0, 0.0, 1.5, -1.5, np.inf, -np.inf, np.nan], np.float32)
    got = hc.hcompile(lambda a: (np.floor(a), np.ceil(a), np.trunc(a), np.rint(a)), fullgraph=True)(
        torch.from_numpy(x).cuda())
    for g, want in zip(got, (np.floor(x), np.ceil(x), np.trunc(x), np.rint(x))):
        g = g.cpu().numpy()
        assert np.array_equal(g, want, equal_nan=True) and np.array_equal(np.signbit(g), np.signbit(want))


@gpu
def test_sums_of_any_row_length_and_to_one_value_on_the_gpu(torch_cuda):
    """The GPU's blocked sums take up to 256 lanes (fewer for short rows) added in groups; a
    reduction to one value ends in a block; a long 1-D one is read as rows."""
    torch = torch_cuda
    rng = np.random.default_rng(6)
    rows = hc.hcompile(lambda a: (a.sum(axis=-1), a.mean(axis=-1), a.max(axis=-1)), fullgraph=True)
    for shape in [(5, 17), (5, 100), (5, 255), (5, 257), (3, 4097), (2, 70001)]:
        x = rng.standard_normal(shape).astype(np.float32)
        s, m, mx = rows(torch.from_numpy(x).cuda())
        bound = 25 * np.finfo(np.float32).eps * np.abs(x).sum(axis=-1)
        assert np.all(np.abs(s.cpu().numpy() - x.sum(axis=-1, dtype=np.float64)) <= bound)
        assert np.allclose(m.cpu().numpy(), x.mean(axis=-1, dtype=np.float64), rtol=0, atol=1e-5)
        assert np.array_equal(mx.cpu().numpy(), x.max(axis=-1))
    whole = hc.hcompile(lambda a: (a.sum(), a.max(), a.min()), fullgraph=True)
    for shape in [(1000,), (1 << 20,), ((1 << 20) + 3,), (300, 400), (7, 9, 4096)]:
        x = rng.standard_normal(shape).astype(np.float32)
        s, mx, mn = whole(torch.from_numpy(x).cuda())
        assert s.shape == () and abs(s.item() - x.sum(dtype=np.float64)) <= 25 * np.finfo(np.float32).eps * np.abs(x).sum()
        assert mx.item() == x.max() and mn.item() == x.min()


@gpu
def test_rows_of_every_unroll_and_tail_on_the_gpu(torch_cuda):
    """Row kernels whose threads take 1 to 8+ steps (the unroll follows), partial last steps, and
    a block's reductions accumulated in registers: softmax, layer norm and row extremes."""
    torch = torch_cuda
    rng = np.random.default_rng(11)
    for columns in [32, 33, 64, 100, 256, 300, 1000, 1024, 2048, 4096, 5000, 8192]:
        x = rng.standard_normal((6, columns)).astype(np.float32)
        for fn in (_softmax_rows, _layernorm_rows, _row_extremes):
            f = hc.hcompile(fn, fullgraph=True)    # (a function keeps eight shapes' kernels)
            np.testing.assert_allclose(f(torch.from_numpy(x).cuda()).cpu().numpy(), fn(x), rtol=2e-5, atol=1e-6)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_short_rows_several_a_block_on_the_gpu(dtype, torch_cuda):
    """Rows short enough to run several a block (the rule's, and every other power of two of rows
    a block that fits): NumPy's answer, and the same bits as blocks of one row (each row's
    arithmetic is the same; only where it runs changes)."""
    torch = torch_cuda
    rng = np.random.default_rng(13)
    for shape in [(8192, 16), (4096, 64), (2048, 100), (1024, 256), (16, 8, 64, 64), (512, 3)]:
        x = rng.standard_normal(shape).astype(dtype)
        xt = torch.from_numpy(x).cuda()
        for fn in (_softmax_rows, _layernorm_rows, _row_extremes, _normalized_rows):
            rule = hc.hcompile(fn, fullgraph=True)
            got = rule(xt)
            np.testing.assert_allclose(got.cpu().numpy(), fn(x), rtol=2e-5 if dtype == np.float32 else 1e-12,
                                       atol=1e-6 if dtype == np.float32 else 1e-12)
            decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
            if not any(c == "compute_at_row" for (_, c, _, _, _) in decisions):
                continue     # no row group (rows of 3: a thread per row; a reduction alone)
            # One row a block takes a warp of threads or more (a row's threads change no arithmetic).
            threads = next(v for (_, c, _, v, _) in decisions if c == "gpu_rows")
            one = hc.hcompile(fn, fullgraph=True, schedule=_rows_a_block(decisions, 0, max(threads, 32)))(xt)
            assert torch.equal(got, one), (fn.__name__, shape)
            for rows in (2, 8, 32):
                try:
                    several = hc.hcompile(fn, fullgraph=True, schedule=_rows_a_block(decisions, rows))(xt)
                except hc.CompileError:
                    continue     # more threads than a block has, or rows it does not divide
                assert torch.equal(several, one), (fn.__name__, shape, rows)



def _log_softmax_rows(x):
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def _rows_over_their_norm(x):
    return x / np.sqrt((x * x).sum(axis=-1, keepdims=True) + 1)


def _row_argmax_marked(x):
    return (x == x.max(axis=-1, keepdims=True)) * 2.0 + x.argmax(axis=-1)[..., None]


_THREAD_ROW_GROUPS = (_softmax_rows, _layernorm_rows, _log_softmax_rows, _rows_over_their_norm, _row_argmax_marked)


def test_rows_shorter_than_a_warp_run_a_thread_each():
    """Row groups over rows shorter than 32 of a static length (but for those that fill blocks of
    their sums' 4 lanes a row: test_rows_of_a_warp_or_less_run_in_its_lanes) run a thread a row, any number of
    rows (a last block partial; every row axis fused into the grid's x, so a batch of any size
    along several axes too), vectors where four divide the row; 32 and longer keep threads across
    the row. Compiles for every length and dtype (no GPU needed)."""
    for fn in _THREAD_ROW_GROUPS:
        for shape, dtype in (((1000, 16), np.float32), ((7, 31), np.float32), ((3, 5, 1), np.float32),
                             ((130, 12), np.float64), ((64, 17), np.float16), ((2, 3, 4, 5), np.float32)):
            f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
            f.compile_only(np.ones(shape, dtype))
            schedule = f.compile_records[-1]["report"]["schedule"]
            assert "gpu_rows: a thread a row, 32 rows a block" in schedule, (fn.__name__, shape, schedule)
            vector = "gpu_vector of 4 points" in schedule
            narrow = dtype != np.float64 and fn(np.ones(shape, dtype)).dtype.itemsize < 8
            assert vector == (shape[-1] % 4 == 0 and narrow), (fn.__name__, shape, schedule)
    f = hc.hcompile(_softmax_rows, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(np.ones((1000, 32), np.float32))
    assert "a thread a row" not in f.compile_records[-1]["report"]["schedule"]
    # A root of rows of one point whose member reduces rows of 8192 (a mean kept as a column):
    # no thread a row (it unrolled the whole row, a 15 s compile).
    f = hc.hcompile(lambda a: a.mean(axis=-1, keepdims=True), target=CUDA_TARGET, fullgraph=True)
    f.compile_only(np.ones((1024, 8192), np.float32))
    assert "a thread a row" not in f.compile_records[-1]["report"]["schedule"]
    # A batch of any size along two axes: one kernel, a thread a row.
    f = hc.hcompile(_layernorm_rows, target=CUDA_TARGET)
    for shape in ((3, 300, 12), (5, 200, 12)):
        f.compile_only(np.ones(shape, np.float32))
    record = f.compile_records[-1]
    assert record["dynamic"].startswith("dynamic: argument 0 axis 0, argument 0 axis 1"), record["dynamic"]
    assert "gpu_rows: a thread a row, 128 rows a block" in record["report"]["schedule"], record["report"]["schedule"]


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_rows_a_thread_each_on_the_gpu(dtype, torch_cuda):
    """A thread a row (rows shorter than 32): NumPy's answer for every row group, length and
    layout (a row of one point, odd lengths that take no vectors, a partial last block, rows
    along several axes, no rows at all, a strided view, NaN and infinity in a row), the same bits
    as blocks of one row of a warp's threads, and a batch of any size."""
    torch = torch_cuda
    rng = np.random.default_rng(31)
    tolerance = {np.float32: (2e-5, 1e-6), np.float64: (1e-12, 1e-12), np.float16: (4e-3, 4e-3)}[dtype]
    for shape in [(1000, 16), (4096, 4), (130, 17), (33, 31), (5, 1), (3, 7, 12), (4, 2, 3, 8), (0, 16), (2, 0, 8)]:
        x = rng.standard_normal(shape).astype(dtype)
        if shape[-1] > 2 and shape[0] > 5:
            x[3, 1] = np.nan
            x[5, 2] = np.inf
        for fn in _THREAD_ROW_GROUPS:
            rule = hc.hcompile(fn, fullgraph=True)
            xt = torch.from_numpy(x).cuda()
            got = rule(xt)
            with np.errstate(all="ignore"):
                want = fn(x)
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=tolerance[0], atol=tolerance[1],
                                       err_msg=f"{fn.__name__} {shape}")
            decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
            if not any(c == "gpu_rows" and v == 1 for (_, c, _, v, _) in decisions):
                continue     # (rows of one point: no row group)
            one = hc.hcompile(fn, fullgraph=True, schedule=_rows_a_block(decisions, 0, 32))(xt)
            np.testing.assert_array_equal(got.cpu().numpy(), one.cpu().numpy(), err_msg=f"{fn.__name__} {shape}")
    # A strided view (every other column of a wider array) and a batch of any size.
    wide = rng.standard_normal((600, 32)).astype(dtype)
    f = hc.hcompile(_softmax_rows, fullgraph=True)
    for rows in (600, 257, 3):
        view = torch.from_numpy(wide[:rows]).cuda()[:, ::2]
        with np.errstate(all="ignore"):
            np.testing.assert_allclose(f(view).cpu().numpy(), _softmax_rows(wide[:rows, ::2]),
                                       rtol=tolerance[0], atol=tolerance[1], err_msg=str(rows))


# Row groups whose rows of 32 to 512 points run in a warp's lanes (gpu_warp_rows).
_WARP_ROW_GROUPS = (_softmax_rows, _layernorm_rows, _log_softmax_rows, _rows_over_their_norm)


def _without_warp_rows(decisions):
    """`decisions` with the row group's threads across each row in shared memory instead."""
    return [d for d in decisions if d[1] != "gpu_warp_rows"]


def test_rows_of_a_warp_or_less_run_in_its_lanes():
    """Row groups over rows of 16 to 1024 points of a static length, as many rows as fill blocks
    of several rows, run each row in a warp's lanes (4 to 32, a float sum's): no gpu_vector (a
    point a lane a step, striped as the float sums' lanes are). Not for 64-bit values (Halide has
    no 64-bit shuffles), rows of more than 32 points a lane, rows too few for blocks of several, rows
    whose sums take 2 lanes (a thread a row instead). A row length the lanes do not divide takes a
    last step of some lanes, 4 or more (in a last step of lane 0 alone, a max's update read its
    running value by a shuffle only lane 0 ran: NaN on the GPU).
    Compiles without a GPU."""
    for fn in _WARP_ROW_GROUPS:
        for shape, dtype in (((4096, 16), np.float32), ((2, 4096, 20), np.float16), ((4096, 32), np.float32),
                             ((2048, 512), np.float32), ((2048, 64), np.float32), ((4096, 96), np.float16),
                             ((1024, 256), np.float32), ((8, 256, 160), np.float32), ((1024, 768), np.float32),
                             ((1024, 1024), np.float16), ((512, 544), np.float32), ((4099, 64), np.float32),
                             ((3, 1021, 96), np.float16), ((1021, 768), np.float32), ((1024, 100), np.float32),
                             ((1024, 36), np.float32), ((512, 1000), np.float32), ((2048, 44), np.float16)):
            f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
            f.compile_only(np.ones(shape, dtype))
            schedule = f.compile_records[-1]["report"]["schedule"]
            assert "gpu_warp_rows" in schedule and "gpu_vector" not in schedule, (fn.__name__, shape, schedule)
    for fn, shape, dtype in ((_softmax_rows, (1024, 256), np.float64), (_softmax_rows, (1024, 1100), np.float32),
                             (_softmax_rows, (40, 64), np.float32), (_layernorm_rows, (1024, 2048), np.float32),
                             (_softmax_rows, (4096, 12), np.float32), (_layernorm_rows, (1000, 16), np.float32),
                             (_softmax_rows, (4096, 17), np.float32), (_layernorm_rows, (2048, 66), np.float32)):
        f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
        f.compile_only(np.ones(shape, dtype))
        assert "gpu_warp_rows" not in f.compile_records[-1]["report"]["schedule"], (fn.__name__, shape, dtype)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_rows_in_warp_lanes_on_the_gpu(dtype, torch_cuda):
    """Rows in a warp's lanes (gpu_warp_rows): NumPy's answer for every row group over rows of 16
    to 1024 points, rows along several axes, NaN and infinity in a row, and the same bits as the
    block's threads across each row combining in shared memory (the same lanes' sums in the same
    order; only where they are combined differs)."""
    torch = torch_cuda
    rng = np.random.default_rng(37)
    tolerance = {np.float32: (2e-5, 1e-6), np.float16: (4e-3, 4e-3)}[dtype]
    for shape in [(8192, 16), (2, 4096, 20), (4096, 32), (2048, 64), (4096, 96), (2048, 128), (2048, 256), (4096, 160),
                  (1024, 512), (512, 768), (1024, 1024), (4, 1024, 64), (2, 8, 256, 128), (4099, 64), (1021, 768),
                  (3, 1021, 96), (100003, 16), (1024, 100), (2048, 36), (512, 1000), (2048, 44)]:
        x = rng.standard_normal(shape).astype(dtype)
        x[(0,) * (x.ndim - 2) + (3, 1)] = np.nan
        x[(0,) * (x.ndim - 2) + (5, 2)] = np.inf
        xt = torch.from_numpy(x).cuda()
        for fn in _WARP_ROW_GROUPS:
            rule = hc.hcompile(fn, fullgraph=True)
            got = rule(xt).cpu().numpy()
            with np.errstate(all="ignore"):
                want = fn(x)
            np.testing.assert_allclose(got, want, rtol=tolerance[0], atol=tolerance[1], err_msg=f"{fn.__name__} {shape}")
            decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
            assert any(d[1] == "gpu_warp_rows" for d in decisions), (fn.__name__, shape, decisions)
            shared = hc.hcompile(fn, fullgraph=True, schedule=_without_warp_rows(decisions))(xt)
            np.testing.assert_array_equal(got, shared.cpu().numpy(), err_msg=f"{fn.__name__} {shape}")


def _kernels_ptx(program):
    """The PTX of every CUDA kernel `program` (Python source) JIT-compiles, in order: Halide's
    code-generation log (HL_DEBUG_CODEGEN=2, read once per process) in a fresh interpreter."""
    root = pathlib.Path(__file__).resolve().parents[2]
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, HL_DEBUG_CODEGEN="2", PYTHONPATH=path)
    log = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=600)
    assert log.returncode == 0, log.stderr[-2000:]
    blobs = re.findall(r'cuda_gpu_source_kernels.data = private constant \[\d+ x i8\] c"(.*?)\\00", align',
                       log.stdout + log.stderr)
    return [re.sub(r"\\([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), b) for b in blobs]


def test_warp_lanes_combine_by_shuffles_in_registers():
    """Rows in a warp's lanes (a row group's and a reduction's alone, keepdims and a kept axis of
    one too, arg reductions' butterflies) lower to warp shuffles with every Func in registers: no barrier, no shared or local
    memory, and no global scratch buffer (Halide sized one per call where the root's axes were
    unstated, not striped over the lanes: garbage on the GPU). The lanes combine as a tree: a
    shuffle a level for each value combined (a float max's NaN flag is a second), one more to
    read lane 0's, and two a reduction to hand its value out (lane 0 reading every lane's in turn
    took 34 for softmax over rows of 64 in 8 lanes); none inside a branch. PTX only, no GPU needed."""
    # (function, shape, lanes a row, values combined, reductions)
    cases = [("_softmax_rows", (4096, 64), 8, 3, 2), ("_layernorm_rows", (2048, 128), 8, 2, 2),
             ("_softmax_rows", (8192, 16), 4, 3, 2), ("_softmax_rows", (2048, 512), 32, 3, 2),
             ("_softmax_rows", (1024, 1024), 32, 3, 2), ("lambda a: a.sum(axis=-1)", (2048, 64), 8, 1, 1),
             ("lambda a: a.max(axis=-1)", (4, 256, 64), 8, 2, 1), ("lambda a: a.max(axis=-1)", (512, 768), 32, 2, 1),
             ("lambda a: a.sum(axis=-1, keepdims=True)", (4, 256, 64), 8, 1, 1),
             ("lambda a: a.min(axis=-1)", (2048, 1, 64), 8, 2, 1), ("_softmax_rows", (512, 1000), 32, 3, 2),
             ("lambda a: a.max(axis=-1)", (2048, 44), 8, 2, 1), ("lambda a: a.argmax(axis=-1)", (2048, 64), 8, 2, 1),
             ("lambda a: np.argmin(a, axis=-1)", (512, 1000), 32, 2, 1), ("_row_argmax_marked", (4096, 64), 8, 4, 2)]
    program = f"""
import numpy as np, hcompile as hc
from tests.python.test_cuda import _softmax_rows, _layernorm_rows, _row_argmax_marked
for fn, shape, lanes in [{", ".join(f"({fn}, {shape}, {lanes})" for fn, shape, lanes, _, _ in cases)}]:
    f = hc.hcompile(fn, target="host-cuda-cuda_capability_86", fullgraph=True)
    f.compile_only(np.ones(shape, np.float32))
    assert ("gpu_warp_rows", lanes) in [(d[1], d[3]) for d in f.compile_records[-1]["report"]["decisions"]], shape
"""
    kernels = _kernels_ptx(program)
    assert len(kernels) == len(cases), len(kernels)
    for ptx, (fn, shape, lanes, values, reductions) in zip(kernels, cases):
        assert "shfl.sync" in ptx and "bar.sync" not in ptx, ptx[:300]
        assert ".shared" not in ptx and ".local" not in ptx, ptx[:300]
        assert ptx.count("ld.global") == ptx.count("ld.global.nc"), "a load of a scratch buffer"
        levels = lanes.bit_length() - 1
        assert ptx.count("shfl.sync") <= (levels + 1) * values + 2 * reductions, (fn, shape, ptx.count("shfl.sync"))
        # No shuffle where only some lanes run (a branch's body): the others never join it. (A
        # last step of lane 0 alone read a max's running value so: NaN on the GPU.)
        in_branch = False
        for line in ptx.splitlines():
            line = line.strip()
            in_branch = (in_branch or re.match(r"@%p\d+ bra", line) is not None) and not line.startswith("$L")
            assert not (in_branch and "shfl" in line), (fn, shape, line)


def test_arg_reductions_over_short_rows_read_vectors():
    """argmax and argmin over rows shorter than 32 points, a thread a row: the row's 4 lanes are one
    vector, each step one 16-byte load, and the lanes sit in registers (no local memory). A lane at a
    time, each walking the row in strides, took 767 us for rows of 24 on an H100. PTX only."""
    cases = [((1 << 16, 16), 4), ((1 << 16, 24), 6), ((1000, 20), 5)]
    program = f"""
import numpy as np, hcompile as hc
for shape in {[shape for shape, _ in cases]}:
    f = hc.hcompile(lambda a: np.argmin(a, axis=-1), target="host-cuda-cuda_capability_86", fullgraph=True)
    f.compile_only(np.ones(shape, np.float32))
"""
    kernels = _kernels_ptx(program)
    assert len(kernels) == len(cases), len(kernels)
    for ptx, (shape, steps) in zip(kernels, cases):
        assert ".local" not in ptx, shape
        loads = ptx.count("ld.global")
        assert loads == ptx.count("ld.global.nc.v4.b32") and loads % steps == 0, (shape, loads)


def test_row_reductions_alone_run_in_warp_lanes():
    """A reduction alone over rows of 32 to 1024 points, several rows a block, reduces each row in
    a warp's lanes (4 to 32, a point a lane a step, combined by shuffles as a tree): float sums, max,
    min, prod, any, all, norms, argmax and argmin (their indices in 32 bits). Not one computing in 64
    bits (NumPy's sums of int32 are int64; an argmax of float64). Compiles without a GPU."""
    for fn, dtype in ((lambda a: a.sum(axis=-1), np.float32), (lambda a: a.max(axis=-1), np.float32),
                      (lambda a: a.min(axis=-1), np.int32), (lambda a: (a > 0).any(axis=-1), np.float32),
                      (lambda a: np.sqrt((a * a).sum(axis=-1)), np.float32), (lambda a: a.sum(axis=-1), np.float16),
                      (lambda a: a.argmax(axis=-1), np.float32), (lambda a: np.argmin(a, axis=-1), np.int8)):
        for shape in ((4096, 32), (2048, 64), (1024, 96), (1024, 256), (4, 256, 64), (1024, 768), (2048, 1024), (4099, 64),
                      (3, 1021, 96)):
            f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
            f.compile_only(np.ones(shape, dtype))
            assert "gpu_warp_rows" in f.compile_records[-1]["report"]["schedule"], (shape, dtype)
    for fn, dtype in ((lambda a: a.argmax(axis=-1), np.float64), (lambda a: a.sum(axis=-1), np.int32),
                      (lambda a: a.sum(axis=-1), np.float64)):
        f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
        f.compile_only(np.ones((2048, 64), dtype))
        assert "gpu_warp_rows" not in f.compile_records[-1]["report"]["schedule"], dtype


@gpu
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod", "any", "all"])
def test_row_reductions_in_warp_lanes_on_the_gpu(op, torch_cuda):
    """Reductions alone over rows in a warp's lanes: NumPy's answers (NaN and infinity in a row),
    and the same bits as the block's threads combining in shared memory (a float product within
    rounding: its partial results group the row differently)."""
    torch = torch_cuda
    rng = np.random.default_rng(41)
    dtypes = ([np.bool_] if op in ("any", "all") else [np.float32] if op == "prod" else
              [np.float32, np.float16] + ([np.int32] if op in ("max", "min") else []))
    for dtype in dtypes:
        for shape in [(4096, 32), (2048, 64), (1024, 96), (1024, 256), (2048, 512), (1024, 768), (2048, 1024), (4, 256, 64),
                      (4099, 64), (8191, 96), (1024, 100), (512, 1000)]:
            if dtype == np.bool_:
                x = rng.random(shape) < (0.02 if op == "any" else 0.98)
            elif dtype == np.int32:
                x = rng.integers(-1000, 1000, shape).astype(dtype)
            else:
                x = rng.standard_normal(shape).astype(dtype)
                if op == "prod":
                    x = (1 + x / 16).astype(dtype)
                if op in ("sum", "max", "min"):
                    x[(0,) * (x.ndim - 2) + (3, 1)] = np.nan
                    x[(0,) * (x.ndim - 2) + (4, 2)] = np.inf
            xt = torch.from_numpy(x).cuda()
            f = hc.hcompile(lambda a, op=op: getattr(a, op)(axis=-1), fullgraph=True)
            got = f(xt).cpu().numpy()
            want = getattr(x, op)(axis=-1)
            if dtype != np.bool_ and dtype != np.int32 and op in ("sum", "prod"):
                wide = getattr(x.astype(np.float64), op)(axis=-1)
                rtol = 1e-5 if dtype == np.float32 else 4e-3
                scale = float(np.where(np.isfinite(x), np.abs(x.astype(np.float64)), 0).sum(axis=-1).max())
                np.testing.assert_allclose(got.astype(np.float64), wide, rtol=rtol,
                                           atol=(1e-6 if dtype == np.float32 else 1e-3) * scale, err_msg=str(shape))
            else:
                np.testing.assert_array_equal(got, want, err_msg=f"{np.dtype(dtype).name} {shape}")
            decisions = [tuple(d) for d in f.compile_records[-1]["report"]["decisions"]]
            assert any(d[1] == "gpu_warp_rows" for d in decisions), (op, dtype, shape, decisions)
            shared = hc.hcompile(lambda a, op=op: getattr(a, op)(axis=-1), fullgraph=True,
                                 schedule=_without_warp_rows(decisions))(xt).cpu().numpy()
            if op == "prod" and dtype == np.float32:
                # (A float product's partial results group the row differently: a lane's are
                # points l, l + lanes, ...; a thread's in shared memory, vectors of four.)
                np.testing.assert_allclose(got, shared, rtol=1e-5, err_msg=str(shape))
            else:   # (the same lanes of a float sum, added in the same order; exact others)
                np.testing.assert_array_equal(got, shared, err_msg=f"{op} {np.dtype(dtype).name} {shape}")


def _near_one(rng, shape, dtype):
    # (Values within 1e-4 of one make float32 products round near ties the same way each step:
    # any grouping of them drifts, NumPy's serial one by 1e-4 over 131072 of them.)
    return (1 + 1e-2 * rng.standard_normal(shape)).astype(dtype)


def _reduction_inputs(rng, shape, dtype):
    """A float array of normal values with NaNs at two places of column 2 (one in the rows past a
    chunked column's last whole chunk), or integers from -50 to 50."""
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if x.ndim == 2 and x.shape[0] > 5 and x.shape[1] > 2:
        x[5, 2] = x[-1, 2] = np.nan
    return x


def _check_reduction(got, x, fn, dtype):
    if np.dtype(dtype).kind != "f":
        np.testing.assert_array_equal(got, fn(x))
        return
    # Against float64 (NumPy's own float32 sums down a column add serially): float32 rounding of
    # the sum of magnitudes.
    want = fn(x.astype(np.float64))
    sums = ("_sum0", "_sum1", "_mean0", "_sum_leading")
    scale = fn(np.abs(x.astype(np.float64))) if fn.__name__ in sums else np.abs(want)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=float(np.nanmax(scale, initial=0)) * tol)


def _sum0(a):
    return a.sum(axis=0)


def _sum1(a):
    return a.sum(axis=-1)


def _mean0(a):
    return a.mean(axis=0, keepdims=True)


def _sum_leading(a):
    return a.sum(axis=tuple(range(a.ndim - 1)))     # over several axes to few outputs: an axis at a time


REDUCTIONS = [_sum0, _sum1, _mean0, lambda a: a.max(axis=0), lambda a: a.min(axis=-1),
              lambda a: (a > 0).any(axis=0), lambda a: (a < 40).all(axis=-1), _sum_leading]


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reductions_of_few_outputs_over_long_axes_on_the_gpu(dtype, torch_cuda):
    """Column reductions of tall arrays and row reductions of few long rows, reduced in chunks
    (whole ones and the rest apart): NumPy's answers, NaN propagated by max and min."""
    torch = torch_cuda
    rng = np.random.default_rng(21)
    for shape in [(131075, 16), (200003, 3), (5, 40001, 8), (3, (1 << 19) + 3), (4096, 1)]:
        x = _reduction_inputs(rng, shape, dtype)
        xt = torch.from_numpy(x).cuda()
        for fn in REDUCTIONS:
            _check_reduction(hc.hcompile(fn, fullgraph=True)(xt).cpu().numpy(), x, fn, dtype)
        if np.dtype(dtype).kind == "f":
            y = _near_one(rng, shape, dtype)
            for fn in (lambda a: a.prod(axis=0), lambda a: a.std(axis=0)):
                got = hc.hcompile(fn, fullgraph=True)(torch.from_numpy(y).cuda()).cpu().numpy()
                np.testing.assert_allclose(got, fn(y.astype(np.float64)), rtol=2e-4 if dtype == np.float32 else 1e-10)


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_reductions_over_short_rows_several_a_block_on_the_gpu(dtype, torch_cuda):
    """A reduction alone over short rows runs several rows a block: NumPy's answers, and the same
    bits as blocks of one row."""
    torch = torch_cuda
    rng = np.random.default_rng(22)
    for shape in [(65536, 16), (8192, 64), (4096, 100), (2048, 256), (32, 128, 48)]:
        x = _reduction_inputs(rng, shape, dtype)
        xt = torch.from_numpy(x).cuda()
        for fn in REDUCTIONS[1:2] + REDUCTIONS[4:5] + REDUCTIONS[6:7] + [lambda a: a.mean(axis=-1, keepdims=True)]:
            rule = hc.hcompile(fn, fullgraph=True)
            got = rule(xt)
            _check_reduction(got.cpu().numpy(), x, fn, dtype)
            decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
            rows = [(v, b) for (_, c, _, v, b) in decisions if c == "gpu_rows"]
            if not rows or rows[0][1] <= 1:
                continue
            one = hc.hcompile(fn, fullgraph=True, schedule=_rows_a_block(decisions, 0, max(rows[0][0], 32)))(xt)
            torch.testing.assert_close(one, got, rtol=0, atol=0, equal_nan=True, msg=str((shape, decisions)))


@gpu
@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int8, np.bool_])
def test_arg_reductions_in_warp_lanes_on_the_gpu(op, dtype, torch_cuda):
    """argmax and argmin over rows of 32 to 1024 points in a warp's lanes (a butterfly of shuffles,
    32-bit indices, narrower values widened): NumPy's answers (the first of equal extremes, the
    first NaN, rows of nothing but an extreme or NaN), and for float32 and int8 the same through
    the butterfly in shared memory (no gpu_warp_rows) and in one thread a row (gpu_tile)."""
    torch = torch_cuda
    rng = np.random.default_rng(43)
    fn = (lambda a: a.argmax(axis=-1)) if op == "argmax" else (lambda a: np.argmin(a, axis=-1))
    for shape in [(4096, 32), (2048, 64), (4099, 64), (3, 1021, 96), (512, 1000), (8192, 200)]:
        x = (rng.random(shape) < 0.5) if dtype == np.bool_ else rng.integers(-3, 3, shape).astype(dtype)
        rows = x.reshape(-1, shape[-1])
        if dtype in (np.float32, np.float16):
            rows[1, 5] = rows[1, 9] = np.nan
            rows[2] = -np.inf
            rows[3] = np.nan
            rows[4] = np.inf
            rows[5, -1] = np.inf if op == "argmax" else -np.inf
        elif dtype != np.bool_:
            rows[2] = np.iinfo(dtype).min
            rows[4] = np.iinfo(dtype).max
        xt = torch.from_numpy(x).cuda()
        f = hc.hcompile(fn, fullgraph=True)
        want = fn(x)
        np.testing.assert_array_equal(f(xt).cpu().numpy(), want, err_msg=f"{np.dtype(dtype).name} {shape}")
        decisions = [tuple(d) for d in f.compile_records[-1]["report"]["decisions"]]
        assert any(d[1] == "gpu_warp_rows" for d in decisions), (dtype, shape, decisions)
        if dtype not in (np.float32, np.int8):
            continue
        for schedule in (_without_warp_rows(decisions), [(0, "compute_root", -1, 0, 0), (0, "gpu_tile", -1, 256, 0)]):
            got = hc.hcompile(fn, fullgraph=True, schedule=schedule)(xt).cpu().numpy()
            np.testing.assert_array_equal(got, want, err_msg=f"{np.dtype(dtype).name} {shape} {schedule}")


@gpu
@pytest.mark.parametrize("op", ["max", "min", "prod", "sum", "any", "all", "argmax"])
def test_short_row_reductions_on_the_gpu(op, torch_cuda):
    """Reductions over short rows, a thread a row reading a vector of neighbours a step (float sums
    their lanes, the others an rfactor'd vector), and over rows of 32 in a count that leaves no
    several-rows block: NumPy's answers, NaN and infinities included."""
    torch = torch_cuda
    rng = np.random.default_rng(29)
    for dtype in ([np.bool_] if op in ("any", "all") else [np.float32, np.int32, np.int8]):
        for shape in [(1000, 16), (4096, 24), (6, 32), (1000, 32), (100, 8), (33, 12), (5, 3)]:
            if dtype == np.bool_:
                x = rng.random(shape) < (0.05 if op == "any" else 0.95)
            elif dtype == np.int8:
                x = rng.integers(-2, 3, shape).astype(dtype)
            else:
                x = rng.standard_normal(shape).astype(dtype)
                if op == "prod":
                    x = (1 + x / 8).astype(dtype)
            if dtype == np.float32 and op in ("max", "min", "argmax", "sum"):
                x[3 % shape[0], 1] = np.nan
                x[4 % shape[0], 2] = np.inf
            got = hc.hcompile(lambda a, op=op: getattr(a, op)(axis=1), fullgraph=True)(torch.from_numpy(x).cuda())
            want = getattr(x, op)(axis=1)
            if dtype == np.float32 and op in ("sum", "prod"):
                # (within float32 rounding of the row's magnitude: NumPy's pairwise sum rounds too)
                scale = float(np.where(np.isfinite(x), np.abs(x), 0).sum(axis=1).max()) if op == "sum" else 0.0
                np.testing.assert_allclose(got.cpu().numpy(), want, rtol=1e-5, atol=1e-6 * scale, err_msg=str(shape))
            else:
                np.testing.assert_array_equal(got.cpu().numpy(), want, err_msg=f"{dtype.__name__} {shape}")


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int64, np.bool_])
def test_arg_reductions_on_the_gpu(dtype, torch_cuda):
    """argmax and argmin over rows in lanes (down columns a thread per output): the first of equal
    extremes, the first NaN, rows of nothing but the extreme or NaN; fixed sizes and any size."""
    torch = torch_cuda
    rng = np.random.default_rng(23)
    fns = (lambda a: a.argmax(axis=-1), lambda a: a.argmin(axis=-1, keepdims=True), lambda a: a.argmin(axis=0),
           lambda a: np.argmax(a, axis=0), lambda a: a.argmax())
    # (Rows of 32 to 1024 in a warp's lanes, a butterfly of shuffles, where 32-bit: the last block
    # shifted inwards (4099, 1021 rows), a last step of some lanes (96, 100, 200 points).)
    for shape in [(4096, 64), (300, 1024), (2, 40000), (64, 100), (33, 7), (5, 1), (100003,), (300,), (131075, 16),
                  (4099, 96), (3, 1021, 32), (512, 200), (1000, 256)]:
        x = rng.integers(-3, 3, shape).astype(dtype)    # many ties
        if dtype in (np.float32, np.float64):
            first = tuple(1 % extent for extent in shape)
            x[first] = x[first[:-1] + (9 % shape[-1],)] = np.nan
            x[2 % shape[0]] = -np.inf
            x[3 % shape[0]] = np.nan
            x[4 % shape[0]] = np.inf
        elif dtype != np.bool_:
            x[2 % shape[0]] = np.iinfo(dtype).min
            x[4 % shape[0]] = np.iinfo(dtype).max
        xt = torch.from_numpy(x).cuda()
        for fn in fns:
            np.testing.assert_array_equal(hc.hcompile(fn, fullgraph=True)(xt).cpu().numpy(), fn(x), err_msg=str(shape))
    x = rng.integers(-3, 3, (5, 40001, 8)).astype(dtype)    # down the middle axis, in lanes
    np.testing.assert_array_equal(hc.hcompile(lambda a: a.argmax(axis=1), fullgraph=True)(torch.from_numpy(x).cuda())
                                  .cpu().numpy(), x.argmax(axis=1))
    x = rng.integers(-3, 3, (700, 1000)).astype(dtype)
    f = hc.hcompile(fns[0], fullgraph=True, dynamic=True)
    for rows, length in ((700, 300), (50, 1000), (3, 2)):
        np.testing.assert_array_equal(f(torch.from_numpy(x[:rows, :length].copy()).cuda()).cpu().numpy(),
                                      fns[0](x[:rows, :length]))


@gpu
@pytest.mark.parametrize("fn,shapes,members", ROWS_AFTER_PRODUCERS, ids=lambda c: getattr(c, "__name__", ""))
def test_rows_after_regions_computed_before_them_on_the_gpu(fn, shapes, members, torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(12)
    f = hc.hcompile(fn, fullgraph=True)
    for scale in (1, 3):
        args = [rng.standard_normal(s).astype(np.float32) * scale for s in shapes]
        got, want = f(*[torch.from_numpy(a).cuda() for a in args]), fn(*args)
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            np.testing.assert_allclose(g.cpu().numpy(), w, rtol=2e-5, atol=2e-5)


@gpu
def test_max_autotune_measures_gpu_schedules_and_keeps_the_fastest(torch_cuda, monkeypatch, tmp_path):
    torch = torch_cuda
    monkeypatch.setattr(hc.config, "tuning_db", str(tmp_path / "tuning.sqlite"))
    monkeypatch.setattr(hc.config, "tuning_trials", 5)
    x = np.random.default_rng(13).standard_normal((256, 4096)).astype(np.float32)
    f = hc.hcompile(_softmax_rows, mode="max-autotune", fullgraph=True)
    np.testing.assert_allclose(f(torch.from_numpy(x).cuda()).cpu().numpy(), _softmax_rows(x), rtol=2e-5, atol=1e-6)
    record = f.compile_records[-1]
    assert record["schedule_origin"] == "search" and record["tuning"]["trials"] >= 2, record.get("tuning")
    again = hc.hcompile(_softmax_rows, mode="max-autotune", fullgraph=True)   # the record is reused
    np.testing.assert_allclose(again(torch.from_numpy(x).cuda()).cpu().numpy(), _softmax_rows(x), rtol=2e-5, atol=1e-6)
    assert again.compile_records[-1]["schedule_origin"] == "tuning record"


@gpu
def test_stencils_of_odd_sizes_on_the_gpu(torch_cuda):
    """Four rows a thread for a stencil over rows: partial tiles at every edge."""
    torch = torch_cuda
    rng = np.random.default_rng(7)
    for fn in (_blur3x3, _separable_blur):
        f = hc.hcompile(fn, fullgraph=True)
        for shape in [(37, 301), (33, 33), (3, 200), (130, 129), (18, 515)]:
            x = rng.standard_normal(shape).astype(np.float32)
            np.testing.assert_allclose(f(torch.from_numpy(x).cuda()).cpu().numpy(), fn(x), rtol=1e-5, atol=1e-6)


@gpu
def test_other_dlpack_producers_go_in_and_come_back_as_themselves(torch_cuda):
    """JAX arrays: read zero-copy through DLPack as PyTorch's, results handed back as JAX arrays."""
    import os
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    if not any(d.platform == "gpu" for d in jax.devices()):
        pytest.skip("JAX sees no GPU")
    x = np.random.default_rng(8).standard_normal((33, 65)).astype(np.float32)
    f = hc.hcompile(lambda a, b: (_softmax_rows(a), b), fullgraph=True)
    a = jax.device_put(jnp.asarray(x), next(d for d in jax.devices() if d.platform == "gpu"))
    got, same = f(a, a)
    assert isinstance(got, jax.Array) and same is a
    np.testing.assert_allclose(np.asarray(got), _softmax_rows(x), rtol=1e-5, atol=1e-6)


@gpu
def test_products_and_sums_round_as_numpy_on_the_gpu(torch_cuda):
    """`a * b + c` bit for bit as NumPy (no fused multiply-add: gpu_rounding.cpp and PTX's .rn),
    and float64 pow within the CPU's accuracy (its double-double products exact)."""
    torch = torch_cuda
    rng = np.random.default_rng(9)
    for dtype in (np.float32, np.float64):
        a, b, c = (rng.standard_normal(4099).astype(dtype) for _ in range(3))
        got = hc.hcompile(lambda a, b, c: a * b + c, fullgraph=True)(*(torch.from_numpy(v).cuda() for v in (a, b, c)))
        assert np.array_equal(got.cpu().numpy(), a * b + c)
    x = rng.uniform(0.5, 2.0, 4099)
    y = rng.uniform(-700, 700, 4099)
    got = hc.hcompile(lambda x, y: x ** y, fullgraph=True)(torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda())
    np.testing.assert_allclose(got.cpu().numpy(), x ** y, rtol=8 * np.finfo(np.float64).eps)


def _schedules(compiled):
    return "\n".join(r["report"]["schedule"] for r in compiled.compile_records if r.get("report"))


def _gelu_mlp(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return h @ w2 + b2


def _attention_scores(x, head=64):
    """Two heads of `head` features split out of x's rows (4 x 64 of them), q @ k^T."""
    q = x[:, :2 * head].reshape(4, 64, 2, head).transpose(0, 2, 1, 3)
    k = x[:, 2 * head:].reshape(4, 64, 2, head).transpose(0, 2, 1, 3)
    return q @ k.transpose(0, 1, 3, 2) * 0.125


def _wide_attention_scores(x):
    return _attention_scores(x, head=128)


def _joined_heads(p, v, w):
    o = (p @ v).transpose(0, 2, 1, 3)
    return o.reshape(o.shape[0] * o.shape[1], -1) @ w


CUBLAS_CASES = [
    (lambda a, b: a @ b, [(130, 130), (130, 150)]),
    (lambda a, b: a @ b.T, [(64, 512), (1024, 512)]),             # b transposed: stored by a kernel first
    (lambda a, b: a.T @ b, [(200, 50), (200, 300)]),
    # A fused expression as operand (contracting past combine_matmul_sums' limit: a product and an add).
    (lambda a, b: np.tanh(a) @ b + 1, [(65, 300), (300, 4097)]),
    (lambda a, b, c: (a @ b)[1:-1, 2:] * c, [(90, 200), (200, 120), (118,)]),  # part of the product read
    (lambda a, b: (a @ b, a @ b.T), [(128, 128), (128, 128)]),
    (_gelu_mlp, [(32, 512), (512, 1024), (1024,), (1024, 512), (512,)]),
    # Batched: one strided batched call; heads split out of one array by views (stored first); a
    # matrix broadcast over the batch (read for every product); batches broadcast against each other.
    # (Contractions of 128: float32 batched products of 64 or less are Halide's staged kernels,
    # STAGED_PRODUCT_CASES.)
    (lambda a, b: a @ b, [(16, 8, 64, 128), (16, 8, 128, 64)]),
    (_wide_attention_scores, [(256, 512)]),
    (lambda a, w: np.tanh(a) @ w, [(6, 100, 128), (128, 300)]),
    (lambda a, b: a @ b, [(3, 1, 50, 128), (4, 128, 70)]),
    # Inputs whose leading axes a reshape merges into an operand's rows: cuBLAS reads the input as it is.
    (lambda x, w: np.tanh(_rows(x) @ w), [(4, 50, 128), (128, 300)]),
    (lambda x, w: _rows(x) @ w, [(2, 3, 40, 128), (128, 200)]),
    (lambda a, w: a @ _rows(w), [(100, 256), (2, 128, 300)]),
    # An attention's heads joined for its output projection: the staged product laid out for it.
    (_joined_heads, [(2, 8, 64, 64), (2, 8, 64, 64), (512, 300)]),
]



def _rows(x):
    return x.reshape(-1, x.shape[-1])


@pytest.mark.skipif(not hc.blas.load_cublas(), reason="no cuBLAS to compile library calls for (nvidia-cublas)")
def test_inputs_reshaped_into_rows_reach_cublas_as_they_are():
    """No copy of an input whose leading axes a reshape merges into a product's rows: the cuBLAS
    call reads the device array itself (runtime gemm::as_matrix), as a transformer layer's first
    product reads its (batch, tokens, width) input; nor of an attention's heads joined for its
    output projection, the staged product's result laid out as that matrix."""
    for fn, shapes in CUBLAS_CASES[-4:]:
        f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
        f.compile_only(*[np.ones(s, np.float32) for s in shapes])
        report = f.compile_records[-1]["report"]
        assert "call_library" in report["schedule"] and "blas_operand" not in report["schedule_source"], report["schedule_source"]


@pytest.mark.skipif(not hc.blas.load_cublas(), reason="no cuBLAS to compile library calls for (nvidia-cublas)")
def test_a_row_root_read_only_by_a_cublas_call_loads_its_rows_in_vectors(monkeypatch, tmp_path):
    """A layer norm that is not an output but a product's operand states its extents from 0
    (gpu_directives.cpp, schedule_gpu_rows_root): sized per call at a symbolic offset instead, its
    kernel split every vector load into single ones (88 single loads and no vector one here)."""
    monkeypatch.setenv("HCOMPILE_DEBUG_DIR", str(tmp_path))
    f = hc.hcompile(lambda x, g, b, w: W._layer_norm(x, g, b) @ w, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(*[np.ones(s, np.float32) for s in [(256, 512), (512,), (512,), (512, 64)]])
    assert "call_library" in _schedules(f)
    [stmt] = [p.read_text(errors="replace") for p in tmp_path.glob("*/lowered_stmt.txt")]
    [kernel] = stmt.split(".visible .entry ")[1:]   # the layer norm's; the product is cuBLAS's
    assert re.search(r"ld\.global[.a-z]*\.v4", kernel), kernel.split("(")[0]


@pytest.mark.skipif(not hc.blas.load_cublas(), reason="no cuBLAS to compile library calls for (nvidia-cublas)")
def test_kernels_reading_a_cublas_result_load_it_in_vectors(monkeypatch, tmp_path):
    """A cuBLAS call's result states its static extents from 0 (gpu_directives.cpp,
    schedule_gpu_library_call): sized per call instead, its rows sat at a symbolic offset and each
    kernel reading it split every vector load into single ones (here 4 single loads and 1 vector
    load in each kernel, the bias's)."""
    monkeypatch.setenv("HCOMPILE_DEBUG_DIR", str(tmp_path))
    f = hc.hcompile(W.gelu_mlp, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(*[np.ones(s, np.float32) for s in [(32, 512), (512, 512), (512,), (512, 512), (512,)]])
    assert _schedules(f).count("call_library") == 2
    [stmt] = [p.read_text(errors="replace") for p in tmp_path.glob("*/lowered_stmt.txt")]
    kernels = stmt.split(".visible .entry ")[1:]   # the GELU after x @ w1 and the bias after @ w2
    assert len(kernels) == 2
    for kernel in kernels:
        loads = re.findall(r"ld\.global[.a-z0-9]*", kernel)
        assert loads and all(".v4" in load for load in loads), (kernel.split("(")[0], loads)


@pytest.mark.parametrize("dtype, fn", [("float16", lambda x, y: x + y), ("bfloat16", lambda x, y: x + y),
                                       ("uint8", lambda x, y: np.maximum(x, y))])
def test_vectors_of_narrow_values_move_in_one_access(dtype, fn, monkeypatch, tmp_path):
    """A thread's vector of four 16- or 8-bit values is loaded and stored as one access
    (core/src/lowering/gpu_narrow_vectors.cpp), as four float32 values are: Halide's CUDA back end
    otherwise split it into single 2- or 1-byte accesses (float16 `x + y`: 8 loads, 4 stores)."""
    dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    monkeypatch.setenv("HCOMPILE_DEBUG_DIR", str(tmp_path))
    f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(np.ones((256, 256), dtype), np.ones((256, 256), dtype))
    [stmt] = [p.read_text(errors="replace") for p in tmp_path.glob("*/lowered_stmt.txt")]
    [kernel] = stmt.split(".visible .entry ")[1:]
    loads = re.findall(r"ld\.global[.a-z0-9]*", kernel)
    stores = re.findall(r"st\.global[.a-z0-9]*", kernel)
    assert len(loads) == 2 and len(stores) == 1, (loads, stores)   # one access a vector


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_products_on_the_gpu_call_cublas_and_match_numpy(dtype, torch_cuda):
    """Float products past kMinCublasMultiplyAdds (library_calls.h) call cuBLAS on the caller's stream, with
    the elementwise work around them in Halide's kernels; the answers are NumPy's (float16 products on the
    tensor cores, accumulating in float32 as NumPy's float16 product does)."""
    torch = torch_cuda
    rng = np.random.default_rng(12)
    stream = torch.cuda.Stream()
    for fn, shapes in CUBLAS_CASES:
        args = _rng_inputs(rng, shapes, dtype)
        f = hc.hcompile(fn, fullgraph=True)
        with torch.cuda.stream(stream):
            got = f(*[torch.from_numpy(a).cuda() for a in args])
        stream.synchronize()
        got = tuple(g.cpu().numpy() for g in got) if isinstance(got, tuple) else got.cpu().numpy()
        want = fn(*args)
        if dtype == np.float16:
            # A float16 result carries float16's rounding of its magnitude (2048 and more in
            # gelu_mlp's second product, whose 1024-long sums round in another order than NumPy's).
            for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                w = np.asarray(w, np.float64)
                assert np.allclose(g, w, rtol=1e-2, atol=max(1e-2, 4 * np.abs(w).max() * 2.0 ** -10)), (g, w)
        else:
            _close(got, want, dtype)
        assert "call_library" in _schedules(f), _schedules(f)


def _product_into(out, a, b):
    out[...] = a @ b


def _product_over_operand(a, b):
    a[...] = a @ b


def _product_over_operand_then_sum(a, b):
    a[...] = a @ b
    return a.sum()


@gpu
def test_products_returned_as_they_are_write_the_output_and_never_an_operand(torch_cuda):
    """A cuBLAS product returned as it is writes the output array itself (no copy kernel): a new
    array, or a written argument the product does not read; an argument it reads (a[...] = a @ b)
    gets a new array copied into it after the call, so cuBLAS never writes what it reads."""
    torch = torch_cuda
    rng = np.random.default_rng(21)
    a, b = rng.standard_normal((256, 256), np.float32), rng.standard_normal((256, 256), np.float32)
    product = hc.hcompile(lambda x, y: x @ y, fullgraph=True)
    _close(product(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()).cpu().numpy(), a @ b, np.float32)
    assert "call_library" in _schedules(product)
    into = hc.hcompile(_product_into, fullgraph=True)
    out = torch.zeros(256, 256, device="cuda")
    assert into(out, torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()) is None
    _close(out.cpu().numpy(), a @ b, np.float32)
    # The product alone is the written value (the case the in-place rule must refuse), then the
    # same read again by a sum (the product is then copied to the output by a kernel anyway).
    over = hc.hcompile(_product_over_operand, fullgraph=True)
    ta = torch.from_numpy(a).cuda()
    assert over(ta, torch.from_numpy(b).cuda()) is None
    _close(ta.cpu().numpy(), a @ b, np.float32)
    over_then_sum = hc.hcompile(_product_over_operand_then_sum, fullgraph=True)
    ta = torch.from_numpy(a).cuda()
    total = over_then_sum(ta, torch.from_numpy(b).cuda())
    want = a.copy()
    want_total = _product_over_operand_then_sum(want, b)
    _close(ta.cpu().numpy(), want, np.float32)
    np.testing.assert_allclose(total.cpu().numpy(), want_total, rtol=1e-3)
    assert all("call_library" in _schedules(f) for f in (into, over, over_then_sum))


def _scale_in_place(x, y):
    x *= 2
    x[1:] += np.tanh(y[:-1])
    return x.sum()


def _fill(out, a):
    out[...] = np.exp(a) - 1


def test_functions_that_write_into_their_arguments_compile_for_cuda():
    for fn, shapes in ((_scale_in_place, [(64, 33), (64, 33)]), (_fill, [(7, 300), (7, 300)])):
        f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
        f.compile_only(*[np.ones(s, np.float32) for s in shapes])
        assert f.compile_records[-1]["report"] is not None and f.compile_records[-1]["break"] is None


def test_written_arguments_meet_others_by_their_device_bytes():
    """The overlap check of a written argument on the GPU reads byte ranges (any strides), tried
    here on PyTorch's CPU tensors, whose pointers and strides read the same way."""
    torch = pytest.importorskip("torch")
    from hcompile.cuda import _Library, _ranges_meet
    library = _Library("torch")
    x = torch.zeros(10, 8)
    rows, cols = library.byte_range(x[:5]), library.byte_range(x[5:])
    assert not _ranges_meet(rows, cols) and _ranges_meet(library.byte_range(x), rows)
    assert _ranges_meet(library.byte_range(x.T), library.byte_range(x[9:, 7:]))
    assert library.byte_range(x[:0]) == (0, 0) and not _ranges_meet((0, 0), library.byte_range(x))
    flipped = torch.zeros(6).flip(0)
    lo, hi = library.byte_range(flipped)
    assert hi - lo == 6 * 4


@gpu
def test_functions_that_write_into_their_arguments_on_the_gpu(torch_cuda, caplog):
    """The written values are computed as outputs and copied into the caller's own tensors after
    the kernel (a strided one too); a written argument sharing memory with another runs as Python."""
    torch = torch_cuda
    rng = np.random.default_rng(5)
    f = hc.hcompile(_scale_in_place, fullgraph=True)
    for _ in range(3):
        x, y = rng.standard_normal((64, 33), np.float32), rng.standard_normal((64, 33), np.float32)
        tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
        total = f(tx, ty)
        want_total = _scale_in_place(x, y)
        np.testing.assert_allclose(tx.cpu().numpy(), x, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(total.cpu().numpy(), want_total, rtol=1e-4)
    big = torch.from_numpy(rng.standard_normal((33, 128), np.float32)).cuda()
    strided, a = big.T[:, ::2], rng.standard_normal((128, 17), np.float32)
    want = strided.cpu().numpy().copy()
    _fill(want, a)
    assert hc.hcompile(_fill, fullgraph=True)(strided, torch.from_numpy(a).cuda()) is None
    np.testing.assert_allclose(strided.cpu().numpy(), want, rtol=1e-6, atol=1e-6)
    # NumPy arrays under target="cuda": copied in, and the written one copied back.
    x, y = rng.standard_normal((64, 33), np.float32), rng.standard_normal((64, 33), np.float32)
    x2 = x.copy()
    hc.hcompile(_scale_in_place, target="cuda")(x2, y)
    _scale_in_place(x, y)
    np.testing.assert_allclose(x2, x, rtol=1e-6, atol=1e-6)

    def add_into(x, y):
        x += y
        return x
    g = hc.hcompile(add_into)
    t = torch.arange(12.0, device="cuda")
    got = g(t[:6], t[6:])          # one tensor's two halves: no byte in common
    assert torch.equal(t[:6], torch.arange(6.0, 18.0, 2, device="cuda")) and torch.equal(got, t[:6])
    # Overlapping halves run as Python: PyTorch's own in-place add, which refuses them.
    with caplog.at_level("WARNING"), pytest.raises(RuntimeError, match="single memory location"):
        g(t[:8], t[4:])
    assert "argument 0 is written and shares memory with argument 1" in caplog.text


def _scaled(x, s, n):
    return x * s + n, s * 2


def test_numpy_scalar_arguments_compile_for_cuda_as_values_read_at_run_time():
    f = hc.hcompile(_scaled, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(np.ones((8, 33), np.float32), np.float32(2), np.int8(3))
    assert f.compile_records[-1]["report"] is not None and f.compile_records[-1]["break"] is None
    assert f.compile_records[-1]["graph"].count("input[") == 3    # the scalars are inputs, not constants


@gpu
def test_cache_info_counts_the_gpu_paths_entries(torch_cuda):
    """cache_info() counts the GPU's entries: NumPy arrays under target="cuda" (entries kept by
    the Python path) and torch tensors (entries the C++ dispatcher serves)."""
    torch = torch_cuda
    f = hc.hcompile(lambda a: a * 2 + 1, target="cuda")
    for _ in range(3):
        f(np.ones(8, np.float32))
    assert f.cache_info() == hc.CacheInfo(entries=1, hits=2, misses=1, recompiles=0)
    g = hc.hcompile(lambda a: a * 2 + 1)
    for _ in range(3):
        g(torch.ones(8, device="cuda"))
    assert g.cache_info() == hc.CacheInfo(entries=1, hits=2, misses=1, recompiles=0)


@gpu
def test_numpy_scalar_arguments_on_the_gpu(torch_cuda):
    """NumPy scalars are read at run time (copied to the device as 0-d arrays): one kernel for
    every value, NumPy's promotion (a float32 scalar keeps float32; an int8 one joins it)."""
    torch = torch_cuda
    rng = np.random.default_rng(8)
    f = hc.hcompile(_scaled, fullgraph=True)
    x = rng.standard_normal((8, 33)).astype(np.float32)
    tx = torch.from_numpy(x).cuda()
    for s in (np.float32(2.5), np.float32(-1.0), np.float32(0.125)):
        got, twice = f(tx, s, np.int8(3))
        want, want_twice = _scaled(x, s, np.int8(3))
        assert got.dtype == torch.float32 and np.array_equal(got.cpu().numpy(), want)
        assert float(twice) == float(want_twice)
    assert sum(r["report"] is not None for r in f.compile_records) == 1
    g = hc.hcompile(lambda x, s: x * s, target="cuda")
    np.testing.assert_array_equal(g(x, np.float32(3)), x * np.float32(3))


def test_cuda_code_keeps_each_product_rounded_on_its_own():
    """The PTX of `a * b + c` has no fused multiply-add (gpu_rounding.cpp fences the product from
    LLVM; HL_LLVM_ARGS's -nvptx-fma-level=0, set at import, keeps PTX's .rn forms, which ptxas
    does not fuse). Read from Halide's codegen log: no GPU needed."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, hcompile as hc\n"
            f"t = {CUDA_TARGET!r}\n"
            "for dtype in (np.float32, np.float64):\n"
            "    hc.hcompile(lambda a, b, c: a * b + c, target=t).compile_only(*[np.ones(64, dtype)] * 3)\n")
    env = dict(os.environ, HL_DEBUG_CODEGEN="2")
    env.pop("HL_LLVM_ARGS", None)
    log = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert log.returncode == 0, log.stderr[-2000:]
    ptx = (log.stdout + log.stderr).split("PTX kernel:")[1:]
    assert len(ptx) == 2, "expected the PTX of two kernels in Halide's log"
    for kernel, width in zip(ptx, ("f32", "f64")):
        kernel = kernel.split("// -- End function")[0]
        assert "fma." not in kernel and f"mul.rn.{width}" in kernel and f"add.rn.{width}" in kernel


def test_halide_imported_before_hcompile_is_said_at_the_first_gpu_compile():
    """Its LLVM may already run without -nvptx-fma-level=0: a warning, not silence."""
    import subprocess
    import sys
    code = ("import halide, numpy as np, hcompile as hc\n"
            f"hc.hcompile(lambda a: a * 2 + 1, target={CUDA_TARGET!r}).compile_only(np.ones(8, np.float32))\n")
    log = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert log.returncode == 0, log.stderr[-2000:]
    assert "halide was imported before hcompile" in log.stdout + log.stderr


_LN_SHAPES = [(32, 512), (512,), (512,), (512, 512), (512,)]


def test_float16_products_read_stored_float16_operands():
    """A product of float16 arrays is a float32 product of their widened values (widen_float16);
    what it reads is stored as float16 (half the bytes), never as a float32 copy, and on the GPU
    cuBLAS takes those float16 arrays (tests/cpp/test_gpu_library_calls.cpp)."""
    import re
    args = _rng_inputs(np.random.default_rng(0), _LN_SHAPES, np.float16)
    f = hc.hcompile(W.ln_linear_gelu_res, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(*args)
    record = f.compile_records[-1]
    assert record["break"] is None, record["break"]
    report = record["report"]
    operands = set(re.findall(r"= matmul\(%(\d+), %(\d+)\)", report["optimized_graph"])[0])
    widened = set(re.findall(r"%(\d+) = cast\[dtype=float32\]", report["optimized_graph"]))
    roots = set(re.findall(r"region \d+ -> %(\d+)", report["regions"]))
    assert operands <= widened, (operands, widened)
    assert not (operands & roots), operands & roots


@gpu
def test_float16_on_the_gpu_matches_numpy(torch_cuda):
    """float16 tensors: arithmetic bit for bit as NumPy's float16 (float32 rounded back every
    step, with IEEE float32 division and square roots on the device), functions within a float16
    rounding, the layer norm seed through cuBLAS on the tensor cores within float16 tolerance."""
    torch = torch_cuda
    rng = np.random.default_rng(16)
    x, y = _rng_inputs(rng, [(300, 257), (300, 257)], np.float16)

    def arithmetic(a, b):
        return (a * b + a) / (b - 0.5) - np.sqrt(np.abs(a)) * 3

    got = hc.hcompile(arithmetic, fullgraph=True)(torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda())
    assert got.dtype == torch.float16
    with np.errstate(all="ignore"):
        want = arithmetic(x, y)
    assert np.array_equal(got.cpu().numpy().view(np.uint16), want.view(np.uint16))
    args = _rng_inputs(rng, _LN_SHAPES, np.float16)
    args[3] = (args[3] / np.float16(22)).astype(np.float16)
    f = hc.hcompile(W.ln_linear_gelu_res, fullgraph=True)
    got = f(*[torch.from_numpy(a).cuda() for a in args]).cpu().numpy()
    want = W.ln_linear_gelu_res(*args)
    assert got.dtype == np.float16
    assert np.allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=1e-2), \
        np.abs(got.astype(np.float32) - want).max()
    assert "call_library" in _schedules(f)


@pytest.mark.parametrize("scheduler", ["Anderson2021", "Mullapudi2016", "Li2018"])
def test_halide_gpu_autoschedulers_schedule_the_same_pipelines_for_cuda(scheduler):
    """Halide's GPU autoschedulers are peers on the very pipeline hcompile lowered (gpu_bench's
    table); Mullapudi2016 runs in its GPU mode."""
    f = hc.hcompile(_softmax_rows, target=CUDA_TARGET, autoscheduler=scheduler, fullgraph=True)
    f.compile_only(np.ones((64, 300), np.float32))
    report = f.compile_records[-1]["report"]
    assert f"Halide's {scheduler}" in report["schedule"]
    assert any(k in report["schedule_source"] for k in ("gpu_blocks", "gpu_tile", "gpu(")), report["schedule_source"]


def test_halide_autoschedulers_for_another_kind_of_target_are_refused_clearly():
    x = np.ones((8, 30), np.float32)
    with pytest.raises(hc.CompileError, match="CPUs only"):
        hc.hcompile(_softmax_rows, target=CUDA_TARGET, autoscheduler="Adams2019", fullgraph=True).compile_only(x)
    with pytest.raises(hc.CompileError, match="GPUs only"):
        hc.hcompile(_softmax_rows, autoscheduler="Anderson2021", fullgraph=True)(x)
    # A reduction to one value: Anderson2021 crashed the process, Li2018 left it on the host.
    for scheduler in ("Anderson2021", "Li2018"):
        with pytest.raises(hc.CompileError, match="0-d output"):
            hc.hcompile(_total, target=CUDA_TARGET, autoscheduler=scheduler, fullgraph=True).compile_only(x)
    hc.hcompile(_total, target=CUDA_TARGET, autoscheduler="Mullapudi2016", fullgraph=True).compile_only(x)


@gpu
@pytest.mark.parametrize("scheduler", ["Anderson2021", "Mullapudi2016", "Li2018"])
def test_halide_gpu_autoschedulers_match_numpy_on_the_gpu(scheduler, torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(21)
    cases = [(_blur3x3, [(50, 70)])]
    if scheduler != "Mullapudi2016":    # its GPU schedule of these reads past the input (a Halide bounds error, said)
        cases += [(_softmax_rows, [(48, 300)]), (_layernorm_rows, [(5, 7, 64)])]
    for fn, shapes in cases:
        args = _rng_inputs(rng, shapes)
        got = hc.hcompile(fn, autoscheduler=scheduler, fullgraph=True)(*[torch.from_numpy(a).cuda() for a in args])
        _close(got.cpu().numpy(), fn(*args), np.float32)


def _print_between(x):
    y = np.exp(x) * 2
    print("hcompile test: between the two graphs", y.shape)
    return y.sum(axis=-1) + 1


def _branch_on_a_value(x):
    if x.sum() > 0:
        return x * 2
    return np.tanh(x) - 1


def _loop(x, n):
    for _ in range(n):
        x = np.tanh(x) * 0.5 + 1
    return x


def test_graph_breaks_with_cuda_arrays_resume_compiled():
    """A graph break on the GPU path resumes as on the CPU: the code before it is a CUDA kernel,
    the code after it a resume function (compiled for CUDA in turn when it runs)."""
    for fn, args in ((_print_between, (np.ones((4, 300), np.float32),)),
                     (_branch_on_a_value, (np.ones((64, 33), np.float32),))):
        f = hc.hcompile(fn, target=CUDA_TARGET)
        f.compile_only(*args)
        record = f.compile_records[-1]
        assert record["break"] is not None and record["break"].resumes, record["break"]
        assert record["resumes"], record
        assert record["graph"] is not None and "cuda" in record["report"]["target"]
    with pytest.raises(hc.Unsupported):
        hc.hcompile(_print_between, target=CUDA_TARGET, fullgraph=True).compile_only(np.ones((4, 300), np.float32))


@gpu
def test_graph_breaks_with_cuda_arrays_on_the_gpu(torch_cuda, capsys):
    torch = torch_cuda
    rng = np.random.default_rng(7)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    f = hc.hcompile(_print_between)
    got = f(torch.from_numpy(x).cuda())
    assert isinstance(got, torch.Tensor) and got.is_cuda
    _close(got.cpu().numpy(), _print_between(x), np.float32)
    assert "between the two graphs" in capsys.readouterr().out
    assert any(r["break"] is not None and r["break"].resumes for r in f.compile_records)
    # Both sides of a branch on a value read from the device, each resume function compiled once.
    g = hc.hcompile(_branch_on_a_value)
    for sign in (1, -1, 1):
        data = np.abs(x) * sign
        _close(g(torch.from_numpy(data).cuda()).cpu().numpy(), _branch_on_a_value(data), np.float32)
    # The resume functions are compiled functions of their own, each with its records.
    records = list(g.compile_records) + [r for cf in g._resumes.functions() for r in cf.compile_records]
    kernels = [r for r in records if r.get("report")]
    assert len(kernels) >= 3, [r["graph"] for r in records]     # before the branch, and each side
    assert all("cuda" in r["report"]["target"] for r in kernels)
    # An outlined loop: its body compiled once, run once per trip, on the device.
    h = hc.hcompile(_loop)
    _close(h(torch.from_numpy(x).cuda(), 12).cpu().numpy(), _loop(x, 12), np.float32)
    assert any(r["break"] is not None and "loop" in r["break"].reason for r in h.compile_records), \
        [r["break"] for r in h.compile_records]


def test_float16_chains_compile_for_cuda():
    """Each float16 step's conversion names its operand once (gpu_rounding.cpp): written out
    inline, a chain of twelve steps copied its first operand 4^12 times (the compile ran out of
    memory)."""
    def chain(x):
        for _ in range(12):
            x = x * 0.5 + 0.25
        return x
    f = hc.hcompile(chain, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(np.ones((64, 64), np.float16))
    assert f.compile_records[-1]["report"]["target"].count("cuda")


@gpu
def test_reduce_overhead_replays_cuda_graphs_that_match_numpy(torch_cuda, monkeypatch):
    """mode="reduce-overhead": the second call of an entry is captured in a CUDA graph, later calls
    replay it. A new batch at every call is copied in; weights are read where they are (a weight
    changed in place is seen); earlier results are not overwritten by later replays; a kernel of
    many stages (a transformer layer), cuBLAS calls and a reduction to one value capture too (all
    captured here: an entry of fewer launches than MIN_LAUNCHES otherwise runs as default mode)."""
    from hcompile import cuda_graphs
    torch = torch_cuda
    few = hc.hcompile(_softmax_rows, mode="reduce-overhead", fullgraph=True)
    x = torch.ones((8, 300), device="cuda")
    for _ in range(3):
        few(x)
    (entry,), = few._cuda._entries.values()
    assert "launches" in entry.graphed.failure and entry.graphed.captures == 0
    monkeypatch.setattr(cuda_graphs, "MIN_LAUNCHES", 1)
    rng = np.random.default_rng(31)
    cases = [(_softmax_rows, [rng.standard_normal((37, 129)).astype(np.float32)]),
             (W.transformer_layer, list(W.inputs_transformer_layer("small"))),
             (_gelu_mlp, _rng_inputs(rng, [(32, 512), (512, 1024), (1024,), (1024, 512), (512,)])),
             (_total, [rng.standard_normal((300, 400)).astype(np.float32)])]
    for fn, arrays in cases:
        f = hc.hcompile(fn, mode="reduce-overhead", fullgraph=True)
        tensors = [torch.from_numpy(a).cuda() for a in arrays]
        results = []
        for _ in range(4):
            batch = rng.standard_normal(arrays[0].shape).astype(np.float32)
            tensors[0] = torch.from_numpy(batch).cuda()
            results.append((f(*tensors), fn(batch, *arrays[1:])))
        if len(arrays) > 1:     # a weight changed in place
            tensors[1].mul_(2)
            arrays[1] = arrays[1] * 2
            results.append((f(*tensors), fn(batch, *arrays[1:])))
        for got, want in results:
            np.testing.assert_allclose(got.cpu().numpy(), want, rtol=2e-4, atol=2e-4 * max(1, np.abs(want).max()))
        graphed = [e.graphed for entries in f._cuda._entries.values() for e in entries]
        assert len(graphed) == 1 and graphed[0].failure is None, graphed[0].failure
        assert graphed[0].captures == 1 and graphed[0].replays == len(results) - 1
        # After the capture (the second call) the C++ dispatcher replays the graph (defaults too:
        # the transformer layer's `heads`).
        assert f._dispatcher.hits >= len(results) - 2, fn.__name__


@gpu
def test_reduce_overhead_replays_cupy_graphs_that_match_numpy(monkeypatch):
    """CuPy arrays are captured too (CuPy's stream capture): a new batch copied in at every call,
    the weight read in place, earlier results kept."""
    cupy = _cupy_cuda()
    if cupy is None:
        pytest.skip("no CUDA GPU with CuPy")
    from hcompile import cuda_graphs
    monkeypatch.setattr(cuda_graphs, "MIN_LAUNCHES", 1)
    rng = np.random.default_rng(32)
    arrays = _rng_inputs(rng, [(32, 512), (512, 1024), (1024,), (1024, 512), (512,)])
    f = hc.hcompile(_gelu_mlp, mode="reduce-overhead", fullgraph=True)
    weights = [cupy.asarray(a) for a in arrays[1:]]
    results, batches = [], []      # batches kept alive: CuPy's pool would hand a new one the last one's address
    for _ in range(4):
        batch = rng.standard_normal(arrays[0].shape).astype(np.float32)
        batches.append(cupy.asarray(batch))
        got = f(batches[-1], *weights)
        assert isinstance(got, cupy.ndarray)
        results.append((got, _gelu_mlp(batch, *arrays[1:])))
    for got, want in results:
        np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=2e-4, atol=2e-4 * max(1, np.abs(want).max()))
    (entry,), = f._cuda._entries.values()
    assert entry.graphed.failure is None, entry.graphed.failure
    assert entry.graphed.captures == 1 and entry.graphed.replays == 3


class _FakeCudaArray:
    """Says it lives on CUDA device 0 (DLPack) and refuses NumPy as a PyTorch CUDA tensor does."""

    def __dlpack_device__(self):
        return (2, 0)

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert cuda:0 device type tensor to numpy")


def test_python_on_cuda_arrays_says_why_it_ran_as_python(monkeypatch):
    """Where the GPU path cannot run a call (here: past the recompile limit), the function runs as
    Python on the CUDA arrays; NumPy's refusal then says so, and why."""
    from hcompile import cuda

    def refuse(self, args):
        raise hc.Unsupported("more than 8 CUDA argument types, shapes and outside values")
    monkeypatch.setattr(cuda.CudaEntries, "__call__", refuse)
    f = hc.hcompile(lambda x: np.exp(x) + 1)
    with pytest.raises(TypeError, match="ran as plain Python on CUDA arrays .*more than 8 CUDA.*raised: can't convert cuda"):
        f(_FakeCudaArray())


def _transpose_scale(x):
    return x.T * 2 + 1


def _swap_add(x, b):
    return np.swapaxes(x, 1, 2) + b


def _two_transposed(x, y, z):
    return x.T * y.T - z        # z read straight, x and y transposed


def _symmetrize(a):
    return (a + a.T) * 0.5      # read both ways: a copy of its tile serves the reads across only


def _antisymmetric_shifted(a, b):
    return a[1:, 1:] - a[:-1, :-1].T * b[1:, :-1].T + a[1:, 1:].T   # two arrays, both ways, two across


def _channels_first(img, scale):
    return np.transpose(img, (2, 0, 1)) * scale[:, None, None]   # HWC -> CHW: img's rows walked by C


def _channels_last(x):
    return np.transpose(x, (1, 2, 0)) - 1                       # CHW -> HWC: x's rows walked by W


def _nhwc_to_nchw(x):
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2)) * 2


# (function, shapes, staged): staged where the output's innermost axis has a warp's points and
# the axis walking the array's rows 16 or more.
TRANSPOSED_CASES = [(_transpose_scale, [(100, 37)], True), (_transpose_scale, [(64, 64)], True),
                    (_transpose_scale, [(1000, 33)], True), (_transpose_scale, [(33, 1000)], True),
                    (_swap_add, [(3, 50, 70), (50,)], True), (_two_transposed, [(70, 45), (70, 45), (45, 70)], True),
                    (_symmetrize, [(65, 65)], True), (_transpose_scale, [(7, 300)], False),
                    (_transpose_scale, [(300, 20)], True), (_transpose_scale, [(300, 12)], False),
                    (_channels_first, [(9, 40, 16), (16,)], True), (_channels_first, [(5, 70, 33), (33,)], True),
                    (_channels_first, [(3, 64, 16), (16,)], True), (_transpose_scale, [(64, 16)], True),
                    (_channels_first, [(6, 50, 3), (3,)], False), (_channels_last, [(40, 7, 35)], True),
                    (_nhwc_to_nchw, [(2, 5, 36, 24)], True), (_symmetrize, [(300, 300)], True),
                    (_antisymmetric_shifted, [(70, 70), (70, 70)], True)]


def test_arrays_read_transposed_are_staged_in_shared_memory():
    """A region reading an array across its rows (x.T, swapaxes, a permutation moving the array's
    innermost axis outwards) copies the array's tile per block into shared memory along its rows
    (coalesced), padded against bank conflicts; an array also read along its rows (a + a.T) has
    a copy of its tile that only the reads across use; too narrow a tile is read as it is."""
    for fn, shapes, staged in TRANSPOSED_CASES:
        for dtype in (np.float32, np.float64):
            f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
            f.compile_only(*_rng_inputs(np.random.default_rng(0), shapes, dtype))
            report = f.compile_records[-1]["report"]
            assert ("gpu_stage_transposed" in report["schedule"]) == staged, (fn.__name__, shapes, report["schedule"])
            assert ("bound_storage" in report["schedule_source"]) == staged
    straight = hc.hcompile(lambda x: x * 2 + 1, target=CUDA_TARGET, fullgraph=True)
    straight.compile_only(np.ones((64, 64), np.float32))
    assert "gpu_stage_transposed" not in straight.compile_records[-1]["report"]["schedule"]


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_transposed_reads_on_the_gpu_match_numpy(dtype, torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(31)
    for fn, shapes, _ in TRANSPOSED_CASES:
        args = _rng_inputs(rng, shapes, dtype)
        got = hc.hcompile(fn, fullgraph=True)(*[torch.from_numpy(a).cuda() for a in args]).cpu().numpy()
        want = fn(*args)
        assert got.dtype == want.dtype
        if dtype == np.int32:
            assert np.array_equal(got, want), fn.__name__
        else:
            assert np.array_equal(got, want, equal_nan=True), (fn.__name__, shapes)   # the same arithmetic


def test_gpu_vectors_of_64_bit_values_are_refused_not_a_crash():
    """LLVM's NVPTX back end aborts the process on some vectors of doubles (a transposed float64
    region of 300x20 in vectors of two did): a list asking for one is refused with a clear error,
    and the rule gives float64 regions one point a thread where float32 ones get two."""
    vectored = [(0, "compute_root", -1, 0, 0), (0, "gpu_tile", -1, 32, 8), (0, "gpu_vector", -1, 2, 0)]
    f = hc.hcompile(lambda x: x.T * 2 + 1, target=CUDA_TARGET, fullgraph=True, schedule=vectored)
    with pytest.raises(hc.CompileError, match="narrower than 64 bits"):
        f.compile_only(np.zeros((300, 20)))
    for dtype, points in ((np.float32, 2), (np.float64, 1)):
        rule = hc.hcompile(lambda x: x.T * 2 + 1, target=CUDA_TARGET, fullgraph=True)
        rule.compile_only(np.zeros((300, 20), dtype))
        vector = [d for d in rule.compile_records[-1]["report"]["decisions"] if d[1] == "gpu_vector"]
        assert vector and vector[0][3] == points, (dtype, vector)


def _random_transposed_programs(seed, count):
    """(source, shapes) of small programs reading arrays across their rows: a permutation that
    moves the innermost axis (x.T, swapaxes, channels-first), alone or beside the same array read
    along its rows (a + a.T, shifted slices of both), with broadcast operands, odd sizes."""
    rng = np.random.default_rng(seed)
    sizes = [1, 2, 3, 16, 17, 31, 32, 33, 64, 70]
    ops = ["+", "-", "*"]
    out = []
    while len(out) < count:
        kind = rng.integers(0, 4)
        n, m = (int(rng.choice(sizes)) for _ in range(2))
        op = ops[rng.integers(0, len(ops))]
        if kind == 0:     # x.T with a row operand
            out.append((f"return a.T {op} b", [(n, m), (n,)]))
        elif kind == 1:   # read both ways, maybe shifted, maybe twice across
            shift = int(rng.integers(0, 2))
            if shift and n > 1:
                out.append((f"return a[1:, 1:] {op} a[:-1, :-1].T * 0.5 + a[1:, 1:].T", [(n, n)]))
            else:
                out.append((f"return (a {op} a.T) * 0.5 + b.T", [(n, n), (n, n)]))
        elif kind == 2:   # a 3-D swap of the two innermost axes, both ways
            k = int(rng.choice([1, 2, 5]))
            out.append((f"return np.swapaxes(a, 1, 2) {op} a", [(k, n, n)]))
        else:             # channels-last to channels-first, with a per-channel scale
            c = int(rng.choice([3, 16, 33]))
            out.append((f"return np.transpose(a, (2, 0, 1)) {op} b[:, None, None]", [(n, m, c), (c,)]))
    return out


def test_random_transposed_reads_compile_for_the_gpu():
    """Staged transposed reads (and reads both ways) compile for the GPU at odd sizes, their
    schedules accepted by the directives: no refusal, no abort of the process."""
    for source, shapes in _random_transposed_programs(5, 24):
        ns = {"np": np}
        exec("def f(a, b=None):\n    " + source, ns)   # noqa: S102 - the test's own programs
        for dtype in (np.float32, np.float64):
            f = hc.hcompile(ns["f"], target=CUDA_TARGET, fullgraph=True)
            f.compile_only(*_rng_inputs(np.random.default_rng(0), shapes, dtype))


@gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.float16])
def test_random_transposed_reads_on_the_gpu_match_numpy(dtype, torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(47)
    for source, shapes in _random_transposed_programs(6, 24):
        ns = {"np": np}
        exec("def f(a, b=None):\n    " + source, ns)   # noqa: S102 - the test's own programs
        args = _rng_inputs(rng, shapes, dtype)
        want = ns["f"](*args)
        got = hc.hcompile(ns["f"], fullgraph=True)(*[torch.from_numpy(a).cuda() for a in args]).cpu().numpy()
        assert got.dtype == want.dtype and got.shape == want.shape, source
        assert np.array_equal(got, want, equal_nan=True), (source, shapes)   # the same arithmetic


def _by_row_sums(x):
    return x / x.sum(axis=-1, keepdims=True)


def _by_scalar(x, s):
    return x / s


def _by_column(x, v):
    return x / v[:, None]


def test_a_division_by_a_scalar_corrects_a_product_in_kernels():
    """A float32 division by a scalar multiplies by the divisor's reciprocal and corrects the
    product with fused multiply-adds inside the kernel, the IEEE division kept for operands out of
    range; other divisors (a row's value, an array's) divide as before. PTX only, no GPU needed."""
    program = """
import numpy as np, hcompile as hc
from tests.python.test_cuda import _by_row_sums, _by_scalar, _by_column, CUDA_TARGET
x = np.ones((4096, 1024), np.float32)
hc.hcompile(_by_scalar, target=CUDA_TARGET, fullgraph=True).compile_only(x, np.float32(3))
hc.hcompile(_by_column, target=CUDA_TARGET, fullgraph=True).compile_only(x, np.ones(4096, np.float32))
hc.hcompile(lambda a, b: a / b, target=CUDA_TARGET, fullgraph=True).compile_only(x, x)
"""
    by_scalar, by_column, elementwise = _kernels_ptx(program)
    assert by_scalar.count("fma.rn.f32") >= 8 and "div.rn.f32" in by_scalar, by_scalar[:300]
    for ptx in (by_column, elementwise):
        assert "fma.rn.f32" not in ptx and "div.rn.f32" in ptx


def _awkward_floats(rng, shape):
    """float32 values of every kind: random bits over every exponent (subnormals, zeros, infinities
    and NaNs among them), and ordinary values of random signs, mixed."""
    bits = rng.integers(0, 2 ** 32, size=shape, dtype=np.uint64).astype(np.uint32).view(np.float32)
    ordinary = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, size=shape)).astype(np.float32)
    out = np.where(rng.random(shape) < 0.3, bits, ordinary)
    out.flat[:: 7] = 0.0
    out.flat[1:: 11] = -0.0
    return out.astype(np.float32)


@gpu
def test_a_division_by_a_scalar_is_numpys_bit_for_bit_on_the_gpu(torch_cuda):
    """Awkward numerators and divisors of every kind; widths the vectors do not divide (a masked
    tail: a branch on its lanes had dropped the tail's stores)."""
    torch = torch_cuda
    rng = np.random.default_rng(61)
    x = _awkward_floats(rng, (4099, 1024))
    v = _awkward_floats(rng, (4099,))
    v[:64] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-40, 3e38, 2.0 ** -24, 2.0 ** 24, 2.0 ** -25,
              2.0 ** 25, 1.0, -1.0, 3.0, 255.0] * 4
    counts = rng.integers(0, 1000, size=(4099, 512)).astype(np.float32)   # sums exact in any order
    counts[:, ::3] = 0.0
    ordinary = rng.standard_normal((4099, 2048)).astype(np.float32)
    cases = [(_by_column, (x, v)), (_by_row_sums, (counts,)), (_layernorm_rows, (ordinary[:, :768],)),
             (_softmax_rows, (ordinary,)), (W.blur3x3, (ordinary[:, :1022],)), (W.blur3x3, (x[:, :1023],))]
    cases += [(_by_scalar, (a, np.float32(s))) for s in (3.0, -7.0, 1e-30, 1e30, 0.0, -0.0, np.inf, np.nan, 2.0 ** -24,
                                                         2.0 ** 25) for a in (x, x[:, :1021])]
    with np.errstate(all="ignore"):
        for fn, args in cases:
            want = fn(*args)
            got = hc.hcompile(fn, fullgraph=True)(*[torch.from_numpy(np.ascontiguousarray(a)).cuda()
                                                    if isinstance(a, np.ndarray) and a.ndim else a for a in args])
            got = got.cpu().numpy()
            if fn in (_layernorm_rows, _softmax_rows):   # sums in another order: the divisions' inputs differ
                finite = np.isfinite(want)
                assert np.array_equal(np.isnan(got), np.isnan(want)), fn.__name__
                assert np.allclose(got[finite], want[finite], rtol=1e-5, atol=1e-6), fn.__name__
            else:
                assert np.array_equal(got.view(np.uint32)[~np.isnan(want)], want.view(np.uint32)[~np.isnan(want)]), \
                    (fn.__name__, args[-1] if fn is _by_scalar else "")
                assert np.array_equal(np.isnan(got), np.isnan(want)), fn.__name__


def test_a_threads_reduction_keeps_its_loads_in_flight():
    """A reduction a thread an output (down columns: each of the chunked levels) unrolls a float
    sum's blocks of 32 elements and up to eight steps of the others, so that a thread's loads
    issue together: one at a time, the small last levels waited out a load's latency per element
    (27 us of std over 2M x 64 on an H200). PTX only, no GPU needed."""
    program = """
import numpy as np, hcompile as hc
from tests.python.test_cuda import CUDA_TARGET
for fn in (lambda a: a.sum(axis=0), lambda a: a.max(axis=0), lambda a: (a > 0).any(axis=0)):
    hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True).compile_only(np.ones((2097152, 64), np.float32))
"""
    kernels = [k for ptx in _kernels_ptx(program) for k in re.split(r"\.visible \.entry", ptx)[1:]]
    assert len(kernels) == 9, len(kernels)
    for kernel, least in zip(kernels, [32] * 3 + [8] * 6):
        assert kernel.count("ld.global") >= least, (kernel.split("(")[0], kernel.count("ld.global"))


# Kernels over 8-bit arrays that the LLVM inside Halide 21 aborted the process on, compiling for
# NVPTX (an assertion in APInt::extractBits): a vector of bytes read backwards, and four
# neighbouring bytes a thread reads one by one, which LLVM's SLP vectorizer made a 4-byte vector
# (core/src/lowering/gpu_narrow_vectors.cpp). Compiled in a child process: an abort would end it,
# not the test run.
_BYTE_KERNELS = [("x + y[::-1]", (300,)), ("x & y[::-1]", (300,)), ("(x & y)[::-1] | x", (17,)),
                 ("(x & y).any(axis=1)", (5, 4)), ("(x ^ y).all(axis=-1)", (300, 4)),
                 ("np.logical_and(x, y).any(axis=1)", (3, 4)), ("np.vecdot(x, y)", (3, 4)),
                 ("x[:, ::-1] & y", (6, 8))]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8"])
def test_byte_array_kernels_compile_for_cuda(dtype):
    script = "\n".join([
        "import numpy as np, hcompile as hc",
        f"for src, shape in {_BYTE_KERNELS!r}:",
        f"    args = [np.ones(shape, {dtype!r}), np.ones(shape, {dtype!r})]",
        "    fn = eval('lambda x, y: ' + src)",
        f"    hc.hcompile(fn, target={CUDA_TARGET!r}, fullgraph=True).compile_only(*args)",
        "    print('compiled', src, flush=True)",
    ])
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.count("compiled") == len(_BYTE_KERNELS)
