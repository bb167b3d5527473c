"""Transposed reads on the GPU: elementwise work whose operand is read across its rows (``x.T``,
``swapaxes``, a channels-last image made channels-first), hcompile against torch eager and
torch.compile on the same CUDA tensors (CUDA-event timing, medians), checked against NumPy.

    python -m apps.gpu_transpose_bench [--repeat 20] [--write apps/RESULTS.md]

A warp's threads write neighbouring outputs; read transposed, their operand's elements are a row
apart, so each thread's load is a memory transaction of its own unless the block stages a tile of
the operand in shared memory first (read along its rows, coalesced). The bandwidth column counts
each array read and written once, against the device's copy bandwidth. "Unstaged" is hcompile's
own decision list without its gpu_stage_transposed decision (``schedule=``): the same tiles,
the operand read where it lies.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps.gpu_bench import cuda_ms, peer_bench_start, publish_peer_table


def transpose_scale(x):
    return x.T * 2.0 + 1.0


def symmetrize(a):
    return (a + a.T) * 0.5


def channels_first(img, scale):
    return np.transpose(img, (2, 0, 1)) * scale[:, None, None]


def swap_last_axes(x, b):
    return np.swapaxes(x, 1, 2) + b


CASES = {"transpose_scale": [(8192, 8192)], "symmetrize": [(8192, 8192)],
         "channels_first": [(2048, 2048, 16), (16,)], "swap_last_axes": [(64, 1024, 1024), (1024,)]}


def torch_versions(torch):
    return {"transpose_scale": lambda x: x.T * 2.0 + 1.0, "symmetrize": lambda a: (a + a.T) * 0.5,
            "channels_first": lambda img, s: img.permute(2, 0, 1) * s[:, None, None],
            "swap_last_axes": lambda x, b: x.transpose(1, 2) + b}


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, torch_versions)
    if started is None:
        return 0
    args, torch, copy, peers = started
    rng = np.random.default_rng(0)
    rows = []
    for name, shapes in CASES.items():
        fn = globals()[name]
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        tensors = [torch.from_numpy(a).cuda() for a in arrays]
        want = fn(*arrays)
        compiled = hc.hcompile(fn, fullgraph=True)
        compiled(*tensors)
        decisions = compiled.compile_records[-1]["report"]["decisions"]
        # The same tiles without the shared-memory copy: what the stage itself is worth.
        unstaged = [d for d in decisions if d[1] != "gpu_stage_transposed"]
        read_as_is = hc.hcompile(fn, fullgraph=True, schedule=unstaged) if len(unstaged) < len(decisions) else None
        cells = []
        for f in (compiled, read_as_is, peers[name], torch.compile(peers[name])):
            if f is None:
                cells.append("—")
                continue
            ok = np.allclose(f(*tensors).cpu().numpy(), want, rtol=1e-6, atol=1e-6)
            cells.append(f"{cuda_ms(torch, f, tensors, args.repeat):.3f}" + ("" if ok else " (wrong answer)"))
        moved = sum(a.nbytes for a in arrays) + want.nbytes
        ms = float(cells[0].split()[0])
        rows.append(f"| {name} {'×'.join(map(str, shapes[0]))} | {' | '.join(cells)} | "
                    f"{moved / (ms * 1e-3) / 1e12 / copy:.0%} |")
    publish_peer_table(torch, args, copy, "gpu_transpose_bench", "gpu-transpose", "transposed reads, float32, ms",
                       ["workload", "hcompile", "hcompile, same tiles unstaged", "torch eager", "torch.compile",
                        "hcompile bandwidth / copy"], rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
