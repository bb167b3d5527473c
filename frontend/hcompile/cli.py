"""The ``hcompile`` command line.

    hcompile info                   versions, the host target, where caches live
    hcompile run SCRIPT [ARGS...]   run a script with hcompile's logs switched on (--logs a,b)
    hcompile tune / db              the autoscheduler's tuning runs and records (a later issue)
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


def _not_yet(args):
    print(f"hcompile {args.command}: the autoscheduler's tuning runs and records arrive with the "
          "autoscheduler issue; nothing is tuned by this build.", file=sys.stderr)
    return 2


def main(argv=None):
    parser = argparse.ArgumentParser(prog="hcompile", description="hcompile command line")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, host target, cache location").set_defaults(handler=_info)
    run = sub.add_parser("run", help="run a script with hcompile logs on")
    run.add_argument("--logs", default="graph_breaks,recompiles,schedule")
    run.add_argument("script")
    run.add_argument("args", nargs=argparse.REMAINDER)
    run.set_defaults(handler=_run)
    for name in ("tune", "db"):
        p = sub.add_parser(name, help="not in this build yet")
        p.add_argument("rest", nargs=argparse.REMAINDER)
        p.set_defaults(handler=_not_yet)
    args = parser.parse_args(argv)
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
