"""Dynamic shapes on the GPU (frontend/hcompile/cuda_shapes.py), and calls the GPU path cannot
run, which run as Python on host copies of the CUDA arrays (cuda.run_on_host_copies).

The compile checks run everywhere (Halide generates CUDA code without a GPU); the calls need a
CUDA GPU with PyTorch (marked gpu, skipped without one)."""
import numpy as np
import pytest

import hcompile as hc
from hcompile import cuda_shapes

CUDA_TARGET = "host-cuda-cuda_capability_86"
gpu = pytest.mark.gpu


def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _blur_rows(x):
    return (x[1:-1, :-2] + x[1:-1, 1:-1] + x[1:-1, 2:]) / 3


def _centred_layer(x, w, b):
    h = np.maximum(x @ w + b, 0)
    return h - h.mean(axis=0)


def _layernorm(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def _blur3x3(x):
    h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
    return (h[:-2] + h[1:-1] + h[2:]) / 3


def _tiny(x):
    y = 1 / (1 + np.exp(-(x * 2 + 1)))
    return np.tanh(y * y) / (np.abs(y) + 1)


def _head(x):
    return x[:5] * 2


# -- compiling, without a GPU ------------------------------------------------------------------

def test_dynamic_true_compiles_a_cuda_kernel_for_any_size():
    f = hc.hcompile(_blur_rows, target=CUDA_TARGET, dynamic=True)
    f.compile_only(np.ones((40, 70), np.float32))
    record = f.compile_records[-1]
    assert record["report"] is not None and record["dynamic"].startswith("dynamic:"), record.get("dynamic")
    entry = f._cuda._generic[0].entry
    assert cuda_shapes.is_symbolic(entry.kernel)
    # The guard takes any size from 3 (the slices keep an element); the outputs' shapes are
    # read from the call's array.
    assert f._cuda._generic[0].specs[0][3] == (-3, -3)
    assert entry.result.outputs_for([np.empty((9, 1000))]) == [((7, 998), np.dtype(np.float32))]


def test_a_size_that_alone_changed_makes_the_cuda_entry_generic():
    f = hc.hcompile(_centred_layer, target=CUDA_TARGET)
    w, b = np.ones((16, 24), np.float32), np.ones(24, np.float32)
    f.compile_only(np.ones((8, 16), np.float32), w, b)
    assert "dynamic" not in f.compile_records[-1] and not f._cuda._generic
    f.compile_only(np.ones((12, 16), np.float32), w, b)
    assert f.compile_records[-1]["dynamic"].startswith("dynamic: argument 0 axis 0")
    generic = f._cuda._generic[0]
    assert generic.specs[0][3] == (-2, 16) and generic.specs[1][3] == (16, 24)
    head = generic.head
    accepts = lambda *arrays: generic.accepts(head, cuda_shapes.specs_of(arrays, [None] * 3), arrays)  # noqa: E731
    assert accepts(np.ones((1000, 16), np.float32), w, b)
    assert not accepts(np.ones((1, 16), np.float32), w, b)     # sizes 0 and 1 stay specialised
    assert not accepts(np.ones((1000, 17), np.float32), w, b)  # a static axis
    assert not accepts(np.ones((1000, 16), np.float64), w, b)


def test_what_cannot_be_generic_keeps_its_shapes_on_the_gpu():
    f = hc.hcompile(_head, target=CUDA_TARGET, dynamic=True)
    f.compile_only(np.ones((40, 7), np.float32))
    record = f.compile_records[-1]
    assert record["report"] is not None
    assert record["dynamic"].startswith("static shapes") or "axis 0" not in record["dynamic"]


def test_dynamic_false_keeps_every_gpu_shape():
    f = hc.hcompile(_softmax, target=CUDA_TARGET, dynamic=False)
    f.compile_only(np.ones((8, 40), np.float32))
    f.compile_only(np.ones((9, 40), np.float32))
    assert not f._cuda._generic and "dynamic" not in f.compile_records[-1]


# -- calls on a GPU ----------------------------------------------------------------------------

def _close(got, want, rtol=2e-5):
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * max(1.0, float(np.abs(want).max(initial=0))))


@gpu
@pytest.mark.parametrize("dynamic", [None, True])
@pytest.mark.parametrize("fn,make", [
    (_softmax, lambda rng, n: (rng.standard_normal((n, 3 * n // 2 + 1)),)),
    (_blur_rows, lambda rng, n: (rng.standard_normal((n + 2, 2 * n + 5)),)),
    (_centred_layer, lambda rng, n: (rng.standard_normal((4 * n, 96)), rng.standard_normal((96, 2 * n + 64)),
                                      rng.standard_normal(2 * n + 64))),
    (_softmax, lambda rng, n: (rng.standard_normal((n, 300)),)),
    (_layernorm, lambda rng, n: (rng.standard_normal((n, 1000)), rng.standard_normal(1000), rng.standard_normal(1000))),
    (_layernorm, lambda rng, n: (rng.standard_normal((n, 2 * n + 7)), rng.standard_normal(2 * n + 7),
                                 rng.standard_normal(2 * n + 7))),
    (_blur_rows, lambda rng, n: (rng.standard_normal((n + 2, 517)),)),
    (_tiny, lambda rng, n: (rng.standard_normal((n, 1000)),)),
    (_blur3x3, lambda rng, n: (rng.standard_normal((n + 2, 301)),)),
], ids=["softmax", "blur", "layer", "softmax_batch", "layernorm_batch", "layernorm", "blur_batch", "tiny_batch",
        "blur3x3_batch"])
def test_many_sizes_run_one_generic_kernel(fn, make, dynamic, torch_cuda):
    """Twelve sizes (past the recompile limit of 8) on one to three compiled entries (the first
    shapes', the one for any size and, where that one runs blocks of several rows, the one below
    them), each result NumPy's; the same for float64."""
    torch = torch_cuda
    rng = np.random.default_rng(3)
    f = hc.hcompile(fn, dynamic=dynamic, fullgraph=True)
    for dtype in (np.float32, np.float64):
        for n in (16, 40, 2, 3, 77, 130, 8, 512, 33, 250, 5, 1000):
            args = [a.astype(dtype) for a in make(rng, n)]
            got = f(*[torch.from_numpy(a).cuda() for a in args])
            assert isinstance(got, torch.Tensor) and got.is_cuda
            _close(got.cpu().numpy(), fn(*args), 2e-5 if dtype == np.float32 else 1e-11)
    assert f._cuda._compiles <= 6 and len(f._cuda._generic) >= 1


@gpu
def test_reduce_overhead_captures_a_graph_per_shape_of_a_generic_entry(torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(4)

    def deep(x):
        for _ in range(8):
            x = np.tanh(x - x.mean(axis=-1, keepdims=True)) * 1.5
        return x
    f = hc.hcompile(deep, mode="reduce-overhead", dynamic=True, fullgraph=True)
    for n in (64, 64, 64, 96, 96, 96, 64, 64, 96, 96):
        x = rng.standard_normal((n, 200)).astype(np.float32)
        _close(f(torch.from_numpy(x).cuda()).cpu().numpy(), deep(x), 1e-4)
    (generic,) = f._cuda._generic
    if generic.entry.launches >= hc.cuda_graphs.MIN_LAUNCHES:
        graphs = generic.entry.graphs
        assert sorted(s[0][0] for s in graphs) == [64, 96]
        assert all(g.failure is None and g.replays >= 1 and g.dispatched for g in graphs.values())
        # Each shape's graph, once it replays, is the C++ dispatcher's (guarded on its shape).
        assert f._dispatcher.hits >= 4


@gpu
def test_past_the_recompile_limit_a_call_runs_on_host_copies(torch_cuda, caplog):
    """A function that cannot be generic over its sizes compiles each shape; past the limit its
    calls run as Python on host copies: NumPy's answer, back on the device as tensors, and the
    arrays it writes copied into the caller's."""
    torch = torch_cuda
    rng = np.random.default_rng(5)

    def head_into(x, out):
        out[...] = x[:5] * 2
        return out.sum()
    f = hc.hcompile(head_into)
    for n in range(6, 20):
        x = rng.standard_normal((n, 3)).astype(np.float32)
        out = torch.zeros((5, 3), device="cuda")
        with caplog.at_level("WARNING"):
            total = f(torch.from_numpy(x).cuda(), out)
        np.testing.assert_allclose(out.cpu().numpy(), x[:5] * 2, rtol=1e-6)
        assert isinstance(total, torch.Tensor) and total.is_cuda
        np.testing.assert_allclose(float(total), float((x[:5] * 2).sum()), rtol=1e-5)
    assert "ran as Python on host copies" in caplog.text


@gpu
def test_the_cpp_dispatcher_runs_a_generic_entry_at_new_sizes(torch_cuda, monkeypatch):
    """Once compiled for any size, PyTorch calls at sizes never seen run from the C++ dispatcher
    (its guards take any size from the least; outputs sized per call), not cuda.py."""
    from hcompile import cuda
    torch = torch_cuda
    rng = np.random.default_rng(6)
    f = hc.hcompile(_blur_rows, fullgraph=True)
    for n in (16, 40):
        x = rng.standard_normal((n, n + 9)).astype(np.float32)
        _close(f(torch.from_numpy(x).cuda()).cpu().numpy(), _blur_rows(x))

    def refuse(*args, **kwargs):
        raise AssertionError("the call came through cuda.py")
    monkeypatch.setattr(cuda.CudaEntries, "_run", refuse)
    for n in (3, 77, 1000):
        x = rng.standard_normal((n, 2 * n + 1)).astype(np.float32)
        _close(f(torch.from_numpy(x).cuda()).cpu().numpy(), _blur_rows(x))
    monkeypatch.undo()
    # Below the least size (a slice would be empty) the guard refuses: compiled for that shape.
    x = rng.standard_normal((2, 5)).astype(np.float32)
    _close(f(torch.from_numpy(x).cuda()).cpu().numpy(), _blur_rows(x))


def test_rows_of_any_length_run_a_block_per_row_their_members_recomputed():
    """Rows of any length keep one block per row (the grid's x takes any number of rows): the row
    reductions in it, the elementwise members recomputed where read (no shared memory can be sized
    for a row of any length). Separate kernels took 2.3x (softmax) and 3.5x (layer norm) the
    static kernel's time on an H200. A reduction alone takes a block per output, its block loops
    fused into the grid's x, not a thread per row, which took 13x the static kernel's time."""
    f = hc.hcompile(_softmax, target=CUDA_TARGET, dynamic=True)
    f.compile_only(np.ones((300, 70), np.float32))
    assert f._cuda._generic
    schedule = f.compile_records[-1]["report"]["schedule"]
    assert schedule.count("gpu_rows: a block of 256 threads per row") == 1, schedule
    assert schedule.count("compute_at_row") == 2 and "inline into its consumers" in schedule, schedule
    layer = hc.hcompile(_layernorm, target=CUDA_TARGET, dynamic=True)
    layer.compile_only(np.ones((300, 70), np.float32), np.ones(70, np.float32), np.ones(70, np.float32))
    assert layer._cuda._generic and "compute_at_row" in layer.compile_records[-1]["report"]["schedule"]
    sums = hc.hcompile(lambda x: x.sum(axis=-1), target=CUDA_TARGET, dynamic=True)
    sums.compile_only(np.ones((30, 20, 70), np.float32))
    assert sums._cuda._generic
    assert ".gpu_blocks(gpu_rows_fused)" in sums.compile_records[-1]["report"]["schedule_source"]


@gpu
def test_cupy_arrays_of_many_sizes_run_one_generic_kernel():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no CUDA GPU with CuPy")
    except Exception:
        pytest.skip("no CUDA GPU with CuPy")
    rng = np.random.default_rng(7)
    f = hc.hcompile(_softmax, fullgraph=True)
    for n in (20, 33, 2, 300, 64, 5, 1000, 17, 90, 4):
        x = rng.standard_normal((n, n // 2 + 3)).astype(np.float32)
        got = f(cupy.asarray(x))
        assert isinstance(got, cupy.ndarray)
        _close(cupy.asnumpy(got), _softmax(x))
    assert f._cuda._compiles <= 3 and f._cuda._generic
    # The generic kernel serves later sizes from the C++ dispatcher, its outputs sized per call.
    hits = f._dispatcher.hits
    for n in (41, 77, 260):
        x = rng.standard_normal((n, n // 2 + 3)).astype(np.float32)
        _close(cupy.asnumpy(f(cupy.asarray(x))), _softmax(x))
    assert f._dispatcher.hits == hits + 3


def test_a_batch_of_any_size_keeps_rows_fused_in_one_block():
    """Where only the number of rows is dynamic (a batch), a row still fits shared memory: softmax
    and layer norm keep one block per row with their members in it (the grid's x takes any
    number of rows)."""
    for fn, rest in ((_softmax, ()), (_layernorm, (np.ones(512, np.float32), np.ones(512, np.float32)))):
        f = hc.hcompile(fn, target=CUDA_TARGET)
        f.compile_only(np.ones((300, 512), np.float32), *rest)
        f.compile_only(np.ones((200, 512), np.float32), *rest)
        record = f.compile_records[-1]
        assert record["dynamic"].startswith("dynamic: argument 0 axis 0 ("), record["dynamic"]
        assert "compute_at_row" in record["report"]["schedule"] and "gpu_rows" in record["report"]["schedule"]


def _row_sums(x):
    return x.sum(axis=-1)


def _row_var(x):
    return x.var(axis=-1)


@pytest.mark.parametrize("fn,rest", [(_softmax, ()), (_layernorm, (np.ones(64, np.float32), np.ones(64, np.float32))),
                                     (_row_sums, ()), (_row_var, ())], ids=["softmax", "layernorm", "sum", "var"])
def test_a_batch_of_short_rows_of_any_size_runs_blocks_of_rows(fn, rest):
    """Short rows of a static length, their count any: blocks of several rows in a warp's lanes, as
    for a static count (a row a block took 7x as long over rows of 64 on an H200). The last block
    ends at the last row, so the entry's guard asks for a block's rows; a smaller batch compiles
    the entry below that count, a row a block, and a larger one finds the first again."""
    f = hc.hcompile(fn, target=CUDA_TARGET)
    f.compile_only(np.ones((3000, 64), np.float32), *rest)
    f.compile_only(np.ones((2000, 64), np.float32), *rest)
    record = f.compile_records[-1]
    decisions = [tuple(d) for d in record["report"]["decisions"]]
    block_rows = max(d[4] for d in decisions if d[1] == "gpu_rows")
    assert block_rows > 1 and any(d[1] == "gpu_warp_rows" for d in decisions), decisions
    assert record["report"]["symbol_least"] == [block_rows] and f"from {block_rows})" in record["dynamic"]
    generic = f._cuda._generic[-1]
    assert generic.specs[0][3] == (-block_rows, 64) and not [r for r in generic.relations if r[0] == "extent_below"]
    f.compile_only(np.ones((5, 64), np.float32), *rest)
    below = f._cuda._generic[-1]
    assert below.specs[0][3] == (-2, 64) and ("extent_below", 0, 0, True, 0, block_rows) in below.relations
    assert not any(d[1] == "gpu_warp_rows" or d[4] > 1 for d in f.compile_records[-1]["report"]["decisions"]
                   if d[1] == "gpu_rows")
    head = generic.head
    for rows, which in ((block_rows - 1, below), (block_rows, generic), (2, below), (10**5, generic)):
        args = [np.ones((rows, 64), np.float32), *rest]
        specs = cuda_shapes.specs_of(args, [None] * len(args))
        assert [g for g in (generic, below) if g.accepts(head, specs, args)] == [which], rows


@gpu
@pytest.mark.parametrize("fn", [_softmax, _layernorm, _row_sums, _row_var], ids=lambda f: f.__name__)
@pytest.mark.parametrize("length", [64, 100, 1024])
def test_batches_of_short_rows_on_either_side_of_a_block_run_right(fn, length, torch_cuda):
    """Batch sizes below, at and above a block's rows, small ones first and again after large
    ones, each answer NumPy's: the entry for any size from a block's rows and the one below it
    (two compiles past the first shapes), the calls after their first through the C++ dispatcher."""
    torch = torch_cuda
    rng = np.random.default_rng(length)
    f = hc.hcompile(fn, fullgraph=True)
    rest = [rng.standard_normal(length).astype(np.float32) for _ in range(2)] if fn is _layernorm else []
    for rows in (5, 3, 4096, 2, 700, 15, 16, 17, 9999, 7, 33, 3, 4096, 8, 32):
        x = rng.standard_normal((rows, length)).astype(np.float32)
        got = f(torch.from_numpy(x).cuda(), *[torch.from_numpy(r).cuda() for r in rest])
        _close(got.cpu().numpy(), fn(x, *rest), 2e-5)
    assert f._cuda._compiles <= 4, f.compile_records


@pytest.mark.parametrize("fn,rest", [(_softmax, ()), (_layernorm, (np.ones(64, np.float32), np.ones(64, np.float32))),
                                     (_row_sums, ()), (_row_var, ())], ids=["softmax", "layernorm", "sum", "var"])
def test_a_three_dimensional_batch_of_any_size_runs_blocks_of_rows_in_the_grids_x(fn, rest):
    """(batch, tokens, features), row-wise over the features, the batch of any size: the rows keep
    their blocks of several rows in a warp's lanes, as for static shapes (a row group and blocks
    of rows were refused for a symbolic axis past the rows', four kernels on the GPU). Only the
    grid's x holds any number of blocks: the rows' blocks and the batch's loop are fused into it."""
    f = hc.hcompile(fn, target=CUDA_TARGET)
    f.compile_only(np.ones((64, 512, 64), np.float32), *rest)
    f.compile_only(np.ones((33, 512, 64), np.float32), *rest)
    record = f.compile_records[-1]
    assert record["dynamic"].startswith("dynamic: argument 0 axis 0 ("), record["dynamic"]
    report = record["report"]
    decisions = [tuple(d) for d in report["decisions"]]
    assert any(d[1] == "gpu_warp_rows" for d in decisions) and max(d[4] for d in decisions if d[1] == "gpu_rows") > 1
    assert report["symbol_least"] == [0], report["symbol_least"]
    assert ".fuse(gpu_row_block, " in report["schedule_source"] and ".gpu_blocks(gpu_rows_fused);" in report["schedule_source"]
    generic = f._cuda._generic[-1]
    assert generic.specs[0][3] == (-2, 512, 64) and generic.relations == []


def test_a_batch_and_rows_both_of_any_size_run_blocks_of_rows():
    """Batch and tokens both of any size: blocks of rows along the tokens, fused with the batch's
    loop into the grid's x. The entry's guard asks for a block's rows; fewer compile the entry
    below them, a row a block, which larger calls never take."""
    f = hc.hcompile(_softmax, target=CUDA_TARGET)
    f.compile_only(np.ones((64, 512, 64), np.float32))
    f.compile_only(np.ones((33, 257, 64), np.float32))
    report = f.compile_records[-1]["report"]
    block_rows = max(d[4] for d in report["decisions"] if d[1] == "gpu_rows")
    assert block_rows > 1 and report["symbol_least"] == [0, block_rows], report["symbol_least"]
    assert ".gpu_blocks(gpu_rows_fused);" in report["schedule_source"]
    generic = f._cuda._generic[-1]
    assert generic.specs[0][3] == (-2, -block_rows, 64) and generic.relations == []
    f.compile_only(np.ones((3, block_rows - 1, 64), np.float32))   # fewer rows than a block
    below = f._cuda._generic[-1]
    assert below.relations == [("extent_below", 0, 0, True, 1, block_rows)]
    assert all(d[4] <= 1 for d in f.compile_records[-1]["report"]["decisions"] if d[1] == "gpu_rows")
    for shape, which in (((3, 100, 64), generic), ((70000, block_rows, 64), generic), ((3, block_rows - 1, 64), below),
                         ((3, 2, 64), below)):
        args = [np.empty(shape, np.float32)]
        specs = cuda_shapes.specs_of(args, [None])
        assert [g for g in (generic, below) if g.accepts(g.head, specs, args)] == [which], shape


@gpu
@pytest.mark.parametrize("fn", [_softmax, _layernorm, _row_sums, _row_var], ids=lambda f: f.__name__)
@pytest.mark.parametrize("length", [64, 100, 1024])
def test_three_dimensional_batches_of_any_size_run_right(fn, length, torch_cuda):
    """(batch, tokens, features) calls whose batch, then tokens too, change, tokens below a block's
    rows among them, each answer NumPy's; at most four compiles (the static first shapes, the
    batch of any size, batch and tokens of any size, and the entry for tokens below a block)."""
    torch = torch_cuda
    rng = np.random.default_rng(length + 1)
    f = hc.hcompile(fn, fullgraph=True)
    rest = [rng.standard_normal(length).astype(np.float32) for _ in range(2)] if fn is _layernorm else []
    for batch, tokens in ((4, 40), (7, 40), (2, 40), (9, 40), (5, 33), (3, 700), (6, 3), (2, 16), (11, 17), (3, 5),
                          (8, 40)):
        x = rng.standard_normal((batch, tokens, length)).astype(np.float32)
        got = f(torch.from_numpy(x).cuda(), *[torch.from_numpy(r).cuda() for r in rest])
        _close(got.cpu().numpy(), fn(x, *rest), 2e-5)
    assert f._cuda._compiles <= 4, f.compile_records


def test_batch_and_heads_of_any_size_fuse_every_block_loop_past_the_rows():
    """(batch, heads, tokens, features), as attention's softmax is: with the batch and the heads of
    any size, the tokens' blocks of rows and both their loops are one loop, the grid's x."""
    f = hc.hcompile(_softmax, target=CUDA_TARGET)
    f.compile_only(np.ones((4, 8, 64, 64), np.float32))
    f.compile_only(np.ones((3, 5, 64, 64), np.float32))
    report = f.compile_records[-1]["report"]
    assert any(d[1] == "gpu_warp_rows" for d in report["decisions"]), report["schedule"]
    fused = [line.split(".", 1)[1] for line in report["schedule_source"].splitlines() if ".fuse(" in line]
    assert fused == ["fuse(gpu_row_block, n7_a1, gpu_rows_2);", "fuse(gpu_rows_2, n7_a0, gpu_rows_fused);"], fused


@gpu
def test_four_dimensional_batches_of_any_size_run_right(torch_cuda):
    """Attention-shaped softmax calls, (batch, heads, tokens, tokens or features), whose sizes change
    one axis, then several, at a time, each answer NumPy's."""
    torch = torch_cuda
    rng = np.random.default_rng(4)
    f = hc.hcompile(_softmax, fullgraph=True)
    for shape in ((2, 4, 40, 64), (3, 4, 40, 64), (5, 4, 40, 64), (3, 2, 40, 64), (2, 3, 17, 64), (4, 5, 3, 64),
                  (2, 2, 9, 9), (3, 4, 33, 33), (6, 4, 40, 64)):
        x = rng.standard_normal(shape).astype(np.float32)
        _close(f(torch.from_numpy(x).cuda()).cpu().numpy(), _softmax(x))


def test_a_batch_of_any_size_keeps_a_two_dimensional_grid():
    """Elementwise and stencil tiles of any number of rows under static columns: the row tiles
    are the grid's x (any number of blocks), the column tiles its y, no block loop fused."""
    for fn in (_tiny, _blur_rows, _blur3x3):
        f = hc.hcompile(fn, target=CUDA_TARGET)
        f.compile_only(np.ones((300, 1000), np.float32))
        f.compile_only(np.ones((200, 1000), np.float32))
        report = f.compile_records[-1]["report"]
        assert f.compile_records[-1]["dynamic"].startswith("dynamic: argument 0 axis 0 (")
        assert ".reorder(gpu_block_y, gpu_block_x)" in report["schedule_source"], report["schedule_source"]
        assert ".fuse(" not in report["schedule_source"]
    # The 3x3 blur keeps its stencil rows: four a thread, each row's window loaded once.
    assert "4 points x 4 rows per thread" in report["schedule"], report["schedule"]


def _normalise_into(x, out):
    out[...] = (x - x.mean(axis=-1, keepdims=True)) * 2
    return out


def _branchy(x):
    s = x.sum()
    if s > 0:               # a graph break: the sum is read back from the device
        return x * 2
    return x - 1


@gpu
def test_generic_entries_that_write_or_break_on_the_gpu(torch_cuda):
    """Sizes changing under a function that writes into its argument, and under one with a graph
    break: every result NumPy's, the written tensor the caller's, on a few compiles."""
    torch = torch_cuda
    rng = np.random.default_rng(8)
    writer, breaker = hc.hcompile(_normalise_into), hc.hcompile(_branchy)
    for n in (8, 12, 3, 100, 47, 2, 64, 9, 30, 5):
        x = rng.standard_normal((n, 40)).astype(np.float32)
        out = torch.empty((n, 40), device="cuda")
        assert writer(torch.from_numpy(x).cuda(), out) is out
        _close(out.cpu().numpy(), _normalise_into(x, np.empty_like(x)), 1e-5)
        for sign in (1, -1):
            y = sign * np.abs(x)
            _close(breaker(torch.from_numpy(y).cuda()).cpu().numpy(), _branchy(y), 1e-6)
    assert writer._cuda._compiles <= 3 and writer._cuda._generic


class _FakeDeviceArray:
    """Stands for a CUDA array without a GPU (DLPack device 2, CUDA): its values a NumPy array."""

    def __init__(self, values):
        self.values = values

    def __dlpack_device__(self):
        return (2, 0)

    @property
    def shape(self):
        return self.values.shape

    def clone(self):                       # a method NumPy's arrays lack (PyTorch's)
        return _FakeDeviceArray(self.values.copy())


class _FakeLibrary:
    name = "fake"

    def to_host(self, a):
        return a.values.copy()

    def to_device(self, host, device):
        return _FakeDeviceArray(np.array(host))

    def copy_into(self, destination, source):
        destination.values[...] = source.values

    def byte_range(self, a):
        start = a.values.__array_interface__["data"][0]
        return start, start + a.values.nbytes


def test_calls_the_gpu_path_refuses_run_on_host_copies(monkeypatch):
    """Past the recompile limit (here: every call refused) a call runs as Python on host copies of
    its CUDA arrays: NumPy's answer, written arrays copied back, results moved to the device, an
    argument returned as the caller's own; arrays sharing memory, or code that needs the
    library's own arrays, run on the CUDA arrays themselves."""
    from hcompile import cuda
    library = _FakeLibrary()
    monkeypatch.setattr(cuda._Library, "of", staticmethod(lambda a: library if isinstance(a, _FakeDeviceArray) else None))

    def refuse(self, args):
        raise hc.Unsupported("more than 8 CUDA argument types, shapes and outside values")
    monkeypatch.setattr(cuda.CudaEntries, "__call__", refuse)

    def scale_into(x, out):
        out[...] = np.exp(x) * 2
        return out, x.sum()
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    out = _FakeDeviceArray(np.zeros((3, 4), np.float32))
    returned, total = hc.hcompile(scale_into)(_FakeDeviceArray(x), out)
    assert returned is out and np.allclose(out.values, np.exp(x) * 2)
    assert isinstance(total, _FakeDeviceArray) and np.isclose(total.values, x.sum())

    def twice(x):
        return x.clone()                 # AttributeError on a NumPy copy: run on the arrays given
    got = hc.hcompile(twice)(_FakeDeviceArray(x))
    assert isinstance(got, _FakeDeviceArray) and np.array_equal(got.values, x)

    def add_into(a, b):
        a += b
    whole = np.arange(8.0)
    halves = (_FakeDeviceArray(whole[:6]), _FakeDeviceArray(whole[2:]))
    assert cuda.run_on_host_copies(add_into, halves, {}, "add_into", "test") is cuda.NOT_COPIED   # they overlap
    assert np.array_equal(whole, np.arange(8.0))
    apart = (_FakeDeviceArray(np.arange(4.0)), _FakeDeviceArray(np.ones(4)))
    assert cuda.run_on_host_copies(add_into, apart, {}, "add_into", "test") is None
    assert np.array_equal(apart[0].values, np.arange(4.0) + 1)
    # Python on the arrays given: in-place addition on these stand-ins fails as NumPy refuses them.
    with pytest.raises(TypeError, match="ran as plain Python on CUDA arrays"):
        hc.hcompile(add_into)(*halves)
