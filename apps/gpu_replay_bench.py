"""A workload at its GPU bench size in default mode and with mode="reduce-overhead" (CUDA graphs),
hcompile and torch.compile, in one process (CUDA events).

    python -m apps.gpu_replay_bench [--workloads transformer_layer]

gpu_bench times reduce-overhead at the small sizes, where a call is the host's work. Here it is
timed at the large size of a workload of many kernels, where the GPU waits between launches (the
transformer layer: 12 kernels, about 1.7 µs idle before each; apps.gpu_kernel_timeline). Each time
is the best of three medians of 20 batches of 10 calls with the same arguments, so a replay reads
them where the graph does. Every result is checked against torch's first. Needs a CUDA GPU with
PyTorch.
"""
from __future__ import annotations

import argparse

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import bench_inputs, cuda_ms, tolerance, torch_versions


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", default="transformer_layer")
    a = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to measure")
        return 0
    print(torch.cuda.get_device_name(), flush=True)
    for name in a.workloads.split(","):
        args = [torch.from_numpy(x).cuda() for x in bench_inputs(name, np.random.default_rng(0))]
        peer = torch_versions(torch)[name]
        want = peer(*args)
        rtol, atol = tolerance(name)
        for label, f in [("hcompile default", hc.hcompile(getattr(W, name), fullgraph=True)),
                         ("hcompile reduce-overhead", hc.hcompile(getattr(W, name), fullgraph=True,
                                                                  mode="reduce-overhead")),
                         ("torch.compile default", torch.compile(peer)),
                         ("torch.compile reduce-overhead", torch.compile(peer, mode="reduce-overhead"))]:
            for _ in range(3):
                got = f(*args)
            torch.testing.assert_close(got.clone(), want, rtol=rtol, atol=atol, check_dtype=False)
            ms = min(cuda_ms(torch, f, args, 20) for _ in range(3))
            print(f"{name}, {label}: {ms * 1000:.1f} µs a call", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
