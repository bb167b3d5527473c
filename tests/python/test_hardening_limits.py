"""Limits that used to be checked only at call time (compile, then raise on every call):
- more than 62 float constants (each a kernel scalar argument; argv had 64 slots) or more than 48
  inputs and outputs (the dispatcher's buffer arrays): argument arrays are now sized per kernel;
- empty arrays through x[None], np.expand_dims, x.reshape(-1) ...: the reshape index arithmetic
  read element 0 of an empty input and Halide's bounds check refused it; empty computed arrays
  are now constants (core/src/empty_arrays.cpp);
- views spanning more than 2^31 elements (a stepped view of a big buffer): Halide checks
  |extent * stride| per dimension against 2^31 - 1; such views are now copied at call time.
"""
import numpy as np
import pytest

from numpy_oracle import IDENTITY, assert_same_result, check, fn_from_src, hc, make

needs_compiler = pytest.mark.skipif(IDENTITY, reason="checks the real compiler's cache")

ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float32", "float64"]


@needs_compiler
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("count", [62, 63, 100])
def test_many_float_constants(dtype, count, rng):
    terms = " + ".join(f"x * {i}.25" for i in range(count))
    f = fn_from_src(f"def f(x):\n    return {terms}\n")
    x = make(rng, (7,), dtype, "small")
    cf = hc.hcompile(f, fullgraph=True)
    for _ in range(2):
        assert_same_result(cf(x), f(x), ops=count)
    assert cf.cache_info().entries == 1


@needs_compiler
@pytest.mark.parametrize("count", [24, 49])
def test_many_inputs_and_outputs(count, rng):
    names = ", ".join(f"a{i}" for i in range(count))
    outs = ", ".join(f"a{i} * {i} - a{(i + 1) % count}" for i in range(count))
    f = fn_from_src(f"def f({names}):\n    return {outs}\n")
    args = [make(rng, (3, 2), "int64") for _ in range(count)]
    cf = hc.hcompile(f, fullgraph=True)
    for _ in range(2):
        assert_same_result(cf(*args), f(*args))
    assert cf.cache_info().entries == 1


EMPTY_FNS = [
    "x[None]", "x[None] + 1", "np.expand_dims(x, 1) * 2", "np.expand_dims(x, -1)",
    "x.reshape(-1)", "x.reshape(-1) + x.reshape(-1)", "x[:, None, :] == x[:, None, :]",
    "x.reshape(-1).sum()", "x[None].sum(axis=1)", "x.reshape(-1).prod()", "x.T[None] * 3",
    "x[None].any()", "np.expand_dims(x, 0).all(axis=2)", "np.maximum(x.reshape(-1), 0)",
    "(x[None] + 1, x.sum())",
]


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
@pytest.mark.parametrize("index", range(len(EMPTY_FNS)), ids=EMPTY_FNS)
def test_empty_arrays_through_layout_ops(index, shape, rng):
    f = fn_from_src(f"def f(x):\n    return {EMPTY_FNS[index]}\n")
    # four dtypes per case, rotating so that every dtype meets every expression over the shapes
    start = 4 * index + len(shape) + shape.index(0)
    for dtype in (ALL_DTYPES[(start + k * 3) % len(ALL_DTYPES)] for k in range(4)):
        check(f, make(rng, shape, dtype), cfn=hc.hcompile(f, fullgraph=True))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty_matmul_and_broadcasts(dtype, rng):
    if dtype == "bool":
        pytest.skip("matmul of bools is exercised elsewhere")
    f = fn_from_src("def f(a, b):\n    return a[None] @ b, (a.reshape(-1)[:, None] + b.sum()).shape\n")
    check(f, make(rng, (3, 0), dtype), make(rng, (0, 4), dtype))


def lazily_zeroed(nbytes):
    """A big zero buffer whose pages are not touched (calloc): only what a view writes is real."""
    try:
        return np.zeros(nbytes, np.uint8)
    except MemoryError:
        pytest.skip("no address space for a 3 GiB buffer")


@needs_compiler
def test_views_spanning_past_32_bit_indexing():
    from hcompile import _C

    big = lazily_zeroed(3 * 2**30)
    stepped = big[:: 2**20]                      # 3072 elements, extent * stride = 3 * 2**30
    stepped[...] = np.arange(stepped.size) % 251
    rows = big.reshape(3, 2**30)[:, :1000]       # dimension 1 of extent 3, stride 2**30
    rows[...] = np.arange(3000).reshape(3, 1000) % 7
    flags = big.view(np.bool_)[1 :: 2**20]       # one-byte items: only they span 2**31 in 3 GiB
    flags[...] = np.arange(flags.size) % 3 == 0
    cases = [
        (lambda x: x + 1, stepped), (lambda x: x * 2, stepped[::-1]),
        (lambda x: x.astype(np.int32).sum(axis=0), rows), (lambda x: x + x, rows.T),
        (lambda x: (x & x[::-1], x.sum(), x.astype(np.float32) * 0.5), flags),
    ]
    for fn, view in cases:
        assert _C.classify_layout(view) == 3, view.strides
        got = hc.hcompile(fn, fullgraph=True)(view)
        assert_same_result(got, fn(view), reduce=64, scale=1.0)
    # a broadcast view (stride 0) spans nothing: read in place
    row = np.arange(5, dtype=np.float32)
    wide = np.broadcast_to(row, (2**20, 5))
    assert _C.classify_layout(wide) != 3
    assert_same_result(hc.hcompile(lambda x: x * 2, fullgraph=True)(wide), wide * 2)
