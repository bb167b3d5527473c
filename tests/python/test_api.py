"""The public API around the compiled path: options, explain, logs, debug dumps, guards on
globals and closures, keyword calls, the eager backend and the command line."""
import os
import subprocess
import sys

import numpy as np
import pytest

import hcompile as hc

SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_global_scalar_is_guarded():
    global SCALE
    f = hc.hcompile(scaled, fullgraph=True)
    x = np.arange(6, dtype=np.float32)
    try:
        np.testing.assert_array_equal(f(x), x * 2.0)
        SCALE = 3.0
        np.testing.assert_array_equal(f(x), x * 3.0)  # the guard on SCALE misses and recompiles
        assert f.cache_info().entries == 2
    finally:
        SCALE = 2.0


def test_closure_scalar_is_guarded():
    def make(k):
        def f(x):
            return x + k
        return f
    inner = make(5)
    f = hc.hcompile(inner, fullgraph=True)
    x = np.ones(4)
    np.testing.assert_array_equal(f(x), x + 5)
    inner.__closure__[0].cell_contents = 7
    np.testing.assert_array_equal(f(x), x + 7)


def test_keywords_and_defaults():
    def f(x, y=None, scale=2):
        return x * scale if y is None else x * scale + y
    c = hc.hcompile(f, fullgraph=True)
    x = np.arange(5, dtype=np.float64)
    np.testing.assert_array_equal(c(x), f(x))
    np.testing.assert_array_equal(c(x, scale=3), f(x, scale=3))
    np.testing.assert_array_equal(c(x, y=x), f(x, y=x))
    np.testing.assert_array_equal(c(y=x, x=x, scale=4), f(x, x, 4))


def test_eager_backend_runs_the_graph_with_numpy():
    def f(x, w):
        h = x @ w
        return h.max(axis=1), np.tanh(h).T[::2]
    c = hc.hcompile(f, backend="eager", fullgraph=True)
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    for a, b in zip(c(x, w), f(x, w)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert c.cache_info().entries == 1


def breaks_on_print(x):
    y = x + 1
    print("side effect")
    return y * 2


def test_explain_reports_break_with_location(capsys):
    x = np.ones(3)
    e = hc.explain(breaks_on_print, x, run=False)
    assert e.graph_count == 1 and e.graph_break_count == 1 and not e.ran_function
    assert capsys.readouterr().out == ""          # capture alone runs nothing of the function
    e = hc.explain(breaks_on_print, x)             # the break resumes: explain runs it once
    assert e.graph_count == 2 and e.graph_break_count == 1 and e.ran_function
    assert capsys.readouterr().out.count("side effect") == 1
    assert "side effects happened" in str(e) and 'print("side effect")' in str(e)
    reason = e.break_reasons[0]
    assert reason.filename == __file__
    assert reason.lineno == breaks_on_print.__code__.co_firstlineno + 2
    assert "print" in reason.reason
    assert "break 0" in str(e)


def test_fullgraph_raises_unsupported_with_location():
    c = hc.hcompile(breaks_on_print, fullgraph=True)
    with pytest.raises(hc.Unsupported) as info:
        c(np.ones(3))
    assert info.value.lineno == breaks_on_print.__code__.co_firstlineno + 2


def test_graph_break_falls_back_to_python(capsys):
    c = hc.hcompile(breaks_on_print)
    np.testing.assert_array_equal(c(np.ones(3)), breaks_on_print(np.ones(3)))
    assert capsys.readouterr().out.count("side effect") == 2


def test_explain_shows_graph_regions_and_schedule():
    def f(x):
        return np.exp(x - x.max(axis=1, keepdims=True))
    text = str(hc.explain(f, np.ones((4, 67), np.float32)))  # rows of several vectors on any host
    assert "exp(" in text and "max[axes=[1], keepdims=1]" in text
    assert "fused regions" in text and "schedule" in text
    # the decisions as values, and the same schedule as Halide C++ directives
    assert "region 0 (" in text and ": compute_root" in text and "vectorize axis 0 by" in text
    assert "as Halide C++ directives" in text and ".compute_root();" in text
    assert ".vectorize(" in text and "TailStrategy::GuardWithIf);" in text


def test_debug_dir_dumps_every_stage(tmp_path, monkeypatch):
    monkeypatch.setenv("HCOMPILE_DEBUG_DIR", str(tmp_path))
    c = hc.hcompile(lambda x: np.sqrt(x) + 1)
    c(np.ones((3, 3)))
    (folder,) = list(tmp_path.iterdir())
    names = {p.name for p in folder.iterdir()}
    assert {"captured_graph.txt", "optimized_graph.txt", "regions.txt", "schedule.txt", "schedule.cpp",
            "lowered_stmt.txt", "compile_steps.txt"} <= names
    assert ".compute_root();" in (folder / "schedule.cpp").read_text()
    assert "produce" in (folder / "lowered_stmt.txt").read_text()


def test_set_logs_rejects_unknown_channels():
    with pytest.raises(ValueError):
        hc.set_logs(nonsense=True)
    hc.set_logs(guards=True)
    hc.set_logs(guards=False)


def test_reset_drops_entries():
    c = hc.hcompile(lambda x: x - 1)
    c(np.ones(2))
    assert c.cache_info().entries == 1
    hc.reset()
    assert c.cache_info().entries == 0
    np.testing.assert_array_equal(c(np.ones(2)), np.zeros(2))


def test_bad_options_are_refused():
    with pytest.raises(ValueError):
        hc.hcompile(lambda x: x, mode="fast")
    with pytest.raises(ValueError):
        hc.hcompile(lambda x: x, target="host-opencl")
    with pytest.raises(TypeError):
        hc.hcompile(np.sum)


def test_methods_bind_self():
    class Model:
        def __init__(self):
            self.calls = 0

        @hc.hcompile
        def forward(self, x):
            return x * 3
    # `self` is an unsupported argument type: the method runs as Python, correctly bound.
    m = Model()
    np.testing.assert_array_equal(m.forward(np.ones(2)), np.full(2, 3.0))


def test_command_line_info():
    out = subprocess.run([sys.executable, "-m", "hcompile.cli", "info"], capture_output=True, text=True,
                         check=True).stdout
    assert "host target" in out and "x86-64" in out
    tune = subprocess.run([sys.executable, "-m", "hcompile.cli", "tune", "no-such-script.py"], capture_output=True,
                          text=True)
    assert tune.returncode == 2 and "no such script" in tune.stderr


def test_arrays_past_kernel_limits_run_as_python():
    x = np.ones((1,) * 40, np.float32)      # more dimensions than a kernel describes
    f = hc.hcompile(lambda a: a + 1)
    np.testing.assert_array_equal(f(x), x + 1)
    assert hc.explain(lambda a: a + 1, x).graph_break_count == 1


def test_recompile_limit_is_configurable(caplog):
    assert hc.config.recompile_limit == 8
    with pytest.raises(ValueError):
        hc.config.recompile_limit = 0
    hc.config.recompile_limit = 2
    try:
        c = hc.hcompile(lambda v: v * 2, dynamic=False)   # each shape its own entry
        with caplog.at_level("WARNING"):
            for n in (3, 4, 5, 6):
                np.testing.assert_array_equal(c(np.ones(n)), np.ones(n) * 2)
        assert c.cache_info().entries == 2
        limit_logs = [r.getMessage() for r in caplog.records if "reached the limit of 2" in r.getMessage()]
        assert len(limit_logs) == 1 and "shape=(4,)" in limit_logs[0] and "shape=(5,)" in limit_logs[0]
    finally:
        hc.config.recompile_limit = 8


def test_calls_leaving_trailing_parameters_to_their_defaults_take_the_dispatcher():
    """f(x) of f(x, scale=2.0, heads=8) is f(x, 2.0, 8): the C++ dispatcher's entries (which hold
    every parameter) serve it, as they serve the call that passes them all; too few arguments
    still raise Python's own TypeError."""
    def f(x, scale=2.0, heads=8):
        return x * scale + heads
    c = hc.hcompile(f)
    x = np.arange(4.0)
    c(x)
    hits = c._dispatcher.hits
    for _ in range(3):
        np.testing.assert_array_equal(c(x), f(x))
    np.testing.assert_array_equal(c(x, 2.0, 8), f(x))
    assert c._dispatcher.hits == hits + 4
    np.testing.assert_array_equal(c(x, 3.0), f(x, 3.0))
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        c()
