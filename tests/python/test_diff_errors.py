"""Bad input at call time: the compiled function is first called with good arguments (so a
compiled entry exists), then with bad ones, and must raise the exception type NumPy raises."""

import numpy as np
import pytest

from numpy_oracle import check, compiled, make


def add(a, b):
    return a + b


def mm(a, b):
    return a @ b


def bitand(a, b):
    return a & b


def col0(x):
    return x[:, 0] * 2


def row_sum(x):
    return x.sum(axis=1)


def reshape34(x):
    return x.reshape(3, 4) + 1


def where3(c, a, b):
    return np.where(c, a, b)


def f_T_plus(x, y):
    return x.T + y


CASES = {
    # name: (fn, good args, bad args) -- shapes/dtypes described; arrays built below
    "broadcast_mismatch": (add, [(3, 4), (3, 4)], [(3, 4), (3, 5)]),  # ValueError
    "broadcast_mismatch_ndim": (add, [(3, 4), (4,)], [(3, 4), (2, 3, 5)]),  # ValueError
    "matmul_inner": (mm, [(3, 4), (4, 2)], [(3, 4), (5, 2)]),  # ValueError
    "matmul_0d": (mm, [(3, 4), (4, 2)], [(3, 4), ()]),  # ValueError
    "index_rank": (col0, [(3, 4)], [(3,)]),  # IndexError
    "axis_rank": (row_sum, [(3, 4)], [(3,)]),  # AxisError
    "reshape_size": (reshape34, [(12,)], [(13,)]),  # ValueError
    "where_mismatch": (where3, [("bool", (3,)), (3,), (3,)], [("bool", (4,)), (3,), (3,)]),
    "T_mismatch": (f_T_plus, [(3, 4), (4, 3)], [(3, 4), (3, 4)]),  # ValueError
    "bitand_float": (bitand, [("int32", (4,)), ("int32", (4,))],
                     [("float32", (4,)), ("int32", (4,))]),  # TypeError
}


def _build(rng, specs):
    out = []
    for s in specs:
        dtype, shape = s if isinstance(s, tuple) and s and isinstance(s[0], str) else \
            ("float64", s)
        out.append(make(rng, shape, dtype, "small"))
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_after_good(case, rng):
    fn, good, bad = CASES[case]
    cf = compiled(fn)
    check(fn, *_build(rng, good), cfn=cf)
    bad_args = _build(rng, bad)
    check(fn, *bad_args, cfn=cf)  # check() asserts NumPy's exception type is raised
    with pytest.raises(Exception):  # and NumPy does raise here (the case is really bad input)
        fn(*bad_args)
    check(fn, *_build(rng, good), cfn=cf)  # and the good entry still works afterwards


def test_non_array_arguments(rng):
    """Lists/tuples are not arrays: `a + b` on a list raises TypeError in Python."""
    cf = compiled(add)
    check(add, make(rng, (3,), "float64"), make(rng, (3,), "float64"), cfn=cf)
    check(add, make(rng, (3,), "float64"), "abc", cfn=cf)  # numpy: UFuncTypeError (TypeError)


def test_wrong_arity():
    cf = compiled(add)
    with pytest.raises(TypeError):
        add(np.ones(3))
    with pytest.raises(TypeError):
        cf(np.ones(3))
