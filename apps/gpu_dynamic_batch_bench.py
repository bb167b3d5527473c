"""Row-wise work over (batch, tokens, features) on a CUDA GPU, the batch of any size, then the
batch and the tokens both: softmax, layer norm, sums and variances over the features, hcompile's
kernels for those sizes against its kernel for the exact shape and torch.compile's (dynamic=True
and static), in one process.

    python -m apps.gpu_dynamic_batch_bench [--repeat 10] [--write apps/RESULTS.md]

The tokens' blocks of rows and the batch's loop are fused into the GPU grid's x, the only one of
its dimensions that holds any number of blocks (apps/RESULTS.md, gpu-dynamic-batch). 64M float32
elements a call; CUDA-event medians in µs, and the share of a device copy's bandwidth (the input
read once, the output written once). Every result is checked against torch eager's within
float32 tolerance. Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps.gpu_bench import peer_bench_start, publish_peer_table
from apps.gpu_dynamic_rows_bench import ELEMENTS, _cases as row_cases, timed_with_peers
from apps.gpu_reductions_bench import check_answer

TOKENS = {64: 1024, 1024: 256}   # tokens a batch element, by the features' length


def _cases(torch):
    """gpu_dynamic_rows_bench's workloads over rows of 64 and 1024, but the softmax's argmax."""
    return [c for c in row_cases(torch) if c[3] in TOKENS and not c[0].startswith("argmax")]


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, _cases)
    if started is None:
        return 0
    args, torch, copy, cases = started
    rng, rows = np.random.default_rng(13), []
    for name, fn, twin, length in cases:
        tokens = TOKENS[length]
        batch = ELEMENTS // (length * tokens)
        x = torch.from_numpy(rng.standard_normal((batch, tokens, length), dtype=np.float32)).cuda()
        want = twin(x)
        atol = 1e-5 * max(1.0, want.abs().max().item())
        static = hc.hcompile(fn, fullgraph=True, dynamic=False)
        any_batch, any_both = hc.hcompile(fn, fullgraph=True), hc.hcompile(fn, fullgraph=True)
        any_batch(x[: batch // 2 + 1])   # a second size: the batch's axis compiled for any size
        any_both(x[: batch // 2 + 1, : tokens // 2 + 1])   # ... and the tokens'
        for f in (static, any_batch, any_both):
            check_answer(torch, name, f(x), want, atol)
        for f, axes in ((any_batch, "argument 0 axis 0 ("), (any_both, "argument 0 axis 0, argument 0 axis 1 (")):
            dynamic = f.compile_records[-1]["dynamic"]
            assert dynamic.startswith("dynamic: " + axes), dynamic
        times, cells = timed_with_peers(torch, name, twin, [static, any_batch, any_both], x,
                                        x[: batch // 2 + 1, : tokens // 2 + 1], want, atol, args.repeat, copy)
        rows.append(f"| {name} | {batch}×{tokens}×{length} | " + " | ".join(cells) +
                    f" | {times[3] / times[2]:.2f}× |")
        print(rows[-1], flush=True)
        del x, want
    publish_peer_table(torch, args, copy, "gpu_dynamic_batch_bench", "gpu-dynamic-batch",
                       "row-wise work over (batch, tokens, features), batch and tokens of any size",
                       ["workload", "shape", "hcompile static µs", "hcompile any batch µs",
                        "hcompile any batch and tokens µs", "torch.compile dynamic µs", "torch.compile static µs",
                        "torch.compile dynamic / hcompile any batch and tokens"], rows,
                       note="64M float32 elements each; µs (share of the copy's bandwidth, reading the input once "
                            "and writing the output once). Each dynamic kernel was compiled at half the batch plus "
                            "one (and half the tokens plus one), then timed at the shape shown.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
