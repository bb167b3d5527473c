"""Row groups over few rows on a CUDA GPU (a transformer's layer norms: 1024 tokens of 512), whose
root loads inputs after the row's reductions (a layer norm's weight and bias), against the same
group in a warp's lanes and torch.compile, in one process.

    python -m apps.gpu_few_rows_bench [--repeat 20] [--write apps/RESULTS.md]

For each shape: hcompile's rule (its threads a row and rows a block: gpu_schedule.cpp's
`loads_late_over_few_rows`), the same decisions with the rows in a warp's lanes as the group's
float sums take them (the rule before), and torch.compile; kernel microseconds a call (CUPTI,
every kernel of the call: these kernels take a few µs, less than a call's host time, which
CUDA events would measure). Every result is checked: the warp's lanes give the same bits,
torch.compile's within float32 tolerance. Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import kernel_us, peer_bench_start, publish_peer_table, torch_versions
from apps.gpu_rows_bench import row_schedule

CASES = [("layer norm", (512, 512)), ("layer norm", (1024, 512)), ("layer norm", (2048, 512)),
         ("layer norm", (4096, 512)), ("layer norm", (1024, 256)), ("layer norm", (2048, 768)),
         ("layer norm", (1024, 1024)), ("layer norm", (4096, 768)), ("residual layer norm", (1024, 512)),
         ("residual layer norm", (4096, 512)), ("scaled softmax", (1024, 512))]


def _residual_layer_norm(x, y, w, b):
    return W._layer_norm(x + y, w, b)


def _scaled_softmax(x, w):
    return W.softmax_rows(x) * w


FUNCTIONS = {"layer norm": W._layer_norm, "residual layer norm": _residual_layer_norm, "scaled softmax": _scaled_softmax}


def _peers(torch):
    F = torch.nn.functional
    return {"layer norm": lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b, 1e-5),
            "residual layer norm": lambda x, y, w, b: F.layer_norm(x + y, x.shape[-1:], w, b, 1e-5),
            "scaled softmax": lambda x, w: torch.softmax(x, -1) * w}


def in_warp_lanes(decisions, lanes, rows):
    """`decisions` with the row group's rows in a warp's `lanes` lanes, `rows` a block, no vectors."""
    root = next(d for d in decisions if d[1] == "gpu_rows")[0]
    out = []
    for d in decisions:
        d = tuple(d)
        if d[1] in ("gpu_vector", "gpu_warp_rows"):
            continue
        if d[1] in ("gpu_tile", "gpu_rows"):
            d = d[:3] + (lanes, rows if d[1] == "gpu_rows" else 0)
        out.append(d)
    return out + [(root, "gpu_warp_rows", -1, lanes, 0)]


def _lanes_of(name, length, args):
    """The lanes and rows a block the rule takes for this group over many rows (in a warp's lanes)."""
    many = [np.zeros((131072, length), np.float32) if a.ndim == 2 else np.zeros(length, np.float32) for a in args]
    f = hc.hcompile(FUNCTIONS[name], target="cuda", fullgraph=True)
    f.compile_only(*many)
    _, _, _, lanes, rows = next(d for d in f.compile_records[-1]["report"]["decisions"] if d[1] == "gpu_rows")
    return lanes, rows


def row(torch, name, shape, calls, peers):
    rng = np.random.default_rng(shape[0] + shape[1])
    count = {"layer norm": 1, "residual layer norm": 2, "scaled softmax": 1}[name]
    host = [rng.standard_normal(shape).astype(np.float32) for _ in range(count)]
    host += [rng.standard_normal(shape[-1]).astype(np.float32) for _ in range(1 if name == "scaled softmax" else 2)]
    args = [torch.from_numpy(a).cuda() for a in host]
    rule = hc.hcompile(FUNCTIONS[name], fullgraph=True)
    want = rule(*args)
    decisions = [tuple(d) for d in rule.compile_records[-1]["report"]["decisions"]]
    lanes, many_rows = _lanes_of(name, shape[-1], host)
    rows = many_rows
    while rows > 2 and shape[0] // rows < 256:
        rows //= 2
    lanes_schedule = in_warp_lanes(decisions, lanes, rows)
    in_lanes = hc.hcompile(FUNCTIONS[name], fullgraph=True, schedule=lanes_schedule)
    assert torch.equal(in_lanes(*args), want), (name, shape)
    peer = torch.compile(peers[name], dynamic=False)
    torch.testing.assert_close(peer(*args), want, rtol=2e-5, atol=2e-5)
    us = [kernel_us(torch, fn, args, calls=calls)[0] for fn in (rule, in_lanes, peer)]
    return (f"| {name} | {shape[0]}×{shape[1]} | {row_schedule(decisions)} | {us[0]:.2f} | "
            f"{row_schedule(lanes_schedule)} | {us[1]:.2f} | {us[2]:.2f} | {us[1] / us[0]:.2f}× | {us[2] / us[0]:.2f}× |")


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, torch_versions)
    if started is None:
        return 0
    args, torch, copy, _ = started
    peers = _peers(torch)
    rows = []
    for name, shape in CASES:
        rows.append(row(torch, name, shape, 10 * args.repeat, peers))
        print(rows[-1], flush=True)
    publish_peer_table(torch, args, copy, "gpu_few_rows_bench", "gpu-late-loads",
                       "row groups over few rows whose root loads inputs after the reductions",
                       ["workload", "rows × length", "rule", "rule µs", "in a warp's lanes", "lanes µs",
                        "torch.compile µs", "lanes / rule", "torch.compile / rule"], rows,
                       note="Kernel µs a call (CUPTI, the mean of 10 × repeat calls). In a warp's lanes: the "
                            "rule's decisions with the row's points in the lanes its float sums take over "
                            "many rows (the rule before), the same bits.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
