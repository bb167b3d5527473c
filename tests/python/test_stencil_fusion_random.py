"""Random stencil pipelines, the kind stencil fusion and optional (inlinable) regions change:
chains of slices, shifts, elementwise ops and costly intermediates read through windows of rows,
on images large enough to be tiled (and odd sizes that leave partial tiles), in several dtypes
and layouts, each checked against NumPy. The programs come from a fixed seed; each is a plain
Python function built from source so that hcompile captures it as a user would write it."""
from __future__ import annotations

import numpy as np
import pytest

import hcompile as hc
from numpy_oracle import target_options

# Stencil steps: each reads `a` (2-D) and returns a 2-D result, shrinking rows and columns.
STEPS = [
    "a = (a[:-2] + a[1:-1] + a[2:]) * {c}",                                   # 3 rows
    "a = a[:, :-2] - {c} * a[:, 1:-1] + a[:, 2:]",                            # 3 columns
    "a = np.maximum(a[:-1, :-1], a[1:, 1:])",                                 # diagonal max
    "a = a[1:-1, 1:-1] * {c} + (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]) * 0.125",
    "a = np.tanh(a) * {c} + a",                                               # costly, no shrink
    "a = np.exp(-a * a)[:-4] + a[4:]",                                        # 5-row window
    "a = np.where(a[1:] > {c}, a[1:], a[:-1])",                               # select between rows
    "a = (a[:-2] + a[2:]) / (np.abs(a[1:-1]) + 1)",
]


def make_program(rng):
    steps = rng.integers(2, 7)
    lines = ["def f(x):", "    a = x"]
    for _ in range(steps):
        step = STEPS[rng.integers(len(STEPS))]
        lines.append("    " + step.format(c=float(np.round(rng.uniform(0.1, 0.9), 2))))
    if rng.random() < 0.3:
        lines.append("    return a, a[::2].sum()")
    lines.append("    return a")
    namespace = {"np": np}
    exec("\n".join(lines), namespace)  # noqa: S102
    return namespace["f"], "\n".join(lines)


def make_input(rng, dtype):
    rows, cols = int(rng.integers(40, 400)), int(rng.integers(20, 260))
    x = rng.standard_normal((rows + 3, cols + 5)).astype(dtype)
    if rng.random() < 0.3:
        return x[2:-1, 3:-2]            # a strided view
    if rng.random() < 0.2:
        return np.asfortranarray(x)
    return x


@pytest.mark.parametrize("seed", range(32))
def test_random_stencil_pipeline_matches_numpy(seed):
    rng = np.random.default_rng(1000 + seed)
    fn, source = make_program(rng)
    dtype = [np.float32, np.float64][seed % 2]
    compiled = hc.hcompile(fn, **target_options())
    for _ in range(2):   # a second call with new values under the same guards
        x = make_input(rng, dtype)
        with np.errstate(all="ignore"):
            want = fn(x)
        got = compiled(x.copy(order="K"))
        want = want if isinstance(want, tuple) else (want,)
        got = got if isinstance(got, tuple) else (got,)
        for g, w in zip(got, want):
            assert np.asarray(g).shape == np.asarray(w).shape, source
            np.testing.assert_allclose(g, w, rtol=2e-4 if dtype == np.float32 else 1e-12,
                                       atol=1e-5 if dtype == np.float32 else 1e-12, err_msg=source)
