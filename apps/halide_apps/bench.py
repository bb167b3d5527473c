"""hcompile's autoscheduler as a Halide plugin (HCompile) against Halide's Adams2019, Mullapudi2016
and Li2018 on pipelines written directly in Halide: this folder's C++ generators, after Halide's
classic apps, each compiled ahead of time once per plugin by the wheel's CMake helpers
(add_halide_generator, add_halide_library with AUTOSCHEDULER), on the estimates the generators set.

    python -m apps.halide_apps.bench [--apps blur,harris] [--repeat 15] [--write apps/RESULTS.md]

Every output is checked against NumPy before it is timed; a schedule that fails or differs is
reported as such. Times are medians of one process, the autoschedulers sampled in turn each round.
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

from apps.bench import heading, publish
from apps.halide_apps.build import APPS, AUTOSCHEDULERS, build_halide_apps
from apps.halide_apps.workloads import APPS as WORKLOADS, check

PEERS = [a for a in AUTOSCHEDULERS if a != "HCompile"]


def checked(module, app, autoscheduler, inputs):
    """The app's entry point for one autoscheduler once its output matches NumPy, or the reason it
    cannot be timed (a run-time error, a wrong answer)."""
    fn = getattr(module, f"{app.name}_{autoscheduler}")
    out = np.empty(*app.output)
    try:
        fn(*inputs, out)
        check(app, out, inputs)
    except (RuntimeError, AssertionError) as e:
        return "wrong answer" if isinstance(e, AssertionError) else f"fails ({str(e).splitlines()[0][:60]})"
    return lambda: fn(*inputs, out)


def interleaved_medians(calls, repeat):
    """Median seconds per call of each of `calls` (name -> thunk), sampled in turn, round by round:
    a slow spell of the machine (another process, a clock change) then lands on every schedule
    alike instead of on whichever was being timed."""
    batch = {}
    for name, call in calls.items():
        call()
        start = time.perf_counter()
        call()
        batch[name] = max(1, int(0.005 / max(time.perf_counter() - start, 1e-7)))   # samples of >= ~5 ms
    samples = {name: [] for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            start = time.perf_counter()
            for _ in range(batch[name]):
                call()
            samples[name].append((time.perf_counter() - start) / batch[name])
    return {name: float(np.median(s)) for name, s in samples.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--apps", default=",".join(APPS), help="comma-separated apps (default: all)")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--build-dir", default=os.path.join("build", "halide_apps"))
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    apps = a.apps.split(",")
    start = time.perf_counter()
    module = build_halide_apps(a.build_dir, apps, AUTOSCHEDULERS)
    print(f"[halide_apps] built {len(apps)} apps x {len(AUTOSCHEDULERS)} autoschedulers in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    rng = np.random.default_rng(0)
    cols = " | ".join(f"{p} ms" for p in PEERS)
    rows = [f"| app | HCompile ms | {cols} | vs Adams2019 | vs Mullapudi2016 | vs best peer |",
            "|---|---|" + "---|" * len(PEERS) + "---|---|---|"]
    ratios = {"Adams2019": [], "Mullapudi2016": [], "best": []}
    for name in apps:
        app = WORKLOADS[name]
        inputs = app.make_inputs(rng)
        times = {s: checked(module, app, s, inputs) for s in AUTOSCHEDULERS}
        times.update(interleaved_medians({s: t for s, t in times.items() if callable(t)}, a.repeat))
        ours = times["HCompile"]

        def ratio(peer_seconds):
            ok = isinstance(ours, float) and isinstance(peer_seconds, float)
            return peer_seconds / ours if ok else None
        best = min((t for p, t in times.items() if p != "HCompile" and isinstance(t, float)), default=None)
        r = {"Adams2019": ratio(times["Adams2019"]), "Mullapudi2016": ratio(times["Mullapudi2016"]),
             "best": ratio(best) if best is not None else None}
        for k, v in r.items():
            if v is not None:
                ratios[k].append(v)

        def ms(t):
            return f"{t * 1e3:.3f}" if isinstance(t, float) else t
        rows.append(f"| {name} | {ms(ours)} | " + " | ".join(ms(times[p]) for p in PEERS) + " | " +
                    " | ".join(f"{r[k]:.2f}×" if r[k] is not None else "—" for k in ("Adams2019", "Mullapudi2016", "best"))
                    + " |")
        print(rows[-1], flush=True)

    def geomean(v):
        return f"{math.exp(sum(map(math.log, v)) / len(v)):.2f}×" if v else "—"
    rows.append(f"| geometric mean | | {' | '.join('' for _ in PEERS)} | {geomean(ratios['Adams2019'])} | "
                f"{geomean(ratios['Mullapudi2016'])} | {geomean(ratios['best'])} |")
    section = (heading("The HCompile plugin on Halide apps") +
               "`python -m apps.halide_apps.bench --write apps/RESULTS.md`: pipelines written in Halide "
               "(`apps/halide_apps/*_generator.cpp`), compiled ahead of time once per autoscheduler plugin "
               f"with parallelism {os.cpu_count()}; every output checked against NumPy; ratios are the peer's "
               "time over HCompile's (above 1: HCompile is faster).\n\n" + "\n".join(rows) + "\n")
    publish(section, a.write, "halide-apps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
