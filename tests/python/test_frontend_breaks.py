"""Graph breaks that resume: the code before a break is compiled, the instruction runs as Python,
the code after it continues in a compiled resume function (frontend/hcompile/resume.py).

Every function is run twice on fresh copies of the same inputs, as plain Python and compiled, and
everything observable is compared: the result, the argument arrays after the call, and what was
printed (side effects happen once, in program order). Where a break cannot resume (inside a loop,
a try block ...) the function must still answer as Python does, and explain says why.
"""
from __future__ import annotations

import io
import contextlib

import numpy as np
import pytest

import hcompile as hc
from numpy_oracle import target_options

RNG = np.random.default_rng(1234)


def _fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _run(fn, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = fn(*args)
        except Exception as e:          # compared by type and message
            result = e
    return result, args, out.getvalue()


def _same(a, b):
    if isinstance(a, Exception) or isinstance(b, Exception):
        assert type(a) is type(b) and str(a) == str(b), (a, b)
        return
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    if isinstance(a, (np.ndarray, np.generic)):
        assert type(a) is type(b), (type(a), type(b))
        assert a.dtype == b.dtype and np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, equal_nan=True)
        return
    assert a == b, (a, b)


def check(fn, *args, calls=3, graphs=None, breaks=None, resumes=True):
    """Compiled ``fn`` against plain ``fn`` for ``calls`` calls on fresh copies of ``args``."""
    compiled = hc.hcompile(fn, **target_options())
    for _ in range(calls):
        expected = _run(fn, _fresh(args))
        got = _run(compiled, _fresh(args))
        _same(got[0], expected[0])
        for a, b in zip(got[1], expected[1]):
            _same(a, b)
        assert got[2] == expected[2], (got[2], expected[2])
    if graphs is not None or breaks is not None:
        with contextlib.redirect_stdout(io.StringIO()):
            e = hc.explain(fn, *_fresh(args))
        if graphs is not None:
            assert e.graph_count == graphs, str(e)
        if breaks is not None:
            assert e.graph_break_count == breaks, str(e)
        assert all(b.resumes == resumes for b in e.break_reasons), str(e)
        return e
    return compiled


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# ---- the instruction that breaks ------------------------------------------------------------------
def print_in_the_middle(x, y):
    a = np.sin(x) * 2 + y
    print("a has shape", a.shape, "and first element", a[0])
    b = a * a + 1
    return b.sum()


def branch_on_array(x):
    s = x.sum()
    if s > 0:
        y = x * 2
    else:
        y = x - 1
    return y + 1


def return_in_both_branches(x):
    if (x > 0).all():
        return np.sqrt(x)
    return np.abs(x) * 3


def item_then_compute(x):
    scale = x.max().item()
    return x / scale


def float_of_a_sum(x):
    total = float(x.sum())
    return x * 2, total


def unknown_library_call(a):
    d = np.linalg.det(a)
    return a * d + 1


def builtin_max_over_arrays(x, y):
    m = max(x.sum(), y.sum())
    return (x + y) * m


def keyword_call(x):
    y = x * 3
    print(y.shape, y.dtype, sep=" | ", end="!\n")
    return y - 1


def two_breaks(x):
    y = x + 1
    print("first")
    z = y * y
    print("second", z.shape)
    return z - y


def _helper_that_prints(t):
    u = t * 2
    print("in helper", u.shape)
    return u + 1


def break_inside_a_helper(x):
    a = x - 1
    b = _helper_that_prints(a)
    return b * a


def format_string_of_array_value(x):
    m = x.mean()
    label = f"mean={m:.3f}"
    return x - m, label


@pytest.mark.parametrize("fn,args,graphs,breaks", [
    (print_in_the_middle, (f32(64), f32(64)), 2, 1),
    (branch_on_array, (f32(50),), 2, 1),
    (return_in_both_branches, (np.abs(f32(20)) + 0.5,), 2, 1),
    (item_then_compute, (f32(30),), 2, 1),
    (float_of_a_sum, (f32(30),), 2, 1),
    (unknown_library_call, (f32(4, 4).astype(np.float64),), 1, 1),   # nothing to compile before
    (builtin_max_over_arrays, (f32(10), f32(10)), 2, 1),
    (keyword_call, (f32(5, 3),), 2, 1),
    (two_breaks, (f32(16),), 3, 2),
    (break_inside_a_helper, (f32(12),), 2, 1),
    (format_string_of_array_value, (f32(12),), 2, 1),
])
def test_break_resumes_and_matches_python(fn, args, graphs, breaks):
    check(fn, *args, graphs=graphs, breaks=breaks)


def test_both_targets_of_a_branch_compile_once_each():
    compiled = hc.hcompile(branch_on_array)
    x = f32(40)
    for sign in (1, -1, 1, -1, 1):
        np.testing.assert_allclose(compiled(sign * np.abs(x)), branch_on_array(sign * np.abs(x)), rtol=1e-6)
    resumes = compiled.compile_records[0]["resumes"]
    assert len(resumes) == 2
    assert [r.cache_info().entries for r in resumes] == [1, 1]
    assert compiled.cache_info().entries == 1


def test_return_in_both_branches_handles_negative_inputs():
    check(return_in_both_branches, f32(20))


def test_python_scalar_after_the_break_is_specialised_and_guarded():
    compiled = hc.hcompile(item_then_compute)
    for k in range(3):
        x = f32(8) + k
        np.testing.assert_allclose(compiled(x), item_then_compute(x), rtol=1e-6)


# ---- what is live at the break ------------------------------------------------------------------
def writes_before_and_after_the_break(x):
    x[0] = 5.0
    x *= 2
    print("x now starts with", x[:2])
    x[1] = -1.0
    return x


def view_written_after_the_break(x):
    v = x[1:, ::2]
    w = v.T
    print("view", v.shape, w.shape)
    v[:] = 0.0
    w[0] += 7
    return x.sum()


def view_of_a_computed_array(x):
    y = x * 2
    v = y[::-1]
    print("made a view")
    v[0] = 100.0
    return y


def list_of_arrays_live(x):
    parts = [x * 2, x + 1, x]
    print(len(parts))
    parts.append(parts[0] - parts[1])
    return parts


def numpy_scalar_live(x):
    s = np.float32(2.5) * x.sum()
    print("s is", type(s).__name__)
    return x * s, s


def method_call_that_breaks(x):
    values = x.tolist()
    return x * len(values)


def closure_variable_after_break():
    k = 3.0

    def inner(x):
        y = x * k
        print("inner")
        return y + k
    return inner


@pytest.mark.parametrize("fn,args", [
    (writes_before_and_after_the_break, (f32(6),)),
    (view_written_after_the_break, (f32(5, 6),)),
    (view_of_a_computed_array, (f32(7),)),
    (numpy_scalar_live, (f32(9),)),
    (closure_variable_after_break(), (f32(5),)),
])
def test_live_state_crosses_the_break(fn, args):
    e = check(fn, *args, breaks=1)          # one break, and the code after it compiled
    assert e.records[-1]["graph"] is not None and e.records[-1]["report"] is not None, str(e)


@pytest.mark.parametrize("fn,args", [
    (list_of_arrays_live, (f32(4),)),
    (method_call_that_breaks, (f32(3, 2),)),
])
def test_list_live_after_the_break_stays_python(fn, args):
    # Lists are not graph values: the resume function takes them as opaque objects and breaks
    # again where it uses them; every break resumes and the answer is Python's.
    e = check(fn, *args, breaks=None)
    e = hc.explain(fn, *args)
    assert e.graph_break_count >= 2 and all(b.resumes for b in e.break_reasons), str(e)


def test_written_argument_keeps_its_identity():
    x = f32(6)
    r = hc.hcompile(writes_before_and_after_the_break)(x)
    assert r is x


def test_print_sees_writes_made_before_it():
    x = np.zeros(4, np.float32)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        hc.hcompile(writes_before_and_after_the_break)(x)
    assert "[10.  0.]" in out.getvalue()


def test_error_raised_by_the_instruction_is_pythons():
    def f(a):
        b = a * 2
        inv = np.linalg.inv(b)
        return inv + 1
    compiled = hc.hcompile(f)
    with pytest.raises(np.linalg.LinAlgError):
        compiled(np.zeros((3, 3)))
    np.testing.assert_allclose(compiled(np.eye(3)), f(np.eye(3)))


# ---- breaks that do not resume: the whole function runs as Python -------------------------------
def break_inside_a_loop(x):
    for i in range(3):
        x = x + i
        print(i)
    return x


def break_inside_try(x):
    try:
        y = x + 1
        print("in try")
    except ValueError:
        y = x
    return y * 2


def break_with_cell_variable(x):
    y = x + 1
    print("cells")
    return (lambda: y * 2)()


@pytest.mark.parametrize("fn,why", [
    (break_inside_a_loop, "inside a loop"),
    (break_inside_try, "try or with"),
    (break_with_cell_variable, "cell variables"),
])
def test_break_that_cannot_resume_runs_as_python(fn, why):
    e = check(fn, f32(5), graphs=0, breaks=1, resumes=False)
    assert why in e.break_reasons[0].refused
    assert "the whole function runs as Python" in str(e) and why in str(e)


def test_fullgraph_still_raises_at_the_break():
    with pytest.raises(hc.Unsupported) as info:
        hc.hcompile(print_in_the_middle, fullgraph=True)(f32(3), f32(3))
    assert "print" in info.value.reason


def test_reset_drops_resume_functions():
    compiled = hc.hcompile(two_breaks)
    with contextlib.redirect_stdout(io.StringIO()):
        compiled(f32(4))
    resume = compiled.compile_records[0]["resumes"][0]
    assert resume.cache_info().entries == 1
    hc.reset()
    assert resume.cache_info().entries == 0 and compiled.cache_info().entries == 0
    with contextlib.redirect_stdout(io.StringIO()):
        np.testing.assert_allclose(compiled(np.ones(4, np.float32)), two_breaks(np.ones(4, np.float32)))


def test_explain_numbers_graphs_in_run_order_and_shows_source_lines():
    with contextlib.redirect_stdout(io.StringIO()):
        e = hc.explain(two_breaks, f32(4))
    text = str(e)
    assert e.graph_count == 3 and e.graph_break_count == 2
    assert text.index("graph 0") < text.index("graph 1") < text.index("graph 2")
    assert 'print("first")' in text and 'print("second", z.shape)' in text
    assert "the code after it resumes compiled" in text


def test_global_changed_between_calls_is_seen_after_the_break():
    namespace = {"np": np, "SCALE": 2.0}
    exec("def f(x):\n    y = x + 1\n    print('.')\n    return y * SCALE\n", namespace)
    compiled = hc.hcompile(namespace["f"])
    x = f32(3)
    with contextlib.redirect_stdout(io.StringIO()):
        np.testing.assert_allclose(compiled(x), (x + 1) * 2.0, rtol=1e-6)
        namespace["SCALE"] = 5.0
        np.testing.assert_allclose(compiled(x), (x + 1) * 5.0, rtol=1e-6)


def test_eager_backend_resumes_too():
    x, y = f32(16), f32(16)
    compiled = hc.hcompile(print_in_the_middle, backend="eager")
    for _ in range(2):
        got, want = _run(compiled, [x, y]), _run(print_in_the_middle, [x, y])
        _same(got[0], want[0])
        assert got[2] == want[2]
    assert compiled.compile_records[0]["break"].resumes


def _break_around(x):
    y = x * 2 + 1
    print("shape", y.shape)
    z = y - x
    if x.size and (z > 0).sum() > 0:      # a branch on array data too
        z = z + 1
    return z, y


ODD_INPUTS = {
    "0-d": np.array(1.5, np.float32),
    "size 1": np.ones((1, 1), np.float64),
    "empty": np.zeros((0, 3), np.float32),
    "transposed": RNG.standard_normal((4, 5)).T,
    "strided": RNG.standard_normal(20).astype(np.float32)[::3],
    "int32": np.arange(-4, 5, dtype=np.int32),
    "uint8": np.arange(6, dtype=np.uint8),
    "int64 reversed": np.arange(7, dtype=np.int64)[::-1],
}


@pytest.mark.parametrize("name", sorted(ODD_INPUTS))
def test_break_on_odd_shapes_layouts_and_dtypes(name):
    check(_break_around, ODD_INPUTS[name])


@pytest.mark.parametrize("name", sorted(ODD_INPUTS))
def test_outlined_loop_on_odd_shapes_layouts_and_dtypes(name):
    def f(x):
        y = x.copy()
        for _ in range(9):
            y = y * 1 + 1
        return y
    check(f, ODD_INPUTS[name])
