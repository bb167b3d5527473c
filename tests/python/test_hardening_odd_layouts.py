"""Arrays a kernel cannot read in place: fields of structured (packed) records, whose strides are
not a multiple of the item size; views at odd byte offsets (misaligned); byte-swapped arrays;
views whose extent * stride passes Halide's 32-bit indexing. They used to be compiled as
C-contiguous with truncated strides (wrong answers). Now the dispatcher guards them as their own
layout class and hands the kernel a native, aligned, C-contiguous copy made at call time (or, for
dtypes the capture refuses, such as non-native byte orders, the function runs as Python).

Inputs are passed as they are (not through numpy_oracle.clone, which would copy them into
ordinary arrays); results are compared bit for bit where NumPy's are exact.
"""
import numpy as np
import pytest

import numpy_oracle as O
from numpy_oracle import IDENTITY, assert_same_result, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="exercises the real dispatcher")

if not IDENTITY:
    from hcompile import _C

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]
COPIED, SWAPPED = 3, 4  # the dispatcher's layout classes of arrays handed over as a copy


def values(rng, dtype, shape):
    """Random values with the odd ones: NaN, +-inf, -0.0, subnormals, integer extremes."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape))
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
        a[: min(n, 2)] = [info.min, info.max][: min(n, 2)]
        return a.reshape(shape)
    tiny = np.finfo(dtype).smallest_subnormal
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, tiny, -tiny], dtype=dtype)
    a = (rng.standard_normal(n) * 100).astype(dtype)
    a[: min(n, len(specials))] = specials[: min(n, len(specials))]
    return rng.permutation(a).reshape(shape)


def field_of_packed_records(base):
    """base's values as a field of packed records: strides base.itemsize + 1 bytes (+ a leading
    byte, so misaligned too)."""
    record = np.dtype([("pad", "u1"), ("v", base.dtype), ("tail", "u1")])  # packed (align=False)
    rec = np.zeros(base.shape, dtype=record)
    rec["v"] = base
    return rec["v"]


def at_odd_offset(base):
    """base's values in a buffer at byte offset 1 (misaligned for itemsize > 1)."""
    buf = bytearray(base.nbytes + 1)
    out = np.frombuffer(buf, dtype=base.dtype, offset=1, count=base.size).reshape(base.shape)
    out[...] = base
    return out


def byte_swapped(base):
    return base.byteswap().view(base.dtype.newbyteorder())


VIEWS = {"record field": field_of_packed_records, "odd offset": at_odd_offset,
         "byte-swapped": byte_swapped}


def elementwise(x):
    return x + x[::-1]


def mixed(x):
    return (x[1:] == x[:-1]), x.T[::2]


def in_native_order(x):
    """x with its byte order made native (the oracle's tolerances are keyed by native dtypes);
    the byte order itself must already have been compared."""
    if isinstance(x, tuple):
        return tuple(in_native_order(v) for v in x)
    return x.astype(x.dtype.newbyteorder("="))


def assert_bits(got, want):
    """Same type, dtype (byte order included), shape and values, floats bit for bit (NaN as
    NaN): the ops here are exact or correctly rounded in NumPy and in the kernel."""
    pairs = list(zip(got, want)) if isinstance(want, tuple) else [(got, want)]
    assert [g.dtype for g, _ in pairs] == [w.dtype for _, w in pairs]
    got, want = in_native_order(got), in_native_order(want)
    assert_same_result(got, want)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        if w.dtype.kind == "f":
            nan = np.isnan(w)
            assert np.array_equal(np.isnan(g), nan)
            bits = f"u{w.itemsize}"
            assert np.array_equal(g[~nan].view(bits), w[~nan].view(bits))


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_odd_views_every_dtype(view, dtype, rng):
    base = values(rng, dtype, (6, 5))
    odd = VIEWS[view](base)
    assert np.array_equal(odd, base, equal_nan=dtype.startswith("float"))
    # one-byte items: aligned anywhere, any stride is a multiple of 1, no byte order
    one_byte = np.dtype(dtype).itemsize == 1
    expected_class = {"record field": 2 if one_byte else COPIED, "odd offset": 0 if one_byte else COPIED,
                      "byte-swapped": 0 if one_byte else SWAPPED}[view]
    assert _C.classify_layout(odd) == expected_class
    with np.errstate(all="ignore"):
        for fn in (elementwise, mixed):
            f = hc.hcompile(fn)
            assert_bits(f(odd), fn(odd))
            assert_bits(f(odd.T), fn(odd.T))


@pytest.mark.parametrize("dtype", ["int32", "float64", "uint16"])
def test_copied_class_is_its_own_guard(dtype, rng):
    """One function, called with a plain array, then fields of records at two offsets, then a
    misaligned view: each gets the right answer (the copied class never reuses the plain
    entry's strides, and vice versa)."""
    f = hc.hcompile(lambda x: x * 3 - x[0], fullgraph=True)
    base = values(rng, dtype, (9, 4))
    dt = np.dtype(dtype)
    wide = np.zeros(base.shape, dtype=[("a", dt), ("b", "u1"), ("c", dt)])
    wide["a"], wide["c"] = base, base[::-1]
    with np.errstate(all="ignore"):
        for x in (base, wide["a"], wide["c"], at_odd_offset(base), base.copy()):
            assert_same_result(f(x), x * 3 - x[0])
    assert f.cache_info().entries == 2  # the plain array and the copied class


def test_field_views_inside_reductions_and_matmul(rng):
    rec = np.zeros((7, 6), dtype=[("x", "f8"), ("k", "i4"), ("y", "f4")])
    rec["x"], rec["k"], rec["y"] = (rng.standard_normal((7, 6)), rng.integers(-9, 9, (7, 6)),
                                    rng.standard_normal((7, 6)))
    f = hc.hcompile(lambda x, k, y: ((x * k).sum(axis=0), x @ x.T, y.max(axis=1), k.T.prod(axis=0)),
                    fullgraph=True)
    got = f(rec["x"], rec["k"], rec["y"])
    want = (rec["x"] * rec["k"]).sum(axis=0), rec["x"] @ rec["x"].T, rec["y"].max(axis=1), \
        rec["k"].T.prod(axis=0)
    assert_same_result(got, want, reduce=7, scale=30.0)


def test_non_native_scalars_and_mixed_arguments(rng):
    """A copied argument next to ordinary ones and a NumPy scalar, the same array twice."""
    f = hc.hcompile(lambda a, b, s: a * s + b + a, fullgraph=True)
    a = field_of_packed_records(values(rng, "float32", (5, 3)))
    b = values(rng, "float32", (5, 3))
    with np.errstate(all="ignore"):
        assert_same_result(f(a, b, np.float32(1.5)), a * np.float32(1.5) + b + a)
        assert_same_result(f(a, a, np.float32(-2)), a * np.float32(-2) + a + a)


def test_byte_swapped_never_shares_an_entry_with_native_copies(rng):
    """Misaligned native and byte-swapped arrays are both copied, but NumPy's views of a swapped
    argument keep its byte order: they are separate guard classes, so each result has NumPy's
    dtype, byte order included, whichever came first."""
    for first in (at_odd_offset, byte_swapped):
        f = hc.hcompile(lambda x: (x.T, x + 1))
        base = values(rng, "int16", (4, 3))
        second = byte_swapped if first is at_odd_offset else at_odd_offset
        for x in (first(base), second(base), first(base), second(base)):
            assert_bits(f(x), (x.T, x + 1))
        assert f.cache_info().entries == 2


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8"])
@pytest.mark.parametrize("call,shape", [
    ("a + b[::-1]", (300,)), ("a & b[::-1]", (37,)), ("(a & b)[::-1] | a", (17,)), ("a[:, ::-1] & b", (6, 8)),
    ("(a & b).any(axis=1)", (5, 4)), ("(a ^ b).all(axis=-1)", (300, 4)), ("np.logical_and(a, b).any(axis=1)", (3, 4)),
    ("(a | b).sum(axis=1)", (9, 4)),
])
def test_byte_arrays_read_backwards_or_four_a_thread(call, shape, dtype, rng):
    """Bytes read backwards, and rows of four bytes a GPU thread reads one by one: kernels the
    LLVM inside Halide 21 aborted on for CUDA (gpu_narrow_vectors.cpp); the values NumPy's."""
    f = O.fn_from_src(f"def f(a, b):\n    return {call}\n")
    kind = "nonneg" if dtype == "uint8" else "small"
    O.check(f, O.make(rng, shape, dtype, kind=kind), O.make(rng, shape, dtype, kind=kind))
