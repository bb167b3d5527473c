"""Tuning: max-autotune (autotune.py), the SQLite tuning database (database.py) and what its
records are keyed by (workload.py), and tuning pipelines written in Halide through the HCompile
plugin (halide_pipelines.py). ``hcompile tune`` and ``hcompile db`` are in cli.py.

The schedule precedence, in one place (``schedule_for``): an explicit ``schedule=`` list, then
the best tuning record for this workload, versions and machine, then the search.
"""
from __future__ import annotations

import json
import os
from typing import NamedTuple

from ..config import config
from . import workload
from .autotune import SESSIONS, Autotuner, NotTuned  # noqa: F401
from .database import TuningDatabase
from .halide_pipelines import tune_halide  # noqa: F401


def correction_path(db_path=None):
    """Where `hcompile db fit` writes the learned correction for a database."""
    return (db_path or database_path()) + ".correction.json"


_CORRECTION_CACHE = {}


def correction_weights():
    """(choice, log-weight) pairs of the learned correction fitted on this database with these
    versions on this machine, or [] (no fit, or one made elsewhere)."""
    path = correction_path()
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        return []
    cached = _CORRECTION_CACHE.get(path)
    if cached and cached[0] == stamp:
        return cached[1]
    try:
        with open(path) as f:
            saved = json.load(f)
        fits = tuple(saved["versions"]) == workload.versions() and saved["machine"] == workload.machine_fingerprint()
        weights = [(str(c), float(w)) for c, w in saved["weights"].items()] if fits else []
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        weights = []
    _CORRECTION_CACHE[path] = (stamp, weights)
    return weights


def database_path():
    return config.tuning_db


def open_database(create=True):
    return TuningDatabase(database_path(), create=create)


def tuned_record(key):
    """(decisions, seconds) of the best record for workload ``key`` with these versions on this
    machine, or None (also when there is no database yet)."""
    if not os.path.exists(database_path()):
        return None
    with open_database(create=False) as db:
        return db.best(key, workload.versions(), workload.machine_fingerprint())


class ScheduleChoice(NamedTuple):
    schedule: list | None      # None: the search decides
    origin: str                # "explicit", "tuning record" or "search"
    measured_seconds: float | None = None  # a record's


# (function, workload key, measured seconds) of each record a compile in max-autotune mode
# reused instead of tuning (`hcompile tune` lists them).
REUSED = []


def schedule_for(explicit, key):
    """The precedence above. ``key`` is None where records do not apply (symbolic shapes,
    another autoscheduler)."""
    if explicit is not None:
        return ScheduleChoice(explicit, "explicit")
    if key is not None:
        found = tuned_record(key)
        if found is not None:
            return ScheduleChoice(found[0], "tuning record", found[1])
    return ScheduleChoice(None, "search")
