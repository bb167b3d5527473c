"""Halide's own autoschedulers as peers: ``autoscheduler="Adams2019" | "Mullapudi2016" |
"Li2018"`` schedules hcompile's lowered pipeline with the plugin from the Halide wheel. Whatever
they choose, the answers are NumPy's: each function is compared on fresh inputs, odd sizes
included, and written arguments are checked after the call."""
from __future__ import annotations

import numpy as np
import pytest

import hcompile as hc
from apps.workloads import blur3x3, layernorm_rows, softmax_rows

PEERS = ["Adams2019", "Mullapudi2016", "Li2018"]


def matmul_bias_tanh(x, w, b):
    return np.tanh(x @ w + b)


def column_stats(x):
    return x.mean(axis=0), x.max(axis=1), x.sum()


def jacobi_step(u):
    u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


CASES = [
    (softmax_rows, lambda r: (r.standard_normal((37, 53)).astype(np.float32),)),
    (layernorm_rows, lambda r: tuple(r.standard_normal(s).astype(np.float32) for s in [(19, 67), (67,), (67,)])),
    (blur3x3, lambda r: (r.random((45, 71)).astype(np.float32),)),
    (matmul_bias_tanh, lambda r: (r.random((23, 41)), r.random((41, 29)), r.random(29))),
    (column_stats, lambda r: (r.random((33, 17)),)),
    (jacobi_step, lambda r: (r.random((26, 31)),)),
]


def _check(fn, compiled, args):
    mine = [a.copy() for a in args]
    ref = fn(*args)
    got = compiled(*mine)
    ref, got = (ref, got) if isinstance(ref, tuple) else ((ref,), (got,))
    for g, w in zip(got, ref):
        tol = 1e-4 if np.asarray(w).dtype == np.float32 else 1e-10
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
    for before, after in zip(args, mine):
        np.testing.assert_allclose(after, before if fn is not jacobi_step else ref[0], rtol=1e-12)


@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("fn, make", CASES, ids=[c[0].__name__ for c in CASES])
def test_peer_schedules_compute_numpys_answers(peer, fn, make):
    compiled = hc.hcompile(fn, autoscheduler=peer, dynamic=False)
    for seed in range(2):
        _check(fn, compiled, make(np.random.default_rng(seed)))
    record = compiled.compile_records[0]
    assert record.get("compile_failure") is None, record.get("compile_failure")
    assert f"Halide's {peer} autoscheduler" in record["report"]["schedule"]
    assert record["report"]["schedule_source"].strip()


@pytest.mark.parametrize("peer", PEERS)
def test_peers_compile_each_size_exactly(peer):
    """Halide's schedules are for the sizes estimated (Li2018's tiles read before the start of a
    2-row input; Adams2019 ends the process on symbolic extents): under a peer, sizes that
    change compile exactly, each correct."""
    compiled = hc.hcompile(softmax_rows, autoscheduler=peer, dynamic=True)
    sizes = [50, 3, 2, 129]
    for n in sizes:
        _check(softmax_rows, compiled, (np.random.default_rng(n).standard_normal((n, 24)),))
    assert compiled.cache_info().entries == len(sizes)
    assert f"{peer} autoscheduler schedules for the exact sizes" in compiled.compile_records[0]["dynamic"]


def test_explain_prints_the_peers_schedule_source():
    compiled = hc.hcompile(blur3x3, autoscheduler="Mullapudi2016")
    text = str(hc.explain(compiled, np.ones((40, 40), np.float32)))
    assert "Halide's Mullapudi2016 autoscheduler" in text
    assert "as Halide C++ directives" in text and ".compute_root()" in text


def test_unknown_autoscheduler_is_refused():
    with pytest.raises(ValueError, match="autoscheduler must be one of"):
        hc.hcompile(softmax_rows, autoscheduler="Anderson2022")


@pytest.mark.parametrize("peer", PEERS)
def test_a_pipeline_with_an_empty_array_says_the_peer_was_not_run(peer):
    def f(x):
        return np.tanh(x) * 2, np.tanh(x)[:, 3:3] + 1     # an empty output (5, 0)
    compiled = hc.hcompile(f, autoscheduler=peer, dynamic=False)
    x = np.random.default_rng(0).random((5, 7))
    got = compiled(x)
    np.testing.assert_allclose(got[0], f(x)[0], rtol=1e-12)
    assert got[1].shape == (5, 0)
    assert f"Halide's {peer} autoscheduler was not run (an empty array)" in compiled.compile_records[0]["report"]["schedule"]
