"""hcompile in two minutes: compile real NumPy functions, check them, time them, explain them.

    python -m apps.demo [--repeat N] [--size bench|small]

1. Compiles four workloads from apps/workloads.py with ``hc.hcompile``, checks each against
   NumPy on the same inputs, and prints compile time, median time and speedup over NumPy.
2. Prints ``hc.explain`` for one of them: the captured graph.
3. Shows a graph break: a function with a ``print()`` in the middle still gives NumPy's answer,
   and ``hc.explain`` names the reason with its file:line.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import hcompile as hc
from apps import workloads as W

DEMO_WORKLOADS = ["tinyops", "softmax_rows", "layernorm_rows", "blur3x3"]
NS = time.perf_counter_ns


def normalize_with_log(x):
    """Centre and scale. The print() cannot be captured: a graph break."""
    centered = x - np.mean(x)
    print("    (normalize_with_log: a print inside the function runs as plain Python)")
    return centered / (np.max(np.abs(centered)) + 1e-6)


def time_calls(fn, args, repeat):
    t0 = NS()
    out = fn(*args)
    first = NS() - t0
    fn(*args)  # warm
    samples = []
    for _ in range(repeat):
        t0 = NS()
        fn(*args)
        samples.append(NS() - t0)
    return first, statistics.median(samples), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m apps.demo", description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--size", choices=["bench", "small"], default="bench")
    a = ap.parse_args(argv)
    t_start = NS()
    hc.reset()
    ok_all = True

    print("== 1. Compile, check and time four NumPy functions ==\n")
    rows = []
    for name in DEMO_WORKLOADS:
        wl = W.WORKLOADS[name]
        args = wl.make_inputs(a.size)
        compiled = hc.hcompile(wl.fn)
        _, np_med, want = time_calls(wl.fn, args, a.repeat)
        hc_first, hc_med, got = time_calls(compiled, args, a.repeat)
        ok, err = wl.check(got, want)
        ok_all &= ok
        shape = "×".join(str(n) for n in args[0].shape) + f" {args[0].dtype}"
        rows.append((name, shape, hc_first, np_med, hc_med, ok, err))
        print(f"  {name:16s} compiled and checked ({'OK' if ok else 'MISMATCH'})")

    print()
    print(f"  {'workload':16s} {'input':18s} {'compile s':>9s} {'NumPy ms':>9s} {'hcompile ms':>11s} "
          f"{'speedup':>8s}  matches NumPy")
    for name, desc, first, np_med, hc_med, ok, err in rows:
        verdict = f"yes (max |err| {err:.1e})" if ok else f"NO — MISMATCH (max |err| {err:.3g})"
        print(f"  {name:16s} {desc:18s} {first / 1e9:9.2f} {np_med / 1e6:9.3f} {hc_med / 1e6:11.3f} "
              f"{np_med / hc_med:7.2f}×  {verdict}")
    print(f"\n  (median of {a.repeat} calls; the first compile in a process also pays Halide's one-time JIT "
          "start-up;\n   `python -m apps.bench` compares torch.compile and jax.jit too)")

    print("\n== 2. What hcompile captured: hc.explain(softmax_rows, x) ==\n")
    wl = W.WORKLOADS["softmax_rows"]
    print(hc.explain(wl.fn, *wl.make_inputs("small")))

    print("\n== 3. A graph break falls back to Python, and explain says where ==\n")
    x = W.inputs_tinyops("small")[0]
    compiled = hc.hcompile(normalize_with_log)
    print("  calling the compiled function:")
    got = compiled(x)
    print("  calling plain NumPy:")
    want = normalize_with_log(x)
    ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-5))
    ok_all &= ok
    print(f"  same answer as NumPy: {'yes' if ok else 'NO — MISMATCH'}\n")
    print("  hc.explain(normalize_with_log, x):")
    ex = hc.explain(normalize_with_log, x)
    print("    " + str(ex).replace("\n", "\n    "))
    print(f"\n  graphs: {ex.graph_count}, graph breaks: {ex.graph_break_count}")
    for br in ex.break_reasons:
        print(f"  break at {br.filename}:{br.lineno}: {br.reason}")
    if ex.graph_count == 0:
        print("  -> this build ran the whole function as plain Python (no resume after this break yet);"
              " the answer is still NumPy's")
    else:
        print(f"  -> {ex.graph_count} graph(s) stay compiled around the break; the print runs in Python")

    print(f"\ndemo finished in {(NS() - t_start) / 1e9:.1f} s")
    if not ok_all:
        print("A COMPILED RESULT DID NOT MATCH NUMPY", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
