"""Batched products of short contractions on a CUDA GPU, as attention computes them: q @ k^T with
the heads split out of one product's rows (views), the whole attention block, and plain batched
products; hcompile against torch eager and torch.compile, in one process.

    python -m apps.gpu_attention_bench [--repeat 10] [--write apps/RESULTS.md]

hcompile runs float32 batched products of contractions up to 64 as Halide kernels whose blocks
stage their tiles of both operands in shared memory (GpuStageOperands; apps/RESULTS.md,
gpu-staged-products), reading views where they lie; cuBLAS's strided batched call, which
PyTorch uses, needs copies of them first. Two times each: the kernels' time a call (CUPTI,
through torch.profiler: what the GPU spends) and the CUDA-event time of back-to-back calls from
Python (the host's per-call work where that is longer). Every result is checked against torch
eager's within float32 tolerance. Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

import hcompile as hc
from apps.gpu_bench import cuda_ms, kernel_us, peer_bench_start, publish_peer_table
from apps.gpu_reductions_bench import check_answer


def _split_heads(qkv, part, batch, heads):
    tokens, width = qkv.shape[0] // batch, qkv.shape[1] // 3
    return qkv[:, part * width:(part + 1) * width].reshape(batch, tokens, heads, width // heads).transpose(0, 2, 1, 3)


def attention_scores(x, bias, batch=16, heads=8):
    """q @ k^T of each head, scaled: the heads are views of one (batch x tokens, 3 x width) array."""
    qkv = x + bias
    q, k = _split_heads(qkv, 0, batch, heads), _split_heads(qkv, 1, batch, heads)
    return q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(q.shape[-1]))


def attention(x, bias, batch=16, heads=8):
    """softmax(q k^T / sqrt(d)) v, the heads merged back into rows."""
    qkv = x + bias
    q, k, v = _split_heads(qkv, 0, batch, heads), _split_heads(qkv, 1, batch, heads), _split_heads(qkv, 2, batch, heads)
    s = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(q.shape[-1]))
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    return (p @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], x.shape[1] // 3)


def attention_77_tokens(x, bias):
    """A CLIP text encoder's attention: 77 tokens, no tile of 64 divides them."""
    return attention(x, bias, batch=32)


def batched_product(a, b):
    return a @ b


def _cases(torch):
    """(name, hcompile's function, torch's twin, input shapes)."""
    import torch.nn.functional as F

    def t_split(qkv, batch, heads):
        tokens, width = qkv.shape[0] // batch, qkv.shape[1] // 3
        return qkv.view(batch, tokens, 3, heads, width // heads).permute(2, 0, 3, 1, 4)

    def t_scores(x, bias, batch=16, heads=8):
        q, k, _ = t_split(x + bias, batch, heads)
        return q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))

    def t_attention(x, bias, batch=16, heads=8):
        q, k, v = t_split(x + bias, batch, heads)
        o = F.scaled_dot_product_attention(q, k, v)
        return o.transpose(1, 2).reshape(x.shape[0], x.shape[1] // 3)

    def t_attention_77(x, bias):
        return t_attention(x, bias, batch=32)

    def t_product(a, b):
        return a @ b

    return [
        ("attention scores 16×8 heads, 64 tokens of 64", attention_scores, t_scores, [(1024, 1536), (1536,)]),
        ("attention 16×8 heads, 64 tokens of 64", attention, t_attention, [(1024, 1536), (1536,)]),
        ("attention 32×8 heads, 77 tokens of 64", attention_77_tokens, t_attention_77, [(32 * 77, 1536), (1536,)]),
        ("batched product 128 × 64×64×64", batched_product, t_product, [(128, 64, 64), (128, 64, 64)]),
        ("batched product 64 × 256×32×256", batched_product, t_product, [(64, 256, 32), (64, 32, 256)]),
    ]


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, _cases)
    if started is None:
        return 0
    args, torch, copy, cases = started
    rng, rows = np.random.default_rng(14), []
    for name, fn, twin, shapes in cases:
        inputs = [torch.from_numpy(rng.standard_normal(s, dtype=np.float32)).cuda() for s in shapes]
        want = twin(*inputs)
        atol = 1e-4 * max(1.0, want.abs().max().item())
        compiled = hc.hcompile(fn, fullgraph=True)
        check_answer(torch, name, compiled(*inputs), want, atol)
        schedule = "\n".join(r["report"]["schedule"] for r in compiled.compile_records if r.get("report"))
        staged = schedule.count("gpu_stage_operands")
        peer = torch.compile(twin)
        check_answer(torch, name, peer(*inputs), want, atol)
        cells, kernel_times = [], []
        for f in (compiled, twin, peer):
            us, launches = kernel_us(torch, f, inputs)
            kernel_times.append(us)
            cells.append(f"{us:.1f} ({launches:.0f})")
        for f in (compiled, twin, peer):
            cells.append(f"{cuda_ms(torch, f, inputs, args.repeat) * 1e3:.1f}")
        rows.append(f"| {name} | {staged} | " + " | ".join(cells) + f" | {kernel_times[2] / kernel_times[0]:.2f}× |")
        print(rows[-1], flush=True)
    publish_peer_table(torch, args, copy, "gpu_attention_bench", "gpu-staged-products",
                       "batched products of short contractions, operand tiles staged in shared memory",
                       ["workload", "staged products", "hcompile kernels µs (launches)", "torch eager kernels µs",
                        "torch.compile kernels µs", "hcompile µs a call", "torch eager µs a call",
                        "torch.compile µs a call", "torch.compile kernels / hcompile kernels"], rows,
                       note="float32. Kernel times: CUPTI, the sum of a call's kernels (launches a call in "
                            "brackets); a call: CUDA events over back-to-back calls from Python.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
