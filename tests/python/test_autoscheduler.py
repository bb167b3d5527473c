"""hcompile's own schedule: the search's decision list (ranked by the cost model), explicit
lists through ``schedule=``, and what explain shows. Every list is checked against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import hcompile as hc
from apps.workloads import softmax_rows


def _x(seed=0):
    return np.random.default_rng(seed).standard_normal((67, 45)).astype(np.float32)


def test_the_search_reports_its_view_and_the_variants_it_weighed():
    compiled = hc.hcompile(softmax_rows, dynamic=False)
    np.testing.assert_allclose(compiled(_x()), softmax_rows(_x()), rtol=1e-5, atol=1e-6)
    report = compiled.compile_records[0]["report"]
    assert "cost model:" in report["analysis"] and "machine:" in report["analysis"]
    assert "points" in report["analysis"]
    assert report["decisions"] and all(len(d) == 5 for d in report["decisions"])
    assert report["variants"] and all(isinstance(p, float) for _, p in report["variants"])
    text = str(hc.explain(compiled, _x()))
    assert "cost model:" in text and "as Halide C++ directives" in text


def test_every_variant_the_search_weighed_computes_numpys_answer():
    """The search's variants (each one region away from its choice) compiled as explicit
    schedules, on sizes that leave partial vectors and tiles."""
    compiled = hc.hcompile(softmax_rows, dynamic=False)
    compiled(_x())
    for decisions, _ in compiled.compile_records[0]["report"]["variants"]:
        explicit = hc.hcompile(softmax_rows, dynamic=False, schedule=decisions, fullgraph=True)
        for seed in range(2):
            np.testing.assert_allclose(explicit(_x(seed)), softmax_rows(_x(seed)), rtol=1e-5, atol=1e-6)
        assert explicit.compile_records[0]["report"]["decisions"] == [tuple(d) for d in decisions]


def test_matmul_variants_with_partial_tiles():
    def f(a, b):
        return np.tanh(a @ b) + 1
    a, b = np.random.default_rng(1).random((37, 29)), np.random.default_rng(2).random((29, 23))
    compiled = hc.hcompile(f, dynamic=False)
    compiled(a, b)
    variants = compiled.compile_records[0]["report"]["variants"]
    assert any(d[1] == "register_tile" for s, _ in variants for d in s)
    for decisions, _ in variants:
        explicit = hc.hcompile(f, dynamic=False, schedule=decisions, fullgraph=True)
        np.testing.assert_allclose(explicit(a, b), f(a, b), rtol=1e-12)


def test_a_schedule_that_does_not_fit_runs_as_python_or_raises_under_fullgraph():
    bad = [(0, "register_tile", -1, 8, 6)]
    compiled = hc.hcompile(softmax_rows, schedule=bad)
    np.testing.assert_allclose(compiled(_x()), softmax_rows(_x()), rtol=1e-6)
    assert "schedule decision" in compiled.compile_records[0]["compile_failure"]
    with pytest.raises(hc.CompileError, match="schedule"):
        hc.hcompile(softmax_rows, schedule=bad, fullgraph=True)(_x())
    with pytest.raises(ValueError, match="schedule must be a list"):
        hc.hcompile(softmax_rows, schedule=[("x",)])
    with pytest.raises(hc.CompileError, match="unknown schedule choice"):
        hc.hcompile(softmax_rows, schedule=[(0, "unroll", -1, 0, 0)], fullgraph=True)(_x())


def test_baseline_keeps_the_fixed_heuristic():
    compiled = hc.hcompile(softmax_rows, autoscheduler="baseline", dynamic=False)
    compiled(_x())
    report = compiled.compile_records[0]["report"]
    assert report["analysis"] == "" and report["variants"] == []
