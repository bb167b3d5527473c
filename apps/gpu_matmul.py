"""2-D float32 matrix products on a CUDA GPU: hcompile's cuBLAS call against Halide's own kernels
(a thread per output, or a 4x4 register tile) and torch.matmul, across sizes; where the two meet
is library_calls.h's kMinCublasMultiplyAdds and kMinCublasContraction.

    python -m apps.gpu_matmul [--write apps/RESULTS.md]

cuBLAS is loaded once per process, so Halide's kernels are timed in a child process that never
loads it (``--halide-only``); both processes time with CUDA events (apps/gpu_bench.py's cuda_ms).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import hcompile as hc

from .bench import write_results
from .gpu_bench import cuda_ms

# (m, k, n): square sizes around the crossover, gelu_mlp's two products, short contractions, and
# large outputs of a moderate contraction (where a copy of the result would show).
SHAPES = [(32, 32, 32), (64, 64, 64), (100, 100, 100), (128, 128, 128), (256, 256, 256), (512, 512, 512),
          (1024, 1024, 1024), (32, 512, 1024), (32, 1024, 512), (4096, 64, 64), (2048, 32, 2048),
          (4096, 16, 4096), (4096, 32, 4096), (4096, 64, 4096), (2048, 128, 2048), (1024, 64, 1024),
          (4096, 256, 4096), (8192, 128, 8192)]


def product(a, b):
    return a @ b


def measure(torch, repeat):
    """{"m x k x n": (hcompile microseconds, whether it called cuBLAS, torch.matmul microseconds)}."""
    out = {}
    for m, k, n in SHAPES:
        a, b = torch.randn(m, k, device="cuda"), torch.randn(k, n, device="cuda")
        f = hc.hcompile(product, fullgraph=True)
        want = a @ b
        got = f(a, b)
        if not torch.allclose(got, want, rtol=1e-4, atol=1e-4 * want.abs().max().item()):
            raise AssertionError(f"{m}x{k}x{n}: wrong answer")
        called = "call_library" in f.compile_records[-1]["report"]["schedule"]
        out[f"{m}x{k}x{n}"] = (cuda_ms(torch, f, (a, b), repeat) * 1e3, called,
                               cuda_ms(torch, torch.matmul, (a, b), repeat) * 1e3)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--halide-only", action="store_true", help="never load cuBLAS; print the times as JSON")
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("[gpu_matmul] no CUDA GPU: nothing to measure")
        return 0
    if a.halide_only:
        hc.blas.disable_cublas()
        print(json.dumps(measure(torch, a.repeat)))
        return 0
    child = subprocess.run([sys.executable, "-m", "apps.gpu_matmul", "--halide-only", "--repeat", str(a.repeat)],
                           capture_output=True, text=True, check=True)
    halide = json.loads(child.stdout.strip().splitlines()[-1])
    ours = measure(torch, a.repeat)
    rows = ["| m × k × n | hcompile µs | its product | Halide's kernel µs (no cuBLAS) | torch.matmul µs |",
            "|---|---|---|---|---|"]
    for shape, (us, called, torch_us) in ours.items():
        rows.append(f"| {shape.replace('x', ' × ')} | {us:.1f} | {'cuBLAS' if called else 'Halide'} | "
                    f"{halide[shape][0]:.1f} | {torch_us:.1f} |")
        print(rows[-1], flush=True)
    section = (f"## GPU matrix products: cuBLAS or Halide's kernel\n\n`python -m apps.gpu_matmul` on "
               f"{torch.cuda.get_device_name()} (float32, CUDA-event medians of calls from Python, so small "
               "products show the per-call cost). hcompile calls cuBLAS from 2^21 multiply-adds contracting "
               "128 or more (library_calls.h).\n\n" + "\n".join(rows) + "\n")
    if a.write:
        write_results(Path(a.write), "gpu-matmul", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
