"""Reductions on a CUDA GPU as NumPy code writes them: over rows of any length, down the columns of
tall arrays, arg reductions, one value; against torch eager and torch.compile, in one process.

    python -m apps.gpu_reductions_bench [--repeat 10] [--write apps/RESULTS.md]

128M float32 elements each (512 MiB read once: every peer's kernel is longer than its host's time
a call). CUDA-event medians in µs, and the share of a device copy's bandwidth (the input read once,
the output written once, at the copy's bytes a second). Every result is checked against torch
eager's within float32 tolerance (arg reductions: the same indices). Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps.gpu_bench import cuda_ms, peer_bench_start, publish_peer_table

ELEMENTS = 1 << 27


def _cases(torch):
    """(name, NumPy-style function, its torch twin, the input's columns) for each workload."""
    sum_rows = (lambda x: x.sum(axis=-1), lambda x: x.sum(dim=-1))
    max_rows = (lambda x: x.max(axis=-1), lambda x: x.amax(dim=-1))
    argmax_rows = (lambda x: x.argmax(axis=-1), lambda x: x.argmax(dim=-1))
    sum_columns = (lambda x: x.sum(axis=0), lambda x: x.sum(dim=0))
    mean_columns = (lambda x: x.mean(axis=0), lambda x: x.mean(dim=0))
    std_columns = (lambda x: x.std(axis=0), lambda x: x.std(dim=0, correction=0))
    norm_rows = (lambda x: np.sqrt((x * x).sum(axis=1)), lambda x: torch.sqrt((x * x).sum(dim=1)))
    return ([("sum rows", *sum_rows, n) for n in (16, 64, 256, 1024, 8192)] +
            [("max rows", *max_rows, n) for n in (16, 64, 1024)] +
            [("argmax rows", *argmax_rows, n) for n in (16, 24, 32, 64, 1024, 8192)] +
            [("argmax columns", lambda x: x.argmax(axis=0), lambda x: x.argmax(dim=0), n) for n in (16, 512)] +
            [("argmax all", lambda x: x.argmax(), lambda x: x.argmax(), ELEMENTS)] +
            [("row norms", *norm_rows, n) for n in (64,)] +
            [("sum columns", *sum_columns, n) for n in (16, 64, 512, 4096)] +
            [("mean columns", *mean_columns, n) for n in (64,)] +
            [("std columns", *std_columns, n) for n in (64,)] +
            [("sum all", lambda x: x.sum(), lambda x: x.sum(), ELEMENTS)] +
            [("sum of leading axes", lambda x: x.reshape(-1, 64, x.shape[1]).sum(axis=(0, 1)),
              lambda x: x.reshape(-1, 64, x.shape[1]).sum(dim=(0, 1)), 16)])


def timed_us(torch, fn, args, repeat):
    """cuda_ms in µs, with fewer samples for a call of over 5 ms (the slow cases this bench finds)."""
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn(*args)
    end.record()
    end.synchronize()
    once = start.elapsed_time(end)
    if once > 5:
        return once * 1e3
    return cuda_ms(torch, fn, args, repeat, batch=5) * 1e3


def check_answer(torch, name, got, want, atol):
    """`got` is `want` (int64: equal; else within rtol 1e-4 and `atol`)."""
    if want.dtype == torch.int64:
        assert torch.equal(got, want), name
    else:
        torch.testing.assert_close(got, want, rtol=1e-4, atol=atol)


def timed_against_peers(torch, name, fn, twin, x, repeat, copy, atol):
    """hcompile's `fn` against torch eager's `twin` and torch.compile's on tensor `x`: hcompile's
    answer checked first (int64: equal; else within rtol 1e-4 and `atol(eager's answer)`), then each timed
    (timed_us). Returns hcompile's compiled function, torch.compile's and a (µs, "µs (share of
    the copy's bandwidth)") cell for each of the three."""
    want = twin(x)
    ours = hc.hcompile(fn, fullgraph=True)
    check_answer(torch, name, ours(x), want, atol(want))
    peer = torch.compile(twin, dynamic=False)
    peer(x)
    moved = x.numel() * x.element_size() + want.numel() * want.element_size()
    cells = []
    for f in (ours, twin, peer):
        us = timed_us(torch, f, (x,), repeat)
        cells.append((us, f"{us:.1f} ({moved / us / 1e6 / copy:.0%})"))
    return ours, peer, cells


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, lambda torch: _cases(torch))
    if started is None:
        return 0
    args, torch, copy, cases = started
    rows = []
    rng = np.random.default_rng(7)
    for name, fn, twin, columns in cases:
        shape = (ELEMENTS // columns, columns) if columns < ELEMENTS else (ELEMENTS,)
        x = torch.from_numpy(rng.standard_normal(shape, dtype=np.float32)).cuda()
        # (A sum's error grows with the square root of the points it adds.)
        ours, _, cells = timed_against_peers(torch, name, fn, twin, x, args.repeat, copy,
                                             lambda want: 1e-3 * float(np.sqrt(ELEMENTS // want.numel())))
        schedule = ours.compile_records[-1]["report"]["schedule"].strip().replace("\n", "; ")
        rows.append(f"| {name} | {'×'.join(map(str, shape))} | {cells[0][1]} | {cells[1][1]} | {cells[2][1]} | "
                    f"{cells[2][0] / cells[0][0]:.2f}× | {schedule} |")
        print(rows[-1], flush=True)
        del x
    publish_peer_table(torch, args, copy, "gpu_reductions_bench", "gpu-reductions", "reductions as NumPy code writes them",
                       ["workload", "shape", "hcompile µs", "torch eager µs", "torch.compile µs",
                        "torch.compile / hcompile", "hcompile's schedule"], rows,
                       note="128M float32 elements each; µs (share of the copy's bandwidth, reading the input once "
                            "and writing the output once).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
