"""Row groups on the GPU: layer norms and softmaxes that a matrix product reads, each computed as
one kernel of a block per row (its reductions and elementwise members per row inside it), against
torch eager on the same CUDA tensors (CUDA-event timing), with the CUDA kernels a call launches.

    python -m apps.gpu_row_groups_bench LABEL [--workloads transformer_layer,ln_linear_gelu_res]

LABEL names the build in the printed lines (to compare two builds, run it once in each; torch
eager's column is the same work in both, a check of the process's own speed). Each line: the
best of three CUDA-event medians of 20 batches at the workload's GPU size, torch eager's the
same way, the kernels one call launches (torch.profiler's CUDA events: Halide's kernels and
cuBLAS's), the largest difference from NumPy, and the time at the workload's small size.
"""
from __future__ import annotations

import argparse

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import bench_inputs, cuda_ms, kernel_us, torch_versions

DEFAULT = "transformer_layer,ln_linear_gelu_res,gelu_mlp,matmul_softmax_100,softmax_rows,layernorm_rows"


def kernels_a_call(torch, fn, args):
    return round(kernel_us(torch, fn, args, calls=1, warmup=0)[1])


def main(argv=None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("label")
    ap.add_argument("--workloads", default=DEFAULT)
    a = ap.parse_args(argv)
    peers = torch_versions(torch)
    rng = np.random.default_rng(0)
    for name in a.workloads.split(","):
        fn = getattr(W, name)
        args = bench_inputs(name, rng)
        tensors = [torch.from_numpy(x).cuda() for x in args]
        compiled = hc.hcompile(fn, fullgraph=True)
        got = compiled(*tensors).float().cpu().numpy()
        err = float(np.max(np.abs(got - fn(*args).astype(np.float32))))
        ms = min(cuda_ms(torch, compiled, tensors, 20) for _ in range(3))
        eager = min(cuda_ms(torch, peers[name], tensors, 20) for _ in range(3))
        small = [torch.from_numpy(x).cuda() for x in getattr(W, "inputs_" + name)("small")]
        compiled_small = hc.hcompile(fn, fullgraph=True)
        small_us = min(cuda_ms(torch, compiled_small, small, 20) for _ in range(3)) * 1000
        print(f"{a.label} {name}: {ms:.4f} ms (torch eager {eager:.4f}), {kernels_a_call(torch, compiled, tensors)} "
              f"kernels, max err {err:.2e}, small {small_us:.1f} us", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
