"""Long loops compile their body once (capture/loops.py), and objects read from outside stay
opaque (values.PythonObject): both are graph breaks that resume. Each function is compared with
plain Python on fresh copies of its inputs (result, arguments after the call, printed output) by
``test_frontend_breaks.check``."""
from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import hcompile as hc
from numpy_oracle import target_options
from test_frontend_breaks import check, f32


def jacobi_2d(u, steps):
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


def heat_with_new_locals(x, steps):
    y = x.copy()
    for _ in range(steps):
        lap = np.roll(y, 1) - 2 * y + np.roll(y, -1)
        y = y + 0.1 * lap
    return y, lap


def loop_variable_after_the_loop(x):
    for t in range(12):
        x = x * 0.5 + 1
    return x, t


def loop_with_continue(x):
    for _ in range(10):
        x = x + 1
        if x.shape[0] > 2:
            continue
        x = x * 100
    return x


def loop_using_its_index(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * i
    return x


def loop_with_break(x):
    for k in range(20):
        x = x + 1
        if k == 3:
            break
    return x


def short_loop(x):
    for _ in range(3):
        x = np.sin(x)
    return x


def nested_loops(x):
    for _ in range(10):
        for _ in range(2):
            x = x * 0.9
        x = x + 0.1
    return x


def python_float_accumulator(x):
    t = 0.0
    for _ in range(10):
        t = t + 0.5
        x = x + t
    return x, t


@pytest.mark.parametrize("fn,args", [
    (jacobi_2d, (f32(12, 10), 40)),
    (heat_with_new_locals, (f32(30), 25)),
    (loop_variable_after_the_loop, (f32(5),)),
    (loop_with_continue, (f32(5),)),
    (loop_using_its_index, (f32(6),)),
    (loop_with_break, (f32(5),)),
    (short_loop, (f32(5),)),
    (nested_loops, (f32(7),)),
    (python_float_accumulator, (f32(4),)),
])
def test_loops_match_python(fn, args):
    check(fn, *args)


def _explain(fn, *args):
    with contextlib.redirect_stdout(io.StringIO()):
        return hc.explain(fn, *args)


def test_long_loop_compiles_its_body_once():
    u = f32(32, 32)
    short, long = _explain(jacobi_2d, u.copy(), 20), _explain(jacobi_2d, u.copy(), 1000)
    assert short.graph_count == long.graph_count == 1, str(long)      # the body; no prefix work
    assert "a loop of 1000 iterations" in long.break_reasons[0].reason
    body = [r for r in long.records if r["graph"] is not None]
    assert len(body) == 1 and "slice_update" in body[0]["graph"]


def test_loop_body_is_one_cached_entry_over_all_iterations():
    compiled = hc.hcompile(jacobi_2d, **target_options())
    u = f32(16, 16)
    np.testing.assert_allclose(compiled(u.copy(), 200), jacobi_2d(u.copy(), 200), rtol=1e-5)
    body = compiled.compile_records[0]["resumes"][0]
    assert body.cache_info().entries == 1 and body.cache_info().hits >= 199


def test_short_loops_and_loops_reading_their_index_are_unrolled():
    assert _explain(short_loop, f32(4)).graph_break_count == 0
    e = _explain(loop_using_its_index, f32(9))
    assert e.graph_break_count == 0 and e.graph_count == 1


def test_fullgraph_unrolls_long_loops():
    compiled = hc.hcompile(jacobi_2d, fullgraph=True, **target_options())
    u = f32(8, 8)
    np.testing.assert_allclose(compiled(u.copy(), 10), jacobi_2d(u.copy(), 10), rtol=1e-5)


# ---- objects read from outside -------------------------------------------------------------------
LOG = []
STATS = {}
WEIGHTS = np.linspace(0.0, 1.0, 6).astype(np.float32)


def logs_to_a_global_list(x):
    y = x * 2
    LOG.append(float(y.sum()))
    return y + 1


def updates_a_global_dict(x):
    m = x.mean()
    STATS["mean"] = m
    return x - m


def uses_a_global_array(x):
    return np.tanh(x * WEIGHTS) + 1


def branches_on_a_global_list(x):
    if LOG:
        return x * len(LOG)
    return x


@pytest.mark.parametrize("fn", [logs_to_a_global_list, updates_a_global_dict, uses_a_global_array,
                                branches_on_a_global_list])
def test_global_objects_stay_python_and_the_rest_compiles(fn):
    LOG.clear()
    STATS.clear()
    compiled = hc.hcompile(fn, **target_options())
    x = f32(6)
    for _ in range(3):
        LOG_before, STATS_before = list(LOG), dict(STATS)
        expected = fn(x.copy())
        expected_log, expected_stats = list(LOG), dict(STATS)
        LOG[:] = LOG_before
        STATS.clear()
        STATS.update(STATS_before)
        got = compiled(x.copy())
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        assert LOG == pytest.approx(expected_log) and STATS.keys() == expected_stats.keys()


def test_global_list_logging_compiles_both_sides_of_the_break():
    LOG.clear()
    e = _explain(logs_to_a_global_list, f32(8))
    assert e.graph_count == 2 and all(b.resumes for b in e.break_reasons), str(e)
