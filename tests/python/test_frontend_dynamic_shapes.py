"""Dynamic shapes: an axis whose size changes compiles once more for every size from 2.

Every call is compared with NumPy on fresh inputs; the entry counts say whether the function
was compiled generically (at most 2 entries over many sizes from 2 up) or kept static (one
entry per size), and the compile records say why. Sizes 0 and 1 always get entries of their own.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import hcompile as hc
from apps.dynamic_shapes_bench import layernorm_rows, mlp, softmax_rows

SIZES = [5, 7, 2, 3, 17, 64, 301]


def _same(got, ref):
    got = got if isinstance(got, tuple) else (got,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        g, r = np.asarray(g), np.asarray(r)
        assert g.shape == r.shape and g.dtype == r.dtype
        if r.dtype.kind == "f":
            tol = 1e-5 if r.dtype == np.float32 else 1e-12
            np.testing.assert_allclose(g, r, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(g, r)


def _run_sizes(fn, make, sizes=SIZES, **options):
    """Calls the compiled ``fn`` on ``make(rng, n)`` for every size, checking each call (the
    result and the arguments afterwards) against NumPy; returns the compiled function."""
    compiled = hc.hcompile(fn, **options)
    for n in sizes:
        rng = np.random.default_rng(n)
        args = make(rng, n)
        mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        with np.errstate(all="ignore"):
            ref = fn(*args)
            got = compiled(*mine)
        _same(got, ref)
        for before, after in zip(args, mine):
            if isinstance(before, np.ndarray):
                np.testing.assert_array_equal(after, before)
    return compiled


def _shapes(compiled):
    return [r.get("dynamic") for r in compiled.compile_records]


# -- the classes that compile once for all sizes ----------------------------------------------

def tinyops(a, b):
    return np.tanh(a) * 2 + b * b - 1


def column_stats(x):
    return x.mean(axis=0), x.std(axis=0), x.var(axis=0, ddof=1), x.sum(), np.max(x, axis=0)


def per_size(x):
    return x / x.shape[0] + np.zeros(x.shape) + x.size


def gram(x):
    return x.T @ x


def inner_slices(x):
    return x[:, 1:-1] * 2 + x[:, :-2] - x[:, 2:]


def outer_product(x, y):
    return x[:, None] * y[None, :]


def integer_rows(x):
    return (x * 3) // 2 % 7, np.argmax(x, axis=1), (x > 50).any(axis=1), x.sum(axis=0)


def small_types(x):
    return (x.astype(np.int16) * 3).astype(np.int8), x.astype(np.float32) / 3


def stores(x, y):
    x[:, 0] = y[:, 1] * 2
    x[:] += 1
    return x


GENERIC = [
    (softmax_rows, lambda r, n: (r.random((n, 16)),)),
    (layernorm_rows, lambda r, n: (r.random((n, 32), dtype=np.float32),
                                   r.random(32, dtype=np.float32), r.random(32, dtype=np.float32))),
    (mlp, lambda r, n: (r.random((n, 24)), r.random((24, 9)), r.random(9))),
    (tinyops, lambda r, n: (r.random(n), r.random(n))),
    (column_stats, lambda r, n: (r.standard_normal((n, 5)),)),
    (per_size, lambda r, n: (r.random((n, 3)),)),
    (gram, lambda r, n: (r.random((n, 6), dtype=np.float32),)),
    (inner_slices, lambda r, n: (r.random((n, 8)),)),
    (outer_product, lambda r, n: (r.random(n), r.random(n + 3))),
    (integer_rows, lambda r, n: (r.integers(0, 100, (n, 6)),)),
    (small_types, lambda r, n: (r.integers(0, 200, (4, n), dtype=np.uint8),)),
]


@pytest.mark.parametrize("fn, make", GENERIC, ids=[f.__name__ for f, _ in GENERIC])
def test_one_entry_serves_every_size_from_two(fn, make):
    compiled = _run_sizes(fn, make)
    records = _shapes(compiled)
    assert compiled.cache_info().entries == 2, records    # the first call's, then the generic one
    assert records[0] is None and records[1].startswith("dynamic:"), records


def test_writes_into_arguments_with_dynamic_sizes():
    compiled = hc.hcompile(stores)
    for n in SIZES:
        rng = np.random.default_rng(n)
        x, y = rng.random((n, 4)), rng.random((n, 4))
        expected = stores(x.copy(), y.copy())
        got = compiled(x, y)
        assert got is x
        np.testing.assert_array_equal(x, expected)
    assert compiled.cache_info().entries == 2


def test_strided_inputs_with_dynamic_sizes():
    def f(x, y):
        return np.sin(x) + x[:, :1] * y.T
    compiled = _run_sizes(f, lambda r, n: (r.random((n, 12))[:, ::2], r.random((6, 2 * n))[:, ::2]))
    assert compiled.cache_info().entries == 2


def test_reductions_over_a_dynamic_axis_keep_their_accuracy():
    def total(x):
        return x.sum(), x.sum(axis=1), np.float32(1) * x.astype(np.float32).sum(axis=1)
    sizes = [2, 3, 15, 16, 17, 31, 32, 33, 511, 512, 513, 4099]
    compiled = hc.hcompile(total)
    for n in sizes:
        x = np.random.default_rng(n).standard_normal((3, n)) * 1e3
        got = compiled(x)
        exact = np.array([math.fsum(row) for row in x])
        np.testing.assert_allclose(got[1], exact, rtol=1e-13, atol=1e-9)
        np.testing.assert_allclose(got[0], x.sum(), rtol=1e-12)
        np.testing.assert_allclose(got[2], x.astype(np.float32).sum(axis=1), rtol=1e-5, atol=1e-2)
    assert compiled.cache_info().entries == 2


def test_twenty_batch_sizes_compile_at_most_twice():
    compiled = hc.hcompile(softmax_rows)
    for n in range(2, 22):
        x = np.random.default_rng(n).random((n, 10))
        _same(compiled(x), softmax_rows(x))
    assert compiled.cache_info().entries <= 2


def test_sizes_zero_and_one_stay_specialised():
    compiled = _run_sizes(tinyops, lambda r, n: (r.random(n), r.random(n)), sizes=[4, 5, 1, 0, 9, 1, 0])
    assert compiled.cache_info().entries == 4     # 4, then any from 2, then 1, then 0


def test_dynamic_true_is_generic_from_the_first_call():
    compiled = _run_sizes(softmax_rows, lambda r, n: (r.random((n, 16)),), dynamic=True)
    assert compiled.cache_info().entries == 1
    assert _shapes(compiled)[0].startswith("dynamic:")


def test_dynamic_false_specialises_every_shape():
    compiled = _run_sizes(tinyops, lambda r, n: (r.random(n), r.random(n)), sizes=[4, 5, 6], dynamic=False)
    assert compiled.cache_info().entries == 3


def test_equal_sizes_share_a_symbol_and_are_guarded_equal():
    """x and y were the same size when the entry compiled, so x + y relied on it: later calls
    with unequal sizes must not reuse the entry (NumPy raises; so must the call)."""
    def add(x, y):
        return x + y
    compiled = _run_sizes(add, lambda r, n: (r.random(n), r.random(n)), sizes=[4, 6, 9])
    with pytest.raises(ValueError):
        compiled(np.ones(5), np.ones(7))
    _same(compiled(np.ones(5), np.ones(1)), np.ones(5) + np.ones(1))


def test_independent_sizes_stay_independent():
    def two(x, y):
        return x * 2, y.sum()
    compiled = _run_sizes(two, lambda r, n: (r.random(n), r.random(3 * n + 1)))
    assert compiled.cache_info().entries == 2


def test_a_call_whose_arrays_pass_halides_buffer_limit_runs_as_python(caplog):
    """A kernel for any size learns a call's array sizes only at the call: an output of
    23171 x 23171 float32 (just past 2**31 bytes) from a short vector runs as Python, whose
    broadcast_to is a view, instead of failing in Halide."""
    def columns(a):
        return np.broadcast_to(a[:, None] * 2, (a.shape[0], a.shape[0]))
    compiled = _run_sizes(columns, lambda r, n: (r.random(n).astype(np.float32),), sizes=[3, 8], dynamic=True)
    a = np.random.default_rng(0).random(23171).astype(np.float32)
    with caplog.at_level("WARNING", logger="hcompile"):
        got = compiled(a)
    assert got.shape == (23171, 23171) and not got.flags.owndata
    np.testing.assert_array_equal(got[::4096], columns(a)[::4096])
    assert "past Halide's 2 GiB buffer limit" in caplog.text
    assert compiled.cache_info().entries == 1
    _same(compiled(a[:100]), columns(a[:100]))       # the entry still serves what fits


# -- slices a fixed distance from the ends: stencils over any size --------------------------

def stencil(x):
    return x[1:-1] + x[2:] + x[:-2]


def blur3x3(x):
    h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
    return (h[:-2] + h[1:-1] + h[2:]) / 3


def jacobi_steps(u):
    u = u.copy()
    for _ in range(3):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def differences(x):
    return np.diff(x, axis=0), x[1:] - x[:-1], x[3:].sum(axis=0)


@pytest.mark.parametrize("fn, make, least", [
    (stencil, lambda r, n: (r.random(n),), 3),
    (blur3x3, lambda r, n: (r.random((n, n + 5), dtype=np.float32),), 3),
    (jacobi_steps, lambda r, n: (r.random((n, n)),), 3),
    (differences, lambda r, n: (r.random((n, 4)),), 4),
], ids=["stencil", "blur3x3", "jacobi_steps", "differences"])
def test_slices_a_fixed_distance_from_the_ends_serve_every_size(fn, make, least):
    """The slices' lengths are the size plus a fixed offset; the entry takes every size from
    the least that leaves each slice an element, and smaller sizes get entries of their own."""
    compiled = _run_sizes(fn, make, sizes=[9, 10, 17, 64, 300, least, least + 1])
    assert compiled.cache_info().entries == 2
    assert f"any size from {least};" in _shapes(compiled)[1]
    smaller = _run_sizes(fn, make, sizes=[9, 10] + list(range(1, least)))
    assert smaller.cache_info().entries == 2 + (least - 1)


# -- what stays static, and still gives NumPy's answer -------------------------------------

def branch_on_size(x):
    if x.shape[0] > 4:
        return x * 2
    return x * 3


def clamp_by_size(x):
    return x * min(len(x), 5)


def head(x):
    return x[:5] * 2


def step(x):
    return x[::2] * 2


def tail(x):
    return x[-3:] * 2


def flatten(x):
    return x.reshape(-1) * 2


def last_row(x):
    return x[len(x) - 1] + x[-2]


STATIC = [
    (branch_on_size, "__gt__"), (clamp_by_size, "__gt__"), (head, "part of a dynamic axis"),
    (step, "depends on the sizes"), (tail, "computed from a dynamic size"),
    (flatten, "depends on the sizes"), (last_row, "computed from a dynamic size"),
]


@pytest.mark.parametrize("fn, why", STATIC, ids=[f.__name__ for f, _ in STATIC])
def test_size_dependent_code_keeps_static_shapes(fn, why):
    compiled = _run_sizes(fn, lambda r, n: (r.random((n, 3)),), sizes=[9, 10, 3, 2, 12])
    records = _shapes(compiled)
    assert compiled.cache_info().entries == 5
    assert all(r.startswith("static shapes") for r in records[1:]) and why in records[1], records


def test_explain_says_which_axes_are_dynamic():
    compiled = hc.hcompile(softmax_rows, dynamic=True)
    text = str(hc.explain(compiled, np.ones((6, 4))))
    assert "dynamic: argument 0 axis 0, argument 0 axis 1 (any size from 2" in text
    assert "is the size of argument 0 axis 0" in text and "is the size of argument 0 axis 1" in text


def test_recompile_log_names_the_dynamic_axes(caplog):
    compiled = hc.hcompile(tinyops)
    with caplog.at_level("WARNING", logger="hcompile"):
        compiled(np.ones(4), np.ones(4))
        compiled(np.ones(6), np.ones(6))
    text = caplog.text
    assert "compiling argument 0 axis 0, argument 1 axis 0 for any size from 2" in text


# -- graph breaks ---------------------------------------------------------------------------

def break_in_the_middle(x, w):
    y = np.tanh(x @ w)
    print(end="")          # runs as Python; the code after it resumes compiled
    return y * 2 + 1


def branch_on_values(x):
    if x.sum() > 0:        # both targets are resume functions
        return x * 2
    return x - 1


def size_live_at_the_break(x):
    n = len(x)
    print(end="")
    return x * n           # the resume function is handed n: a size, so the shapes stay static


@pytest.mark.parametrize("fn, make, entries", [
    (break_in_the_middle, lambda r, n: (r.random((n, 8)), r.random((8, 3))), 2),
    (branch_on_values, lambda r, n: (r.standard_normal((n, 5)),), 2),
    (size_live_at_the_break, lambda r, n: (r.random((n, 5)),), 7),
], ids=["break_in_the_middle", "branch_on_values", "size_live_at_the_break"])
def test_graph_breaks_resume_for_every_size(fn, make, entries, capsys):
    compiled = _run_sizes(fn, make)
    assert compiled.cache_info().entries == entries
    for record in compiled.compile_records:
        for resume in record["resumes"]:
            assert resume.cache_info().entries <= 2 or entries > 2


def test_the_dispatcher_keeps_an_entry_below_a_size_to_the_calls_below_it():
    """An entry for the sizes below a larger call's blocks of rows (the GPU's: extent_below, made by
    dynamic_shapes.schedule_bounds) serves only those; the entry from that size serves the rest."""
    from hcompile import _C, dynamic_shapes
    from hcompile.guards import arg_guard
    dispatcher = _C.Dispatcher(lambda x: None)
    x = np.ones((3, 64), np.float32)
    guard = arg_guard(x)
    any_size = lambda least: [guard[:3] + ((-least, 64),) + guard[4:]]   # noqa: E731
    dispatcher.add_entry(any_size(16), [], None, [], None, lambda x: "blocks")
    dispatcher.add_entry(any_size(2), [], None, [], None, lambda x: "below", [("extent_below", 0, 0, True, 0, 16)])
    for rows, which in ((2, "below"), (15, "below"), (16, "blocks"), (5000, "blocks")):
        assert dispatcher(np.ones((rows, 64), np.float32)) == which, rows
    assert dispatcher(np.ones((1, 64), np.float32)) not in ("below", "blocks")   # a miss: no entry takes it
    below = ("extent_below", 0, 0, True, 0, 16)
    assert dynamic_shapes.relation_holds(below, [np.ones((15, 64))])
    assert not dynamic_shapes.relation_holds(below, [np.ones((16, 64))])
    with pytest.raises(ValueError, match="extent_below"):
        dispatcher.add_entry(any_size(2), [], None, [], None, None, [("extent_below", 0, 0, True, 0)])
