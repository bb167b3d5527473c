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
