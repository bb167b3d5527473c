"""Threads: 8 at once calling compiled functions, with the same and with different shapes (their
compiles race), while other threads reset the caches. No crash (a reset freed an entry a call was
still running: segfault), no wrong answer, no deadlock (joins have a time limit; the work itself
is not timed), and one compile per guard set (each racing thread used to add its own entry).
"""
import threading

import numpy as np
import pytest

from numpy_oracle import IDENTITY, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="exercises the real dispatcher")

THREADS = 8
JOIN_LIMIT_S = 300  # generous: only a deadlock gets near it on a loaded machine


def run_threads(work, n=THREADS):
    """Runs work(i) on n threads started together; re-raises the first failure."""
    barrier = threading.Barrier(n)
    errors = []

    def body(i):
        try:
            barrier.wait()
            work(i)
        except BaseException as e:  # noqa: BLE001  (reported below, on the main thread)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_LIMIT_S)
    assert not any(t.is_alive() for t in threads), "threads still running: deadlock"
    if errors:
        raise errors[0]


def kernel_fn(x):
    return np.sin(x) * 2.0 + x.sum(axis=0)


def expected_of(x):
    return kernel_fn(x)


def test_same_shapes_compile_once(rng):
    f = hc.hcompile(kernel_fn)
    x = rng.standard_normal((64, 32))
    want = expected_of(x)

    def work(i):
        for _ in range(20):
            np.testing.assert_allclose(f(x), want, rtol=1e-12, atol=1e-12)  # sums near 0 cancel

    run_threads(work)
    info = f.cache_info()
    assert (info.entries, info.misses) == (1, 1), info
    assert info.hits == THREADS * 20 - 1


def test_different_shapes_compile_once_each(rng):
    f = hc.hcompile(kernel_fn, dynamic=False)      # an entry per shape
    shapes = [(3, 5), (4, 5), (7, 2), (1, 9)]  # two threads per shape, all racing
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    wants = [expected_of(x) for x in inputs]

    def work(i):
        for k in range(10):
            j = (i + k) % len(shapes)
            np.testing.assert_allclose(f(inputs[j]), wants[j], rtol=1e-5, atol=1e-6)

    run_threads(work)
    assert f.cache_info().entries == len(shapes)
    assert f.cache_info().misses == len(shapes)


def test_racing_compiles_stay_within_the_recompile_limit(rng):
    # Eight threads, one shape: one entry, so the limit (8) is nowhere near and every call after
    # the first compile runs the kernel (before, 8 racing compiles used the whole limit).
    f = hc.hcompile(lambda x: x * 3 + 1, fullgraph=True)
    x = rng.integers(-100, 100, size=(10,))
    run_threads(lambda i: np.testing.assert_array_equal(f(x), x * 3 + 1))
    assert f.cache_info().entries == 1
    y = rng.integers(-100, 100, size=(11,))
    np.testing.assert_array_equal(f(y), y * 3 + 1)
    assert f.cache_info().entries == 2


@pytest.mark.parametrize("reset", ["global", "function"])
def test_reset_during_calls(reset, rng):
    """The crash repro: kernels running (GIL released) while another thread drops the cache.
    Three rounds, each with calls in flight across several resets (each reset waits for a
    compile in progress, and the calls then compile again)."""
    f = hc.hcompile(lambda x: np.sin(x) * 2.0 + 1.0)
    g = hc.hcompile(lambda x: np.where(x > 0, x, -x) * 0.5)
    x = rng.standard_normal((256, 256)).astype(np.float32)
    small = rng.standard_normal((5, 3)).astype(np.float32)
    want_f, want_small, want_g = np.sin(x) * 2.0 + 1.0, np.sin(small) * 2.0 + 1.0, np.abs(x) * 0.5

    def drop_caches():
        if reset == "global":
            hc.reset()
        else:
            f.reset()
            g.reset()

    for _ in range(3):
        stop = threading.Event()

        def work(i):
            if i == 0:
                for _ in range(4):
                    stop.wait(0.01)
                    drop_caches()
                stop.set()
                return
            while not stop.is_set():
                if i % 3 == 0:
                    np.testing.assert_array_equal(g(x), want_g)
                elif i % 3 == 1:
                    np.testing.assert_allclose(f(small), want_small, rtol=1e-6, atol=1e-6)
                else:
                    np.testing.assert_allclose(f(x), want_f, rtol=1e-6, atol=1e-6)

        run_threads(work)
    assert f.cache_info().entries <= 2


def test_recursion_and_python_entries_from_threads(rng):
    """Compiled functions calling compiled functions (themselves, and one that runs as Python)
    from many threads, with a reset among them: no lock is held while a function runs."""

    @hc.hcompile
    def as_python(x):
        return [v for v in x.tolist()]  # not captured: runs as Python

    @hc.hcompile
    def depth(n, x):
        if n == 0:
            return x + 1
        as_python(x)
        return depth(n - 1, x * 2)

    x = rng.integers(-5, 5, size=(4,))

    def work(i):
        for n in range(4):
            np.testing.assert_array_equal(depth(n, x), x * 2**n + 1)
            if i == 1 and n == 2:
                hc.reset()

    run_threads(work)


def test_call_from_inside_its_own_compile(monkeypatch):
    """The compile lock is re-entrant: a function called (on the same thread) while its own
    compile runs, e.g. by a helper the capture runs, compiles or runs without deadlock."""
    import hcompile.api as api

    real_capture = api.capture
    nested = []

    def capture_that_calls_back(fn, args, **options):
        if not nested:
            nested.append(f(*args))  # same function, same arguments, mid-compile
        return real_capture(fn, args, **options)

    monkeypatch.setattr(api, "capture", capture_that_calls_back)
    f = hc.hcompile(lambda x: x * 2 + 1)
    x = np.arange(5)
    results = []
    run_threads(lambda i: results.append(f(x)), n=1)
    np.testing.assert_array_equal(nested[0], x * 2 + 1)
    np.testing.assert_array_equal(results[0], x * 2 + 1)
