"""The register cap of hcompile's GPU kernels: each seed workload's default schedule timed with
Halide's CUDA runtime capping every kernel at 32, 40, 48, 64 (its default), 128 and 255 registers
a thread (CUDA-event medians, checked against torch's answer).

    python -m apps.gpu_register_caps [--repeat 20] [--write apps/RESULTS.md]

Halide's CUDA runtime loads each pipeline's PTX with the driver's CU_JIT_MAX_REGISTERS option:
64, or the HL_CUDA_JIT_MAX_REGISTERS environment variable's value, read when a pipeline's first
call loads its module. So each cap runs in a process of its own (this script with --cap). Fewer
registers let more threads share a multiprocessor (more loads in flight) but may spill to local
memory. A cap is a schedule decision now (`gpu_registers`), which max-autotune tries on stencil
kernels (apps/gpu_stencils_bench.py measures those in one process); this measures every seed's
kernels under each cap.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

CAPS = (32, 40, 48, 64, 128, 255)


def time_workloads(repeat):
    """This process's times, one JSON line per workload: {name: ms or null (a wrong answer)}."""
    import torch

    import hcompile as hc
    from apps import workloads as W
    from apps.gpu_bench import SIZES, bench_inputs, cuda_ms, sum_all, tolerance, torch_versions
    peers = torch_versions(torch)
    rng = np.random.default_rng(0)
    for name in SIZES:
        args = [torch.from_numpy(a).cuda() for a in bench_inputs(name, rng)]
        fn = getattr(W, name, None) or sum_all
        compiled = hc.hcompile(fn, fullgraph=True)
        rtol, atol = tolerance(name)
        ok = torch.allclose(compiled(*args).float(), peers[name](*args).float(), rtol=rtol, atol=atol)
        print(json.dumps({name: cuda_ms(torch, compiled, args, repeat) if ok else None}), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    ap.add_argument("--cap", type=int, help=argparse.SUPPRESS)   # a worker: times under this cap
    args = ap.parse_args(argv)
    if args.cap is not None:
        time_workloads(args.repeat)
        return 0
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("no CUDA GPU with PyTorch: nothing to measure")
        return 0
    times = {}
    for cap in CAPS:
        env = dict(os.environ, HL_CUDA_JIT_MAX_REGISTERS=str(cap))
        run = subprocess.run([sys.executable, "-m", "apps.gpu_register_caps", "--cap", str(cap), "--repeat",
                              str(args.repeat)], env=env, capture_output=True, text=True)
        for line in run.stdout.splitlines():
            if line.startswith("{"):
                for name, ms in json.loads(line).items():
                    times.setdefault(name, {})[cap] = ms
        if run.returncode != 0:
            print(f"[gpu_register_caps] cap {cap} failed:\n{run.stderr[-2000:]}")

    def cell(name, cap):
        ms, base = times[name].get(cap), times[name].get(64)
        if ms is None:
            return "wrong answer" if cap in times[name] else "—"
        return f"{ms:.3f}" + (f" ({ms / base:.2f})" if base and cap != 64 else "")

    from apps.bench import heading, publish
    rows = [f"| {name} | " + " | ".join(cell(name, cap) for cap in CAPS) + " |" for name in times]
    section = (heading(f"gpu-register-caps: kernels' register cap, ms (against 64) ({torch.cuda.get_device_name()})") +
               f"Command: `python -m apps.gpu_register_caps --repeat {args.repeat}`: each seed workload's "
               "default hcompile schedule, one process per cap (HL_CUDA_JIT_MAX_REGISTERS).\n\n"
               "| workload | " + " | ".join(f"{c} registers" for c in CAPS) + " |\n|---|" + "---|" * len(CAPS) + "\n" +
               "\n".join(rows) + "\n")
    publish(section, args.write, "gpu-register-caps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
