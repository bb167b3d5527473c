"""``hcompile db fit``: a learned correction to the cost model, fitted on the tuning records.

Each measured record has the cost model's prediction for its decision list and the measured
median. The correction is log-linear in the decision list's choices: measured ≈ predicted ·
exp(Σ w_c · n_c), n_c the number of decisions of choice c (parallel, vectorize, tile_rows, ...).
Within one workload only differences between lists matter (the ranking), so features and
targets are centred per workload, and w is fitted by ridge least squares.

Held-out check: each workload in turn is left out, w is fitted on the others, and the Spearman
rank correlation between predicted and measured times within the left-out workload is compared
with and without the correction. The weights are written next to the database
(``<db>.correction.json``) with the versions and machine they were fitted on. The search ranks
with them under `hc.config.cost_correction` (off by default; MachineModel::choice_weights).
"""
from __future__ import annotations

import json
import math

import numpy as np

RIDGE = 1.0


def _ranks(values):
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(len(values))
    return ranks


def spearman(a, b):
    if len(a) < 3:
        return None
    ra, rb = _ranks(np.asarray(a)), _ranks(np.asarray(b))
    if ra.std() == 0 or rb.std() == 0:
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def workload_samples(db, versions, machine):
    """Per workload: (choice counts per record, log predicted, log measured), for records of
    these versions and machine that were measured, correct and predicted."""
    out = {}
    for w in db.summary():
        rows = [r for r in db.records(w["key"])
                if r["ok"] and r["seconds"] and r["predicted"] and r["source"] != "confirm"
                and r["hcompile_version"] == versions[0] and r["halide_version"] == versions[1] and r["machine"] == machine]
        if len(rows) >= 3:
            out[w["key"]] = rows
    return out


def _features(rows, choices):
    return np.array([[sum(1 for d in r["decisions"] if d[1] == c) for c in choices] for r in rows], float)


def fit_weights(groups, choices):
    """Ridge weights by choice on groups of records (one group per workload), centred per group."""
    xs, ys = [], []
    for rows in groups:
        x = _features(rows, choices)
        y = np.array([math.log(r["seconds"]) - math.log(r["predicted"]) for r in rows])
        xs.append(x - x.mean(axis=0))
        ys.append(y - y.mean())
    x, y = np.vstack(xs), np.concatenate(ys)
    return np.linalg.solve(x.T @ x + RIDGE * np.eye(len(choices)), x.T @ y)


def fit(db, versions, machine):
    """(weights by choice, report dict). Raises ValueError when there are too few records."""
    samples = workload_samples(db, versions, machine)
    if len(samples) < 2:
        raise ValueError(f"{len(samples)} workload(s) with 3 or more measured records of this version and machine; "
                         "tune more pipelines first (hcompile tune)")
    choices = sorted({d[1] for rows in samples.values() for r in rows for d in r["decisions"]})
    before, after = [], []
    for key, rows in samples.items():
        w = fit_weights([r for k, r in samples.items() if k != key], choices)
        measured = [r["seconds"] for r in rows]
        predicted = [r["predicted"] for r in rows]
        corrected = [p * math.exp(float(f @ w)) for p, f in zip(predicted, _features(rows, choices))]
        b, a = spearman(predicted, measured), spearman(corrected, measured)
        if b is not None and a is not None:
            before.append(b)
            after.append(a)
    weights = fit_weights(list(samples.values()), choices)
    report = dict(workloads=len(samples), records=sum(len(r) for r in samples.values()),
                  held_out_workloads=len(before),
                  rank_correlation_before=float(np.mean(before)) if before else None,
                  rank_correlation_after=float(np.mean(after)) if after else None)
    return dict(zip(choices, map(float, weights))), report


def write(path, weights, report, versions, machine):
    with open(path, "w") as f:
        json.dump(dict(weights=weights, report=report, versions=list(versions), machine=machine), f, indent=1)
