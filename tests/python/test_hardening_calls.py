"""Calling a compiled function like the Python one: binding errors are Python's own TypeError,
word for word; defaults are the function's defaults at call time; ``hc.explain`` compiles
without running the function (no side effects)."""
import inspect

import numpy as np
import pytest

from numpy_oracle import IDENTITY, fn_from_src, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="the real compiler's call path")

X = np.arange(4.0)

BAD_CALLS = [
    ("def f(x, y):\n    return x + y\n", (X, X, X), {}),
    ("def f(x, y):\n    return x + y\n", (X,), {}),
    ("def f(x, y):\n    return x + y\n", (), {}),
    ("def f(x, y):\n    return x + y\n", (X, X), {"z": 1}),
    ("def f(x, y):\n    return x + y\n", (X,), {"x": X}),
    ("def f(x, y=2):\n    return x + y\n", (X, 1, 2), {}),
    ("def f(x, y=2):\n    return x + y\n", (), {"y": 3}),
    ("def f(x, /, y):\n    return x + y\n", (), {"x": X, "y": X}),
    ("def f(x, *, k=1):\n    return x * k\n", (X, 2), {}),
    ("def f(*xs):\n    return xs[0]\n", (), {"a": X}),
    ("def f(x, **kw):\n    return x\n", (X, X), {}),
]


@pytest.mark.parametrize("src, args, kwargs", BAD_CALLS)
def test_binding_errors_are_pythons(src, args, kwargs):
    f = fn_from_src(src)
    with pytest.raises(TypeError) as expected:
        f(*args, **kwargs)
    for options in ({}, {"fullgraph": True}):
        cf = hc.hcompile(f, **options)
        code = f.__code__
        cf(*(X,) * (code.co_argcount + bool(code.co_flags & inspect.CO_VARARGS)), **{name: X for name in code.co_varnames[
            code.co_argcount:code.co_argcount + code.co_kwonlyargcount]})   # an entry exists, too
        with pytest.raises(TypeError) as got:
            cf(*args, **kwargs)
        assert type(got.value) is type(expected.value)
        assert str(got.value) == str(expected.value)


def test_binding_error_of_a_method_names_the_class():
    class A:
        def f(self, x):
            return x + 1
        g = hc.hcompile(f)
    with pytest.raises(TypeError) as expected:
        A().f(X, X)
    with pytest.raises(TypeError) as got:
        A().g(X, X)
    assert str(got.value) == str(expected.value)


def test_defaults_and_keywords_follow_the_function():
    f = fn_from_src("def f(x, k=2.0, b=0):\n    return x * k + b\n")
    cf = hc.hcompile(f, fullgraph=True)
    for call in [((X,), {}), ((X, 3.0), {}), ((X,), {"b": 1}), ((), {"x": X, "k": -1.0})]:
        np.testing.assert_array_equal(cf(*call[0], **call[1]), f(*call[0], **call[1]))
    f.__defaults__ = (5.0, 7)
    np.testing.assert_array_equal(cf(X), f(X))
    f.__defaults__ = (2.0, 0)


def test_positional_calls_are_served_without_python_binding():
    """_C.CallFront (bind_call_front.cpp): positional calls, trailing defaults filled in as they
    are at call time, reach the entries from C++; a __code__ of another arity replaced later
    still binds as Python binds it."""
    def f(x, k=2.0, b=0):
        return x * k + b

    def later(x):
        return x - 1

    cf = hc.hcompile(f)
    cf(X)
    before = cf.cache_info()
    for _ in range(3):
        np.testing.assert_array_equal(cf(X), f(X))
    after = cf.cache_info()
    assert (after.hits, after.misses) == (before.hits + 3, before.misses)
    # The same completion serves the GPU path's binding (CompiledFunction._cuda_positional).
    assert cf._with_trailing_defaults((X,)) == (X, 2.0, 0)
    assert cf._with_trailing_defaults((X, 1.0, 2, 3)) is None
    f.__code__ = later.__code__
    f.__defaults__ = None
    np.testing.assert_array_equal(cf(X), X - 1)
    with pytest.raises(TypeError) as expected:
        f(X, 2.0)
    with pytest.raises(TypeError) as got:
        cf(X, 2.0)
    assert str(got.value) == str(expected.value)


LOG = []


def _logs_and_adds(x):
    LOG.append("ran")
    return x + 1


def _prints(x):
    print("side effect")
    return x + 1


def test_explain_does_not_run_the_function(capsys):
    LOG.clear()
    e = hc.explain(_logs_and_adds, X, run=False)
    assert LOG == [] and e.graph_break_count == 1 and e.ran_function is False
    e = hc.explain(_logs_and_adds, X)          # the break resumes: explain runs it, and says so
    assert LOG == ["ran"] and e.ran_function is True and "side effects happened" in str(e)
    LOG.clear()
    e = hc.explain(_prints, X, run=False)
    assert "side effect" not in capsys.readouterr().out
    assert e.graph_break_count == 1
    assert "without running the function" in str(e)
    ok = hc.explain(fn_from_src("def f(x):\n    return x * 2\n"), X)
    assert ok.graph_count == 1 and ok.graph_break_count == 0


def test_explain_compiles_varargs_and_rejects_bad_calls():
    e = hc.explain(fn_from_src("def f(*xs, k=2, **kw):\n    return xs[0] * k + kw['b']\n"), X, b=X)
    assert e.graph_count == 1 and e.graph_break_count == 0
    with pytest.raises(TypeError):
        hc.explain(fn_from_src("def f(x):\n    return x\n"), X, X)


SIGNATURES = ["x, y", "x, y=2", "x, /, y", "x, y=2, /, z=3", "x, *rest", "x, *, k", "x, *, k=1",
              "x, y=2, /, z=3, *a, k, m=1, **kw", "x, **kw", "*a, **kw", "x, /, **kw"]
CALLS = [((), {}), ((1,), {}), ((1, 2), {}), ((1, 2, 3), {}), ((1, 2, 3, 4), {}),
         ((1,), {"y": 5}), ((1,), {"x": 5}), ((), {"x": 1, "y": 2}), ((1,), {"k": 4}),
         ((1, 2), {"k": 4, "z": 6}), ((1, 2), {"y": 7, "k": 1}), ((1,), {"q": 0}),
         ((), {"x": 1, "k": 2, "m": 3, "extra": 4})]


@pytest.mark.parametrize("signature", SIGNATURES)
def test_capture_binding_is_pythons(signature):
    """The capture's own binding (used for inlined helpers and the compiled function) gives the
    locals Python gives, or Python's TypeError message."""
    from hcompile.capture.interpreter import bind_arguments
    f = fn_from_src(f"def f({signature}):\n    return dict(locals())\n")
    for args, kwargs in CALLS:
        try:
            want = f(*args, **kwargs)
        except TypeError as e:
            with pytest.raises(TypeError) as got:
                bind_arguments(f, args, kwargs)
            assert str(got.value) == str(e)
            continue
        assert bind_arguments(f, args, kwargs) == want


def test_helper_called_wrongly_raises_pythons_message():
    f = fn_from_src("def helper(v, k):\n    return v * k\n"
                    "def f(x):\n    return helper(x, 1, 2)\n")
    with pytest.raises(TypeError) as expected:
        f(X)
    with pytest.raises(TypeError) as got:
        hc.hcompile(f)(X)                          # runs as Python: Python's own error
    assert str(got.value) == str(expected.value)
    with pytest.raises(TypeError) as got:
        hc.hcompile(f, fullgraph=True)(X)          # Unsupported that is a TypeError
    assert isinstance(got.value, hc.Unsupported)
    assert str(expected.value) in str(got.value)
