"""Arguments and results with structure (issue 6): tuples, lists and dicts of arrays and scalars,
nested; keyword arguments, defaults, keyword-only parameters, ``*args`` and ``**kwargs``.

Each function is compared with plain Python on fresh inputs (its arguments too, after the call),
and must compile (one graph, no break) unless the test says why it runs as Python."""
import numpy as np
import pytest

import numpy_oracle as O
from numpy_oracle import IDENTITY, fn_from_src, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="the real compiler's call path")


def _arrays(rng, *shapes, dtype="float64"):
    return [O.make(rng, s, dtype) for s in shapes]


def _check(src, args, kwargs=None, *, compiles=True, calls=2):
    """Python and compiled on clones; the compiled side called ``calls`` times (later calls hit
    the cache). Returns the compiled function."""
    f = fn_from_src(src)
    kwargs = kwargs or {}
    cf = hc.hcompile(f)
    for _ in range(calls):
        py_args, py_kwargs = O.clone(args), O.clone(kwargs)
        hc_args, hc_kwargs = O.clone(args), O.clone(kwargs)
        expected = f(*py_args, **py_kwargs)
        got = cf(*hc_args, **hc_kwargs)
        O.assert_same_result(got, expected, ops=4)
        O.assert_same_result(hc_args, py_args, ops=4, path="arguments after the call")
        O.assert_same_result(hc_kwargs, py_kwargs, ops=4, path="keyword arguments after the call")
    compiled = [r for r in cf.compile_records if r["report"] is not None]
    if compiles:
        assert compiled and all(r["break"] is None for r in cf.compile_records), cf.compile_records
        info = cf.cache_info()
        assert info.entries == 1 and info.hits == calls - 1, info
    else:
        assert not compiled
    return cf


CASES = [
    # (name, source, args builder (rng -> (args, kwargs)))
    ("tuple_unpack", "def f(pair):\n    a, b = pair\n    return a * 2 - b\n",
     lambda r: ((tuple(_arrays(r, (3, 4), (3, 4))),), {})),
    ("list_sum", "def f(xs):\n    return sum(xs)\n", lambda r: ((_arrays(r, (5,), (5,), (5,)),), {})),
    ("list_index_len", "def f(xs):\n    return xs[-1] * len(xs) + xs[0]\n",
     lambda r: ((_arrays(r, (2, 3), (2, 3)),), {})),
    ("dict_of_arrays", "def f(d):\n    return d['w'] @ d['x'] + d['b']\n",
     lambda r: (({"w": O.make(r, (4, 3), "float64"), "x": O.make(r, (3,), "float64"),
                  "b": O.make(r, (4,), "float64")},), {})),
    ("dict_items_loop", "def f(d):\n    s = 0.0\n    for k, v in d.items():\n        s = s + v.sum()\n    return s\n",
     lambda r: (({"a": O.make(r, (6,), "float64"), "b": O.make(r, (2, 2), "float64")},), {})),
    ("dict_config_scalars", "def f(x, cfg):\n    return np.clip(x * cfg['scale'], cfg['lo'], cfg['hi'])\n",
     lambda r: ((O.make(r, (8,), "float32"), {"scale": 2.5, "lo": -1.0, "hi": 1.0}), {})),
    ("nested", "def f(batch):\n    (a, b), rest = batch['pair'], batch['rest']\n    return a + b + rest[0][1]\n",
     lambda r: (({"pair": tuple(_arrays(r, (3,), (3,))), "rest": [[1.0, O.make(r, (3,), "float64")]]},), {})),
    ("zip_two_lists", "def f(xs, ys):\n    return [a * b for a, b in zip(xs, ys)]\n",
     lambda r: ((_arrays(r, (4,), (4,)), _arrays(r, (4,), (4,))), {})),
    ("varargs", "def f(*xs):\n    out = xs[0]\n    for x in xs[1:]:\n        out = np.maximum(out, x)\n    return out\n",
     lambda r: (tuple(_arrays(r, (7,), (7,), (7,), (7,))), {})),
    ("varargs_empty_tail", "def f(x, *rest):\n    return x + len(rest)\n", lambda r: ((O.make(r, (3,), "int32"),), {})),
    ("kwonly_default", "def f(x, *, scale=2.0, shift=0.0):\n    return x * scale + shift\n",
     lambda r: ((O.make(r, (5,), "float32"),), {"shift": 1.5})),
    ("kwonly_array", "def f(x, *, y):\n    return x - y\n", lambda r: ((O.make(r, (5,), "float64"),), {"y": O.make(r, (5,), "float64")})),
    ("varkw", "def f(x, **terms):\n    for name in sorted(terms):\n        x = x + terms[name]\n    return x\n",
     lambda r: ((O.make(r, (2, 3), "float64"),), {"b": O.make(r, (3,), "float64"), "a": 1.0})),
    ("everything", "def f(x, y=1.0, /, z=2.0, *extra, k, m=3, **kw):\n"
                   "    return x * y + z + sum(extra) + k * m + kw.get('q', 0)\n",
     lambda r: ((O.make(r, (4,), "float64"), 2.0, 3.0, O.make(r, (4,), "float64")), {"k": O.make(r, (4,), "float64"), "q": 5})),
    ("return_dict", "def f(x):\n    return {'sum': x.sum(), 'parts': (x[:2], x[2:] * 2), 'n': x.size}\n",
     lambda r: ((O.make(r, (6,), "float64"),), {})),
    ("return_argument_leaf", "def f(xs):\n    return xs[1], xs[0] + 1\n", lambda r: ((_arrays(r, (3,), (3,)),), {})),
    ("write_through_list", "def f(xs):\n    xs[0][1:] = xs[1][:-1] * 2\n    xs[1] += 1\n    return xs[0].sum()\n",
     lambda r: ((_arrays(r, (5,), (5,)),), {})),
    ("odd_inputs", "def f(t):\n    a, b, c = t\n    return a + b.sum() + c.T[::-1]\n",
     lambda r: (((np.float64(2.0), np.zeros((0, 3)), O.make(r, (3, 4), "float64", layout="F")),), {})),
    ("scalar_leaves", "def f(x, ks):\n    return x * ks[0] + ks[1]\n", lambda r: ((O.make(r, (3,), "int64"), [3, 4]), {})),
]


@pytest.mark.parametrize("name, src, make", CASES, ids=[c[0] for c in CASES])
def test_structured_arguments_compile_and_match_python(name, src, make, rng):
    args, kwargs = make(rng)
    _check(src, args, kwargs)


def test_a_changed_structure_is_a_new_entry_and_leaves_are_guarded(rng):
    f = fn_from_src("def f(xs):\n    return sum(xs)\n")
    cf = hc.hcompile(f)
    for xs in (_arrays(rng, (3,), (3,)), _arrays(rng, (3,), (3,), (3,)), _arrays(rng, (3,), (3,)),
               _arrays(rng, (4,), (4,)), _arrays(rng, (3,), (3,), dtype="int32")):
        O.assert_same_result(cf(xs), f(xs))
    info = cf.cache_info()
    assert info.entries == 4 and info.hits == 1, info   # 2-list, 3-list, shape (4,), int32


def test_tuple_and_list_of_the_same_arrays_are_different_structures(rng):
    f = fn_from_src("def f(xs):\n    return type(xs) is list, xs[0] + xs[1]\n")
    cf = hc.hcompile(f)
    a, b = _arrays(rng, (2,), (2,))
    for xs in ([a, b], (a, b), [a, b]):
        O.assert_same_result(cf(xs), f(xs))
    assert cf.cache_info().entries == 2


@pytest.mark.parametrize("src", [
    "def f(xs):\n    xs.append(xs[0] * 2)\n    return len(xs)\n",
    "def f(d):\n    d['c'] = d['a'] + 1\n    return d['c']\n",
    "def f(xs):\n    xs[0] = xs[0] + 1\n    return xs[0]\n",
    "def f(d):\n    del d['a']\n    return len(d)\n",
])
def test_changing_a_list_or_dict_argument_runs_as_python_and_the_caller_sees_it(src, rng):
    f = fn_from_src(src)
    container = {"a": O.make(rng, (3,), "float64")} if "d[" in src or "d)" in src else _arrays(rng, (3,))
    py, compiled_side = O.clone(container), O.clone(container)
    expected = f(py)
    got = hc.hcompile(f)(compiled_side)
    O.assert_same_result(got, expected)
    O.assert_same_result(compiled_side, py, path="the container after the call")


def test_written_leaves_that_alias_run_as_python(rng):
    f = fn_from_src("def f(xs):\n    xs[0][1:] += xs[1][:-1]\n    return xs[0]\n")
    a = O.make(rng, (6,), "float64")
    py, compiled_side = a.copy(), a.copy()
    expected = f([py, py])
    got = hc.hcompile(f)([compiled_side, compiled_side])
    O.assert_same_result(got, expected)
    O.assert_same_result(compiled_side, py)


def test_fullgraph_structured_call(rng):
    f = fn_from_src("def f(x, *, w, **kw):\n    return x @ w + kw['b']\n")
    x, w, bias = O.make(rng, (2, 3), "float64"), O.make(rng, (3, 4), "float64"), O.make(rng, (4,), "float64")
    O.assert_same_result(hc.hcompile(f, fullgraph=True)(x, w=w, b=bias), f(x, w=w, b=bias), ops=4)


def test_too_many_structures_run_as_python(rng, caplog):
    f = fn_from_src("def f(xs):\n    return sum(xs)\n")
    cf = hc.hcompile(f)
    limit = hc.config.recompile_limit
    with caplog.at_level("WARNING", logger="hcompile.graph_breaks"):
        for n in range(1, limit + 3):
            xs = _arrays(rng, *[(2,)] * n)
            O.assert_same_result(cf(xs), f(xs))
    assert cf.cache_info().entries == limit
    assert "argument structures" in caplog.text


def test_containers_past_the_leaf_limit_run_as_python(rng, caplog):
    f = fn_from_src("def f(xs):\n    return xs[0] + xs[-1]\n")
    xs = [np.float64(i) for i in range(300)]
    with caplog.at_level("WARNING", logger="hcompile.graph_breaks"):
        assert hc.hcompile(f)(xs) == f(xs)
    assert "more than 256" in caplog.text


def test_break_in_a_function_taking_a_list_runs_it_as_python(rng, capsys):
    f = fn_from_src("def f(xs):\n    y = xs[0] * 2\n    print('mid')\n    return y + xs[1]\n")
    xs = _arrays(rng, (3,), (3,))
    got = hc.hcompile(f)(xs)
    O.assert_same_result(got, xs[0] * 2 + xs[1])
    assert capsys.readouterr().out == "mid\n"


def test_break_in_a_function_with_keyword_only_arrays_resumes(rng, capsys):
    f = fn_from_src("def f(x, *, y):\n    s = x * y\n    print('mid')\n    return s + y\n")
    x, y = _arrays(rng, (3,), (3,))
    cf = hc.hcompile(f)
    O.assert_same_result(cf(x, y=y), f(x, y=y))
    assert any(r["break"] is not None and r["break"].resumes for r in cf.compile_records)


def test_explain_and_reset_cover_structured_entries(rng):
    f = fn_from_src("def f(d):\n    return d['a'] + d['b']\n")
    d = {"a": O.make(rng, (3,), "float64"), "b": 1.0}
    e = hc.explain(f, d)
    assert e.graph_count == 1 and e.graph_break_count == 0
    cf = hc.hcompile(f)
    cf(d)
    assert cf.cache_info().entries == 1
    cf.reset()
    assert cf.cache_info().entries == 0 and not cf.compile_records
    O.assert_same_result(cf(d), f(d))
