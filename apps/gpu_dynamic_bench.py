"""Dynamic shapes on a CUDA GPU: what a kernel compiled for any size costs against the one
specialised to the size, and what a loop over changing batch sizes costs, compiles included.

    python -m apps.gpu_dynamic_bench [--workloads softmax_rows,gelu_mlp] [--repeat 20] [--write apps/RESULTS.md]

Per workload (apps/gpu_bench.py's inputs at its GPU sizes), in one process: hcompile's static
entry and its generic one (``dynamic=True``) and the one for any batch (a call at half the batch first) at that size, and
torch.compile's ``dynamic=True``
(CUDA-event medians, every result checked against torch's); then a loop over ten sizes of the
first argument's first axis, the second pass too (every kernel then cached): hcompile with its
default ``dynamic=None`` (the second size compiles for every size) against torch.compile's
default (automatic dynamic shapes after a recompile). Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.bench import heading, publish
from apps.gpu_bench import bench_inputs, cuda_ms, overhead_us, tolerance, torch_versions

WORKLOADS = "softmax_rows,layernorm_rows,tinyops,blur3x3,gelu_mlp"


def _checked(torch, name, got, want):
    rtol, atol = tolerance(name)
    return torch.allclose(got, want, rtol=rtol, atol=atol * max(1.0, want.abs().max().item()))


def _loop_seconds(torch, fn, batches, rest):
    """Wall seconds of one call per batch, synchronised at the end."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for x in batches:
        fn(x, *rest)
    torch.cuda.synchronize()
    return time.perf_counter() - start


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=WORKLOADS)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("[gpu_dynamic_bench] no CUDA GPU: nothing to measure")
        return 0
    peers = torch_versions(torch)
    rows = ["| workload | hcompile static ms | hcompile any batch ms | hcompile any size ms | any size / static (time) | "
            "torch.compile dynamic ms | 10 sizes, first pass: hcompile s (compiles) | torch.compile s | "
            "second pass: hcompile ms | torch.compile ms |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    rng = np.random.default_rng(0)
    for name in a.workloads.split(","):
        fn = getattr(W, name)
        args = [torch.from_numpy(x).cuda() for x in bench_inputs(name, rng)]
        want = peers[name](*args)
        static, generic = hc.hcompile(fn, fullgraph=True), hc.hcompile(fn, fullgraph=True, dynamic=True)
        # Any batch: a call at half the batch first, so that only the first axis is dynamic.
        batch = hc.hcompile(fn, fullgraph=True)
        batch(args[0][: max(2, args[0].shape[0] // 2)].contiguous(), *args[1:])
        cells = []
        for compiled in (static, batch, generic):
            got = compiled(*args)
            cells.append(cuda_ms(torch, compiled, args, a.repeat) if _checked(torch, name, got, want) else None)
        if not generic._cuda._generic:
            print(f"[gpu_dynamic_bench] {name}: dynamic=True kept static shapes: "
                  f"{generic.compile_records[-1].get('dynamic')}")
        tc_dynamic = torch.compile(peers[name], dynamic=True)
        cells.append(cuda_ms(torch, tc_dynamic, args, a.repeat))
        n = args[0].shape[0]
        sizes = [max(2, n * k // 8) for k in (8, 4, 6, 3, 7, 2, 5, 1)] + [max(2, n * 3 // 16), max(2, n * 5 // 16)]
        batches = [args[0][:m].contiguous() for m in sizes]
        loop_hc, loop_tc = hc.hcompile(fn, fullgraph=True), torch.compile(peers[name])
        first = [_loop_seconds(torch, f, batches, args[1:]) for f in (loop_hc, loop_tc)]
        second = [_loop_seconds(torch, f, batches, args[1:]) * 1e3 for f in (loop_hc, loop_tc)]
        wrong = [m for m, x in zip(sizes, batches) if not _checked(torch, name, loop_hc(x, *args[1:]),
                                                                  peers[name](x, *args[1:]))]
        if wrong:
            print(f"[gpu_dynamic_bench] {name}: wrong answers at sizes {wrong}")
        ms = ["wrong" if c is None else f"{c:.3f}" for c in cells]
        ratio = f"{cells[2] / cells[0]:.2f}×" if cells[0] is not None and cells[2] is not None else "—"
        compiles = loop_hc._cuda._compiles if loop_hc._cuda is not None else 0
        rows.append(f"| {name} | {ms[0]} | {ms[1]} | {ms[2]} | {ratio} | {ms[3]} | {first[0]:.2f} ({compiles}) | {first[1]:.2f} | "
                    f"{second[0]:.2f} | {second[1]:.2f} |")
        print(rows[-1], flush=True)
    tiny = torch.ones(16, device="cuda")
    per_call = [overhead_us(torch, hc.hcompile(W.add_one, dynamic=dynamic), tiny) for dynamic in (False, True)]
    overhead = (f"Per-call host time on a 16-element tensor: {per_call[0]:.1f} µs for the static entry, "
                f"{per_call[1]:.1f} µs for the one compiled for any size.")
    print(overhead)
    device = torch.cuda.get_device_name()
    section = (heading("hcompile's dynamic shapes on a CUDA GPU") + f"`python -m apps.gpu_dynamic_bench` on {device}: "
               "a kernel compiled for any size of the first axis (any batch) and of every axis against the one for the "
               "exact size (CUDA-event medians), and a loop "
               "over ten sizes of the first argument's first axis, compiles included (first pass) and cached "
               "(second pass).\n\n" + "\n".join(rows) + "\n\n" + overhead + "\n")
    publish(section, a.write, "gpu_dynamic")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
