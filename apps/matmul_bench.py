"""Matrix products: hcompile's BLAS calls against its register-tiled Halide loops and NumPy;
sums of products accumulated in one tile (matmul_sum) against the products apart.

    python -m apps.matmul_bench [--repeat 9] [--write apps/RESULTS.md]

For each shape (float32, m x k @ k x n): NumPy's `a @ b`; hcompile in default mode (a BLAS call
per parallel tile where the product is large enough, library_calls.h); hcompile with
`autoscheduler="baseline"` (Halide's loops only). Then sums of products, `x @ wx + h @ wh + b`
(recurrent gates) and the 3x3 convolution of apps/pipelines.py (nine shifted products):
NumPy (a BLAS call per product), hcompile (one matmul_sum region), Adams2019 and the baseline
on the products apart (Halide loops). Medians of per-call means.
"""
from __future__ import annotations

import argparse

import numpy as np

import hcompile as hc
from apps.bench import heading, publish
from apps.cost_model_ranking import median_seconds

SHAPES = [(128, 128, 128), (256, 256, 256), (384, 384, 384), (512, 512, 512), (32, 512, 1024),
          (1024, 64, 1024), (64, 2048, 64), (1000, 300, 20)]


def matmul(a, b):
    return a @ b


def gates(x, h, wx, wh, b):
    return x @ wx + h @ wh + b


def sums_of_products(repeat):
    """The matmul_sum table's rows."""
    from apps.pipelines import conv_layer, inputs_conv_layer

    rng = np.random.default_rng(0)
    cases = []
    for m, k, n in [(512, 64, 1024), (512, 256, 1024), (2048, 128, 256), (4096, 32, 64)]:
        args = tuple(rng.standard_normal(s, dtype=np.float32) for s in [(m, k), (m, k), (k, n), (k, n), (n,)])
        cases.append((f"gates {m}x{k}x{n} (2 products)", gates, args))
    cases.append(("conv 3x3, N=4 56x56 64->64 (9 products)", conv_layer, inputs_conv_layer()))
    rows = ["| sum | NumPy ms | hcompile ms | Adams2019 ms | baseline ms | vs NumPy | vs Adams2019 |",
            "|---|---|---|---|---|---|---|"]
    for title, fn, args in cases:
        compiled = [hc.hcompile(fn, dynamic=False, autoscheduler=s) for s in ("hcompile", "Adams2019", "baseline")]
        want = fn(*args)
        for c in compiled:
            np.testing.assert_allclose(c(*args), want, rtol=1e-3, atol=1e-3)
        assert "(matmul_sum)" in compiled[0].compile_records[0]["report"]["regions"]
        t_np, t_ours, t_adams, t_base = (median_seconds(f, args, repeat) for f in (fn, *compiled))
        rows.append(f"| {title} | {t_np * 1e3:.3f} | {t_ours * 1e3:.3f} | {t_adams * 1e3:.3f} | {t_base * 1e3:.3f} | "
                    f"{t_np / t_ours:.2f}× | {t_adams / t_ours:.2f}× |")
        print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    rows = ["| m x k x n | NumPy ms | hcompile ms | BLAS? | Halide loops ms | loops / hcompile |", "|---|---|---|---|---|---|"]
    for m, k, n in SHAPES:
        rng = np.random.default_rng(0)
        x, y = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
        ours, loops = hc.hcompile(matmul, dynamic=False), hc.hcompile(matmul, dynamic=False, autoscheduler="baseline")
        np.testing.assert_allclose(ours(x, y), x @ y, rtol=1e-4)
        np.testing.assert_allclose(loops(x, y), x @ y, rtol=1e-4)
        t_np, t_ours, t_loops = (median_seconds(f, (x, y), a.repeat) for f in (matmul, ours, loops))
        blas = "call_library" in ours.compile_records[0]["report"]["schedule"]
        rows.append(f"| {m}x{k}x{n} | {t_np * 1e3:.3f} | {t_ours * 1e3:.3f} | {'yes' if blas else 'no'} | "
                    f"{t_loops * 1e3:.3f} | {t_loops / t_ours:.2f} |")
        print(rows[-1], flush=True)
    section = (heading("Matrix products: BLAS calls and Halide loops (apps/matmul_bench.py)") +
               f"Command: `python -m apps.matmul_bench --repeat {a.repeat}`.\n\n" + "\n".join(rows) + "\n")
    publish(section, a.write, "matmul")
    rows = sums_of_products(a.repeat)
    section = (heading("Sums of matrix products in one register tile (matmul_sum; apps/matmul_bench.py)") +
               f"Command: `python -m apps.matmul_bench --repeat {a.repeat}`. Adams2019 and the baseline get the "
               "products apart (Halide loops, each stored, then added); NumPy calls BLAS per product.\n\n" +
               "\n".join(rows) + "\n")
    publish(section, a.write, "matmul-sums")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
