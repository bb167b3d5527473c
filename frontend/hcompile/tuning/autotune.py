"""max-autotune: measure the search's schedule and its likeliest alternatives on the real
arguments, keep the fastest that gives the same answer.

The cost model ranks every region's alternatives (report["candidates"], each one region away
from the search's list, every region's best alternative first). Each trial swaps one region's
decisions into the best list so far, compiles it, checks its outputs against the search's
schedule's (what default mode returns, NumPy's answer as the test suite checks it: integers and
booleans exactly, floats within a tolerance for reordered sums; an image pipeline's uint8 output
can differ from NumPy's by one where float rounding ties, but never between schedules), and
times it: warm-up calls for 20 ms, then the median of seven
samples, each a batch of calls lasting at least a millisecond. A trial becomes the best when it
is 2% faster; the winner is timed against the search's list once more, interleaved, and kept
only if it still wins. Every measurement is written to the tuning database as it is made, so an
interrupted run keeps them.
"""
from __future__ import annotations

import concurrent.futures
import functools
import math
import os
import time
from typing import NamedTuple

import numpy as np

from . import workload as wl

# A trial replaces the best only this much faster: two timings of the same kernel differ by a
# few percent on a quiet 2-core machine.
MIN_GAIN = 0.98
# Before each list is timed the process idles this long, as apps/bench.py does before a sample:
# the worker threads of what ran before (a compile, the previous list) go to sleep first.
IDLE_SECONDS = 0.05
WARM_SECONDS = 0.02
SAMPLES = 7
MIN_BATCH_SECONDS = 0.001

# What `hcompile tune` prints at the end: one dict per pipeline tuned in this process.
SESSIONS = []
# `hcompile tune`'s progress display: called as PROGRESS(event, function, trials, budget, best
# seconds, the search's seconds), event "start", "trial" or "end"; None: no display.
PROGRESS = None


def _progress(*event):
    if PROGRESS is not None:
        PROGRESS(*event)


class NotTuned(Exception):
    """The pipeline cannot be tuned (said in the compile record, not raised to the user)."""


def measure(call):
    """(median seconds per call, per-call seconds of each sample). A ``call`` with a ``runs``
    attribute runs the kernel that many times (a GPU runner's launches between two
    synchronisations): the seconds are per run."""
    runs_per_call = getattr(call, "runs", 1)
    time.sleep(IDLE_SECONDS)
    start = time.perf_counter()
    calls = 0
    while calls < 2 or time.perf_counter() - start < WARM_SECONDS:
        call()
        calls += 1
    per_call = (time.perf_counter() - start) / calls
    batch = max(1, math.ceil(MIN_BATCH_SECONDS / max(per_call, 1e-9)))
    runs = []
    for _ in range(SAMPLES):
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        runs.append((time.perf_counter() - t0) / batch / runs_per_call)
    return float(np.median(runs)), runs


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def same_answer(got, want):
    """Whether a candidate's result is NumPy's: the same structure, dtypes and shapes, integers
    and booleans exact, floats within a tolerance scaled by the largest value (schedules
    reorder float sums), NaNs and infinities where NumPy has them."""
    got_leaves, want_leaves = _leaves(got), _leaves(want)
    if len(got_leaves) != len(want_leaves):
        return False
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            return False
        if not np.issubdtype(w.dtype, np.inexact):
            if not np.array_equal(g, w):
                return False
            continue
        finite = np.isfinite(w)
        if not np.array_equal(finite, np.isfinite(g)) or not np.array_equal(g[~finite], w[~finite], equal_nan=True):
            return False
        rtol = 1e-3 if w.dtype.itemsize <= 4 else 1e-8
        scale = float(np.max(np.abs(w[finite]), initial=1.0))
        if not np.allclose(g[finite], w[finite], rtol=rtol, atol=rtol * scale):
            return False
    return True


def _replace_region(schedule, candidate, base):
    """`schedule` with the decisions of the one region where `candidate` differs from `base`
    taken from `candidate`, or None when they differ in more or fewer regions."""
    regions = {d[0] for d in candidate} | {d[0] for d in base}
    changed = [r for r in sorted(regions)
               if sorted(d for d in candidate if d[0] == r) != sorted(d for d in base if d[0] == r)]
    if len(changed) != 1:
        return None
    return [d for d in schedule if d[0] != changed[0]] + [d for d in candidate if d[0] == changed[0]]


class _Measured(NamedTuple):
    seconds: float
    schedule: list
    kernel: object
    report: dict
    predicted: float | None


class Autotuner:
    """One pipeline's tuning run. ``compile(schedule)`` -> (kernel, report) raising on failure;
    ``runner(kernel)`` -> a no-argument call running it on the real arguments."""

    def __init__(self, function, compile, runner, db, key, trials, seconds, workers=1, remote=None, to_host=None):
        self.function = function
        # A call's result as NumPy reads it, for the answer's check (a GPU kernel's outputs are
        # device arrays: copied to the host for the check only, never inside a timed call).
        self.to_host = to_host or (lambda result: result)
        self.workers = max(1, int(workers))   # lists compiled at once (threads: see _compile_batch)
        # Trials run elsewhere (distributed.RayTrials): `remote.run(lists)` -> result dicts.
        self.remote = remote
        if remote is not None:
            self.workers = max(self.workers, remote.parallel)
        self.compile = compile
        self.runner = runner
        self.reference = None  # the search's schedule's result
        self.db = db
        self.key = key
        self.trials = trials
        self.seconds = seconds
        self.history = []      # (trial number, best seconds so far)
        self.measured = set()  # the decision lists tried, sorted

    def _record(self, source, schedule, seconds, runs, predicted, ok, error, machine=None, versions=None, load=None):
        if self.db is not None:
            self.db.add_record(self.key, source, schedule, seconds, runs, predicted, ok, error,
                               tuple(versions or wl.versions()), machine or wl.machine_fingerprint(),
                               os.getloadavg()[0] if load is None else load)

    def _remote_trials(self, batch):
        """Each (list, prediction) of `batch` run remotely: (seconds or None, kernel None, report
        None) per list. A result measured on a machine unlike this one is recorded under that
        machine and counts as a failure here."""
        here = wl.machine_fingerprint()
        out = []
        for (schedule, predicted), r in zip(batch, self.remote.run([b[0] for b in batch])):
            self.measured.add(tuple(sorted(schedule)))
            self._record("remote", schedule, r["seconds"], r["runs"], predicted, r["ok"], r["error"],
                         r["machine"], r["versions"], r["load"])
            same_machine = r["machine"] == here and tuple(r["versions"]) == tuple(wl.versions())
            out.append((r["seconds"] if r["ok"] and same_machine else None, None, None))
        return out

    def _trial(self, source, schedule, predicted, kernel=None, report=None, compiled=None):
        """Check and time one list, compiled by `compiled()` unless its kernel is given: (seconds or
        None when it failed, kernel, report), or None when this list was measured already."""
        key = tuple(sorted(schedule))
        if key in self.measured:
            return None
        try:
            if kernel is None:
                kernel, report = compiled()
            call = self.runner(kernel)
            ok = same_answer(self.to_host(call()), self.reference)
            seconds, runs = measure(call) if ok else (None, [])
            error = "" if ok else "the outputs differ from the search's schedule's"
        except Exception as e:  # noqa: BLE001 - a refused or failing list is a measurement too
            seconds, runs, ok, error = None, [], False, f"{type(e).__name__}: {e}"
        self.measured.add(key)
        self._record(source, schedule, seconds, runs, predicted, ok, error)
        return seconds, kernel, report

    def run(self, search_kernel, search_report):
        """(kernel, report, summary) of the fastest list."""
        start = time.perf_counter()
        searched = [tuple(d) for d in search_report["decisions"]]
        predicted = search_report.get("predicted_seconds") or None
        self.reference = self.to_host(self.runner(search_kernel)())
        default_seconds = self._trial("search", searched, predicted, search_kernel, search_report)[0]
        if default_seconds is None:
            raise NotTuned("the search's own schedule failed when timed")
        search = best = _Measured(default_seconds, searched, search_kernel, search_report, predicted)
        self.history.append((1, default_seconds))
        trials = 1
        _progress("start", self.function, trials, self.trials, default_seconds, default_seconds)
        pending = list(search_report["candidates"])
        while pending and trials < self.trials and time.perf_counter() - start <= self.seconds:
            # The next lists, each one region's candidate swapped into the best list so far,
            # compiled together (`workers` at once), then timed one after another.
            batch = []
            while pending and len(batch) < min(self.workers, self.trials - trials):
                candidate, candidate_predicted = pending.pop(0)
                schedule = _replace_region(best.schedule, [tuple(d) for d in candidate], searched)
                if schedule is None or tuple(sorted(schedule)) in self.measured or \
                        any(sorted(schedule) == sorted(b[0]) for b in batch):
                    continue
                # The model's regions add up: a swap changes its prediction by that region's change.
                swap_predicted = None if best.predicted is None else best.predicted + candidate_predicted - predicted
                batch.append((schedule, swap_predicted))
            if self.remote is not None:
                results = self._remote_trials(batch)
            else:
                results = [self._trial("candidate", schedule, swap_predicted, compiled=compiled)
                           for (schedule, swap_predicted), compiled in zip(batch, self._compile_batch([b[0] for b in batch]))]
            for (schedule, swap_predicted), result in zip(batch, results):
                if result is None:
                    continue
                trials += 1
                seconds, kernel, report = result
                if seconds is not None and seconds < best.seconds * MIN_GAIN:
                    best = _Measured(seconds, schedule, kernel, report, swap_predicted)
                self.history.append((trials, best.seconds))
                _progress("trial", self.function, trials, self.trials, best.seconds, default_seconds)
        if best is not search and best.kernel is None:   # measured remotely: compiled here now
            try:
                kernel, report = self.compile(list(best.schedule))
                best = best._replace(kernel=kernel, report=report)
            except Exception:  # noqa: BLE001 - it compiled there; here the search's list stays
                best = search
        if best is not search:
            best = self._confirm(best, search)
        summary = dict(function=self.function, key=self.key, trials=trials, default_seconds=default_seconds,
                       distributed=self.remote is not None,
                       best_seconds=best.seconds, tuned=best is not search, history=self.history,
                       tuning_seconds=time.perf_counter() - start)
        SESSIONS.append(summary)
        _progress("end", self.function, trials, self.trials, best.seconds, default_seconds)
        return best.kernel, best.report, summary

    def _compile_batch(self, schedules):
        """Per list, a no-argument call giving compile's result (or raising its error). With more
        than one worker and list, the lists are compiled at once on `workers` threads before any is
        timed; else each compiles when its trial starts. Threads, not processes: a JIT-compiled
        kernel lives in the process that compiled it, and Halide's compiler runs without the GIL."""
        if self.workers == 1 or len(schedules) < 2:
            return [functools.partial(self.compile, list(s)) for s in schedules]
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.workers) as pool:   # waits for all
            futures = [pool.submit(self.compile, list(s)) for s in schedules]
        return [f.result for f in futures]

    def _confirm(self, best, search):
        """The winner or the search's list, timed against each other interleaved three times:
        noise on one trial must not pick a schedule."""
        tuned, searched = self.runner(best.kernel), self.runner(search.kernel)
        ratios = []
        for _ in range(3):
            t_tuned, runs_tuned = measure(tuned)
            t_search, runs_search = measure(searched)
            ratios.append(t_tuned / t_search)
            self._record("confirm", best.schedule, t_tuned, runs_tuned, best.predicted, True, "")
            self._record("confirm", search.schedule, t_search, runs_search, search.predicted, True, "")
        return best if float(np.median(ratios)) < MIN_GAIN else search
