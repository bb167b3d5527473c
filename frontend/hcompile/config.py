"""``hc.config``: process-wide settings read at compile time."""
from __future__ import annotations

import os

_SETTINGS = ("recompile_limit", "also_compile_for", "output_cache_bytes", "tuning_db", "tuning_trials",
             "tuning_seconds", "tuning_workers", "tuning_ray", "cost_correction", "mode_override", "target_override")


class Config:
    """``recompile_limit``: compiled entries per function (and per resume function or loop
    body); past it, entries already compiled keep serving and new argument types, shapes and
    values run as plain Python, with one warning naming the guard that changed.

    ``also_compile_for``: Halide target strings (a tuple) every kernel is also compiled for, its
    machine code then discarded; a failure to generate code for a CPU this machine lacks (say
    ``x86-64-linux-avx512-avx512_skylake``) then shows up here. For tests and fuzzing; it slows
    every compile. The environment variable ``HCOMPILE_ALSO_COMPILE_FOR`` (comma-separated)
    sets it at import.

    ``output_cache_bytes``: the most memory, in bytes, kept in freed blocks of 1 MiB and up that
    kernel outputs and Halide's intermediates held, so the next call reuses them instead of
    faulting in fresh pages (3 ms for a 38 MiB image on a 2-core machine). Default 1 GiB; 0 keeps
    nothing. The environment variable ``HCOMPILE_OUTPUT_CACHE_MB`` sets it at import.

    ``tuning_db``: the SQLite tuning database max-autotune writes and every compile reads
    (``HCOMPILE_TUNING_DB``; default ``tuning.sqlite`` in ``$HCOMPILE_CACHE_DIR``, itself
    ``~/.cache/hcompile`` by default). ``tuning_trials`` and ``tuning_seconds``: max-autotune's
    budget per pipeline, schedules measured and seconds spent (``HCOMPILE_TUNING_TRIALS``,
    ``HCOMPILE_TUNING_SECONDS``; default 24 and 60). ``tuning_workers``: lists max-autotune
    compiles at once, on threads, before timing them one by one (``HCOMPILE_TUNING_WORKERS``;
    default the core count). ``tuning_ray``: a Ray address ("local" starts a local instance,
    "auto", "ray://host:port") over which max-autotune's trials run as Ray tasks, each compiled
    and timed on the node that runs it (``HCOMPILE_TUNING_RAY``; ``hcompile tune --ray``), or
    None. ``cost_correction``: the search ranks with the learned correction
    ``hcompile db fit`` wrote next to the tuning database, where it was fitted with these versions
    on this machine (``HCOMPILE_COST_CORRECTION=1``; default off: it has not been measured to
    choose better schedules yet). ``mode_override``: a mode every compiled
    function uses whatever it was given (``HCOMPILE_MODE``; ``hcompile tune`` sets
    "max-autotune"), or None. ``target_override``: likewise a target string every compile uses
    (``HCOMPILE_TARGET``; ``hcompile tune --target``), or None."""

    def __init__(self):
        self.recompile_limit = 8
        spec = os.environ.get("HCOMPILE_ALSO_COMPILE_FOR", "")
        self.also_compile_for = tuple(name.strip() for name in spec.split(",") if name.strip())
        self.output_cache_bytes = _megabytes_from_env("HCOMPILE_OUTPUT_CACHE_MB", 1024)
        cache = os.environ.get("HCOMPILE_CACHE_DIR") or os.path.expanduser("~/.cache/hcompile")
        self.tuning_db = os.environ.get("HCOMPILE_TUNING_DB") or os.path.join(cache, "tuning.sqlite")
        self.tuning_trials = int(os.environ.get("HCOMPILE_TUNING_TRIALS", "24"))
        self.tuning_seconds = float(os.environ.get("HCOMPILE_TUNING_SECONDS", "60"))
        self.tuning_workers = int(os.environ.get("HCOMPILE_TUNING_WORKERS") or os.cpu_count() or 1)
        self.cost_correction = os.environ.get("HCOMPILE_COST_CORRECTION", "") not in ("", "0")
        self.tuning_ray = os.environ.get("HCOMPILE_TUNING_RAY") or None
        self.mode_override = os.environ.get("HCOMPILE_MODE") or None
        self.target_override = os.environ.get("HCOMPILE_TARGET") or None

    def __setattr__(self, name, value):
        if name not in _SETTINGS:
            raise AttributeError(f"hcompile.config has no setting {name!r}")
        if name == "recompile_limit" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"recompile_limit must be a positive int, got {value!r}")
        if name in ("tuning_trials", "tuning_workers") and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"{name} must be a positive int, got {value!r}")
        if name == "tuning_seconds" and (not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0):
            raise ValueError(f"tuning_seconds must be a positive number, got {value!r}")
        if name == "tuning_db":
            value = os.fspath(value)
        if name == "mode_override" and value not in (None, "default", "reduce-overhead", "max-autotune"):
            raise ValueError(f"mode_override must be None or a mode, got {value!r}")
        if name == "target_override" and value is not None:
            from . import _C

            _C.jit_target(value)  # ValueError naming the problem, not SIGILL on the first call
        if name == "also_compile_for":
            value = _checked_targets(value)
        if name == "output_cache_bytes":
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"output_cache_bytes must be a non-negative int, got {value!r}")
            from . import _C

            _C.set_block_pool_limit(value)
        object.__setattr__(self, name, value)

    def __repr__(self):
        settings = ", ".join(f"{name}={getattr(self, name)!r}" for name in _SETTINGS)
        return f"hcompile.config({settings})"


def _megabytes_from_env(name, default_mb):
    spec = os.environ.get(name, "").strip()
    try:
        mb = float(spec) if spec else default_mb
    except ValueError:
        raise ValueError(f"{name} must be a number of megabytes, got {spec!r}") from None
    if mb < 0:
        raise ValueError(f"{name} must be a number of megabytes, got {spec!r}")
    return int(mb * (1 << 20))


def _checked_targets(value):
    from . import _C

    if isinstance(value, str):
        raise ValueError(f"also_compile_for must be a sequence of target strings, got {value!r}")
    names = tuple(value)
    if not all(isinstance(name, str) for name in names):
        raise ValueError(f"also_compile_for must be a sequence of target strings, got {value!r}")
    for name in names:
        _C.parse_target(name)  # ValueError naming the problem
    return names


config = Config()
