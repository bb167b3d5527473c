"""max-autotune over the workloads into a fresh tuning database, then the learned correction
fitted on its records (`hcompile db fit`) with its held-out rank correlation.

    python -m apps.tuning_bench [--trials N] [--seconds S] [--write apps/RESULTS.md]

The tuner's own timings (the search's schedule against the best it measured) per workload, the
schedules measured and the tuning time; then the fit's report.
"""
from __future__ import annotations

import argparse
import math
import os
import tempfile
import types

import hcompile as hc
from apps import workloads as W
from apps.bench import heading, publish
from apps.cost_model_ranking import median_seconds
from hcompile.tuning import SESSIONS, TuningDatabase, correction_path, fit, workload

NAMES = ["tinyops", "softmax_rows", "layernorm_rows", "blur3x3", "matmul_softmax_100", "gelu_mlp", "box_blur",
         "unsharp_mask", "harris", "max_filter", "conv_layer", "rmsnorm", "attention", "camera_pipe"]


def held_out_effect(db, path, keys, repeat):
    """A table: per workload, the search's schedule with and without the correction fitted on
    the other workloads' records (leave one out), timed in this process. (`path`: the database
    the records are in.)"""
    samples = fit.workload_samples(db, workload.versions(), workload.machine_fingerprint())
    # Compiled against an empty database, so that both compiles take the search's list rather
    # than the tuned record; the correction sits next to it.
    hc.config.tuning_db = scratch = os.path.join(tempfile.mkdtemp(prefix="tuning-bench-"), "empty.sqlite")
    choices = sorted({d[1] for rows in samples.values() for r in rows for d in r["decisions"]})
    rows = ["| workload | search ms | with the correction ms | gain | decisions changed |", "|---|---|---|---|---|"]
    gains = []
    for name in NAMES:
        wl = W.get(name)
        args = wl.make_inputs()
        key = keys.get(name)
        others = [rs for k, rs in samples.items() if k != key]
        if len(others) < 2:
            continue
        weights = dict(zip(choices, map(float, fit.fit_weights(others, choices))))
        fit.write(correction_path(scratch), weights, {}, workload.versions(), workload.machine_fingerprint())
        compiled = {}
        for corrected in (False, True):
            hc.config.cost_correction = corrected
            f = hc.hcompile(types.FunctionType(wl.fn.__code__.replace(co_name=f"{name}_{corrected}"), wl.fn.__globals__))
            f(*args)
            compiled[corrected] = f
        hc.config.cost_correction = False
        plain, fixed = (median_seconds(compiled[c], args, repeat) for c in (False, True))
        changed = (sorted(compiled[False].compile_records[0]["report"]["decisions"]) !=
                   sorted(compiled[True].compile_records[0]["report"]["decisions"]))
        if changed:   # unchanged lists differ by noise alone
            gains.append(plain / fixed)
        rows.append(f"| {name} | {plain * 1e3:.3f} | {fixed * 1e3:.3f} | {plain / fixed:.2f}× | {'yes' if changed else 'no'} |")
        print(rows[-1], flush=True)
    hc.config.tuning_db = path
    if gains:
        rows.append(f"| geometric mean where the decisions changed ({len(gains)}) | | | "
                    f"{math.exp(sum(map(math.log, gains)) / len(gains)):.2f}× | |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=24)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--repeat", type=int, default=7, help="samples per timing of the correction's effect")
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    path = os.path.join(tempfile.mkdtemp(prefix="tuning-bench-"), "tuning.sqlite")
    hc.config.tuning_db, hc.config.tuning_trials, hc.config.tuning_seconds = path, a.trials, a.seconds
    rows = ["| workload | schedules measured | tuning s | search's ms | tuned ms | gain |", "|---|---|---|---|---|---|"]
    keys = {}
    for name in NAMES:
        wl = W.get(name)
        hc.hcompile(wl.fn, mode="max-autotune")(*wl.make_inputs())
        s = SESSIONS[-1]
        keys[name] = s["key"]
        rows.append(f"| {name} | {s['trials']} | {s['tuning_seconds']:.1f} | {s['default_seconds'] * 1e3:.3f} | "
                    f"{s['best_seconds'] * 1e3:.3f} | {s['default_seconds'] / s['best_seconds']:.2f}× |")
        print(rows[-1], flush=True)
    with TuningDatabase(path) as db:
        weights, report = fit.fit(db, workload.versions(), workload.machine_fingerprint())
        held_out = held_out_effect(db, path, keys, a.repeat)
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
               f"search's schedule, interleaved); lists compiled {hc.config.tuning_workers} at a time "
               "(`hc.config.tuning_workers`).\n\n" + "\n".join(rows) +
               "\n\n`hcompile db fit` on those records: " + fitted + "\n\n" + "\n".join(weight_rows) +
               "\n\nThe search ranking with the correction (`hc.config.cost_correction`), each workload's weights "
               "fitted on the other workloads' records only, against the search without it (both compiled now, "
               "timed in turn; above 1: the correction chose faster):\n\n" + held_out + "\n")
    publish(section, a.write, "tuning")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
