"""Tuning pipelines written in Halide with the HCompile plugin: each of the search's likeliest
alternative lists (the plugin's `variant` parameter) is compiled, checked against the search's
result and timed on the caller's inputs; every measurement goes to the tuning database, where
the plugin finds the best when given `autoscheduler.db=PATH` (in a generator too).

    import halide as hl, hcompile as hc
    from hcompile.tuning import tune_halide

    def build():          # a fresh, unscheduled pipeline with its estimates, every call
        ...
        return hl.Pipeline(out)

    def run(pipeline):    # binds the inputs, realizes, returns the outputs as NumPy arrays
        ...

    report = tune_halide(build, run, trials=12)
    # later: pipeline.apply_autoscheduler(target, hl.AutoschedulerParams(
    #     "HCompile", {"db": hc.config.tuning_db}))
"""
from __future__ import annotations

import functools
import json
import os
import re
import time

from ..config import config
from ..plugin import plugin_path
from . import workload
from .autotune import measure, same_answer
from .database import TuningDatabase

_HEADER = re.compile(r"^// hcompile (workload|schedule|decisions): (.*)$", re.M)


@functools.cache
def _load_plugin():
    import halide as hl

    hl.load_plugin(plugin_path())


def autoschedule(pipeline, target, **params):
    """Applies the HCompile plugin to `pipeline`; returns the schedule source's header fields
    (workload, schedule, decisions) and the source itself."""
    import halide as hl

    _load_plugin()
    extra = {k: str(v) for k, v in params.items() if v is not None}
    result = pipeline.apply_autoscheduler(target, hl.AutoschedulerParams("HCompile", extra))
    fields = dict(_HEADER.findall(result.schedule_source))
    fields["decisions"] = [tuple(d) for d in json.loads(fields["decisions"])]
    fields["source"] = result.schedule_source
    return fields


def tune_halide(build, run, *, name="halide pipeline", db=None, trials=None, seconds=None, target=None,
                parallelism=None, progress=None):
    """Tunes the pipeline `build()` makes, timing `run(pipeline)`; returns a report dict (workload,
    default_seconds, best_seconds, best, trials, tuning_seconds). Budget: `trials` lists and
    `seconds` (hc.config.tuning_trials / tuning_seconds by default). `progress(trial, seconds,
    best_seconds)` is called after each measurement."""
    import halide as hl

    target = target or hl.get_jit_target_from_environment()
    trials = config.tuning_trials if trials is None else trials
    budget = config.tuning_seconds if seconds is None else seconds
    parallelism = parallelism or os.cpu_count() or 1
    versions, machine = workload.versions(), workload.machine_fingerprint()
    start = time.perf_counter()
    report = {"trials": 0}
    reference = None
    with TuningDatabase(db or config.tuning_db) as records:
        variant = 0
        while variant <= trials and (variant == 0 or time.perf_counter() - start < budget):
            pipeline = build()
            try:
                fields = autoschedule(pipeline, target, parallelism=parallelism, variant=variant)
            except Exception as e:
                if variant > 0 and "variant" in str(e):
                    break   # fewer alternatives than the budget
                raise
            if variant == 0:
                report["workload"] = fields["workload"]
                records.add_workload(fields["workload"], name, fields["source"], "{}", [], str(target))
            error, seconds_, runs = "", None, []
            try:
                pipeline.compile_jit(target)
                outputs = run(pipeline)
                if reference is None:
                    reference = outputs
                ok = same_answer(outputs, reference)
                if ok:
                    seconds_, runs = measure(lambda: run(pipeline))
                else:
                    error = "a different answer from the search's schedule"
            except Exception as e:   # a list Halide refuses, or a run-time failure
                if variant == 0:
                    raise
                ok, error = False, str(e).splitlines()[0][:200] if str(e) else type(e).__name__
            records.add_record(fields["workload"], "search" if variant == 0 else f"variant {variant}",
                               fields["decisions"], seconds_, runs, None, ok, error, versions, machine)
            report["trials"] = variant + 1
            if variant == 0:
                report["default_seconds"] = report["best_seconds"] = seconds_
                report["best"] = 0
            elif ok and seconds_ < report["best_seconds"]:
                report["best_seconds"], report["best"] = seconds_, variant
            if progress:
                progress(variant, seconds_, report["best_seconds"])
            variant += 1
    report["tuning_seconds"] = time.perf_counter() - start
    return report
