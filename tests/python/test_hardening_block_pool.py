"""Large outputs and Halide's intermediates reuse freed blocks (runtime/src/block_pool.cpp)
without ever sharing memory between live arrays; pooled outputs behave like any NumPy array (own
their data, resize, pickle)."""
import gc
import pickle

import numpy as np
import pytest

import hcompile as hc
from hcompile import _C


def _scaled(x):
    return x * 2.0 + 1.0


@pytest.fixture
def pool_limit():
    """Restore the process-wide limit whatever a test sets."""
    saved = hc.config.output_cache_bytes
    yield
    hc.config.output_cache_bytes = saved


def _big_input(seed=0):
    # 2 MiB of float64: over the pool's 1 MiB threshold.
    return np.random.default_rng(seed).standard_normal((512, 512))


def test_live_outputs_never_share_memory_and_dropped_ones_are_reused(pool_limit):
    hc.config.output_cache_bytes = 1 << 30
    f = hc.hcompile(_scaled)
    x = _big_input()
    kept = [f(x) for _ in range(4)]
    for i, a in enumerate(kept):
        np.testing.assert_array_equal(a, x * 2.0 + 1.0)
        assert a.flags.owndata and a.flags.c_contiguous and a.flags.writeable
        for b in kept[i + 1:]:
            assert not np.shares_memory(a, b)
    kept[0][:] = -1.0  # writing one result leaves the others alone
    np.testing.assert_array_equal(kept[1], x * 2.0 + 1.0)

    del kept
    gc.collect()
    before = _C.block_pool_info()
    assert before["cached_bytes"] >= x.nbytes
    y = _big_input(seed=1)
    for _ in range(3):
        np.testing.assert_array_equal(f(y), y * 2.0 + 1.0)  # reused blocks hold no stale values
    after = _C.block_pool_info()
    assert after["hits"] >= before["hits"] + 3


def test_a_limit_of_zero_keeps_nothing(pool_limit):
    f = hc.hcompile(_scaled)
    x = _big_input()
    f(x)
    hc.config.output_cache_bytes = 0
    assert _C.block_pool_info()["cached_bytes"] == 0
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)
    assert _C.block_pool_info()["cached_bytes"] == 0


def test_the_limit_bounds_what_is_cached(pool_limit):
    hc.config.output_cache_bytes = 3 << 20  # room for one 2 MiB block, not two
    f = hc.hcompile(_scaled)
    x = _big_input()
    results = [f(x) for _ in range(3)]
    del results
    gc.collect()
    assert _C.block_pool_info()["cached_bytes"] <= 3 << 20


def test_pooled_outputs_resize_and_pickle_like_numpy_arrays(pool_limit):
    hc.config.output_cache_bytes = 1 << 30
    f = hc.hcompile(_scaled)
    x = _big_input()
    a = f(x)
    want = x * 2.0 + 1.0
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(a)), want)
    a.resize((1024, 512), refcheck=False)  # grows through the pool's realloc
    np.testing.assert_array_equal(a[:512], want)
    np.testing.assert_array_equal(a[512:], 0.0)
    a.resize((16,), refcheck=False)  # shrinks below the pooled size
    np.testing.assert_array_equal(a, want.reshape(-1)[:16])


def test_small_outputs_stay_with_numpys_allocator(pool_limit):
    hc.config.output_cache_bytes = 1 << 30
    f = hc.hcompile(_scaled)
    x = np.ones((8, 8))
    before = _C.block_pool_info()
    for _ in range(3):
        np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)
    after = _C.block_pool_info()
    assert (after["hits"], after["misses"]) == (before["hits"], before["misses"])


@pytest.mark.parametrize("value", [-1, 1.5, True, "1"])
def test_bad_limits_are_refused(value, pool_limit):
    with pytest.raises(ValueError, match="output_cache_bytes"):
        hc.config.output_cache_bytes = value


def _exp_stencil_rows(x):
    y = np.exp(x)
    return (y[2:] + y[:-2] + y[1:-1]).sum(axis=1)


def test_intermediates_halide_allocates_are_reused(pool_limit):
    hc.config.output_cache_bytes = 1 << 30
    # The exponential stored whole (8 MiB) instead of inlined: Halide allocates it every call.
    f = hc.hcompile(_exp_stencil_rows, schedule=[(0, "compute_root", -1, 0, 0), (1, "compute_root", -1, 0, 0),
                                                 (1, "vectorize", 0, 8, 0)])
    x = np.random.default_rng(2).standard_normal((1024, 1024))
    f(x)
    before = _C.block_pool_info()
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((1024, 1024))
        np.testing.assert_allclose(f(x), _exp_stencil_rows(x), rtol=1e-12)
    after = _C.block_pool_info()
    assert after["hits"] - before["hits"] >= 3 and after["misses"] == before["misses"]
