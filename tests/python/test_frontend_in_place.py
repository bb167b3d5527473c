"""Written arguments the kernel writes in place (issue 6: "kernels write in place through
strides, no copy of the whole array for a small store"), and the stores it must not write in
place because a read would see a written element (NumPy evaluates the right-hand side first).

Every case is compared with plain Python on fresh copies, arguments included; the in-place
decision is read from the compile report (core/src/lowering/in_place.cpp)."""
import numpy as np
import pytest

import numpy_oracle as O
from numpy_oracle import IDENTITY, fn_from_src, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="the real compiler's kernels")


def _run(src, *args):
    """Python and compiled on copies of ``args``; returns how many outputs were in place."""
    f = fn_from_src(src)
    cf = hc.hcompile(f, fullgraph=True)
    for _ in range(2):                  # the second call runs the cached kernel
        py_args, hc_args = O.clone(args), O.clone(args)
        expected = f(*py_args)
        got = cf(*hc_args)
        O.assert_same_result(got, expected, ops=6)
        O.assert_same_result(list(hc_args), list(py_args), ops=6, path="arguments after the call")
    report = cf.compile_records[-1]["report"]
    return len(report["in_place_outputs"])


JACOBI_2D = ("def f(a, b):\n"
             "    b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])\n"
             "    a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])\n")


@pytest.mark.parametrize("src, n_args, in_place", [
    ("def f(x):\n    x += 1.5\n", 1, 1),
    # The slice's value reads x through an index clamped into the slice (for bounds): its own
    # point wherever the select uses it.
    ("def f(x, y):\n    x[2:-2] = y[2:-2] * 2 + x[2:-2]\n", 2, 1),
    ("def f(x, y):\n    x[1:, :] = x[1:, :] - 0.5 * (y[1:, :] - y[:-1, :])\n", 2, 1),   # FDTD's ey update
    # A stepped slice's own point (2 * (x // 2) where x is even) is beyond the prover: copied.
    ("def f(x):\n    x[1:-1, ::2] -= 0.25 * x[1:-1, ::2]\n", 1, 0),
    ("def f(x):\n    x[1:-1, 1:] += x[1:-1, :-1]\n", 1, 0),                # reads its left neighbour
    ("def f(x, y):\n    x[2:-2] = y[2:-2] * 2\n", 2, 1),
    ("def f(x, y):\n    np.multiply(x, y, out=x)\n    return x\n", 2, 1),
    ("def f(x, y):\n    x[...] = np.sin(y)\n", 2, 1),                   # x's old values unread
    (JACOBI_2D, 2, 2),                                                # b from a, then a from the new b
    ("def f(x):\n    x[1:] += x[:-1]\n", 1, 0),                       # reads a neighbour it writes
    ("def f(x):\n    x[:] = x[::-1]\n", 1, 0),
    ("def f(x):\n    y = x * 2\n    x[...] = 0.0\n    return y\n", 1, 0),   # y must see the old x
    ("def f(x):\n    x -= x.mean(axis=0)\n", 1, None),                # either way: only correctness
    ("def f(x, y):\n    x[1:-1, 1:-1] = x[:-2, 1:-1] + y[1:-1, 1:-1]\n", 2, 0),
])
def test_in_place_only_where_no_read_sees_a_written_element(src, n_args, in_place, rng):
    args = [O.make(rng, (12, 10), "float64") for _ in range(n_args)]
    got = _run(src, *args)
    if in_place is not None:
        assert got == in_place


def test_in_place_keeps_the_callers_array_object(rng):
    f = fn_from_src("def f(x):\n    x *= 3.0\n    return x\n")
    x = O.make(rng, (1000,), "float32")
    expected = x * np.float32(3.0)
    cf = hc.hcompile(f)
    out = cf(x)
    assert out is x and np.array_equal(x, expected)
    assert cf.compile_records[-1]["report"]["in_place_outputs"]


@pytest.mark.parametrize("view", [np.asfortranarray, lambda b: b[::-1], lambda b: b[:, ::2], lambda b: b.T])
def test_arguments_not_c_contiguous_are_copied_back_not_written_in_place(view, rng):
    x = view(O.make(rng, (9, 8), "float64"))
    assert not x.flags.c_contiguous
    assert _run("def f(x):\n    x += 1.0\n", x) == 0


def test_outlined_time_loop_writes_both_arrays_in_place(rng):
    src = ("def f(a, b, steps):\n"
           "    for _ in range(steps):\n"
           "        b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0\n"
           "        a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0\n"
           "    return a\n")
    f = fn_from_src(src)
    a, b = O.make(rng, (300,), "float64"), O.make(rng, (300,), "float64")
    pa, pb, ha, hb = a.copy(), b.copy(), a.copy(), b.copy()
    cf = hc.hcompile(f)
    O.assert_same_result(cf(ha, hb, 50), f(pa, pb, 50), ops=200)
    O.assert_same_result([ha, hb], [pa, pb], ops=200)
    body = [res for r in cf.compile_records for res in r["resumes"] if "loop_body" in res.__name__]
    in_place = [len(r["report"]["in_place_outputs"]) for r in body[0].compile_records]
    assert in_place == [2], in_place        # the loop body's kernel writes a and b where they live
