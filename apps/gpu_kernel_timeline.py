"""The kernels one call launches on a CUDA GPU, in order: each one's time and the idle gap before
it (CUPTI through torch.profiler), for hcompile and torch.compile, with the call's CUDA-event time.

    python -m apps.gpu_kernel_timeline [--workloads transformer_layer] [--shape 1024x512] [--flush-l2]

Where a workload's time goes between its kernels and the host: the gaps are the GPU waiting for
the next launch (the profiler slows the host, so they are wider here than in the CUDA-event time).
--shape RxC replaces the first input's shape of a workload sized in gpu_bench.SIZES (its 1-D
inputs become C long: a layer norm's weight and bias). --flush-l2 copies 512 MB on the device
before each profiled call (those kernels left out): the call's inputs then come from DRAM, as they
do in a model where larger kernels run in between (a transformer layer's layer norms). Every
result is checked against torch's first. Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import argparse

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import SIZES, bench_inputs, cuda_ms, tolerance, torch_versions

CALLS = 10


def _inputs(name, shape, rng):
    if shape is None or SIZES[name] is None:
        return bench_inputs(name, rng)
    rows, columns = shape
    shapes = [(rows, columns)] + [(columns,) if len(s) == 1 else s for s in SIZES[name][1:]]
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def _profile(torch, fn, args, flush):
    """The GPU events of CALLS calls, each after `flush` (or nothing), without flush's own kernels."""
    for _ in range(3):
        flush()
        fn(*args)
    torch.cuda.synchronize()
    activities = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as alone:
        flush()
        torch.cuda.synchronize()
    flush_kernels = {e.name for e in alone.events() if e.device_type == torch.profiler.DeviceType.CUDA}
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(CALLS):
            flush()
            fn(*args)
        torch.cuda.synchronize()
    return sorted((e for e in prof.events()
                   if e.device_type == torch.profiler.DeviceType.CUDA and e.name not in flush_kernels),
                  key=lambda e: e.time_range.start)


def timeline(torch, label, fn, args, flush, repeat):
    events = _profile(torch, fn, args, flush)
    per_call = len(events) // CALLS
    busy = sum(e.time_range.end - e.time_range.start for e in events) / CALLS
    wall = cuda_ms(torch, fn, args, repeat) * 1000
    print(f"{label}: {per_call} kernels a call, {busy:.1f} µs of kernels; {wall:.1f} µs a call (CUDA events, "
          "back to back, no flush)")
    middle = events[per_call * (CALLS // 2):per_call * (CALLS // 2 + 1)]
    print("| kernel | µs | gap before (µs) |\n|---|---|---|")
    for i, e in enumerate(middle):
        gap = e.time_range.start - middle[i - 1].time_range.end if i else 0.0
        print(f"| {e.name[:80]} | {e.time_range.end - e.time_range.start:.1f} | {gap:.1f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="transformer_layer")
    ap.add_argument("--shape", help="RxC: the first input's shape (workloads sized in gpu_bench.SIZES)")
    ap.add_argument("--flush-l2", action="store_true", help="copy 512 MB on the device before each profiled call")
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to measure")
        return 0
    shape = tuple(int(v) for v in a.shape.split("x")) if a.shape else None
    if a.flush_l2:
        source = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
        target = torch.empty_like(source)
        flush = lambda: target.copy_(source)  # noqa: E731
    else:
        flush = lambda: None  # noqa: E731
    peers = torch_versions(torch)
    print(f"{torch.cuda.get_device_name()}; {'after a 512 MB copy each call' if a.flush_l2 else 'calls back to back'}")
    for name in a.workloads.split(","):
        args = [torch.from_numpy(x).cuda() for x in _inputs(name, shape, np.random.default_rng(0))]
        compiled = hc.hcompile(getattr(W, name), fullgraph=True)
        peer = torch.compile(peers[name], dynamic=False)
        rtol, atol = tolerance(name)
        torch.testing.assert_close(compiled(*args), peers[name](*args), rtol=rtol, atol=atol, check_dtype=False)
        shown = "×".join(str(s) for s in args[0].shape)
        timeline(torch, f"{name} {shown}, hcompile", compiled, args, flush, a.repeat)
        timeline(torch, f"{name} {shown}, torch.compile", peer, args, flush, a.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
