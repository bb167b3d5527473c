"""Row groups on a CUDA GPU from short rows to long ones: softmax and layer norm over the last axis
of 64M float32 elements, as rows of 16 to 8192 points, against torch.compile, in one process.

    python -m apps.gpu_rows_bench [--repeat 20] [--write apps/RESULTS.md]

For each row length: hcompile's rule (its threads a row and rows a block: gpu_schedule.cpp), the
same kernel in blocks of one row (a warp of threads or more a row, as before blocks took several),
and torch.compile; CUDA-event medians in µs (share of a device copy's bandwidth: the input read once
and the output written once). Every result is checked against the rule's: the one-row blocks give
the same bits, torch.compile's within float32 tolerance. 64M elements keep every peer's kernel
longer than its host's time a call (torch.compile's guards took 40-80 µs a call: at 16M elements
its 33 µs kernels measured as its host's time). Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import cuda_ms, peer_bench_start, publish_peer_table, torch_versions

ELEMENTS = 1 << 26
LENGTHS = [16, 32, 64, 128, 256, 512, 768, 1000, 1024, 4096, 8192]


def one_row_a_block(decisions):
    """The rule's decisions with one row a block, a warp of threads a row or more (no vectors; the
    threads combine in shared memory, not as a warp's lanes)."""
    threads = max(next(v for (_, c, _, v, _) in decisions if c == "gpu_rows"), 32)
    return [(r, c, a, threads if c in ("gpu_rows", "gpu_tile") else v, 0 if c == "gpu_rows" else b)
            for (r, c, a, v, b) in decisions if c not in ("gpu_vector", "gpu_warp_rows")]


def row_schedule(decisions):
    """The rule's row root: `threads x rows` a block ("in lanes": a row's threads a warp's lanes;
    "vectors": four neighbouring points a thread)."""
    root, _, _, threads, rows = next(d for d in decisions if d[1] == "gpu_rows")
    lanes = any(d[1] == "gpu_warp_rows" for d in decisions)
    vectors = any(d[1] == "gpu_vector" and d[0] == root for d in decisions)
    return f"{threads}×{max(rows, 1)}{' in lanes' if lanes else ''}{' vectors' if vectors else ''}"


def rows_of(torch, name, length, copy, repeat, peers):
    rng = np.random.default_rng(length)
    shapes = [(ELEMENTS // length, length)] + ([(length,), (length,)] if name == "layernorm_rows" else [])
    args = [torch.from_numpy(rng.standard_normal(s).astype(np.float32)).cuda() for s in shapes]
    rule = hc.hcompile(getattr(W, name), fullgraph=True)
    want = rule(*args)
    decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
    one_row = hc.hcompile(getattr(W, name), fullgraph=True, schedule=one_row_a_block(decisions))
    assert torch.equal(one_row(*args), want), (name, length)
    peer = torch.compile(peers[name], dynamic=False)   # a kernel for each shape, as ours
    torch.testing.assert_close(peer(*args), want, rtol=2e-5, atol=2e-5)
    moved = 2 * ELEMENTS * 4
    cells = []
    for fn in (rule, one_row, peer):
        us = cuda_ms(torch, fn, args, repeat) * 1e3
        cells.append((us, f"{us:.1f} ({moved / us / 1e6 / copy:.0%})"))
    return (f"| {name} | {shapes[0][0]}×{length} | {row_schedule(decisions)} | {cells[0][1]} | {cells[1][1]} | "
            f"{cells[2][1]} | {cells[2][0] / cells[0][0]:.2f}× |")


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, torch_versions)
    if started is None:
        return 0
    args, torch, copy, peers = started
    rows = []
    for name in ("softmax_rows", "layernorm_rows"):
        for length in LENGTHS:
            rows.append(rows_of(torch, name, length, copy, args.repeat, peers))
            print(rows[-1], flush=True)
    publish_peer_table(torch, args, copy, "gpu_rows_bench", "gpu-rows", "row groups from short rows to long ones",
                       ["workload", "rows × length", "rule: threads × rows a block", "hcompile µs",
                        "one row a block µs", "torch.compile µs", "torch.compile / hcompile"], rows,
                       note="64M float32 elements each; µs (share of the copy's bandwidth, reading the input once "
                            "and writing the output once). One row a block: the same kernel in blocks of one row of "
                            "a warp or more (the same bits).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
