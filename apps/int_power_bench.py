"""Integer powers: NumPy against hcompile, with a constant and with an array exponent.

``python -m apps.int_power_bench [--repeat N] [--write apps/RESULTS.md]``

An integer power is a chain of squarings (elementwise_rules.cpp, int_pow) over a base read
through a Func of its own, computed per vector of the power (define_integer_power); with an
array exponent every element runs one step per exponent bit. Each result is checked against
NumPy before it is timed; times are the best of `repeat` calls on 10^6 elements.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hcompile as hc

N = 1_000_000

CASES = [
    ("a ** 7", lambda a, e: a ** 7),
    ("a ** e (array exponent)", lambda a, e: a ** e),
    ("a ** e + a", lambda a, e: a ** e + a),
    ("(1000, 1000) ** 5 - 1", lambda a, e: a.reshape(1000, 1000) ** 5 - 1),
]


def _best_ms(fn, args, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def table(repeat):
    rng = np.random.default_rng(0)
    rows = ["| dtype | expression | NumPy ms | hcompile ms (vs NumPy) |", "|---|---|---|---|"]
    for dtype in (np.uint32, np.uint64):
        a = rng.integers(0, 50, N).astype(dtype)
        e = rng.integers(0, 9, N).astype(dtype)
        for name, fn in CASES:
            compiled = hc.hcompile(fn, fullgraph=True)
            if not np.array_equal(compiled(a, e), fn(a, e)):
                raise AssertionError(f"{name} on {dtype.__name__}: hcompile differs from NumPy")
            numpy_ms, hc_ms = _best_ms(fn, (a, e), repeat), _best_ms(compiled, (a, e), repeat)
            rows.append(f"| {dtype.__name__} | `{name}` | {numpy_ms:.2f} | {hc_ms:.2f} ({numpy_ms / hc_ms:.2f}×) |")
    return "\n".join(rows) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--write", type=Path, help="add or replace this section in a results file")
    opts = parser.parse_args(argv)
    command = "python -m apps.int_power_bench" + (f" --repeat {opts.repeat}" if opts.repeat != 7 else "") + \
        (f" --write {opts.write}" if opts.write else "")
    from apps.bench import heading, publish
    section = (heading("Integer powers") +
               f"- command: `{command}`\n- 10^6 elements, base in [0, 50), exponent in [0, 9); best of {opts.repeat} calls\n\n"
               f"{table(opts.repeat)}")
    publish(section, opts.write, "int_power")


if __name__ == "__main__":
    main()
