"""Compile, call and reset in a loop: resident memory stays flat (a leaked kernel costs about a
megabyte of JIT code and data, so 180 of them would be hundreds of MB; the bound is generous)."""
import os

import numpy as np
import pytest

from numpy_oracle import IDENTITY, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="measures the real compiler")

ROUNDS, WARMUP = 200, 20
GROWTH_LIMIT_MB = 48


def resident_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_compile_call_reset_loop_keeps_memory_flat(rng):
    f = hc.hcompile(lambda x, y: (x + 1, y * 0.5))
    g = hc.hcompile(lambda x: [v for v in x.tolist()])  # an entry that runs as Python
    x = rng.integers(-9, 9, size=(6,)).astype(np.int32)
    y = rng.standard_normal((2, 3))
    start = None
    for i in range(ROUNDS):
        a, b = f(x, y)
        np.testing.assert_array_equal(a, x + 1)
        assert g(x) == x.tolist()
        if i % 2:
            hc.reset()
        else:
            f.reset()
            g.reset()
        if i == WARMUP:
            start = resident_mb()
    growth = resident_mb() - start
    assert growth < GROWTH_LIMIT_MB, f"resident memory grew {growth:.1f} MB over {ROUNDS - WARMUP} rounds"


def _collected(make):
    """Whether the compiled function `make()` returns (with the plain function it wraps) is
    freed by the garbage collector once nothing outside refers to it."""
    import gc
    import weakref
    compiled, plain = make()
    refs = weakref.ref(compiled), weakref.ref(plain)
    del compiled, plain
    gc.collect()
    return [r() is None for r in refs]


def test_compiled_functions_their_own_code_refers_to_are_collected():
    """A compiled function held by a closure cell or an attribute of the function it compiles is
    a cycle through its C++ dispatcher (which holds the function and its entries): the
    collector sees those references (tp_traverse) and breaks them (tp_clear)."""
    x = np.arange(6.0)

    def by_attribute():
        def f(a):
            return a * 2 + 1
        f.compiled = hc.hcompile(f)
        np.testing.assert_array_equal(f.compiled(x), x * 2 + 1)
        np.testing.assert_array_equal(f.compiled(x), x * 2 + 1)     # from the dispatcher's entry
        return f.compiled, f

    def by_closure():
        def f(a, n):
            return a + 1 if compiled is not None and n == 0 else [f(a, 0)] * n   # n > 0: a graph break
        compiled = hc.hcompile(f)
        for n in (0, 0, 2, 2):
            got = compiled(x, n)
            assert np.array_equal(got, x + 1) if n == 0 else len(got) == 2
        return compiled, f

    def uncalled():
        def f(a):
            return f.compiled(a)
        f.compiled = hc.hcompile(f)
        return f.compiled, f

    for make in (by_attribute, by_closure, uncalled):
        assert _collected(make) == [True, True], make.__name__
