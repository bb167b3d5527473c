"""Point-rows groups on the GPU: reductions of a row computed from other reductions of the same row
(x.var(axis=-1), log-sum-exp, a softmax's entropy or argmax) run as one kernel, each row's chain in
one block or one warp's lanes. The schedules are checked here without a GPU (the CUDA kernels
compile); the answers against NumPy on a GPU (tests marked `gpu`)."""
import numpy as np
import pytest

import hcompile as hc
from apps.gpu_row_chains_bench import argmax_of_softmax, logsumexp_rows, skewness_rows, softmax_entropy

CUDA_TARGET = "host-cuda-cuda_capability_86"


def _var_rows(x):
    return x.var(axis=-1)


def _std_keepdims(x):
    return x.std(axis=-1, keepdims=True)


def _range_over_mean(x):
    return (x.max(axis=-1) - x.min(axis=-1)) / x.mean(axis=-1)


def _argmin_of_centred(x):
    return np.argmin(np.abs(x - x.mean(axis=-1, keepdims=True)), axis=-1)


def _int_spread(x):
    return x.max(axis=-1) - x.min(axis=-1) + (x - x.min(axis=-1, keepdims=True)).sum(axis=-1)


# (The log-sum-exp, entropy, argmax and skewness are the GPU bench's: apps/gpu_row_chains_bench.py.)
FLOAT_CHAINS = [_var_rows, _std_keepdims, logsumexp_rows, softmax_entropy, argmax_of_softmax, _range_over_mean,
                skewness_rows, _argmin_of_centred]


def _compile(fn, *args, **options):
    f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True, **options)
    f.compile_only(*args)
    return f


def _decisions(f):
    return [tuple(d) for d in f.compile_records[-1]["report"]["decisions"]]


def _kernel_roots(decisions):
    """The regions a kernel of their own computes (compute_root), and those computed per row."""
    return ({d[0] for d in decisions if d[1] == "compute_root"}, {d[0] for d in decisions if d[1] == "compute_at_row"})


@pytest.mark.parametrize("fn", FLOAT_CHAINS + [_int_spread], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape,warp", [((4096, 1024), True), ((9999, 20), True), ((30, 500, 64), True),
                                        ((256, 4096), False), ((3, 50, 64), False)])
def test_chains_of_row_reductions_run_as_one_kernel(fn, shape, warp):
    """Every reduction of the chain is computed per row of the last region (one kernel). Rows of up
    to 32 points a lane, in a count that fills blocks of several, run in a warp's lanes; longer
    ones, or too few, in a block's threads."""
    x = np.zeros(shape, np.int32 if fn is _int_spread else np.float32)
    if fn in (_int_spread, argmax_of_softmax, _argmin_of_centred) and shape[-1] < 32:
        return   # (int64 sums, arg reductions of 4 lanes over short rows: no warp lanes; below)
    decisions = _decisions(_compile(fn, x))
    roots, per_row = _kernel_roots(decisions)
    assert len(roots) == 1 and per_row, decisions
    # (NumPy sums int32 into int64: Halide has no 64-bit warp shuffles.)
    assert any(d[1] == "gpu_warp_rows" for d in decisions) == (warp and fn is not _int_spread), decisions


def test_float64_chains_reduce_in_a_blocks_threads():
    """Halide has no 64-bit warp shuffles: float64 rows are one kernel with the block's threads."""
    decisions = _decisions(_compile(_var_rows, np.zeros((512, 256))))
    assert len(_kernel_roots(decisions)[0]) == 1 and not any(d[1] == "gpu_warp_rows" for d in decisions), decisions


@pytest.mark.parametrize("fn,shape", [
    (_var_rows, (4096, 8)),                                    # rows shorter than 4 lanes' steps
    (_int_spread, (4096, 20)),                                 # short rows of int64 sums: no lanes
    (argmax_of_softmax, (4096, 20)),                          # ... of an argmax's 4 lanes
    (lambda x: x.mean(axis=-1), (4096, 20)),                   # one reduction over short rows
    (lambda x, y: x.sum(axis=-1) + y.max(axis=-1), None),      # rows of two lengths
    (lambda x: x.var(axis=0), (1024, 512)),                    # down the columns
])
def test_what_is_not_a_chain_keeps_its_kernels(fn, shape):
    dtype = np.int32 if fn is _int_spread else np.float32
    args = (np.zeros((512, 64), dtype), np.zeros((512, 128), dtype)) if shape is None and \
        fn.__code__.co_argcount == 2 else (np.zeros(shape or (512, 64), dtype),)
    decisions = _decisions(_compile(fn, *args))
    assert not any(d[1] == "compute_at_row" for d in decisions), decisions


def test_a_reduction_that_is_an_output_is_stored_whole_and_read_by_the_chain():
    def max_and_logsumexp(x):
        m = x.max(axis=-1)
        return m, m + np.log(np.exp(x - m[:, None]).sum(axis=-1))
    f = _compile(max_and_logsumexp, np.zeros((4096, 1024), np.float32))
    decisions = _decisions(f)
    roots, per_row = _kernel_roots(decisions)
    assert 0 in roots and per_row == {1}, decisions   # (0: the max; 1: the sum of exponentials)
    # A mean alone over rows of 32 or more: its sum per row of its division, one kernel.
    decisions = _decisions(_compile(lambda x: x.mean(axis=-1), np.zeros((4096, 64), np.float32)))
    assert len(_kernel_roots(decisions)[0]) == 1, decisions


@pytest.mark.parametrize("fn", [_var_rows, logsumexp_rows, argmax_of_softmax], ids=lambda f: f.__name__)
def test_a_chain_over_any_number_of_rows_is_one_kernel(fn):
    """A batch of varying size (the rows' count compiled for any size, their length static): one
    kernel, in blocks of several rows in a warp's lanes as for a static count, its guard asking for
    a block's rows; a smaller batch's entry runs a row a block, below them."""
    f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True)
    f.compile_only(np.zeros((4096, 1024), np.float32))
    f.compile_only(np.zeros((2000, 1024), np.float32))
    assert "any size" in f.compile_records[-1]["dynamic"]
    decisions = _decisions(f)
    block_rows = next(d[4] for d in decisions if d[1] == "gpu_rows")
    assert len(_kernel_roots(decisions)[0]) == 1 and any(d[1] == "gpu_warp_rows" for d in decisions), decisions
    assert block_rows > 1 and f.compile_records[-1]["report"]["symbol_least"] == [block_rows]
    f.compile_only(np.zeros((block_rows - 1, 1024), np.float32))
    record = f.compile_records[-1]
    assert record["report"]["symbol_below"] == [block_rows] and f"below {block_rows}" in record["dynamic"]
    assert not any(d[1] == "gpu_warp_rows" for d in _decisions(f))


def test_a_softmax_still_stores_its_rows_not_points():
    """A softmax's row group (its root's rows, members per row) is unchanged by point rows."""
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    decisions = _decisions(_compile(softmax, np.zeros((4096, 1024), np.float32)))
    assert any(d[1] == "gpu_rows" and d[3] == 32 for d in decisions), decisions
    assert any(d[1] == "gpu_vector" for d in decisions) or any(d[1] == "gpu_warp_rows" for d in decisions)


# -- on a GPU ----------------------------------------------------------------------------------

def _check(got, want, what):
    got = got.cpu().numpy()
    assert got.shape == want.shape, what
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        tol = 1e-4 if want.dtype == np.float32 else 1e-10
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)


def _inputs(rng, shape, dtype, fn):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-50, 50, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if fn in (_range_over_mean, skewness_rows):
        x += 3   # a mean away from zero: the quotient's rounding is NumPy's to the tolerance
    return x


@pytest.mark.gpu
@pytest.mark.parametrize("fn", FLOAT_CHAINS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_chains_of_row_reductions_match_numpy_on_the_gpu(fn, dtype, torch_cuda):
    """Every shape class (warp lanes of 4 to 32 and a last step of some lanes, a block's threads over
    long rows, several leading axes, rows a block that do not divide the rows, non-contiguous and
    transposed inputs), and the same under the search's alternatives (no warp lanes, another count of
    rows a block): NumPy's answers."""
    torch = torch_cuda
    rng = np.random.default_rng(5)
    for shape in [(4096, 1024), (999, 20), (1000, 16), (513, 100), (3, 50, 64), (256, 4096), (64, 8192), (2, 333),
                  (2, 16), (3, 1, 32), (1, 2, 2048)]:
        x = _inputs(rng, shape, dtype, fn)
        want = fn(x)
        f = hc.hcompile(fn, fullgraph=True)
        xt = torch.from_numpy(x).cuda()
        _check(f(xt), want, f"{fn.__name__} {shape}")
        decisions = _decisions(f)
        variants = [[d for d in decisions if d[1] != "gpu_warp_rows"],
                    [d if d[1] != "gpu_rows" else (d[0], d[1], d[2], d[3], 0 if d[4] in (0, 2) else d[4] // 2)
                     for d in decisions]]
        for schedule in variants:
            try:
                g = hc.hcompile(fn, fullgraph=True, schedule=schedule)
                got = g(xt)
            except hc.CompileError as e:   # a list the directives refuse for this shape
                assert "schedule" in str(e), e
                continue
            _check(got, want, f"{fn.__name__} {shape} {schedule}")
    # Strided: every other column, and a transposed array's rows.
    x = _inputs(rng, (2048, 512), dtype, fn)
    xt = torch.from_numpy(x).cuda()
    f = hc.hcompile(fn, fullgraph=True)
    _check(f(xt[:, ::2]), fn(x[:, ::2]), f"{fn.__name__} strided")
    _check(f(xt.T), fn(x.T), f"{fn.__name__} transposed")


@pytest.mark.gpu
@pytest.mark.parametrize("fn", FLOAT_CHAINS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("length", [64, 256])
def test_chains_over_a_batch_of_any_size_on_the_gpu(fn, length, torch_cuda):
    """The rows' count compiled for any size after a second one (dynamic=None): NumPy's answers for
    each, one row and two included, and counts on either side of a block's rows (the entry for any
    size needs a block's; the smaller ones run in their own, a row a block)."""
    torch = torch_cuda
    rng = np.random.default_rng(7)
    f = hc.hcompile(fn, fullgraph=True)
    for rows in (4096, 2000, 1, 2, 3, 15, 16, 17, 31, 33, 77777):
        x = _inputs(rng, (rows, length), np.float32, fn)
        _check(f(torch.from_numpy(x).cuda()), fn(x), f"{fn.__name__} {rows}")
    assert f._cuda._compiles <= 4


@pytest.mark.gpu
def test_integer_chains_and_special_values_on_the_gpu(torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(6)
    for shape in [(4096, 64), (100, 1000)]:
        x = _inputs(rng, shape, np.int32, _int_spread)
        _check(hc.hcompile(_int_spread, fullgraph=True)(torch.from_numpy(x).cuda()), _int_spread(x), f"int {shape}")
    # NaN and infinities in rows: each row's chain as NumPy's.
    x = rng.standard_normal((1024, 256)).astype(np.float32)
    x[1, 7] = np.nan
    x[2, :] = np.inf
    x[3, 5] = -np.inf
    x[4, :] = -np.inf
    with np.errstate(all="ignore"):
        for fn in (_var_rows, logsumexp_rows, argmax_of_softmax, softmax_entropy):
            _check(hc.hcompile(fn, fullgraph=True)(torch.from_numpy(x).cuda()), fn(x), f"{fn.__name__} special")
