"""The apps suite (apps/pipelines.py) through hcompile against NumPy, and stencil fusion on
pipelines like them: every app at its small size (two seeds), image apps at sizes that leave
partial tiles and sizes smaller than a tile, the decisions the search takes for them, and every
variant of a fused schedule. Nothing here is timed."""
from __future__ import annotations

import numpy as np
import pytest

import hcompile as hc
from apps import pipelines as P
from apps import workloads as W


def _schedule(compiled):
    return "\n".join(r["report"]["schedule"] for r in compiled.compile_records if r.get("report"))


@pytest.mark.parametrize("name", [n for n in P.APPS if n != "iir_blur"])
def test_app_matches_numpy(name):
    app = W.get(name)
    compiled = hc.hcompile(app.fn)
    for seed in (0, 1):
        args = app.make_inputs("small", seed=seed)
        want = app.fn(*args)
        got = compiled(*args)
        assert got.dtype == want.dtype and got.shape == want.shape
        ok, err = app.check(got, want)
        assert ok, f"{name} (seed {seed}): max |err| {err}"


def test_iir_blur_matches_numpy_whether_compiled_or_not():
    # Row by row stores: 4 loops over the rows, one stored stage per row; past the stage budget
    # the function runs as Python (the answer is NumPy's either way).
    for shape in [(6, 9), (23, 31)]:
        x = np.random.default_rng(sum(shape)).random(shape, dtype=np.float32)
        compiled = hc.hcompile(P.iir_blur)
        np.testing.assert_allclose(compiled(x), P.iir_blur(x), rtol=1e-5, atol=1e-6)
    # 23 rows: 4 x 22 row stores and their copies, 103 stages, past the 64-stage budget.
    assert "stored stages" in compiled.compile_records[0]["compile_failure"]


def test_every_app_has_small_inputs_of_its_documented_kinds():
    for app in P.APPS.values():
        a, b = app.make_inputs("small", seed=5), app.make_inputs("small", seed=5)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("shape", [(3, 203, 157), (3, 40, 41), (3, 9, 12)])
def test_stencil_apps_with_partial_and_tiny_tiles(shape):
    img = np.random.default_rng(sum(shape)).random(shape, dtype=np.float32)
    for fn, tol in [(P.harris, dict(rtol=1e-3, atol=1e-7)), (P.unsharp_mask, dict(rtol=1e-4, atol=1e-5))]:
        np.testing.assert_allclose(hc.hcompile(fn)(img), fn(img), **tol)
    gray = img[0]
    for fn in (P.box_blur, P.max_filter):
        np.testing.assert_allclose(hc.hcompile(fn)(gray), fn(gray), rtol=1e-5, atol=1e-6)


def test_the_search_fuses_harris_into_tiles_and_every_variant_agrees():
    img = np.random.default_rng(7).random((3, 300, 260), dtype=np.float32)
    want = P.harris(img)
    compiled = hc.hcompile(P.harris)
    np.testing.assert_allclose(compiled(img), want, rtol=1e-3, atol=1e-7)
    text = _schedule(compiled)
    assert "tile_rows" in text and "compute_at_tile" in text, text
    # Explicit lists: the chosen one with each tile size, and with the group undone.
    record = compiled.compile_records[-1]["report"]
    chosen = [tuple(d) for d in record["decisions"]]
    for rows in (8, 13, 64, 512):
        schedule = [(r, c, a, rows if c == "tile_rows" else v, v2) for r, c, a, v, v2 in chosen]
        np.testing.assert_allclose(hc.hcompile(P.harris, schedule=schedule)(img), want, rtol=1e-3, atol=1e-7)
    undone = [(r, "compute_root" if c == "compute_at_tile" else c, a, 0 if c == "compute_at_tile" else v, v2)
              for r, c, a, v, v2 in chosen if c != "tile_rows"]
    np.testing.assert_allclose(hc.hcompile(P.harris, schedule=undone)(img), want, rtol=1e-3, atol=1e-7)


def test_an_unrolled_stencil_chain_matches_numpy_at_tile_and_sub_tile_sizes():
    def chain(x):
        for _ in range(6):  # below the loop-outlining trip count: unrolled into one graph
            x = x[1:-1, 1:-1] * 0.5 + (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:]) * 0.125
        return x

    x = np.random.default_rng(3).random((301, 257), dtype=np.float32)
    compiled = hc.hcompile(chain)
    np.testing.assert_allclose(compiled(x), chain(x), rtol=1e-5, atol=1e-6)
    y = np.random.default_rng(4).random((13, 17), dtype=np.float32)   # smaller than a tile
    np.testing.assert_allclose(hc.hcompile(chain)(y), chain(y), rtol=1e-5, atol=1e-6)
