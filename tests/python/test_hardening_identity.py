"""`x is y` between arguments: the answer depends on the call, so an entry that compared two
arguments with `is` is specialised on whether they are one object (an identity guard in the
dispatcher); entries that never asked share one compiled kernel for both cases. The same array
passed twice must give NumPy's answer whether or not the code looks at identity."""
import numpy as np
import pytest

from numpy_oracle import DTYPES, IDENTITY, check, fn_from_src, hc, make

pytestmark = pytest.mark.skipif(IDENTITY, reason="identity guards of the real compiler")

IS_FUNCS = [
    "def f(x, y):\n    return (x + 1) if x is y else (x * y)\n",
    "def f(x, y):\n    return x * 2 if x is not y else x + y\n",
    "def f(x, y, z):\n    return (x is y, y is z, x is z, x + y + z)\n",
    "def f(x, y):\n    a = x\n    return (a is x, a is y, x.T is x, x[...] is x, x + 0)\n",
]


def _calls(rng, dtype, n):
    a = make(rng, (3, 4), dtype, "small")
    b = make(rng, (3, 4), dtype, "small")
    if n == 2:
        return [(a, a), (a, b), (b, b), (b, a), (a, a)]
    return [(a, a, a), (a, b, a), (a, a, b), (b, a, a), (a, b, b), (a, a, a)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("src", IS_FUNCS)
def test_is_between_arguments(src, dtype, rng):
    f = fn_from_src(src)
    cf = hc.hcompile(f, fullgraph=True)
    n = f.__code__.co_argcount
    for args in _calls(rng, dtype, n):
        want = f(*args)
        got = cf(*args)
        assert type(got) is type(want)
        for g, w in zip(got if isinstance(want, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            if isinstance(w, np.ndarray):
                np.testing.assert_array_equal(g, w)
                assert g.dtype == w.dtype
            else:
                assert g == w
    # one entry per identity pattern seen, and repeats hit the cache
    patterns = {tuple(a is b for a in args for b in args) for args in _calls(rng, dtype, n)}
    assert cf.cache_info().entries <= len(patterns)


def test_numpy_scalars_passed_twice():
    f = fn_from_src("def f(s, t):\n    return s * 2 if s is t else s + t\n")
    cf = hc.hcompile(f, fullgraph=True)
    s, t = np.float32(1.5), np.float32(1.5)
    for args in [(s, s), (s, t), (t, t)]:
        assert cf(*args) == f(*args) and type(cf(*args)) is type(f(*args))


def test_same_array_twice_without_identity_shares_one_entry(rng):
    f = fn_from_src("def f(x, y):\n    return x * y + x\n")
    cf = hc.hcompile(f, fullgraph=True)
    a, b = make(rng, (5,), "float64"), make(rng, (5,), "float64")
    for args in [(a, a), (a, b), (b, b)]:
        check(f, *args, cfn=cf)
        np.testing.assert_array_equal(cf(*args), f(*args))
    assert cf.cache_info().entries == 1


def test_returning_an_argument_twice_keeps_identity(rng):
    f = fn_from_src("def f(x, y):\n    return x, y, x + y\n")
    cf = hc.hcompile(f, fullgraph=True)
    a = make(rng, (4,), "int32")
    r = cf(a, a)
    assert r[0] is a and r[1] is a
