"""How well the GPU cost model ranks GPU schedules: for each workload of apps/gpu_bench.py (its GPU
sizes) and of apps/workloads.py at their small sizes, the rule's own list and the alternatives one
region away from it (report["variants"], the model's predictions) are compiled and timed on the
device, and the predicted seconds are compared with the measured ones.

    python -m apps.gpu_cost_model_ranking [--repeat 20] [--write apps/RESULTS.md]

Per workload: how many distinct predictions the model made, the Spearman rank correlation
between predicted and measured times (ties at their mean rank; NaN where the model predicts all
lists equal), the measured time of the default list (the rule's, or the model's pick where it
predicts a list 10% faster: gpu_cost_model.h) against the best list measured, the model's own
favourite (the default's list where tied) against the best, and the predicted against measured
seconds of the default list (the model's scale error). Each list's time is its best of several
rounds over all the lists in turn.
Needs a CUDA GPU with PyTorch (tests/gpu/run_on_gpu_machine.sh runs it on the lent GPU machine).
"""
from __future__ import annotations

import argparse

import numpy as np

import hcompile as hc
from apps import gpu_bench as G
from apps import workloads as W
from apps.bench import heading, publish


def _average_ranks(values):
    """Ranks from 0, equal values sharing their mean rank."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2
        i = j + 1
    return ranks


def _spearman_with_ties(a, b):
    """Spearman's rank correlation with tied values at their mean rank; NaN where either side is
    all ties (a model that predicts the lists equal ranks nothing)."""
    ra, rb = _average_ranks(list(a)), _average_ranks(list(b))
    if len(a) < 3 or ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def _cases(rng):
    for name in G.SIZES:
        yield name, (G.sum_all if name == "sum_all" else getattr(W, name)), G.bench_inputs(name, rng)
    for name in ("tinyops", "softmax_rows", "layernorm_rows", "blur3x3"):
        yield name + " (small)", getattr(W, name), list(W.WORKLOADS[name].make_inputs("small"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--variants", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3, help="passes over all lists; each list's best pass is kept")
    ap.add_argument("--workloads", help="comma-separated names (as the table's first column) to run; default all")
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("[gpu_cost_model_ranking] no CUDA GPU: nothing to measure")
        return 0
    rows = ["| workload | lists timed | distinct predictions | rank correlation | default / best measured | "
            "model's favourite / best | default predicted / measured |", "|---|---|---|---|---|---|---|"]
    correlations, device_line = [], ""
    for name, fn, host_args in _cases(np.random.default_rng(0)):
        if a.workloads and name not in a.workloads.split(","):
            continue
        args = [torch.from_numpy(x).cuda() for x in host_args]
        default = hc.hcompile(fn, fullgraph=True)
        want = default(*args)
        report = [r for r in default.compile_records if r.get("report")][-1]["report"]
        device_line = next((line for line in report["analysis"].splitlines() if line.startswith("device:")), device_line)
        chosen = [tuple(d) for d in report["decisions"]]
        # The default's own list first (the rule's, or the model's pick where it replaced it).
        lists = [(chosen, report["predicted_seconds"], default)]
        for schedule, predicted in report["variants"][: a.variants]:
            f = hc.hcompile(fn, fullgraph=True, schedule=[tuple(d) for d in schedule])
            try:
                got = f(*args)
                ok = torch.allclose(got, want, rtol=1e-3, atol=1e-4 * max(1.0, want.abs().max().item()))
            except Exception as e:   # noqa: BLE001 (a list that fails counts as unusable)
                print(f"[gpu_cost_model_ranking] {name}: a list failed: {type(e).__name__}: {e}")
                ok = False
            if ok:
                lists.append(([tuple(d) for d in schedule], predicted, f))
        # Rounds over all lists in turn, each list's best round kept: drift between lists (the
        # host's load, clocks) does not rank them.
        measured = [float("inf")] * len(lists)
        for _ in range(a.rounds):
            for i, (_, _, f) in enumerate(lists):
                measured[i] = min(measured[i], G.cuda_ms(torch, f, args, a.repeat) / 1e3)
        for (schedule, p, _), m in zip(lists, measured):
            change = [d for d in schedule if d not in chosen] or ["the default's list"]
            print(f"[gpu_cost_model_ranking] {name}: predicted {p * 1e3:.4f} ms, measured {m * 1e3:.4f} ms: {change}")
        predicted = [p for _, p, _ in lists]
        rho = _spearman_with_ties(predicted, measured)
        if not np.isnan(rho):
            correlations.append(rho)
        best = min(measured)
        favourite = measured[int(np.argmin(predicted))]   # ties: the default's list (first)
        rows.append(f"| {name} | {len(lists)} | {len(set(round(p, 9) for p in predicted))} | {rho:.2f} | "
                    f"{measured[0] / best:.2f} | {favourite / best:.2f} | "
                    f"{predicted[0] * 1e3:.3f} / {measured[0] * 1e3:.3f} ms |")
        print(rows[-1], flush=True)
    section = (heading("GPU cost model ranking (apps/gpu_cost_model_ranking.py)") +
               f"Command: `python -m apps.gpu_cost_model_ranking --repeat {a.repeat} --rounds {a.rounds}`. {device_line}. "
               "Each workload's default list and its alternatives one region away, compiled and timed with CUDA events "
               "(each list's best of the rounds over all lists in turn); rank correlation with ties at their mean rank. "
               f"Mean rank correlation: {np.mean(correlations) if correlations else float('nan'):.2f}.\n\n" +
               "\n".join(rows) + "\n")
    publish(section, a.write, "gpu-cost-model-ranking")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
