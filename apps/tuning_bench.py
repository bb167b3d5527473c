"""max-autotune over the workloads into a fresh tuning database, then the learned correction
fitted on its records (`hcompile db fit`) with its held-out rank correlation.

    python -m apps.tuning_bench [--trials N] [--seconds S] [--write apps/RESULTS.md]

The tuner's own timings (the search's schedule against the best it measured) per workload, the
schedules measured and the tuning time; then the fit's report.
"""
from __future__ import annotations

import argparse
import os
import tempfile

import hcompile as hc
from apps import workloads as W
from apps.bench import heading, publish
from hcompile.tuning import SESSIONS, TuningDatabase, fit, workload

NAMES = ["tinyops", "softmax_rows", "layernorm_rows", "blur3x3", "matmul_softmax_100", "gelu_mlp", "box_blur",
         "unsharp_mask", "harris", "max_filter", "conv_layer", "rmsnorm", "attention", "camera_pipe"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    path = os.path.join(tempfile.mkdtemp(prefix="tuning-bench-"), "tuning.sqlite")
    hc.config.tuning_db, hc.config.tuning_trials, hc.config.tuning_seconds = path, a.trials, a.seconds
    rows = ["| workload | schedules measured | tuning s | search's ms | tuned ms | gain |", "|---|---|---|---|---|---|"]
    for name in NAMES:
        wl = W.get(name)
        hc.hcompile(wl.fn, mode="max-autotune")(*wl.make_inputs())
        s = SESSIONS[-1]
        rows.append(f"| {name} | {s['trials']} | {s['tuning_seconds']:.1f} | {s['default_seconds'] * 1e3:.3f} | "
                    f"{s['best_seconds'] * 1e3:.3f} | {s['default_seconds'] / s['best_seconds']:.2f}× |")
        print(rows[-1], flush=True)
    with TuningDatabase(path) as db:
        weights, report = fit.fit(db, workload.versions(), workload.machine_fingerprint())
    weight_rows = ["| choice | weight (log time per decision) |", "|---|---|"] + \
        [f"| {c} | {w:+.3f} |" for c, w in sorted(weights.items())]
    fitted = (f"{report['records']} records of {report['workloads']} workloads; leaving one workload out at a time "
              f"({report['held_out_workloads']} rankable), the mean Spearman rank correlation of predicted and "
              f"measured times is {report['rank_correlation_before']:.3f} without the correction and "
              f"{report['rank_correlation_after']:.3f} with it.")
    print(fitted)
    section = (heading("max-autotune and the learned correction (apps/tuning_bench.py)") +
               f"Command: `python -m apps.tuning_bench --trials {a.trials} --seconds {a.seconds:g}`. The tuner's own "
               "timings (each a median of seven samples after 20 ms of warm-up; a winner confirmed against the "
               "search's schedule, interleaved).\n\n" + "\n".join(rows) +
               "\n\n`hcompile db fit` on those records: " + fitted + " The search does not read the weights yet.\n\n" +
               "\n".join(weight_rows) + "\n")
    publish(section, a.write, "tuning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
