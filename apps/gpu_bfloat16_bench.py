"""bfloat16 on the GPU: hcompile against torch eager and torch.compile on the same torch.bfloat16
CUDA tensors (CUDA-event timing, medians), with each answer checked against float32 NumPy.

    python -m apps.gpu_bfloat16_bench [--repeat 20] [--write apps/RESULTS.md]

The NumPy functions are the seed workloads of apps/workloads.py run on bfloat16 (ml_dtypes) values:
every step rounds to bfloat16, as ml_dtypes' NumPy loops do, and a product of bfloat16 matrices is
float32 (NumPy's matmul has no bfloat16 loop), taken by cuBLAS on the tensor cores. The torch
versions are torch's own (fused ops that round once), so answers agree within bfloat16's steps.
Memory-bound rows also show the bandwidth reached (bytes read and written once) against the
device's copy bandwidth, measured the way gpu_bench measures it.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import cuda_ms, peer_bench_start, publish_peer_table, torch_versions

SIZES = {"tinyops": [(8192, 8192)], "softmax_rows": [(8192, 8192)],
         "layernorm_rows": [(8192, 4096), (4096,), (4096,)], "ln_linear_gelu_res": None}
TOLERANCE = 3e-2     # relative to the answer's largest magnitude: a few bfloat16 steps


def inputs(torch, name, rng):
    if SIZES[name] is None:
        arrays = [a.astype(np.float32) for a in W.inputs_ln_linear_gelu_res("bench")]
    else:
        arrays = [rng.standard_normal(s).astype(np.float32) for s in SIZES[name]]
    return [torch.from_numpy(a).cuda().to(torch.bfloat16) for a in arrays]


def float32_reference(torch, fn, args):
    import ml_dtypes
    wide = [t.float().cpu().numpy() for t in args]
    with np.errstate(all="ignore"):
        return np.asarray(fn(*[a.astype(ml_dtypes.bfloat16).astype(np.float32) for a in wide]), np.float32)


def close(torch, got, want):
    got = got.float().cpu().numpy()
    return bool(np.allclose(got, want, rtol=TOLERANCE, atol=TOLERANCE * max(1.0, float(np.abs(want).max()))))


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, torch_versions)
    if started is None:
        return 0
    args, torch, copy, peers = started
    rng = np.random.default_rng(0)
    rows = []
    for name in SIZES:
        fn, peer = getattr(W, name), peers[name]
        tensors = inputs(torch, name, rng)
        want = float32_reference(torch, fn, tensors)
        compiled = hc.hcompile(fn, fullgraph=True)
        cells = []
        for label, f in (("hcompile", compiled), ("eager", peer), ("torch.compile", torch.compile(peer))):
            ok = close(torch, f(*tensors), want)
            cells.append(f"{cuda_ms(torch, f, tensors, args.repeat):.3f}" + ("" if ok else " (wrong answer)"))
        ms = float(cells[0].split()[0])
        out_bytes = want.size * (4 if name == "ln_linear_gelu_res" else 2)
        moved = sum(t.numel() * 2 for t in tensors) + out_bytes
        bandwidth = f"{moved / (ms * 1e-3) / 1e12 / copy:.0%}" if SIZES[name] is not None else "—"
        rows.append(f"| {name} | {' | '.join(cells)} | {bandwidth} |")
    publish_peer_table(torch, args, copy, "gpu_bfloat16_bench", "gpu-bfloat16", "torch.bfloat16 tensors, ms",
                       ["workload", "hcompile", "torch eager", "torch.compile", "hcompile bandwidth / copy"], rows,
                       note="Bandwidth: hcompile's bytes read and written once over its time, against the copy.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
