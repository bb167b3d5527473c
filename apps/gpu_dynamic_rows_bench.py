"""Row-wise work over a batch of any size on a CUDA GPU: softmax, layer norm, sums, variances and a
softmax's argmax over rows of a static length whose count changes from call to call; hcompile's
kernel for any batch against its kernel for the exact shape and torch.compile's (dynamic=True and
static), in one process.

    python -m apps.gpu_dynamic_rows_bench [--repeat 10] [--write apps/RESULTS.md]

hcompile compiles a function for any batch once a second batch size arrives (dynamic=None). Its
GPU blocks of several short rows (each row in a warp's lanes) need a block's rows in every call:
that entry's guard asks for them, and a smaller batch gets an entry of its own, a row a block
(apps/RESULTS.md, gpu-dynamic-rows). 64M float32 elements a call; CUDA-event medians in µs, and
the share of a device copy's bandwidth (the input read once, the output written once). Every
result is checked against torch eager's within float32 tolerance (argmax: the same indices).
Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps.gpu_bench import peer_bench_start, publish_peer_table
from apps.gpu_reductions_bench import check_answer, timed_us
from apps.gpu_row_chains_bench import argmax_of_softmax
from apps.workloads import softmax_rows

ELEMENTS = 1 << 26


def layernorm_rows(x):
    m = x.mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)


def _cases(torch):
    """(name, NumPy-style function, its torch twin, the rows' length) for each workload."""
    def layernorm(x):
        return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)

    return ([("softmax", softmax_rows, lambda x: torch.softmax(x, dim=-1), n) for n in (64, 256, 1024)] +
            [("layer norm", layernorm_rows, layernorm, n) for n in (64, 1024)] +
            [("sum", lambda x: x.sum(axis=-1), lambda x: x.sum(dim=-1), n) for n in (64,)] +
            [("var", lambda x: x.var(axis=-1), lambda x: x.var(dim=-1, correction=0), n) for n in (64, 1024)] +
            [("argmax of softmax", argmax_of_softmax, lambda x: torch.softmax(x, dim=-1).argmax(dim=-1), n)
             for n in (64, 1024)])


def timed_with_peers(torch, name, twin, compiled, x, smaller, want, atol, repeat, copy):
    """hcompile's `compiled` functions and torch.compile's `twin` (dynamic=True, then static, each
    called at `smaller` first and its answer checked) timed on `x` (timed_us): their µs, and a
    cell "µs (share of the copy's bandwidth)" for each (the input read once, `want` written once)."""
    peers = [torch.compile(twin, dynamic=True), torch.compile(twin, dynamic=False)]
    for p in peers:
        p(smaller)
        check_answer(torch, name, p(x), want, atol)
    times = [timed_us(torch, f, (x,), repeat) for f in compiled + peers]
    moved = x.numel() * 4 + want.numel() * want.element_size()
    return times, [f"{t:.1f} ({moved / (t * 1e-6) / (copy * 1e12):.0%})" for t in times]


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, _cases)
    if started is None:
        return 0
    args, torch, copy, cases = started
    rng, rows = np.random.default_rng(12), []
    for name, fn, twin, length in cases:
        batch = ELEMENTS // length
        x = torch.from_numpy(rng.standard_normal((batch, length), dtype=np.float32)).cuda()
        want = twin(x)
        atol = 1e-5 * max(1.0, want.abs().max().item()) if want.is_floating_point() else 0
        static = hc.hcompile(fn, fullgraph=True, dynamic=False)
        any_batch = hc.hcompile(fn, fullgraph=True)
        any_batch(x[: batch // 2 + 1])   # a second size: the batch's axis compiled for any size
        for f in (static, any_batch):
            check_answer(torch, name, f(x), want, atol)
        dynamic = any_batch.compile_records[-1]["dynamic"]
        assert dynamic.startswith("dynamic:"), dynamic
        times, cells = timed_with_peers(torch, name, twin, [static, any_batch], x, x[: batch // 2 + 1], want, atol,
                                        args.repeat, copy)
        rows.append(f"| {name} | {batch}×{length} | " + " | ".join(cells) +
                    f" | {times[2] / times[1]:.2f}× |")
        print(rows[-1], flush=True)
        del x, want
    publish_peer_table(torch, args, copy, "gpu_dynamic_rows_bench", "gpu-dynamic-rows",
                       "row-wise work over a batch of any size",
                       ["workload", "shape", "hcompile static µs", "hcompile any batch µs",
                        "torch.compile dynamic µs", "torch.compile static µs",
                        "torch.compile dynamic / hcompile any batch"], rows,
                       note="64M float32 elements each; µs (share of the copy's bandwidth, reading the input once "
                            "and writing the output once). Each dynamic kernel was compiled at half the batch plus "
                            "one, then timed at the batch shown.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
