"""fast_math on a CUDA GPU: what the GPU's approximate float32 exp, tanh and division buy in time,
and what they cost in accuracy, beside NumPy-exact hcompile and torch.compile, in one process.

    python -m apps.gpu_fast_math_bench [--repeat 20] [--write apps/RESULTS.md]

Two tables. The seed workloads at their GPU sizes (apps/gpu_bench.py's): CUDA-event medians,
bandwidth against a device copy, and each result's largest error against NumPy in float64 on the
same inputs (max |error| / max |reference|). Then the operations fast_math replaces, on 16M inputs
each spanning their range: the largest error in float32 ulps against float64 NumPy (results below
2^-126, which fast_math may flush to zero, left out and counted), and whether NaN, infinities,
signed zeros and overflow come out as NumPy's. Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.bench import heading, publish
from apps.gpu_bench import SIZES, bench_inputs, cuda_ms, peer_bench_start, torch_versions

WORKLOADS = ["tinyops", "softmax_rows", "layernorm_rows", "blur3x3", "gelu_mlp", "transformer_layer"]
OPERATIONS = {   # (a Python function, as hcompile takes; its arity)
    "exp": (lambda x: np.exp(x), 1),
    "tanh": (lambda x: np.tanh(x), 1),
    "divide": (lambda x, y: x / y, 2),
    "reciprocal": (lambda x: 1 / x, 1),
}
TINY = 2.0 ** -126


def operation_inputs(name, rng, n=1 << 24):
    """Inputs over the operation's range: half uniform over the whole of it, half log-uniform
    magnitudes near zero (random signs), where relative errors show."""
    def log_uniform(lo, hi, k):
        return np.exp2(rng.uniform(lo, hi, k)) * rng.choice([-1.0, 1.0], k)
    half = n // 2
    if name == "exp":
        return [np.concatenate([rng.uniform(-87.3, 88.7, half), log_uniform(-30, 0, half)]).astype(np.float32)]
    if name == "tanh":
        return [np.concatenate([rng.uniform(-10, 10, half), log_uniform(-100, 0, half)]).astype(np.float32)]
    if name == "divide":
        return [log_uniform(-62, 62, n).astype(np.float32), log_uniform(-62, 62, n).astype(np.float32)]
    return [log_uniform(-125, 125, n).astype(np.float32)]


def special_inputs(arity):
    values = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 100.0, -100.0, 3e38, -3e38, 1e-30],
                      np.float32)
    if arity == 1:
        return [values]
    a, b = np.meshgrid(values, values)
    return [a.ravel(), b.ravel()]


def max_ulp(got, reference):
    """The largest error in float32 ulps of the reference, and the count of results below 2^-126
    (left out: fast_math may flush them to zero)."""
    normal = np.abs(reference) >= TINY
    finite = normal & (np.abs(reference) <= np.finfo(np.float32).max)
    ulp = np.spacing(np.abs(reference[finite]).astype(np.float32)).astype(np.float64)
    err = np.abs(got[finite].astype(np.float64) - reference[finite]) / ulp
    return (float(err.max()) if err.size else 0.0), int((~normal).sum())


def same_specials(got, want):
    """How many results differ from NumPy's in kind: NaN, infinity (overflow), zero, or sign. A
    result NumPy gives below 2^-126 may be fast_math's zero of that sign."""
    got, want = got.astype(np.float32), want.astype(np.float32)
    bad = (np.isnan(got) != np.isnan(want)) | (np.isinf(got) != np.isinf(want))
    both = ~np.isnan(want) & ~np.isnan(got)
    bad |= both & ((got == 0) != (want == 0)) & ~(np.abs(want) < TINY)
    bad |= both & (np.signbit(got) != np.signbit(want))
    return int(bad.sum())


def workload_rows(torch, peers, copy, repeat):
    rows = []
    rng = np.random.default_rng(0)
    for name in WORKLOADS:
        host = bench_inputs(name, rng)
        args = [torch.from_numpy(a).cuda() for a in host]
        reference = np.asarray(getattr(W, name)(*[a.astype(np.float64) for a in host]))
        scale = np.abs(reference).max()
        cells = []
        for fn in (hc.hcompile(getattr(W, name), fullgraph=True),
                   hc.hcompile(getattr(W, name), fullgraph=True, fast_math=True),
                   torch.compile(peers[name])):
            got = fn(*args).float().cpu().numpy().astype(np.float64)
            ms = cuda_ms(torch, fn, args, repeat)
            moved = sum(x.numel() * x.element_size() for x in args) + reference.size * args[0].element_size()
            share = f" ({moved / ms / 1e9 / copy:.0%})" if SIZES[name] is not None else ""
            cells.append((ms, f"{ms:.3f}{share}", f"{np.abs(got - reference).max() / scale:.1e}"))
        (exact, fast, peer) = cells
        rows.append(f"| {name} | {exact[1]} | {fast[1]} | {peer[1]} | {peer[0] / fast[0]:.2f}× | "
                    f"{exact[2]} | {fast[2]} | {peer[2]} |")
        print(rows[-1], flush=True)
    return rows


def operation_rows(torch):
    rows = []
    rng = np.random.default_rng(1)
    torch_ops = {"exp": torch.exp, "tanh": torch.tanh, "divide": torch.div, "reciprocal": torch.reciprocal}
    for name, (fn, arity) in OPERATIONS.items():
        host = operation_inputs(name, rng)
        reference = fn(*[a.astype(np.float64) for a in host])
        specials = special_inputs(arity)
        want_specials = fn(*specials)
        cells = []
        for f in (hc.hcompile(fn, fullgraph=True), hc.hcompile(fn, fullgraph=True, fast_math=True),
                  torch_ops[name], torch.compile(torch_ops[name])):
            got = f(*[torch.from_numpy(a).cuda() for a in host]).cpu().numpy()
            ulps, small = max_ulp(got, reference)
            odd = same_specials(f(*[torch.from_numpy(a).cuda() for a in specials]).cpu().numpy(), want_specials)
            cells.append(f"{ulps:.2f}" + (f" ({odd} special values differ)" if odd else ""))
        rows.append(f"| {name} | " + " | ".join(cells) + f" | {small} |")
        print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, torch_versions)
    if started is None:
        return 0
    args, torch, copy, peers = started
    workloads = workload_rows(torch, peers, copy, args.repeat)
    operations = operation_rows(torch)
    section = (heading(f"gpu-fast-math: NumPy-exact kernels and fast_math ({torch.cuda.get_device_name()})") +
               f"Command: `python -m apps.gpu_fast_math_bench --repeat {args.repeat}`. Copy bandwidth {copy:.2f} TB/s. "
               "Times in ms (share of the copy's bandwidth); errors: max |error| / max |reference| against NumPy in "
               "float64 on the same inputs.\n\n"
               "| workload | hcompile | hcompile fast_math | torch.compile | torch.compile / fast_math | "
               "error: hcompile | fast_math | torch.compile |\n|---|---|---|---|---|---|---|---|\n" +
               "\n".join(workloads) + "\n\nThe operations, largest error in float32 ulps over 16M inputs "
               "(results below 2^-126 left out, counted in the last column); special values (NaN, ±inf, ±0, "
               "overflow, subnormals) compared with NumPy's:\n\n"
               "| operation | hcompile | hcompile fast_math | torch eager | torch.compile | results below 2^-126 |\n"
               "|---|---|---|---|---|---|\n" + "\n".join(operations) + "\n")
    publish(section, args.write, "gpu-fast-math")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
