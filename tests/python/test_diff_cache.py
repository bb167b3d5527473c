"""Cache behaviour (cache_info), results not aliased across calls, explain, fullgraph."""

import numpy as np
import pytest

from numpy_oracle import check, hc, make, real_only


def _info(f):
    i = f.cache_info()
    return i.entries, i.hits, i.misses, i.recompiles


def scaled_sum(x, y):
    return np.exp(x) * y + x.sum(axis=0)


def test_cache_hits_and_misses(rng):
    f = hc.hcompile(scaled_sum, fullgraph=True, dynamic=False)
    x, y = make(rng, (4, 5), "float32"), make(rng, (4, 5), "float32")
    assert _info(f) == (0, 0, 0, 0)
    check(scaled_sum, x, y, cfn=f, ops=3, reduce=4, scale=8.0)
    assert _info(f) == (1, 0, 1, 0)
    # same shape and dtype, new values: a hit, no recompile
    check(scaled_sum, make(rng, (4, 5), "float32"), make(rng, (4, 5), "float32"), cfn=f,
          ops=3, reduce=4, scale=8.0)
    assert _info(f) == (1, 1, 1, 0)
    # new dtype: a miss (recompile), still correct
    check(scaled_sum, make(rng, (4, 5), "float64"), make(rng, (4, 5), "float64"), cfn=f,
          ops=3, reduce=4, scale=8.0)
    assert _info(f) == (2, 1, 2, 1)
    # dynamic=False: a new shape is a miss as well
    check(scaled_sum, make(rng, (6, 3), "float32"), make(rng, (6, 3), "float32"), cfn=f,
          ops=3, reduce=6, scale=8.0)
    assert _info(f) == (3, 1, 3, 2)
    # back to the first signature: a hit
    check(scaled_sum, make(rng, (4, 5), "float32"), make(rng, (4, 5), "float32"), cfn=f,
          ops=3, reduce=4, scale=8.0)
    assert _info(f)[1:] == (2, 3, 2)


def test_cache_default_dynamic_new_shape(rng):
    """Default (automatic dynamic shapes): a new shape may or may not recompile, but every call
    is counted once as a hit or a miss and the answer is right; a new dtype always misses."""
    f = hc.hcompile(scaled_sum, fullgraph=True)
    shapes = [(4, 5), (4, 5), (7, 5), (9, 2), (9, 2), (4, 5)]
    for i, s in enumerate(shapes, 1):
        check(scaled_sum, make(rng, s, "float32"), make(rng, s, "float32"), cfn=f, ops=3,
              reduce=s[0], scale=8.0)
        e, h, m, r = _info(f)
        assert h + m == i and 1 <= m <= i and e >= 1 and r <= m - 1
        assert h >= 1 if i >= 2 else h == 0  # the second call has the first call's signature
    m_before = _info(f)[2]
    check(scaled_sum, make(rng, (4, 5), "int64", "small"), make(rng, (4, 5), "int64", "small"),
          cfn=f, ops=3, reduce=4, scale=8.0)
    assert _info(f)[2] == m_before + 1


def test_fullgraph_never_runs_python_silently(rng):
    """Past any recompile limit, fullgraph=True must raise hc.Unsupported rather than run the
    plain function: every call that returns must have been served by a compiled entry."""
    f = hc.hcompile(scaled_sum, fullgraph=True, dynamic=False)
    for n in range(1, 14):
        before = f.cache_info()
        try:
            check(scaled_sum, make(rng, (n, 3), "float64"), make(rng, (n, 3), "float64"),
                  cfn=f, ops=3, reduce=n, scale=8.0)
        except hc.Unsupported:
            continue
        after = f.cache_info()
        assert after.entries == before.entries + 1 or after.hits == before.hits + 1, (
            f"call {n} returned under fullgraph=True but was neither a new entry nor a hit: "
            f"{before} -> {after}")


def test_results_not_aliased_across_calls(rng):
    """A second call must not overwrite the array returned by the first (output buffer reuse)."""
    f = hc.hcompile(scaled_sum, fullgraph=True)
    x1, y1 = make(rng, (4, 5), "float32"), make(rng, (4, 5), "float32")
    r1 = f(x1, y1)
    keep = r1.copy()
    r2 = f(make(rng, (4, 5), "float32"), make(rng, (4, 5), "float32"))
    assert r2 is not r1
    np.testing.assert_array_equal(r1, keep)
    r1[...] = 0  # writing into a result must not affect the next call
    np.testing.assert_allclose(f(x1, y1), keep, rtol=1e-6)


def test_results_not_aliased_to_inputs(rng):
    def f(x):
        return x + 0, x * 1

    cf = hc.hcompile(f, fullgraph=True)
    x = make(rng, (3, 3), "float64")
    a, b = cf(x)
    assert not np.shares_memory(a, x) and not np.shares_memory(b, x)
    assert not np.shares_memory(a, b)


def test_reset_keeps_correctness(rng):
    f = hc.hcompile(scaled_sum, fullgraph=True)
    x, y = make(rng, (4, 5), "float32"), make(rng, (4, 5), "float32")
    check(scaled_sum, x, y, cfn=f, ops=3, reduce=4, scale=8.0)
    hc.reset()
    check(scaled_sum, x, y, cfn=f, ops=3, reduce=4, scale=8.0)


def test_explain_fully_captured(rng):
    x = make(rng, (4, 5), "float32")
    e = hc.explain(scaled_sum, x, x)
    assert e.graph_count == 1 and e.graph_break_count == 0
    assert list(e.break_reasons) == [] and len(e.graphs) == 1
    assert isinstance(str(e), str) and str(e)


def with_print(x):
    y = x * 2
    print("side effect")
    return y + 1


def data_dependent_if(x):
    if x.sum() > 0:  # depends on array values: a graph break
        return x * 2
    return x - 1


@real_only
@pytest.mark.parametrize("fn", [with_print, data_dependent_if])
def test_fullgraph_raises_unsupported(fn, rng):
    """fullgraph=True must raise hc.Unsupported (naming the file and line), never run Python
    silently; this is what makes every other test prove that the compiled path ran."""
    x = make(rng, (3, 4), "float64")
    with pytest.raises(hc.Unsupported) as ei:
        hc.hcompile(fn, fullgraph=True)(x)
    assert ei.value.filename is None or ei.value.filename.endswith("test_diff_cache.py")


@real_only
@pytest.mark.parametrize("fn", [with_print, data_dependent_if])
def test_graph_break_still_correct(fn, rng, capsys):
    """Without fullgraph, a graph break runs Python for that part and the answer is NumPy's."""
    for sign in (1, -1):
        x = np.abs(make(rng, (3, 4), "float64")) * sign
        check(fn, x, cfn=hc.hcompile(fn))
    e = hc.explain(fn, x)
    assert e.graph_break_count >= 1 and len(e.break_reasons) >= 1
    r = e.break_reasons[0]
    assert r.reason and r.filename.endswith("test_diff_cache.py") and r.lineno > 0
