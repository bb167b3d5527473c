"""The tuning database: append-only records of measured schedules in SQLite.

Two tables. ``workloads``: one row per tuned pipeline (its key, the function's name, the printed
graph and arguments it was compiled for). ``records``: one row per measurement (the decision
list, the median and every run, the cost model's prediction, whether its outputs matched NumPy,
the versions and machine it was measured with). Nothing is updated or deleted but by ``clear``.

Lookups take the fastest matching record of the same hcompile and Halide versions and machine:
a version bump never reuses stale records. Rows that do not parse are skipped with one warning.
Two processes tuning at once lose nothing: WAL mode, a busy timeout, one transaction per write.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import warnings

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workloads (
    key TEXT PRIMARY KEY,
    function TEXT NOT NULL,
    graph TEXT NOT NULL,
    graph_json TEXT NOT NULL,
    arguments TEXT NOT NULL,
    target TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workload TEXT NOT NULL REFERENCES workloads(key),
    source TEXT NOT NULL,
    decisions TEXT NOT NULL,
    seconds REAL,
    runs TEXT NOT NULL,
    predicted REAL,
    ok INTEGER NOT NULL,
    error TEXT NOT NULL,
    hcompile_version TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    machine TEXT NOT NULL,
    load REAL,
    created REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_workload ON records(workload, ok, seconds);
"""

_warned = set()


def _warn_once(path, what):
    if (path, what) not in _warned:
        _warned.add((path, what))
        warnings.warn(f"hcompile tuning database {path}: {what}", RuntimeWarning, stacklevel=3)


class TuningDatabase:
    """One SQLite file. Open per use (``with TuningDatabase(path) as db``); safe across threads
    and processes."""

    def __init__(self, path, create=True):
        self.path = os.fspath(path)
        if create:
            os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
        elif not os.path.exists(self.path):
            raise FileNotFoundError(self.path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
        self._conn.execute("PRAGMA busy_timeout=30000")
        # Switching a new file to WAL takes an exclusive lock without waiting on the busy handler:
        # two processes opening a new database at once saw "database is locked". Retried.
        for attempt in range(200):
            try:
                self._conn.execute("PRAGMA journal_mode=WAL")
                with self._conn:
                    self._conn.executescript(_SCHEMA)
                break
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or attempt == 199:
                    raise
                time.sleep(0.05)

    def close(self):
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def add_workload(self, key, function, graph, graph_json, arguments, target):
        """``graph``: the printed graph; ``graph_json``: workload.graph_to_json's form."""
        with self._lock, self._conn:
            self._conn.execute("INSERT OR IGNORE INTO workloads VALUES (?, ?, ?, ?, ?, ?, ?)",
                               (key, function, graph, graph_json, json.dumps(arguments), target, time.time()))

    def add_record(self, workload, source, decisions, seconds, runs, predicted, ok, error, versions, machine, load=None):
        """One measurement. ``decisions``: (region, choice, axis, value, value2) tuples;
        ``seconds``: the median (None when it failed); ``versions``: (hcompile, Halide)."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT INTO records (workload, source, decisions, seconds, runs, predicted, ok, error, "
                "hcompile_version, halide_version, machine, load, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (workload, source, json.dumps([list(d) for d in decisions]), seconds, json.dumps(list(runs)),
                 predicted, int(bool(ok)), error or "", versions[0], versions[1], machine, load, time.time()))

    def best(self, workload, versions, machine):
        """(decisions, seconds) of the fastest correct record for ``workload`` measured with these
        versions on this machine, or None."""
        rows = self._conn.execute(
            "SELECT decisions, seconds FROM records WHERE workload = ? AND ok = 1 AND seconds IS NOT NULL "
            "AND hcompile_version = ? AND halide_version = ? AND machine = ? ORDER BY seconds ASC",
            (workload, versions[0], versions[1], machine))
        for text, seconds in rows:
            decisions = _parse_decisions(text)
            if decisions is None:
                _warn_once(self.path, "a record's decision list does not parse; such rows are skipped")
                continue
            return decisions, float(seconds)
        return None

    def summary(self):
        """Per workload: function, arguments, target, trials (schedules measured; the winners'
        confirmation timings not counted), the search's and the best measured seconds (this database's own versions and machines mixed: what ``db show``
        prints)."""
        out = []
        for key, function, arguments, target in self._conn.execute(
                "SELECT key, function, arguments, target FROM workloads ORDER BY created"):
            trials, best, default = self._conn.execute(
                "SELECT COUNT(CASE WHEN source != 'confirm' THEN 1 END), MIN(CASE WHEN ok = 1 THEN seconds END), "
                "MIN(CASE WHEN ok = 1 AND source = 'search' THEN seconds END) FROM records WHERE workload = ?",
                (key,)).fetchone()
            try:
                args = json.loads(arguments)
            except ValueError:
                _warn_once(self.path, "a workload's arguments do not parse; shown as text")
                args = arguments
            out.append(dict(key=key, function=function, arguments=args, target=target, trials=trials,
                            best_seconds=best, default_seconds=default))
        return out

    def records(self, workload):
        """Every record of ``workload`` in the order measured, as dicts."""
        cols = ("source", "decisions", "seconds", "runs", "predicted", "ok", "error", "hcompile_version",
                "halide_version", "machine", "load", "created")
        out = []
        for row in self._conn.execute(f"SELECT {', '.join(cols)} FROM records WHERE workload = ? ORDER BY id",
                                      (workload,)):
            r = dict(zip(cols, row))
            r["decisions"] = _parse_decisions(r["decisions"])
            try:
                r["runs"] = json.loads(r["runs"])
            except ValueError:
                r["runs"] = []
            if r["decisions"] is None:
                _warn_once(self.path, "a record's decision list does not parse; such rows are skipped")
                continue
            out.append(r)
        return out

    def workload(self, key):
        row = self._conn.execute("SELECT function, graph, graph_json, arguments, target FROM workloads WHERE key = ?",
                                 (key,)).fetchone()
        if row is None:
            return None
        return dict(key=key, function=row[0], graph=row[1], graph_json=row[2], arguments=json.loads(row[3]),
                    target=row[4])

    def clear(self):
        with self._lock, self._conn:
            self._conn.execute("DELETE FROM records")
            self._conn.execute("DELETE FROM workloads")


def _parse_decisions(text):
    try:
        value = json.loads(text)
        return [(int(r), str(c), int(a), int(v), int(v2)) for r, c, a, v, v2 in value]
    except (ValueError, TypeError):
        return None
