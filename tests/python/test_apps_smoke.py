"""Smoke tests for apps/ and tutorials/: every workload compiled by hcompile equals NumPy on
small inputs, and the first tutorial runs top to bottom. Nothing here is timed."""

import runpy
from pathlib import Path

import numpy as np
import pytest

hc = pytest.importorskip("hcompile")

from apps import workloads as W  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(W.WORKLOADS) + [W.OVERHEAD.name])
def test_workload_matches_numpy(name):
    wl = W.get(name)
    compiled = hc.hcompile(wl.fn)
    for seed in (0, 1):  # the second call has new values under the same guards
        args = wl.make_inputs("small", seed=seed)
        want = wl.fn(*args)
        got = compiled(*args)
        assert isinstance(got, np.ndarray)
        assert got.dtype == want.dtype and got.shape == want.shape
        ok, err = wl.check(got, want)
        assert ok, f"{name} (seed {seed}): max |err| {err} (rtol={wl.rtol}, atol={wl.atol})"


def test_workload_inputs_are_float32_and_deterministic():
    for wl in list(W.WORKLOADS.values()) + [W.OVERHEAD]:
        a, b = wl.make_inputs("small", seed=3), wl.make_inputs("small", seed=3)
        for x, y in zip(a, b):
            assert x.dtype == np.float32
            np.testing.assert_array_equal(x, y)


def test_jax_version_is_the_same_code():
    for wl in W.WORKLOADS.values():
        jnp_like = W.rebind(wl.fn, np=np)
        assert jnp_like.__code__ is wl.fn.__code__
        args = wl.make_inputs("small")
        np.testing.assert_array_equal(jnp_like(*args), wl.fn(*args))


def test_tutorial_01_runs(capsys):
    runpy.run_path(str(ROOT / "tutorials" / "01_first_compile.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "matches NumPy: True" in out
    assert "hc.Unsupported:" in out


def test_tutorial_02_runs(capsys):
    runpy.run_path(str(ROOT / "tutorials" / "02_graph_breaks.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "the code after it resumes compiled" in out and "fullgraph=True:" in out
    assert "no resume: a break inside a loop" in out and "fixed: one graph, no break: True" in out


def test_tutorial_03_runs(capsys):
    runpy.run_path(str(ROOT / "tutorials" / "03_writes_loops_and_shapes.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "same array object returned: True" in out and "matches NumPy: True" in out
    assert "argument written as NumPy writes it: True" in out
    assert out.count("CacheInfo(entries=2,") >= 3          # the norm, the 20 batch sizes, the stencil
    assert "dynamic: argument 0 axis 0, argument 0 axis 1 (any size from 2" in out
    assert "static shapes (argument 0 axis 0 changed, but" in out


def test_tutorial_04_runs(capsys):
    runpy.run_path(str(ROOT / "tutorials" / "04_autoscheduler.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert out.count("matches NumPy: True") == 11 and "matches NumPy: False" not in out
    assert "regions: slice_update, matmul_sum, reshape" in out
    assert "cost model:" in out and "call_library (BLAS)" in out and "as Halide C++ directives" in out
    assert "'tile_rows'" in out and "'compute_at_tile'" in out   # Harris, computed per tile


def test_tutorial_05_runs(capsys, monkeypatch):
    import hcompile as hc
    for name in ("tuning_db", "tuning_trials", "tuning_seconds"):   # the tutorial sets them
        monkeypatch.setattr(hc.config, name, getattr(hc.config, name))
    runpy.run_path(str(ROOT / "tutorials" / "05_tuning.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "schedules measured in" in out and "schedule from: tuning record" in out
    assert "blur: (1022, 1022) search" in out and "blur: (1022, 1022) tuning record" in out
    assert "1 record(s) reused" in out and "1 workload(s) in" in out and "plot written: True" in out


def test_tutorial_06_runs(capsys):
    runpy.run_path(str(ROOT / "tutorials" / "06_gpu.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "gpu_blocks(gpu_block_x)" in out
    assert "the GPU part is skipped" in out or "matches NumPy: True" in out
