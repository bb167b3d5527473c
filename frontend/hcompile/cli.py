"""The ``hcompile`` command line.

    hcompile info                   versions, the host target, where caches live
    hcompile run SCRIPT [ARGS...]   run a script with hcompile's logs switched on (--logs a,b)
    hcompile tune SCRIPT [ARGS...]  run a script with every compiled function in max-autotune mode
    hcompile db show|clear|verify|fit  the tuning database's records
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys


def _info(_args):
    from importlib.metadata import version

    import halide
    from . import __version__, _C
    print(f"hcompile {__version__}")
    print(f"numpy {version('numpy')}, halide wheel {version('halide')} at {halide.install_dir()}")
    print(f"host target: {_C.host_target()}")
    print(f"cache dir: {os.environ.get('HCOMPILE_CACHE_DIR', os.path.expanduser('~/.cache/hcompile'))}")
    return 0


def _run(args):
    if args.logs:
        os.environ["HCOMPILE_LOGS"] = args.logs
    sys.argv = [args.script, *args.args]
    runpy.run_path(args.script, run_name="__main__")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="hcompile", description="hcompile command line")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, host target, cache location").set_defaults(handler=_info)
    run = sub.add_parser("run", help="run a script with hcompile logs on")
    run.add_argument("--logs", default="graph_breaks,recompiles,schedule")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    run.set_defaults(handler=_run)
    from . import tune_cli
    from .config import config

    tune = sub.add_parser("tune", help="run a script with every @hcompile function in max-autotune mode")
    tune.add_argument("--trials", type=int, default=config.tuning_trials, help="schedules measured per pipeline")
    tune.add_argument("--seconds", type=float, default=config.tuning_seconds, help="seconds spent per pipeline")
    tune.add_argument("--workers", type=int, default=config.tuning_workers,
                      help="schedules compiled at once (threads; each is timed alone afterwards)")
    tune.add_argument("--ray", metavar="ADDRESS",
                      help="run the trials as Ray tasks: 'local' starts Ray here; or 'auto', 'ray://host:port'")
    tune.add_argument("--target", default=None, help="a Halide target string every compile uses (default: each "
                      "function's own, normally the host)")
    tune.add_argument("--db", default=None, help=f"tuning database (default {config.tuning_db})")
    tune.add_argument("--plot", default="hcompile_tune.png", help="PNG of best time against trial")
    tune.add_argument("script")
    tune.add_argument("args", nargs=argparse.REMAINDER)
    tune.set_defaults(handler=tune_cli.tune)
    db = sub.add_parser("db", help="the tuning database: show, clear, verify")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    for name, handler, text in [("show", tune_cli.db_show, "workloads, best times, trials, speedup over the search"),
                                ("clear", tune_cli.db_clear, "delete every record"),
                                ("verify", tune_cli.db_verify, "re-measure the best records and report drift"),
                                ("fit", tune_cli.db_fit, "fit the cost model's learned correction; held-out rank correlation")]:
        p = db_sub.add_parser(name, help=text)
        p.add_argument("--db", dest="path", default=config.tuning_db)
        p.set_defaults(handler=handler)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
