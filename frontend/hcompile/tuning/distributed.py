"""max-autotune's trials fanned out over a Ray cluster (`hcompile tune --ray ADDRESS`,
`hc.config.tuning_ray`): each trial is a Ray task that compiles the workload's graph with one
decision list on whichever node runs it, checks its answer against the search's list there, and
times it there (replay.py), on the caller's own arguments shipped once through Ray's object
store. A task asks for as many CPUs as this machine has, so a node times one trial at a time.

Every result is recorded with the fingerprint of the machine that measured it: results from a
machine unlike this one are kept apart (they never pick this machine's schedule, and the
database never reuses them here). The winner is compiled and confirmed here.
"""
from __future__ import annotations

import os

from . import workload
from .autotune import measure, same_answer
from .replay import compile_call

_SEARCH_ANSWERS = {}   # in each Ray worker process: workload key -> the search's answer there


def run_trial(key, graph_json, target, values, schedule):
    """One trial, where a Ray task runs it: a dict of seconds, runs, ok, error, machine, load."""
    out = dict(seconds=None, runs=[], ok=False, error="", machine=workload.machine_fingerprint(),
               versions=list(workload.versions()), load=os.getloadavg()[0])
    try:
        graph = workload.graph_from_json(graph_json)
        if key not in _SEARCH_ANSWERS:
            _SEARCH_ANSWERS[key] = compile_call(graph, target, values, None)[0]()
        call, _ = compile_call(graph, target, values, [tuple(d) for d in schedule])
        out["ok"] = same_answer(call(), _SEARCH_ANSWERS[key])
        if out["ok"]:
            out["seconds"], out["runs"] = measure(call)
        else:
            out["error"] = "the outputs differ from the search's schedule's"
    except Exception as e:  # noqa: BLE001 - a refused or failing list is a measurement too
        out["error"] = f"{type(e).__name__}: {e}"
    return out


class RayTrials:
    """Runs batches of decision lists for one workload as Ray tasks. `address`: "local" starts a
    Ray instance on this machine, anything else is ray.init's address ("auto", "ray://host:port");
    a process where Ray is initialized already uses that."""

    def __init__(self, address, key, graph_json, target, values):
        try:
            import ray
        except ImportError as e:
            raise RuntimeError("hcompile tune --ray needs Ray (pip install 'hcompile[ray]' or pip install ray)") from e
        if not ray.is_initialized():
            ray.init(address=None if address == "local" else address, include_dashboard=False,
                     log_to_driver=False, ignore_reinit_error=True)
        self._ray = ray
        cpus = os.cpu_count() or 1
        self._task = ray.remote(run_trial).options(num_cpus=min(cpus, int(ray.cluster_resources().get("CPU", 1))))
        self._args = (key, graph_json, target, ray.put(list(values)))
        self.parallel = max(1, int(ray.cluster_resources().get("CPU", 1)) // cpus)   # nodes' worth of trials

    def run(self, schedules):
        return self._ray.get([self._task.remote(*self._args, [list(d) for d in s]) for s in schedules])


def remote_trials(address, key, graph, target, args):
    """A RayTrials for this workload, or None where the trials cannot leave this process (an
    argument that is not a C-contiguous NumPy array: a copy shipped elsewhere would be another
    layout, hence another kernel)."""
    import numpy as np

    if not all(type(a) is np.ndarray and a.flags.c_contiguous for a in args):
        return None
    return RayTrials(address, key, workload.graph_to_json(graph), target, args)
