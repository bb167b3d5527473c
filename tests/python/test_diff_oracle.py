"""Self-tests of the oracle (numpy_oracle.check): it must be able to fail.

Each test hands check() a deliberately wrong "compiled" function (cfn=...) and asserts the
failure is detected. No compiler involved; these run in both modes.
"""

import numpy as np
import pytest

from numpy_oracle import check, clone, make


def f(x):
    return x * 2


def g(x):
    return np.sum(x)


def test_detects_wrong_value(rng):
    x = make(rng, (3, 4), "float32")
    with pytest.raises(AssertionError):
        check(f, x, cfn=lambda x: x * 2 + np.float32(1e-4))
    with pytest.raises(AssertionError):
        check(f, make(rng, (3, 4), "int32"), cfn=lambda x: x * 2 + (x == x.flat[0]))


def test_detects_wrong_dtype_shape_type(rng):
    x = make(rng, (3, 4), "float32")
    with pytest.raises(AssertionError, match="dtype"):
        check(f, x, cfn=lambda x: (x * 2).astype(np.float64))
    with pytest.raises(AssertionError, match="shape"):
        check(f, x, cfn=lambda x: (x * 2).reshape(4, 3))
    with pytest.raises(AssertionError, match="type"):
        check(g, x, cfn=lambda x: np.asarray(np.sum(x)))  # 0-d array instead of np.float32
    with pytest.raises(AssertionError, match="type"):
        check(g, x, cfn=lambda x: float(np.sum(x)))
    with pytest.raises(AssertionError, match="type"):
        check(lambda x: (x, x), x, cfn=lambda x: [x, x])


def test_detects_nan_mismatch(rng):
    x = make(rng, (5,), "float64")
    x[2] = np.nan
    with pytest.raises(AssertionError):
        check(lambda x: np.maximum(x, 0), x, cfn=lambda x: np.fmax(x, 0))


def test_detects_input_mutation(rng):
    x = make(rng, (3, 4), "float64")

    def mutating(x):
        x[0, 0] = 42.0
        return x * 2 - x * 2 + f(x)

    with pytest.raises(AssertionError, match="modified"):
        check(f, x, cfn=lambda x: mutating(x))


def test_detects_exception_mismatch(rng):
    a, b = make(rng, (3,), "float64"), make(rng, (4,), "float64")
    with pytest.raises(AssertionError, match="NumPy raised"):
        check(lambda a, b: a + b, a, b, cfn=lambda a, b: a[:1] + b)  # compiled did not raise
    with pytest.raises(AssertionError, match="NumPy raised"):
        check(lambda a, b: a + b, a, b, cfn=lambda a, b: (_ for _ in ()).throw(TypeError()))
    with pytest.raises(RuntimeError):  # compiled raised, NumPy did not: propagates
        check(f, a, cfn=lambda x: (_ for _ in ()).throw(RuntimeError("boom")))


def test_detects_readonly_result(rng):
    x = make(rng, (3, 4), "float64")

    def ro(x):
        r = x * 2
        r.flags.writeable = False
        return r

    with pytest.raises(AssertionError, match="read-only"):
        check(f, x, cfn=ro)


@pytest.mark.parametrize("layout", ["F", "step", "rev", "bcast"])
def test_clone_keeps_layout(layout, rng):
    x = make(rng, (4, 6), "float32", layout=layout)
    y = clone(x)
    assert y.strides == x.strides and y.flags.writeable == x.flags.writeable
    assert not np.shares_memory(x, y)
    np.testing.assert_array_equal(x, y)


def test_tolerance_is_not_vacuous(rng):
    """A relative error of 1e-4 in float32 elementwise and 1e-9 in float64 must be caught."""
    x32 = make(rng, (50,), "float32", "pos")
    with pytest.raises(AssertionError):
        check(f, x32, cfn=lambda x: (x * 2 * (1 + 1e-4)).astype(np.float32))
    x64 = make(rng, (50,), "float64", "pos")
    with pytest.raises(AssertionError):
        check(f, x64, cfn=lambda x: x * 2 * (1 + 1e-9))
    # a dropped element in a 257-element float32 sum, a dropped row of a 257x129 sum, are caught
    # despite the reduction tolerance (one element of 33153 is not: that is within the float32
    # rounding error of a sequential sum, ~eps*sqrt(n/3) relative)
    v = make(rng, (257,), "float32", "pos")
    with pytest.raises(AssertionError):
        check(g, v, cfn=lambda x: np.sum(x[1:]), reduce=v.size, scale=float(v.max()))
    big = make(rng, (257, 129), "float32", "pos")
    with pytest.raises(AssertionError):
        check(g, big, cfn=lambda x: np.sum(x[1:]), reduce=big.size, scale=float(big.max()))
