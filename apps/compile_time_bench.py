"""Compile time of programs that once compiled for minutes (issue 5), each checked against NumPy.

``python -m apps.compile_time_bench [--write apps/RESULTS.md]``

Each program is a class the fuzzer or a user found: a value read twice by every step of a chain
(Halide's let removal walked nested lets as a tree), 64-bit products of a narrow value (Halide
checks product overflow in 32 bits, so the intervals grew as trees), integer powers, stencil
chains and unrolled loops. The time is the first call's wall time (capture, lowering, Halide and
LLVM), one program at a time in this process; the result is then compared with NumPy's.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hcompile as hc


def _source(body: str) -> str:
    return "def f(a):\n" + "".join(f"    {line}\n" for line in body.splitlines())


# (name, body of f(a), input, what it took before the fix, measured on this 2-core machine)
CASES = [
    ("`x = x - x // 3`, 24 steps, uint32",
     "x = a.astype(np.uint32)\nfor _ in range(24):\n    x = x - x // 3\nreturn x", "u8", "over 60 s (stopped)"),
    ("`x = x * x + x`, 24 steps, uint64",
     "x = a.astype(np.uint64)\nfor _ in range(24):\n    x = x * x + x\nreturn x", "u8", "over 60 s (stopped)"),
    ("`x = np.tanh(x) * 0.5 + x * 0.25`, 200 steps, float64",
     "x = a.astype(np.float64)\nfor _ in range(200):\n    x = np.tanh(x) * 0.5 + x * 0.25\nreturn x", "u8",
     "not measured; `np.sin(x) * x + x`: over 100 s (stopped)"),
    ("`a.astype(np.uint64) ** 65535`",
     "return a.astype(np.uint64) ** 65535", "u8", "about 80 s (32767: 24.5 s)"),
    ("`a.astype(np.uint64) ** np.uint64(2**64 - 1)`",
     "return a.astype(np.uint64) ** np.uint64(2**64 - 1)", "u8", "did not finish"),
    ("uint64 squarings, 16 steps",
     "x = a.astype(np.uint64)\nr = x\nfor _ in range(16):\n    x = x * x\n    r = r * x\nreturn r", "u8",
     "over 100 s (stopped)"),
    ("8-stage 5-point stencil as slices",
     "u = a\nfor _ in range(8):\n    u = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])\n"
     "return u", "grid", "6 min (issue 5)"),
    ("300 iterations of `s = s + np.tanh(a[i, i])`",
     "s = 0.0\nfor i in range(300):\n    s = s + np.tanh(a[i, i])\nreturn s", "square", "over 2 min (issue 5)"),
    # float64 pow's double-double steps share their values: as a tree, the lowering's NaN
    # rewrite walked them for seconds (test_fuzz's 30 s limit, under load).
    ("`a ** a`, float64", "return a ** a", "f64", "7.8 s (2026-11-27)"),
    ("`np.exp(a) ** np.exp(-a)`, float64", "return np.exp(a) ** np.exp(-a)", "f64", "not measured"),
]


def _input(kind: str):
    rng = np.random.default_rng(0)
    if kind == "u8":
        return rng.integers(0, 256, 1000).astype(np.uint8)
    if kind == "f64":
        return rng.random(1000) * 4 - 2
    if kind == "grid":
        return rng.random((512, 512)).astype(np.float32)
    return rng.random((300, 300))


def _same(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind == "f":  # math functions are within a few ulp of NumPy's, not bit-equal
        return bool(np.allclose(got, want, rtol=1e-4, atol=1e-6, equal_nan=True))
    return bool(np.array_equal(got, want))


def table():
    rows = ["| program | before | compile + first call, s | NumPy call, ms | hcompile call, ms | matches NumPy |",
            "|---|---|---|---|---|---|"]
    for name, body, kind, before in CASES:
        ns = {"np": np}
        exec(_source(body), ns)  # noqa: S102 - the benchmark's own literal programs
        f, a = ns["f"], _input(kind)
        compiled = hc.hcompile(f, fullgraph=True)  # loops unrolled: one graph, as the fuzzer found them
        start = time.perf_counter()
        got = compiled(a)
        compile_s = time.perf_counter() - start
        with np.errstate(all="ignore"):
            start = time.perf_counter()
            want = f(a)
            numpy_ms = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        compiled(a)
        hc_ms = (time.perf_counter() - start) * 1e3
        rows.append(f"| {name} | {before} | {compile_s:.2f} | {numpy_ms:.2f} | {hc_ms:.2f} | "
                    f"{'yes' if _same(got, want) else 'NO'} |")
    return "\n".join(rows) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="add or replace this section in a results file")
    opts = parser.parse_args(argv)
    command = "python -m apps.compile_time_bench" + (f" --write {opts.write}" if opts.write else "")
    from apps.bench import heading, publish
    section = (heading("Compile time of former minutes-long compiles") +
               f"- command: `{command}`\n- 'before' is what the program took before its fix, measured on this "
               f"machine with the build before it; `fullgraph=True`, so loops are unrolled into one graph (the default "
               f"mode compiles a long loop's body once instead)\n\n{table()}")
    publish(section, opts.write, "compile_time")


if __name__ == "__main__":
    main()
