"""Reductions of a row computed from other reductions of the same row, on a CUDA GPU: variance
and standard deviation along rows, log-sum-exp, a softmax's entropy and argmax, skewness; against
torch eager and torch.compile, in one process.

    python -m apps.gpu_row_chains_bench [--repeat 10] [--write apps/RESULTS.md]

hcompile runs each row's chain (its mean, then its squared deviations' sum, then the point) in one
block or one warp's lanes while the row is in registers or cache (a point-rows group:
core/include/hcompile/fusion.h); before, each reduction was a kernel of its own reading the whole
array. 64M float32 elements each (256 MiB read once). CUDA-event medians in µs, and the share of a
device copy's bandwidth (the input read once, the output written once, at the copy's bytes a
second); the kernels one call launches. Every result is checked against torch eager's within
float32 tolerance (argmax: the same indices). Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import numpy as np

from apps.gpu_bench import peer_bench_start, publish_peer_table
from apps.gpu_reductions_bench import timed_against_peers
from apps.gpu_row_groups_bench import kernels_a_call

ELEMENTS = 1 << 26


def logsumexp_rows(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[..., None]).sum(axis=-1))


def softmax_entropy(x):
    p = np.exp(x - x.max(axis=-1, keepdims=True))
    p = p / p.sum(axis=-1, keepdims=True)
    return -(p * np.log(p)).sum(axis=-1)


def argmax_of_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return np.argmax(e / e.sum(axis=-1, keepdims=True), axis=-1)


def skewness_rows(x):
    d = x - x.mean(axis=-1, keepdims=True)
    return (d ** 3).mean(axis=-1) / (d ** 2).mean(axis=-1) ** 1.5


def _cases(torch):
    """(name, NumPy-style function, its torch twin, the input's columns) for each workload."""
    def entropy(x):
        p = torch.softmax(x, dim=-1)
        return -(p * torch.log(p)).sum(dim=-1)

    def skewness(x):
        d = x - x.mean(dim=-1, keepdim=True)
        return (d ** 3).mean(dim=-1) / (d ** 2).mean(dim=-1) ** 1.5

    var = (lambda x: x.var(axis=-1), lambda x: x.var(dim=-1, correction=0))
    std_keep = (lambda x: x.std(axis=-1, keepdims=True), lambda x: x.std(dim=-1, correction=0, keepdim=True))
    return ([("var rows", *var, n) for n in (64, 1024, 8192)] +
            [("std rows, keepdims", *std_keep, n) for n in (1024,)] +
            [("logsumexp rows", logsumexp_rows, lambda x: torch.logsumexp(x, dim=-1), n) for n in (32, 1024, 8192)] +
            [("entropy of softmax", softmax_entropy, entropy, n) for n in (1024,)] +
            [("argmax of softmax", argmax_of_softmax, lambda x: torch.softmax(x, dim=-1).argmax(dim=-1), n)
             for n in (64, 1024)] +
            [("skewness rows", skewness_rows, skewness, n) for n in (1024,)])


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, lambda torch: _cases(torch))
    if started is None:
        return 0
    args, torch, copy, cases = started
    rows = []
    rng = np.random.default_rng(11)
    for name, fn, twin, columns in cases:
        shape = (ELEMENTS // columns, columns)
        x = torch.from_numpy(rng.standard_normal(shape, dtype=np.float32)).cuda()
        ours, peer, cells = timed_against_peers(torch, name, fn, twin, x, args.repeat, copy, lambda want: 1e-4)
        kernels = [kernels_a_call(torch, f, (x,)) for f in (ours, peer)]
        rows.append(f"| {name} | {'×'.join(map(str, shape))} | {cells[0][1]} | {cells[1][1]} | {cells[2][1]} | "
                    f"{cells[2][0] / cells[0][0]:.2f}× | {kernels[0]} / {kernels[1]} |")
        print(rows[-1], flush=True)
        del x
    publish_peer_table(torch, args, copy, "gpu_row_chains_bench", "gpu-row-chains",
                       "reductions of rows computed from other reductions of the same rows",
                       ["workload", "shape", "hcompile µs", "torch eager µs", "torch.compile µs",
                        "torch.compile / hcompile", "kernels a call (hcompile / torch.compile)"], rows,
                       note="64M float32 elements each; µs (share of the copy's bandwidth, reading the input once "
                            "and writing the output once).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
