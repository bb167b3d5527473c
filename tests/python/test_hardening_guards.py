"""Stale results when the world changes: everything a compiled function read from outside its
arguments is guarded (globals, builtins shadowed later, helpers and their ``__code__`` /
``__defaults__`` / ``__kwdefaults__``, ``functools.partial`` objects, closure cells holding
functions, module attributes, classes, dtypes and ufuncs, the function's own defaults).

Every test changes something between calls and checks the compiled result against the plain
Python result each time, and that unchanged code keeps hitting the cache (hits grow, no new
entry). Each test builds its functions in a namespace of its own, so the globals it rewrites
are private to it.
"""
import builtins
import functools
import linecache
import sys
import types

import numpy as np
import pytest

from numpy_oracle import IDENTITY, check, hc, make

pytestmark = pytest.mark.skipif(IDENTITY, reason="guards of the real compiler")

_count = [0]


def namespace(src, **extra):
    """Execute `src` in a fresh module-like namespace (with `np`) and return that dict."""
    _count[0] += 1
    filename = f"<hardening-guards-{_count[0]}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"np": np, "__name__": f"guards_test_{_count[0]}", **extra}
    exec(compile(src, filename, "exec"), ns)
    return ns


def redefine(ns, src):
    """Re-run a definition in the same namespace (a notebook cell run again)."""
    exec(compile(src, "<redefined>", "exec"), ns)


def same_as_python(cf, fn, *args):
    check(fn, *args, cfn=cf)


def stays_cached(cf, fn, *args, calls=5):
    """Repeated calls with nothing changed: no compile, every call a hit."""
    before = cf.cache_info()
    for _ in range(calls):
        same_as_python(cf, fn, *args)
    after = cf.cache_info()
    assert after.entries == before.entries and after.misses == before.misses, (before, after)
    assert after.hits == before.hits + calls, (before, after)


@pytest.fixture
def x(rng):
    return make(rng, (3, 4), "float64")


def test_global_helper_redefined(x):
    ns = namespace("def helper(v):\n    return v + 1\n"
                   "def f(v):\n    return helper(v) * 2\n")
    cf = hc.hcompile(ns["f"], fullgraph=True)
    same_as_python(cf, ns["f"], x)
    stays_cached(cf, ns["f"], x)
    redefine(ns, "def helper(v):\n    return v - 100\n")
    same_as_python(cf, ns["f"], x)
    assert cf.cache_info().entries == 2
    stays_cached(cf, ns["f"], x)


def test_helper_code_defaults_kwdefaults_replaced_in_place(x):
    ns = namespace("def helper(v, k=2.0, *, m=3.0):\n    return v * k + m\n"
                   "def f(v):\n    return helper(v)\n"
                   "def other(v, k=2.0, *, m=3.0):\n    return v - k - m\n")
    f, helper = ns["f"], ns["helper"]
    cf = hc.hcompile(f, fullgraph=True)
    same_as_python(cf, f, x)
    helper.__defaults__ = (5.0,)
    same_as_python(cf, f, x)
    helper.__kwdefaults__ = {"m": -1.0}
    same_as_python(cf, f, x)
    helper.__code__ = ns["other"].__code__       # what IPython's autoreload does
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)
    assert cf.cache_info().entries == 4


def test_helper_defaults_gained_later_are_unused_and_mutable_ones_are_not_captured(x):
    ns = namespace("def helper(v, k):\n    return v * k\n"
                   "def f(v):\n    return helper(v, 2)\n"
                   "def g(v, acc=[1.0]):\n    return v * acc[0]\n"
                   "def h(v):\n    return g(v)\n")
    cf = hc.hcompile(ns["f"], fullgraph=True)
    same_as_python(cf, ns["f"], x)
    ns["helper"].__defaults__ = (7,)          # every argument is passed: nothing changes
    stays_cached(cf, ns["f"], x)
    with pytest.raises(hc.Unsupported, match="default value"):
        hc.hcompile(ns["h"], fullgraph=True)(x)
    ch = hc.hcompile(ns["h"])                 # runs as Python, so it follows the list
    np.testing.assert_array_equal(ch(x), x)
    ns["g"].__defaults__[0][0] = 3.0
    np.testing.assert_array_equal(ch(x), x * 3.0)


def test_own_defaults_and_code(x):
    ns = namespace("def f(v, k=2.0):\n    return v * k\n"
                   "def g(v, k=2.0):\n    return v + k\n")
    f = ns["f"]
    cf = hc.hcompile(f, fullgraph=True)
    same_as_python(cf, f, x)
    f.__defaults__ = (-3.0,)
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)
    f.__code__ = ns["g"].__code__
    same_as_python(cf, f, x)
    np.testing.assert_array_equal(cf(x, 1.0), x + 1.0)
    stays_cached(cf, f, x)


@pytest.mark.parametrize("name, shadow, expr", [
    ("abs", "def abs(v):\n    return v * 7\n", "abs(v)"),
    ("max", "def max(a, b):\n    return a + b\n", "v * max(2, 3)"),
    ("len", "def len(a):\n    return 10\n", "v + len(v)"),
    ("range", "def range(n):\n    return (1, 2)\n", "sum([v * i for i in range(3)])"),
])
def test_builtin_shadowed_then_restored(x, name, shadow, expr):
    ns = namespace(f"def f(v):\n    return {expr}\n")
    f = ns["f"]
    cf = hc.hcompile(f, fullgraph=True)
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)
    redefine(ns, shadow)
    same_as_python(cf, f, x)
    assert cf.cache_info().entries == 2
    del ns[name]                              # the builtin again: the first entry applies
    stays_cached(cf, f, x)
    assert cf.cache_info().entries == 2


def test_builtins_module_patched(x):
    ns = namespace("def f(v):\n    return abs(v)\n")
    cf = hc.hcompile(ns["f"], fullgraph=True)
    same_as_python(cf, ns["f"], x)
    original = builtins.abs
    try:
        builtins.abs = lambda v: v * 3
        same_as_python(cf, ns["f"], x)
    finally:
        builtins.abs = original
    stays_cached(cf, ns["f"], x)


@pytest.mark.parametrize("before, after, expr", [
    ("np.float32", "np.float64", "v.astype(T)"),
    ("np.dtype('int32')", "np.dtype('int16')", "(v * 100).astype(T)"),
    ("np.exp", "np.sin", "T(v)"),
    ("np.add", "np.multiply", "T(v, 3.0)"),
    ("np.float32(2.5)", "np.float32(-1.5)", "v * T"),
    ("(2, 6)", "(6, 2)", "v.reshape(T)"),
    ("np", "types.SimpleNamespace(exp=np.sin)", "T.exp(v)"),
])
def test_global_class_dtype_ufunc_scalar_module(x, before, after, expr):
    ns = namespace(f"import types\nT = {before}\ndef f(v):\n    return {expr}\n")
    f = ns["f"]
    cf = hc.hcompile(f, fullgraph=True)
    same_as_python(cf, f, x)
    redefine(ns, f"T = {after}\n")
    if isinstance(ns["T"], types.SimpleNamespace):
        with pytest.raises(hc.Unsupported):     # not a module: its attributes are not guarded
            cf(x)
        return
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)
    redefine(ns, f"T = {before}\n")            # an equal new object
    same_as_python(cf, f, x)


def test_numpy_attribute_through_global_module(x):
    fake = types.ModuleType("fake_numpy_for_guards")
    fake.exp = np.sin
    ns = namespace("def f(v):\n    return xp.exp(v)\n", xp=np)
    cf = hc.hcompile(ns["f"], fullgraph=True)
    same_as_python(cf, ns["f"], x)
    ns["xp"] = fake
    same_as_python(cf, ns["f"], x)
    ns["xp"] = np
    stays_cached(cf, ns["f"], x)
    assert cf.cache_info().entries == 2


@pytest.fixture
def user_module():
    name = "hcompile_guards_user_module"
    mod = types.ModuleType(name)
    exec("import numpy as np\nSCALE = 2.0\ndef helper(v):\n    return v * SCALE\n", vars(mod))
    sys.modules[name] = mod
    yield mod
    del sys.modules[name]


def test_user_module_attributes(x, user_module):
    ns = namespace("def f(v):\n    return mod.helper(v) + mod.SCALE\n"
                   "def g(v):\n    return mod.helper(v)\n"
                   "def h(v):\n    import hcompile_guards_user_module as m\n    return m.helper(v)\n",
                   mod=user_module)
    cfs = {k: hc.hcompile(ns[k], fullgraph=True) for k in "fgh"}
    for k, cf in cfs.items():
        same_as_python(cf, ns[k], x)
    user_module.SCALE = -4.0                   # read by f directly, and by helper's own body
    for k, cf in cfs.items():
        same_as_python(cf, ns[k], x)
    exec("def helper(v):\n    return v - SCALE\n", vars(user_module))
    for k, cf in cfs.items():
        same_as_python(cf, ns[k], x)
        stays_cached(cf, ns[k], x)
        assert cf.cache_info().entries == 3


def test_helper_from_another_module_reads_its_scalar_global(x, user_module):
    ns = namespace("def f(v):\n    return helper(v)\n", helper=user_module.helper)
    cf = hc.hcompile(ns["f"], fullgraph=True)
    same_as_python(cf, ns["f"], x)
    user_module.SCALE = 10.0
    same_as_python(cf, ns["f"], x)
    stays_cached(cf, ns["f"], x)


def test_partial_objects(x):
    ns = namespace("import functools\n"
                   "def scale(v, k, *, bias=0.0):\n    return v * k + bias\n"
                   "p = functools.partial(scale, k=2.0, bias=1.0)\n"
                   "q = functools.partial(scale, 3.0)\n"
                   "def f(v):\n    return p(v) + q(v)\n")
    f = ns["f"]
    cf = hc.hcompile(f, fullgraph=True)
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)
    redefine(ns, "p = functools.partial(scale, k=-1.0, bias=1.0)\n")
    same_as_python(cf, f, x)
    ns["q"].__setstate__((ns["scale"], (5.0,), {}, None))   # the one in-place change partial has
    same_as_python(cf, f, x)
    ns["p"].keywords["bias"] = 9.0                          # its keywords dict is a plain dict
    same_as_python(cf, f, x)
    ns["scale"].__code__ = (lambda v, k, *, bias=0.0: v - k - bias).__code__
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)


def test_function_valued_closure_cells(x):
    ns = namespace("def make(h, k):\n"
                   "    def f(v):\n        return h(v) * k\n"
                   "    return f\n"
                   "def outer_helper():\n"
                   "    n = 3.0\n"
                   "    def inner(v):\n        return v + n\n"
                   "    return inner\n")
    inner = ns["outer_helper"]()
    f = ns["make"](inner, 2.0)
    cf = hc.hcompile(f, fullgraph=True)
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)
    inner.__closure__[0].cell_contents = -7.0      # a helper's own closure cell
    same_as_python(cf, f, x)
    f.__closure__[0].cell_contents = np.negative   # the function-valued cell itself
    same_as_python(cf, f, x)
    f.__closure__[0].cell_contents = lambda v: v * v
    same_as_python(cf, f, x)
    stays_cached(cf, f, x)


def test_recursive_helper_chain(x):
    """What a helper's helper read is guarded too."""
    ns = namespace("def a(v):\n    return b(v) + 1\n"
                   "def b(v):\n    return c(v) * 2\n"
                   "def c(v):\n    return v - OFFSET\n"
                   "OFFSET = 1.0\n"
                   "def f(v):\n    return a(v)\n")
    cf = hc.hcompile(ns["f"], fullgraph=True)
    same_as_python(cf, ns["f"], x)
    ns["OFFSET"] = 4.0
    same_as_python(cf, ns["f"], x)
    redefine(ns, "def c(v):\n    return v * OFFSET\n")
    same_as_python(cf, ns["f"], x)
    stays_cached(cf, ns["f"], x)
    assert cf.cache_info().entries == 3


def test_mutable_globals_run_as_python(x):
    ns = namespace("W = [1.0, 2.0]\nC = {'k': 2.0}\nLOG = []\nlog = LOG.append\n"
                   "def f(v):\n    return v * W[1]\n"
                   "def g(v):\n    return v * C['k']\n"
                   "def h(v):\n    log(1)\n    return v * len(LOG)\n")
    for name, change in (("f", lambda: ns["W"].__setitem__(1, 5.0)),
                         ("g", lambda: ns["C"].__setitem__("k", -1.0))):
        with pytest.raises(hc.Unsupported, match="cannot be guarded"):
            hc.hcompile(ns[name], fullgraph=True)(x)
        cf = hc.hcompile(ns[name])
        np.testing.assert_array_equal(cf(x), ns[name](x))
        change()
        np.testing.assert_array_equal(cf(x), ns[name](x))
    with pytest.raises(hc.Unsupported, match="cannot be guarded"):   # a bound LOG.append
        hc.hcompile(ns["h"], fullgraph=True)(x)
    ch = hc.hcompile(ns["h"])
    for n in range(1, 4):                     # the append happens on every call, as in Python
        np.testing.assert_array_equal(ch(x), x * n)
        assert len(ns["LOG"]) == n


def test_unchanged_code_does_not_recompile(x):
    ns = namespace("import functools\nSCALE = 2.0\n"
                   "def helper(v, k=1.0):\n    return np.exp(v) * k\n"
                   "part = functools.partial(helper, k=3.0)\n"
                   "def f(v):\n    return helper(v) + part(v) * SCALE + abs(v) + max(1, 2)\n")
    cf = hc.hcompile(ns["f"], fullgraph=True)
    same_as_python(cf, ns["f"], x)
    stays_cached(cf, ns["f"], x, calls=50)
    assert cf.cache_info().entries == 1 and cf.cache_info().recompiles == 0


def test_explain_lists_the_guards(x):
    ns = namespace("def helper(v):\n    return v + 1\ndef f(v):\n    return helper(v) + abs(v)\n")
    text = str(hc.explain(ns["f"], x))
    assert "helper is <function helper>" in text
    assert "helper.__code__ is" in text
    assert ".abs absent" in text and "builtins.abs is" in text
