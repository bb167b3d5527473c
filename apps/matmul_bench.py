"""Matrix products: hcompile's BLAS calls against its register-tiled Halide loops and NumPy.

    python -m apps.matmul_bench [--repeat 9] [--write apps/RESULTS.md]

For each shape (float32, m x k @ k x n): NumPy's `a @ b`; hcompile in default mode (a BLAS call
per parallel tile where the product is large enough, library_calls.h); hcompile with
`autoscheduler="baseline"` (Halide's loops only). Medians of per-call means.
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
