"""How well the cost model ranks schedules: for each pipeline, the search's own list and the
variants one region away from it (what the search weighed) are compiled and timed on the real
inputs, and the model's predicted seconds are compared with the measured ones.

    python -m apps.cost_model_ranking [--variants 24] [--repeat 9] [--write apps/RESULTS.md]

Prints, per pipeline, the Spearman rank correlation between predicted and measured times, the
measured time of the search's choice against the best variant measured, and the predicted
against measured seconds of the choice (the model's scale error). The rank correlation is the
number the learned correction (a later step) should raise.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.bench import heading, publish


def _pipelines():
    r = np.random.default_rng(0)
    yield from ((name, w.fn, w.make_inputs("bench")) for name, w in W.WORKLOADS.items())
    yield "column_mean", lambda x: x.mean(axis=0), (r.random((2048, 2048), np.float32),)
    yield "row_max_small", lambda x: x.max(axis=1) + 1, (r.random((64, 300), np.float32),)
    yield "exp_1d", lambda x: np.exp(x) * 2, (r.random(1 << 22, np.float32),)


def median_seconds(fn, args, repeat):
    """Median seconds per call of ``fn(*args)`` over ``repeat`` samples of at least ~5 ms."""
    fn(*args)
    start = time.perf_counter()
    fn(*args)
    k = max(1, int(0.005 / max(time.perf_counter() - start, 1e-7)))   # samples of >= ~5 ms
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(k):
            fn(*args)
        samples.append((time.perf_counter() - start) / k)
    return float(np.median(samples))


def _spearman(a, b):
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1]) if len(a) > 2 else float("nan")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variants", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    rows = ["| pipeline | lists timed | rank correlation | choice / best measured | choice predicted / measured |",
            "|---|---|---|---|---|"]
    correlations = []
    for name, fn, args in _pipelines():
        chosen = hc.hcompile(fn, dynamic=False)
        chosen(*args)
        report = chosen.compile_records[0]["report"]
        variants = report["variants"][: a.variants]
        predicted = [p for _, p in variants]
        measured = [median_seconds(hc.hcompile(fn, dynamic=False, schedule=s), args, a.repeat) for s, _ in variants]
        chosen_measured = median_seconds(chosen, args, a.repeat)
        chosen_predicted = float(report["analysis"].split("cost model: ")[1].split(" ms")[0]) / 1e3
        rho = _spearman(predicted, measured)
        if not np.isnan(rho):
            correlations.append(rho)
        best = min(measured + [chosen_measured])
        rows.append(f"| {name} | {len(variants) + 1} | {rho:.2f} | {chosen_measured / best:.2f} | "
                    f"{chosen_predicted * 1e3:.3f} / {chosen_measured * 1e3:.3f} ms |")
        print(rows[-1], flush=True)
    section = (heading("Cost model ranking (apps/cost_model_ranking.py)") +
               f"Command: `python -m apps.cost_model_ranking --variants {a.variants} --repeat {a.repeat}`. "
               "Each pipeline's chosen list and its variants one region away, compiled and timed on the bench inputs. "
               f"Mean rank correlation: {np.mean(correlations):.2f}.\n\n" + "\n".join(rows) + "\n")
    publish(section, a.write, "cost-model-ranking")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
