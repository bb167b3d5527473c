"""split_reductions_for_gpu (core/src/gpu_reductions.cpp) rewrites reductions for a GPU's threads:
neighbouring reduced axes merged, chunks of a long axis reduced first, the rest apart, a long 1-D
arg reduction read as one row. The
rewritten graph, run by the eager interpreter (hcompile.eager), gives the original graph's answers:
the rewrite's indices, slices and combining ops are checked without a GPU."""
import numpy as np
import pytest

from hcompile import _C
from hcompile.eager import run_graph

# (shape, axes): down the columns of a tall array (with rows past the last whole chunk), down a
# middle axis, along few long rows, over several axes to few outputs, to one value.
SHAPES = [((5000, 3), (0,)), ((4096, 2), (0,)), ((2, 3001, 4), (1,)), ((4, (1 << 15) + 5), (1,)),
          ((300, 300, 2), (0, 1)), ((70001,), (0,)),
          # neighbouring axes merged: a column reduction, a middle one, one to a value, two runs
          ((512, 64, 16), (0, 1)), ((3, 50, 40, 2), (1, 2)), ((30, 40, 50), (0, 1, 2)),
          ((6, 5, 7, 8, 9), (0, 1, 3, 4))]
KINDS = ["sum", "prod", "max", "min", "any", "all"]


def _graph(shape, dtype, kind, axes, keepdims):
    g = _C.Graph()
    x = g.add_input(0, dtype, list(shape))
    attrs = {"axis": axes[0]} if kind in ("argmax", "argmin") else {"axes": list(axes)}
    attrs["keepdims"] = keepdims
    g.set_outputs([g.add_op(kind, [x], attrs)])
    return g


def _input(rng, shape, dtype, kind):
    if dtype == "bool":
        return rng.random(shape) < (0.001 if kind == "any" else 0.999)
    if dtype == "int32":
        return rng.integers(-3, 4, shape).astype(np.int32)
    if kind == "prod":
        return (1 + 1e-3 * rng.standard_normal(shape)).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if kind in ("max", "min", "argmax", "argmin"):
        flat = x.reshape(-1)
        flat[rng.integers(0, flat.size, 3)] = np.nan     # NaN wins wherever it falls
    return x


@pytest.mark.parametrize("shape,axes", SHAPES, ids=str)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("keepdims", [0, 1])
def test_split_reductions_give_the_original_answers(shape, axes, kind, keepdims):
    rng = np.random.default_rng(len(shape) * 100 + len(kind))
    for dtype in (["bool"] if kind in ("any", "all") else ["float32", "int32"]):
        g = _graph(shape, dtype, kind, axes, keepdims)
        split = _C.split_reductions_for_gpu(g)
        split.verify()
        assert split.num_nodes > g.num_nodes, str(split)      # every case here is rewritten
        x = _input(rng, shape, dtype, kind)
        want, got = run_graph(g, [x])[0], run_graph(split, [x])[0]
        assert got.shape == want.shape and got.dtype == want.dtype
        if dtype == "float32" and kind in ("sum", "prod"):
            # Both within float32 rounding of the float64 answer (the eager run of the float64 data).
            exact = run_graph(g, [x.astype(np.float64)])[0]
            scale = np.abs(x.astype(np.float64)).sum() / max(want.size, 1) if kind == "sum" else 1.0
            np.testing.assert_allclose(got, exact, rtol=1e-4, atol=1e-6 * scale)
            np.testing.assert_allclose(want, exact, rtol=1e-4, atol=1e-6 * scale)
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind", ["argmax", "argmin"])
def test_a_long_1d_arg_reduction_is_read_as_one_row(kind):
    rng = np.random.default_rng(5)
    g = _graph((10000,), "float32", kind, (0,), 0)
    split = _C.split_reductions_for_gpu(g)
    split.verify()
    assert "reshape" in str(split)
    x = rng.integers(-2, 3, 10000).astype(np.float32)     # ties: the first wins
    assert run_graph(split, [x])[0] == run_graph(g, [x])[0]
    x[[7000, 9000]] = np.nan
    assert run_graph(split, [x])[0] == run_graph(g, [x])[0] == 7000


def test_symbolic_extents_and_short_axes_are_left_whole():
    g = _graph((5000, 3), "float32", "sum", (0,), 0)
    assert _C.split_reductions_for_gpu(g, [5000]).num_nodes == g.num_nodes
    short = _graph((200, 3), "float32", "sum", (0,), 0)
    assert _C.split_reductions_for_gpu(short).num_nodes == short.num_nodes
