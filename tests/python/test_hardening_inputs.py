"""Odd inputs (issue 5, the sweep): every memory layout NumPy can hand us, 0-d/size-1/empty
shapes, the same array twice, very high rank, dtypes hcompile does not claim and ndarray
subclasses. The promise: NumPy's answer (compiled, or run as Python), or NumPy's exception; with
fullgraph=True, NumPy's answer or hc.Unsupported. Never a crash or a wrong answer.

Inputs are built fresh for every call from source-text layouts (tests/fuzz/values.py: the same
layouts the fuzzer uses), so a layout survives into the compiled call (a deep copy would make
field views and unaligned arrays contiguous).
"""

import warnings

import numpy as np
import pytest

from numpy_oracle import assert_same_result, hc, real_only, run_numpy
from tests.fuzz import values

CLAIMED = list(values.DTYPES)


def _arr(rng, shape, dtype):
    return values.make_array(rng, shape, dtype, "normal")


def same_as_numpy(fn, make_args, fullgraph=False, **tol):
    """The compiled fn (built fresh) on make_args() equals fn on make_args(), or both raise the
    same exception type; with fullgraph=True hc.Unsupported is accepted too. Returns the compiled
    result (None when it raised)."""
    expected, np_exc = run_numpy(fn, make_args())
    cf = hc.hcompile(fn, fullgraph=fullgraph)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            got = cf(*make_args())
        except hc.Unsupported:
            if fullgraph:
                return None
            raise
        except Exception as e:  # noqa: BLE001
            assert np_exc is not None, f"compiled raised {e!r}; NumPy returned {expected!r}"
            from tests.fuzz.compare import same_exception

            assert same_exception(np_exc, e), f"NumPy raised {np_exc!r}, compiled {e!r}"
            return None
    assert np_exc is None, f"NumPy raised {np_exc!r}; compiled returned {got!r}"
    assert_same_result(got, expected, **tol)
    return got


# ------------------------------------------------------------------------------------------
# Layouts × dtypes

FUNCS = {
    "elementwise": lambda x, y: x * 2 + y,
    "reduce": lambda x, y: (x + y).sum(axis=-1),
    "max_keepdims": lambda x, y: np.maximum(x, y).max(axis=0, keepdims=True),
    "slices": lambda x, y: x[::-1, 1:] - y[:, :-1],
    "transpose_matmul": lambda x, y: x.T @ y,
}

LAYOUT_XFAIL = {
    "field": "issue 5 item 4 (strides not a multiple of the item size)",
}


def _layout_params():
    for lay in values.LAYOUTS:
        marks = [pytest.mark.xfail(strict=False, reason=LAYOUT_XFAIL[lay])] \
            if lay in LAYOUT_XFAIL else []
        yield pytest.param(lay, marks=marks, id=lay)


@pytest.mark.parametrize("fname", list(FUNCS))
@pytest.mark.parametrize("layout", list(_layout_params()))
@pytest.mark.parametrize("dtype", CLAIMED)
def test_layout(layout, fname, dtype, rng):
    fn = FUNCS[fname]
    if fname == "transpose_matmul" and dtype == "bool":
        dtype = "int8"
    x, y = _arr(rng, (4, 5), dtype), _arr(rng, (4, 5), dtype)
    for fullgraph in (False, True):
        same_as_numpy(fn, lambda: [values.with_layout(x, layout), values.with_layout(y, "C")],
                      fullgraph=fullgraph)
        same_as_numpy(fn, lambda: [values.with_layout(x, "C"), values.with_layout(y, layout)],
                      fullgraph=fullgraph)


@pytest.mark.parametrize("layout", list(_layout_params()))
def test_layout_change_between_calls(layout, rng):
    """A compiled entry for C order must not serve (or break on) another layout."""
    fn = FUNCS["elementwise"]
    x, y = _arr(rng, (4, 5), "float32"), _arr(rng, (4, 5), "float32")
    cf = hc.hcompile(fn)
    for lay in ("C", layout, "C", layout):
        args = [values.with_layout(x, lay), values.with_layout(y, "C")]
        assert_same_result(cf(*args), fn(*[values.with_layout(x, lay), y]))


# ------------------------------------------------------------------------------------------
# Shapes: 0-d, size 1, empty; the same array twice


SHAPES = [(), (1,), (1, 1), (0,), (0, 3), (3, 0), (1, 0, 2), (2, 1, 3)]
SHAPE_FUNCS = {
    "chain": lambda x: np.exp(-x * x) + x,
    "sum0": lambda x: x.sum(axis=0) if x.ndim else x.sum(),
    "mean_all": lambda x: x.mean(),
    "max_keep": lambda x: x.max(axis=-1, keepdims=True) if x.ndim and x.shape[-1] else x,
    "none_index": lambda x: x[None] * 2,
    "reshape_flat": lambda x: x.reshape(-1) + 1,
    "expand": lambda x: np.expand_dims(x, 0) - 1,
}
SHAPE_XFAIL = {  # issue 5 item 8: empty inputs through x[None]/expand_dims/reshape(-1)
    (fn, s): "issue 5 item 8" for fn in ("none_index", "reshape_flat", "expand")
    for s in SHAPES if 0 in s
}


def _shape_params():
    for fname in SHAPE_FUNCS:
        for s in SHAPES:
            marks = [pytest.mark.xfail(strict=False, reason=SHAPE_XFAIL[(fname, s)])] \
                if (fname, s) in SHAPE_XFAIL else []
            yield pytest.param(fname, s, marks=marks, id=f"{fname}-{s}")


@pytest.mark.parametrize("fname,shape", list(_shape_params()))
@pytest.mark.parametrize("dtype", ["float32", "int16", "bool"])
def test_small_and_empty_shapes(fname, shape, dtype, rng):
    if fname == "chain" and dtype == "bool":
        dtype = "uint8"
    x = _arr(rng, shape, dtype)
    same_as_numpy(SHAPE_FUNCS[fname], lambda: [x.copy()], fullgraph=True, ops=4)
    same_as_numpy(SHAPE_FUNCS[fname], lambda: [x.copy()], ops=4)


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_same_array_twice(dtype, rng):
    x = _arr(rng, (3, 3), dtype)
    for fn in (lambda a, b: a + b, lambda a, b: a @ b.T if a.dtype != bool else a & b,
               lambda a, b: np.where(a > b, a, b), lambda a, b: (a - b).sum(axis=0)):
        same_as_numpy(fn, lambda: [x, x], fullgraph=True)
        same_as_numpy(fn, lambda: [x, x[::-1]], fullgraph=True)  # overlapping views


@real_only
def test_same_array_twice_is_the_same_object():
    """`a is b` on arguments (issue 5 item 12)."""
    x = np.ones(3)
    f = hc.hcompile(lambda a, b: a * 2 if a is b else a * 3)
    if f(x, x).tolist() != [2.0, 2.0, 2.0]:
        pytest.xfail("issue 5 item 12: `x is y` on arguments is always False")


# ------------------------------------------------------------------------------------------
# Very high rank (NumPy allows 64 dimensions; kernels take fewer and must run as Python above)


@pytest.mark.parametrize("ndim", [6, 8, 16, 17, 31, 32, 33, 48, 64])
def test_high_rank(ndim, rng):
    shape = tuple(2 if i in (0, ndim - 1, ndim // 2) else 1 for i in range(ndim))
    x, y = _arr(rng, shape, "float64"), _arr(rng, shape[1:], "float64")
    same_as_numpy(lambda a, b: a * b + 1, lambda: [x, y])
    same_as_numpy(lambda a: a.sum(axis=-1), lambda: [x], reduce=2)
    same_as_numpy(lambda a: a.transpose()[::-1] - a.max(), lambda: [x], fullgraph=True)


# ------------------------------------------------------------------------------------------
# Dtypes hcompile does not claim: NumPy's answer (Python) or hc.Unsupported, never a crash

UNCLAIMED = {
    "float16": lambda rng: np.array([1.5, -2.0, np.nan], np.float16),
    "longdouble": lambda rng: np.array([1.5, -2.0, 3.0], np.longdouble),
    "complex64": lambda rng: np.array([1 + 2j, -1j, 3], np.complex64),
    "complex128": lambda rng: np.array([1 + 2j, -1j, 3], np.complex128),
    "object": lambda rng: np.array([1, 2.5, 3], dtype=object),
    "str": lambda rng: np.array(["a", "bc", "d"]),
    "bytes": lambda rng: np.array([b"a", b"bc", b"d"]),
    "datetime64": lambda rng: np.array(["2024-01-01", "2024-02-29", "NaT"], "datetime64[D]"),
    "timedelta64": lambda rng: np.array([1, -2, 3], "timedelta64[s]"),
    "structured": lambda rng: np.zeros(3, dtype=[("a", "f4"), ("b", "i2")]),
    "void": lambda rng: np.zeros(3, dtype="V4"),
}
UNCLAIMED_FUNCS = {
    "add_self": lambda x: x + x,
    "mul2": lambda x: x * 2,
    "sum": lambda x: x.sum(),
    "slice_rev": lambda x: x[::-1],
    "max": lambda x: x.max(),
    "eq": lambda x: x == x,
}


@pytest.mark.parametrize("fname", list(UNCLAIMED_FUNCS))
@pytest.mark.parametrize("dtype", list(UNCLAIMED))
def test_unclaimed_dtypes(dtype, fname, rng):
    x = UNCLAIMED[dtype](rng)
    fn = UNCLAIMED_FUNCS[fname]
    same_as_numpy(fn, lambda: [x.copy()])
    same_as_numpy(fn, lambda: [x.copy()], fullgraph=True)
    # mixed with a claimed dtype
    same_as_numpy(lambda a, b: a[:1] == b[:1], lambda: [x.copy(), np.ones(3)])


# ------------------------------------------------------------------------------------------
# ndarray subclasses run as Python and give NumPy's answer (and type)


class Tagged(np.ndarray):
    """A user subclass carrying an attribute through views and ufuncs."""

    def __array_finalize__(self, obj):
        self.tag = getattr(obj, "tag", "t")


def _tagged():
    t = np.arange(6.0).reshape(2, 3).view(Tagged)
    t.tag = "mine"
    return t


SUBCLASSES = {
    "matrix": lambda: np.matrix([[1.0, 2.0], [3.0, 4.0]]),
    "masked": lambda: np.ma.masked_array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0]),
    "masked_2d": lambda: np.ma.masked_invalid(np.array([[1.0, np.nan], [3.0, 4.0]])),
    "recarray": lambda: np.rec.fromarrays([np.arange(3.0)], names="a").a.view(np.recarray),
    "user": lambda: _tagged(),
}
SUBCLASS_FUNCS = {
    "mul": lambda x: x * x,  # matrix: a matrix product
    "sum0": lambda x: x.sum(axis=0),
    "mean": lambda x: x.mean(),
    "chain": lambda x: np.exp(x) - x.max(),
    "T": lambda x: x.T + 1,
}


@pytest.mark.parametrize("fname", list(SUBCLASS_FUNCS))
@pytest.mark.parametrize("kind", list(SUBCLASSES))
def test_subclasses_give_numpy_answer(kind, fname):
    fn = SUBCLASS_FUNCS[fname]
    make = SUBCLASSES[kind]
    expected, np_exc = run_numpy(fn, [make()])
    for fullgraph in (False, True):
        try:
            got = hc.hcompile(fn, fullgraph=fullgraph)(make())
        except hc.Unsupported:
            assert fullgraph, "the default mode must run a subclass as Python"
            continue
        except Exception as e:  # noqa: BLE001
            assert np_exc is not None and type(e) is type(np_exc), e
            continue
        assert np_exc is None
        assert type(got) is type(expected), f"{type(got)} != NumPy's {type(expected)}"
        if isinstance(expected, np.ma.MaskedArray):
            assert np.array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(expected))
            assert np.array_equal(got.filled(0), expected.filled(0))
        else:
            assert np.array_equal(np.asarray(got), np.asarray(expected), equal_nan=True)
        if isinstance(expected, Tagged):
            assert got.tag == expected.tag
