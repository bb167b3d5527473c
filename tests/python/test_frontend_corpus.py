"""The frontend corpus (issue 6): small functions over every construct the capture covers, each
with the number of graphs and graph breaks ``hc.explain`` must report, compared with plain
Python on fresh copies of fresh random inputs: the result, the argument arrays after the call,
and what was printed.

A graph count of 0 with breaks means the function runs as Python (always the right answer);
breaks that resume keep the code around them compiled. The counts are part of the contract: a
change that adds a break or loses a graph shows up here."""
from __future__ import annotations

import contextlib
import io
import linecache

import numpy as np
import pytest

import numpy_oracle as O
from numpy_oracle import IDENTITY, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="counts graphs of the real compiler")

LOG = []


def vec(n=16):
    return lambda r: r.standard_normal(n)


def mat(m=6, n=5):
    return lambda r: r.standard_normal((m, n))


def ints(n=8):
    return lambda r: r.integers(-50, 50, n)


def scalar(v):
    return lambda r: v


# (name, body lines of `def f(<params>)`, params, argument makers, keyword makers, graphs, breaks)
CORPUS = [
    # -- straight-line code and returns
    ("arith", "return x * 2.0 + y", "x, y", [vec(), vec()], {}, 1, 0),
    ("ufuncs", "return np.exp(np.sin(x)) - np.tanh(y)", "x, y", [vec(), vec()], {}, 1, 0),
    ("reduce_axis", "return x.sum(axis=0), x.max(axis=1, keepdims=True)", "x", [mat()], {}, 1, 0),
    ("matmul", "return x @ y.T", "x, y", [mat(), mat()], {}, 1, 0),
    ("where_clip", "return np.where(x > 0, x, 0.1 * x).clip(-1, 1)", "x", [vec()], {}, 1, 0),
    ("int_math", "return (x // 3) % 5 + np.abs(x)", "x", [ints()], {}, 1, 0),
    ("astype", "return (x * 10).astype(np.int32) + 1", "x", [vec()], {}, 1, 0),
    ("return_scalar", "return float(2.5)", "x", [vec()], {}, 1, 0),      # an empty graph
    ("return_tuple_mixed", "return x.mean(), x.shape, 'ok'", "x", [mat()], {}, 1, 0),
    ("return_list", "return [x + 1, x - 1]", "x", [vec()], {}, 1, 0),
    ("return_dict", "return {'lo': x.min(), 'hi': x.max()}", "x", [vec()], {}, 1, 0),
    ("return_argument", "return x", "x", [vec()], {}, 1, 0),
    ("helper_inlined", "return _norm(x) * 2", "x", [vec()], {}, 1, 0),
    ("static_branch", "return x.sum() if x.ndim == 2 else x * 2", "x", [mat()], {}, 1, 0),
    ("shape_ops", "return x.reshape(-1)[::2], x.T[None], np.expand_dims(x, 0).squeeze()", "x", [mat()], {}, 1, 0),
    ("keepdims_norm", "return (x - x.mean(axis=1, keepdims=True)) / (x.std(axis=1, keepdims=True) + 1e-6)", "x", [mat()], {}, 1, 0),
    # -- writes into arrays
    ("store_slice", "x[1:-1] = 0.5 * (x[:-2] + x[2:])\n    return x", "x", [vec()], {}, 1, 0),
    ("store_int_index", "x[0] = 7.0\n    x[-1] = x[0] * 2", "x", [vec()], {}, 1, 0),
    ("store_2d_border", "x[:, -1] = 0.0\n    x[0, :] = 1.0\n    return x.sum()", "x", [mat()], {}, 1, 0),
    ("store_step", "x[::3] = -x[::3]", "x", [vec()], {}, 1, 0),
    ("store_ellipsis", "x[...] = y + 1", "x, y", [vec(), vec()], {}, 1, 0),
    ("iadd_arg", "x += y\n    x *= 2", "x, y", [vec(), vec()], {}, 1, 0),
    ("iadd_slice", "x[2:] -= x[:-2]", "x", [vec()], {}, 1, 0),
    ("ufunc_out", "np.add(x, y, out=x)\n    np.multiply(y, 2, out=y)", "x, y", [vec(), vec()], {}, 1, 0),
    ("copyto", "np.copyto(x, y * 3)", "x, y", [vec(), vec()], {}, 1, 0),
    ("view_writes_through", "v = x[1:5]\n    v[:] = 0\n    return x", "x", [vec()], {}, 1, 0),
    ("transpose_view_write", "x.T[0] = 1.0", "x", [mat()], {}, 1, 0),
    ("local_array_store", "z = np.zeros_like(x)\n    z[1:] = x[:-1]\n    return z", "x", [vec()], {}, 1, 0),
    ("rhs_reads_written", "x[1:] = x[:-1]", "x", [vec()], {}, 1, 0),
    ("gemm_store", "c[:] = 1.5 * a @ b + 0.5 * c", "a, b, c", [mat(6, 4), mat(4, 5), mat(6, 5)], {}, 1, 0),
    ("int_store", "x[x.size // 2:] = 0", "x", [ints()], {}, 1, 0),
    # -- loops
    ("loop_short_unrolled", "for _ in range(3):\n        x = x * 0.5 + 1\n    return x", "x", [vec()], {}, 1, 0),
    ("loop_index_var", "s = 0.0\n    for i in range(4):\n        s = s + x[i] * i\n    return s", "x", [vec()], {}, 1, 0),
    ("loop_outlined", "for _ in range(20):\n        x[1:-1] = 0.5 * (x[:-2] + x[2:])\n    return x", "x", [vec()], {}, 1, 1),
    ("loop_outlined_state", "y = x * 1.0\n    for _ in range(12):\n        y = np.tanh(y)\n    return y", "x", [vec()], {}, 2, 1),
    ("loop_over_tuple", "s = x * 0\n    for w in (1.0, 2.0, 3.0):\n        s = s + w * x\n    return s", "x", [vec()], {}, 1, 0),
    ("loop_over_rows", "acc = 0\n    for row in x:\n        acc = acc + row\n    return acc", "x", [mat()], {}, 1, 0),
    ("loop_enumerate", "out = []\n    for i, v in enumerate([x, y]):\n        out.append(v * i)\n    return out", "x, y", [vec(), vec()], {}, 1, 0),
    ("loop_zip", "return [a * b for a, b in zip([x, y], [y, x])]", "x, y", [vec(), vec()], {}, 1, 0),
    ("while_python", "n = 0\n    while n < 4:\n        x = x + n\n        n += 1\n    return x", "x", [vec()], {}, 1, 0),
    ("loop_shape_bound", "for i in range(x.shape[0]):\n        x[i] = x[i] * (i + 1)", "x", [vec(6)], {}, 1, 0),
    ("nested_short_loops", "for i in range(2):\n        for j in range(2):\n            x = x + i * j\n    return x", "x", [vec()], {}, 1, 0),
    ("comprehension", "return sum([x ** k for k in range(3)])", "x", [vec()], {}, 1, 0),
    # -- graph breaks that resume
    ("print_mid", "y = x * 2\n    print('y', y.shape)\n    return y + 1", "x", [vec()], {}, 2, 1),
    ("item_mid", "s = x.sum().item()\n    return x * s", "x", [vec()], {}, 2, 1),
    ("float_mid", "s = float(x.max())\n    return x - s", "x", [vec()], {}, 2, 1),
    ("int_mid", "k = int(x.size)\n    return x * k", "x", [vec()], {}, 1, 0),
    ("branch_on_array", "if x.sum() > 0:\n        return x * 2\n    return x - 1", "x", [vec()], {}, 2, 1),
    ("unknown_library", "d = np.linalg.det(x)\n    return x * d", "x", [mat(4, 4)], {}, 1, 1),
    ("builtin_max", "m = max(x)\n    return x / m", "x", [vec()], {}, 1, 1),
    ("fstring", "s = f'{x.sum():.3f}'\n    return x * len(s)", "x", [vec()], {}, 2, 1),
    ("global_list_append", "y = x * 2\n    LOG.append(float(y[0]))\n    return y", "x", [vec()], {}, 1, 2),
    ("two_prints", "print('a')\n    y = x + 1\n    print('b')\n    return y * 2", "x", [vec()], {}, 2, 2),
    ("break_in_helper", "return _shout(x) * 3", "x", [vec()], {}, 1, 1),
    ("write_then_print", "x[0] = 5.0\n    print(x[0])\n    x[1] = 6.0\n    return x", "x", [vec()], {}, 2, 1),
    ("branch_then_store", "if x[0] > 0:\n        x[:] = 1.0\n    else:\n        x[:] = -1.0", "x", [vec()], {}, 2, 1),
    # -- breaks that cannot resume: the whole function runs as Python
    ("print_in_loop", "for i in range(3):\n        print(i)\n        x = x + 1\n    return x", "x", [vec()], {}, 0, 1),
    ("try_block", "try:\n        y = x * 2\n        print('in try')\n    except ValueError:\n        y = x\n    return y", "x", [vec()], {}, 0, 1),
    ("with_block", "with np.errstate(all='ignore'):\n        y = np.log(x)\n        print('in with')\n    return y", "x", [vec()], {}, 0, 2),
    ("unsupported_dtype_arg", "return x + 1", "x", [lambda r: r.standard_normal(4).astype(np.complex128)], {}, 0, 1),
    ("advanced_index", "return x[[0, 2, 3]]", "x", [vec()], {}, 0, 1),
    ("nested_function_cell", "k = 2.0\n    g = lambda v: v * k\n    print('cell')\n    return g(x)", "x", [vec()], {}, 0, 1),
    # -- arguments, containers, guards
    ("default_arg", "return x * scale", "x, scale=3.0", [vec()], {}, 1, 0),
    ("keyword_call", "return x - y", "x, y", [vec()], {"y": vec()}, 1, 0),
    ("kwonly", "return x * w + b", "x, *, w, b=0.5", [vec()], {"w": vec()}, 1, 0),
    ("varargs", "return sum(xs) / len(xs)", "*xs", [vec(), vec(), vec()], {}, 1, 0),
    ("varkw", "return x * kw['a'] + kw['b']", "x, **kw", [vec()], {"a": vec(), "b": scalar(2.0)}, 1, 0),
    ("tuple_arg", "a, b = pair\n    return a @ b", "pair", [lambda r: (r.standard_normal((3, 4)), r.standard_normal((4, 2)))], {}, 1, 0),
    ("list_arg", "return np.maximum(xs[0], xs[1]) + xs[2]", "xs", [lambda r: [r.standard_normal(5) for _ in range(3)]], {}, 1, 0),
    ("dict_arg", "return p['w'] @ x + p['b']", "x, p", [vec(4), lambda r: {"w": r.standard_normal((3, 4)), "b": r.standard_normal(3)}], {}, 1, 0),
    ("nested_arg", "return cfg['layers'][0] @ x * cfg['scale']", "x, cfg", [vec(4), lambda r: {"layers": [r.standard_normal((2, 4))], "scale": 0.5}], {}, 1, 0),
    ("write_through_list", "xs[0][:] = xs[1]", "xs", [lambda r: [r.standard_normal(5), r.standard_normal(5)]], {}, 1, 0),
    ("mutates_list_arg", "xs.append(xs[0] * 2)\n    return len(xs)", "xs", [lambda r: [r.standard_normal(5)]], {}, 0, 1),
    ("python_int_arg", "return x * n + n", "x, n", [vec(), scalar(3)], {}, 1, 0),
    ("dtype_arg", "return x.astype(dt)", "x, dt", [vec(), scalar(np.float32)], {}, 1, 0),
    ("ufunc_arg", "return fn(x)", "x, fn", [vec(), scalar(np.cos)], {}, 1, 0),
    ("shape_tuple_arg", "return x.reshape(shape)", "x, shape", [mat(), scalar((5, 6))], {}, 1, 0),
    ("closure_read", "return x * FACTOR", "x", [vec()], {}, 1, 0),
    ("same_array_twice", "return x is y, x + y", "x, y", [vec(), vec()], {}, 1, 0),
    ("zero_d_arg", "return x * 2 + 1", "x", [lambda r: np.array(r.standard_normal())], {}, 1, 0),
    ("numpy_scalar_arg", "return x * s", "x, s", [vec(), lambda r: np.float32(1.5)], {}, 1, 0),
    ("empty_arg", "return x.sum(axis=0), x * 2", "x", [lambda r: np.zeros((0, 3))], {}, 1, 0),
    ("fortran_arg", "return x.sum(axis=1) + x[:, 0]", "x", [lambda r: np.asfortranarray(r.standard_normal((4, 5)))], {}, 1, 0),
    ("reversed_arg", "return x * 2", "x", [lambda r: r.standard_normal(9)[::-1]], {}, 1, 0),
    ("broadcast_args", "return x[:, None] * y[None, :]", "x, y", [vec(4), vec(5)], {}, 1, 0),
    ("int_and_bool", "return (x > 0) & (x < 10), x.astype(bool).sum()", "x", [ints()], {}, 1, 0),
]

FACTOR = 1.25


def _norm(v):
    return v / np.sqrt((v * v).sum())


def _shout(v):
    print("helper")
    return v + 1


def _function(name, body, params):
    """``f`` from its source, in this module's globals (LOG, FACTOR and the helpers), with the
    text in linecache so that explain can show its lines."""
    text = f"def f({params}):\n    {body}\n"
    filename = f"<corpus-{name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {}
    exec(compile(text, filename, "exec"), globals(), namespace)
    return namespace["f"]


def _call(fn, args, kwargs):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), np.errstate(all="ignore"):
        result = fn(*args, **kwargs)
    return result, out.getvalue()


@pytest.mark.parametrize("name, body, params, makers, kw_makers, graphs, breaks", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus(name, body, params, makers, kw_makers, graphs, breaks, rng):
    f = _function(name, body, params)
    args = [m(rng) for m in makers]
    kwargs = {k: m(rng) for k, m in kw_makers.items()}
    if name == "same_array_twice":
        args[1] = args[0]
    e = hc.explain(f, *O.clone(args), run=True, **O.clone(kwargs))
    assert (e.graph_count, e.graph_break_count) == (graphs, breaks), str(e)
    cf = hc.hcompile(f)
    for _ in range(2):                       # a compile, then the cached entry
        py_args, py_kwargs, hc_args, hc_kwargs = O.clone(args), O.clone(kwargs), O.clone(args), O.clone(kwargs)
        if name == "same_array_twice":
            py_args[1], hc_args[1] = py_args[0], hc_args[0]
        LOG.clear()
        expected, printed = _call(f, py_args, py_kwargs)
        expected_log = list(LOG)
        LOG.clear()
        got, got_printed = _call(cf, hc_args, hc_kwargs)
        O.assert_same_result(got, expected, ops=8)
        O.assert_same_result(hc_args, py_args, ops=8, path="arguments after the call")
        O.assert_same_result(hc_kwargs, py_kwargs, ops=8, path="keyword arguments after the call")
        assert got_printed == printed and LOG == expected_log


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 80
