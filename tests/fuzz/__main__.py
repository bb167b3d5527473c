"""Command line of the fuzzer (see tests/README.md)."""

import argparse
import os
import sys

from . import driver, gen, runner


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    ap.add_argument("--programs", type=int, default=1000, help="how many programs (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="run seed: program i is (seed, i)")
    ap.add_argument("--start", type=int, default=0, help="first program index (default 0)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="worker processes (default: the core count)")
    ap.add_argument("--out", default="fuzz-out", help="folder for repros and summary.json")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="seconds one program may take before it counts as a hang")
    ap.add_argument("--shrink-budget", type=int, default=30,
                    help="compiles spent shrinking each mismatch (0: no shrinking)")
    ap.add_argument("--max-ops", type=int, default=8, help="operations per program (at most)")
    ap.add_argument("--sets", default="0,1,2",
                    help="input sets to check: 0 ordinary, 1 special values, 2 odd layouts")
    ap.add_argument("--show", action="store_true",
                    help="print the programs' source instead of running them")
    ap.add_argument("--oracle-check", choices=["identity", "upcast"], default="",
                    help="run against a stand-in for hcompile to validate the fuzzer (fake.py)")
    ap.add_argument("--dynamic", action="store_true",
                    help="compile with dynamic=True: every axis from size 2 up symbolic (runner.DYNAMIC_ENV)")
    ap.add_argument("--autoscheduler", default="",
                    help="compile with this autoscheduler (a Halide peer: Adams2019, Mullapudi2016, Li2018; "
                         "runner.AUTOSCHEDULER_ENV)")
    ap.add_argument("--replay", help=argparse.SUPPRESS)  # the crash shrinker's subprocess
    a = ap.parse_args(argv)
    if a.dynamic:
        os.environ[runner.DYNAMIC_ENV] = "1"      # workers and replays inherit it
    if a.autoscheduler:
        os.environ[runner.AUTOSCHEDULER_ENV] = a.autoscheduler
    if a.replay:
        return driver.replay_main(a.replay)
    if a.show:
        for i in range(a.start, a.start + a.programs):
            print(f"# program {i}\n{gen.program(a.seed, i, a.max_ops).source()}")
        return 0
    cfg = driver.Config(seed=a.seed, programs=a.programs, start=a.start, jobs=a.jobs, out=a.out,
                        timeout=a.timeout, shrink_budget=a.shrink_budget, max_ops=a.max_ops,
                        sets=tuple(int(x) for x in a.sets.split(",")),
                        oracle_check=a.oracle_check)
    summary = driver.run(cfg)
    for sig, g in summary.groups.items():
        print(f"  {g['count']:6d}  {sig}\n          {g['repro']}")
    if summary.unsupported_reasons:
        print("unsupported (skipped), most common reasons:")
        for reason, n in summary.unsupported_reasons.most_common(8):
            print(f"  {n:6d}  {reason}")
    print(summary.line())
    return 1 if summary.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
