"""``hcompile tune`` and ``hcompile db``: tuning runs from the command line and the records they
leave (the commands' parsers are in cli.py).

    hcompile tune SCRIPT [ARGS...] [--trials N] [--seconds S] [--target T] [--db PATH] [--plot PNG]
    hcompile db show|clear|verify|fit [--db PATH]
"""
from __future__ import annotations

import os
import runpy
import sys
import time

import numpy as np


def _ms(seconds):
    return "—" if seconds is None else f"{seconds * 1e3:.3f}"


def _speedup(default, best):
    return "—" if not default or not best else f"{default / best:.2f}×"


def _shapes(arguments):
    if not isinstance(arguments, list):
        return str(arguments)
    return ", ".join(f"{a['dtype']}{tuple(a['shape'])}" if "shape" in a else a.get("type", "?") for a in arguments)


def _table(headers, rows):
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]
        for row in [headers, *rows]:
            print("  ".join(str(x).ljust(w) for x, w in zip(row, widths)))
        return
    table = Table(*headers)
    for row in rows:
        table.add_row(*(str(x) for x in row))
    Console(width=None if sys.stdout.isatty() else 160).print(table)


class _Progress:
    """One progress bar per pipeline (rich when installed, a line per pipeline otherwise)."""

    def __init__(self):
        try:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
        except ImportError:
            self.bars = None
            return
        self.bars = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[best]}"), TimeElapsedColumn())
        self.tasks = {}

    def __enter__(self):
        if self.bars is not None:
            self.bars.start()
        return self

    def __exit__(self, *exc):
        if self.bars is not None:
            self.bars.stop()

    def __call__(self, event, function, trials, budget, best, default):
        text = f"best {best * 1e3:.3f} ms (search {default * 1e3:.3f} ms)"
        if self.bars is None:
            if event == "end":
                print(f"[tune] {function}: {trials} schedules measured, {text}", file=sys.stderr)
            return
        if event == "start":
            self.tasks[function] = self.bars.add_task(function, total=budget, best=text)
        task = self.tasks.get(function)
        if task is not None:
            self.bars.update(task, completed=budget if event == "end" else trials, best=text)


def _plot(sessions, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("[tune] matplotlib is not installed: no plot", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for s in sessions:
        trials, best = zip(*s["history"])
        ax.step(trials, [b / s["default_seconds"] for b in best], where="post", label=s["function"])
    ax.set_xlabel("schedules measured")
    ax.set_ylabel("best time / the search's time")
    ax.set_title("hcompile tune: best time against trial")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def tune(args):
    from .config import config
    from .tuning import REUSED, SESSIONS, autotune

    if not os.path.isfile(args.script):
        print(f"hcompile tune: no such script: {args.script}", file=sys.stderr)
        return 2
    config.mode_override = "max-autotune"
    config.tuning_trials = args.trials
    config.tuning_seconds = args.seconds
    config.tuning_workers = max(1, args.workers)
    if args.ray:
        config.tuning_ray = args.ray
    if args.target:
        config.target_override = args.target
    if args.db:
        config.tuning_db = args.db
    start = time.perf_counter()
    interrupted = False
    sys.argv = [args.script, *args.args]
    with _Progress() as progress:
        autotune.PROGRESS = progress
        try:
            runpy.run_path(args.script, run_name="__main__")
        except KeyboardInterrupt:
            interrupted = True
        finally:
            autotune.PROGRESS = None
    elapsed = time.perf_counter() - start
    if interrupted:
        print("[tune] interrupted: every measurement made so far is in the database", file=sys.stderr)
    from .tuning import open_database

    with open_database() as db:
        rows = []
        for s in SESSIONS:
            w = db.workload(s["key"])
            rows.append([s["function"], _shapes(w["arguments"]) if w else "?", _ms(s["default_seconds"]),
                         _ms(s["best_seconds"]), _speedup(s["default_seconds"], s["best_seconds"]), s["trials"],
                         f"{s['tuning_seconds']:.1f}"])
        for function, key, seconds in REUSED:
            w = db.workload(key)
            rows.append([function, _shapes(w["arguments"]) if w else "?", "—", _ms(seconds), "(record)", 0, "0.0"])
    _table(["function", "arguments", "search ms", "tuned ms", "speedup", "trials", "tuning s"], rows)
    print(f"[tune] {len(SESSIONS)} pipeline(s) tuned, {len(REUSED)} record(s) reused, {elapsed:.1f} s in all; "
          f"database {config.tuning_db}")
    if SESSIONS:
        path = _plot(SESSIONS, args.plot)
        if path:
            print(f"[tune] plot: {path}")
    return 130 if interrupted else 0


def db_show(args):
    from .tuning import TuningDatabase

    if not os.path.exists(args.path):
        print(f"no tuning database at {args.path}")
        return 0
    with TuningDatabase(args.path, create=False) as db:
        rows = [[w["function"], _shapes(w["arguments"]), w["trials"], _ms(w["default_seconds"]), _ms(w["best_seconds"]),
                 _speedup(w["default_seconds"], w["best_seconds"]), w["target"], w["key"][:12]] for w in db.summary()]
    _table(["function", "arguments", "trials", "search ms", "best ms", "speedup", "target", "workload"], rows)
    print(f"{len(rows)} workload(s) in {args.path}")
    return 0


def db_clear(args):
    from .tuning import TuningDatabase

    if os.path.exists(args.path):
        with TuningDatabase(args.path, create=False) as db:
            db.clear()
    print(f"cleared {args.path}")
    return 0


def _random_arguments(arguments, rng):
    out = []
    for a in arguments:
        if "shape" not in a or a.get("layout") not in (None, 0):
            return None   # a scalar argument or a strided layout: not reproduced from the record
        dtype = np.dtype(a["dtype"])
        if dtype == np.bool_:
            out.append(rng.random(a["shape"]) < 0.5)
        elif np.issubdtype(dtype, np.integer):
            out.append(rng.integers(0, 10, a["shape"]).astype(dtype))
        else:
            out.append(rng.standard_normal(a["shape"]).astype(dtype))
    return out


def db_verify(args):
    """Re-measure each workload's best record against the search's schedule now, on random
    arguments of the recorded shapes, and report the drift from the recorded time."""
    from .tuning import TuningDatabase, workload
    from .tuning.autotune import measure
    from .tuning.replay import compile_call

    if not os.path.exists(args.path):
        print(f"no tuning database at {args.path}")
        return 0
    rng = np.random.default_rng(0)
    rows = []
    with TuningDatabase(args.path, create=False) as db:
        for w in db.summary():
            found = db.best(w["key"], workload.versions(), workload.machine_fingerprint())
            info = db.workload(w["key"])
            if w["key"].startswith("halide-"):   # a pipeline written in Halide: no graph to rebuild
                rows.append([w["function"], "—", _ms(found[1]) if found else "—", "—", "—", "—",
                             "a Halide pipeline: re-run tune_halide to re-measure"])
                continue
            values = _random_arguments(info["arguments"], rng) if found else None
            if values is None:
                why = "no record for this version and machine" if not found else "arguments not reproducible"
                rows.append([w["function"], _shapes(w["arguments"]), "—", "—", "—", "—", why])
                continue
            graph = workload.graph_from_json(info["graph_json"])

            def timed(schedule):
                return measure(compile_call(graph, info["target"], values, schedule)[0])[0]
            now, search = timed(found[0]), timed(None)
            drift = now / found[1] - 1
            rows.append([w["function"], _shapes(w["arguments"]), _ms(found[1]), _ms(now), f"{drift:+.0%}", _ms(search),
                         "ok" if abs(drift) < 0.25 else "drifted"])
    _table(["function", "arguments", "recorded ms", "now ms", "drift", "search now ms", ""], rows)
    return 0


def db_fit(args):
    """Fit the cost model's learned correction on the records (tuning/fit.py) and report the
    held-out rank correlation with and without it."""
    from .tuning import TuningDatabase, correction_path, fit, workload

    if not os.path.exists(args.path):
        print(f"no tuning database at {args.path}")
        return 2
    with TuningDatabase(args.path, create=False) as db:
        try:
            weights, report = fit.fit(db, workload.versions(), workload.machine_fingerprint())
        except ValueError as e:
            print(f"hcompile db fit: {e}", file=sys.stderr)
            return 2
    out = correction_path(args.path)
    fit.write(out, weights, report, workload.versions(), workload.machine_fingerprint())
    _table(["choice", "weight (log time per decision)"], [[c, f"{w:+.3f}"] for c, w in sorted(weights.items())])
    before, after = report["rank_correlation_before"], report["rank_correlation_after"]
    print(f"{report['records']} records of {report['workloads']} workloads; held out one workload at a time "
          f"({report['held_out_workloads']} rankable): mean Spearman rank correlation of predicted and measured "
          f"times {before:.3f} without the correction, {after:.3f} with it" if before is not None else
          f"{report['records']} records of {report['workloads']} workloads; no workload could be ranked held out")
    print(f"weights written to {out} (the search ranks with them under hc.config.cost_correction / "
          "HCOMPILE_COST_CORRECTION=1)")
    return 0

