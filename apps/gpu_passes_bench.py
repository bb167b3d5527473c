"""Where the GPU time of the row and stencil workloads goes: each of their passes alone (a row's max,
its sum, an exact exp, a division), hcompile against torch.compile on the same CUDA tensors (CUDA
events, medians), each with the bandwidth of the bytes it must move against a device copy's.

    python -m apps.gpu_passes_bench [--repeat 20] [--write apps/RESULTS.md]

A pass far below the copy bandwidth where torch.compile's is near it is where the schedule loses;
one that is slow for both is bound by arithmetic (NumPy-exact math costs more instructions than
torch.compile's fast forms: `exp` within NumPy's accuracy, IEEE division).
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import cuda_ms, peer_bench_start, publish_peer_table


def row_max(x):
    return np.max(x, axis=-1, keepdims=True)


def row_sum(x):
    return np.sum(x, axis=-1, keepdims=True)


def exp(x):
    return np.exp(x)


def scale(x):
    return x * 2.0


def divide_by_3(x):
    return x / 3.0


def softmax_without_exp(x):
    shifted = x - np.max(x, axis=-1, keepdims=True)
    return shifted / np.sum(shifted, axis=-1, keepdims=True)


def blur_multiplied(x):
    third = np.float32(1 / 3)
    h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) * third
    return (h[:-2, :] + h[1:-1, :] + h[2:, :]) * third


CASES = {"row_max": row_max, "row_sum": row_sum, "exp": exp, "scale": scale, "divide_by_3": divide_by_3,
         "softmax_without_exp": softmax_without_exp, "softmax_rows": W.softmax_rows,
         "layernorm_rows": W.layernorm_rows, "blur3x3": W.blur3x3, "blur_multiplied": blur_multiplied}


def torch_versions(torch):
    def blur(x, third=1 / 3, divide=True):
        h = x[:, :-2] + x[:, 1:-1] + x[:, 2:]
        h = h / 3 if divide else h * third
        v = h[:-2, :] + h[1:-1, :] + h[2:, :]
        return v / 3 if divide else v * third

    def softmax_without_exp(x):
        shifted = x - x.amax(-1, keepdim=True)
        return shifted / shifted.sum(-1, keepdim=True)

    return {"row_max": lambda x: x.amax(-1, keepdim=True), "row_sum": lambda x: x.sum(-1, keepdim=True),
            "exp": torch.exp, "scale": lambda x: x * 2.0, "divide_by_3": lambda x: x / 3.0,
            "softmax_without_exp": softmax_without_exp, "softmax_rows": lambda x: torch.softmax(x, -1),
            "layernorm_rows": lambda x, w, b: torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, 1e-5),
            "blur3x3": blur, "blur_multiplied": lambda x: blur(x, divide=False)}


def inputs(name, rng):
    if name == "layernorm_rows":
        return [rng.standard_normal((8192, 4096)).astype(np.float32), rng.standard_normal(4096).astype(np.float32),
                rng.standard_normal(4096).astype(np.float32)]
    return [rng.standard_normal((8192, 8192)).astype(np.float32)]


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, torch_versions)
    if started is None:
        return 0
    args, torch, copy, peers = started
    rng = np.random.default_rng(0)
    rows = []
    for name, fn in CASES.items():
        arrays = inputs(name, rng)
        tensors = [torch.from_numpy(a).cuda() for a in arrays]
        want = fn(*arrays)
        moved = sum(a.nbytes for a in arrays) + np.asarray(want).nbytes
        cells = []
        for f in (hc.hcompile(fn, fullgraph=True), torch.compile(peers[name])):
            # A sum of 8192 values differs from NumPy's pairwise float32 sum by its rounding (~1e-3).
            ok = np.allclose(f(*tensors).cpu().numpy(), want, rtol=1e-4, atol=1e-2 if name == "row_sum" else 1e-5)
            ms = cuda_ms(torch, f, tensors, args.repeat)
            cells.append(f"{ms:.3f}{'' if ok else ' (wrong answer)'} ({moved / (ms * 1e-3) / 1e12 / copy:.0%})")
        rows.append(f"| {name} | {' | '.join(cells)} |")
        print(rows[-1], flush=True)
    publish_peer_table(torch, args, copy, "gpu_passes_bench", "gpu-passes",
                       "the seed workloads' passes alone, float32, ms (of copy bandwidth)",
                       ["pass", "hcompile", "torch.compile"], rows, note="Sizes: 8192² (layer norm 8192×4096).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
