"""How well the GPU cost model ranks GPU schedules: for each workload of apps/gpu_bench.py (its GPU
sizes) and of apps/workloads.py at their small sizes, the rule's own list and the alternatives one
region away from it (report["variants"], the model's predictions) are compiled and timed on the
device, and the predicted seconds are compared with the measured ones.

    python -m apps.gpu_cost_model_ranking [--repeat 20] [--write apps/RESULTS.md]

Per workload: the Spearman rank correlation between predicted and measured times, the measured
time of the default choice (the rule's list, or the model's pick where it predicts a list 10%
faster: gpu_cost_model.h) against the best list measured, the model's own favourite against the
best, and the predicted against measured seconds of the rule's list (the model's scale error).
Needs a CUDA GPU with PyTorch (tests/gpu/run_on_gpu_machine.sh runs it on the lent GPU machine).
"""
from __future__ import annotations

import argparse

import numpy as np

import hcompile as hc
from apps import gpu_bench as G
from apps import workloads as W
from apps.bench import heading, publish
from apps.cost_model_ranking import _spearman


def _cases(rng):
    for name in G.SIZES:
        yield name, (G.sum_all if name == "sum_all" else getattr(W, name)), G.bench_inputs(name, rng)
    for name in ("tinyops", "softmax_rows", "layernorm_rows", "blur3x3"):
        yield name + " (small)", getattr(W, name), list(W.WORKLOADS[name].make_inputs("small"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--variants", type=int, default=24)
    ap.add_argument("--workloads", help="comma-separated names (as the table's first column) to run; default all")
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("[gpu_cost_model_ranking] no CUDA GPU: nothing to measure")
        return 0
    rows = ["| workload | lists timed | rank correlation | default / best measured | model's favourite / best | "
            "rule predicted / measured |", "|---|---|---|---|---|---|"]
    correlations, device_line = [], ""
    for name, fn, host_args in _cases(np.random.default_rng(0)):
        if a.workloads and name not in a.workloads.split(","):
            continue
        args = [torch.from_numpy(x).cuda() for x in host_args]
        default = hc.hcompile(fn, fullgraph=True)
        want = default(*args)
        records = [r for r in default.compile_records if r.get("report")]
        report = records[-1]["report"]
        device_line = next((line for line in report["analysis"].splitlines() if line.startswith("device:")), device_line)
        rule = [tuple(d) for d in report["decisions"]]
        lists = [(rule, report["predicted_seconds"])] + [([tuple(d) for d in s], p)
                                                          for s, p in report["variants"][: a.variants]]
        measured = []
        for schedule, _ in lists:
            f = hc.hcompile(fn, fullgraph=True, schedule=schedule)
            try:
                got = f(*args)
                ok = torch.allclose(got, want, rtol=1e-3, atol=1e-4 * max(1.0, want.abs().max().item()))
                measured.append(G.cuda_ms(torch, f, args, a.repeat) / 1e3 if ok else float("inf"))
            except Exception as e:   # noqa: BLE001 (a list that fails counts as unusable)
                print(f"[gpu_cost_model_ranking] {name}: a list failed: {type(e).__name__}: {e}")
                measured.append(float("inf"))
        default_measured = G.cuda_ms(torch, default, args, a.repeat) / 1e3
        for (schedule, p), m in zip(lists, measured):
            change = [d for d in schedule if d not in rule] or ["the rule's list"]
            print(f"[gpu_cost_model_ranking] {name}: predicted {p * 1e3:.4f} ms, measured {m * 1e3:.4f} ms: {change}")
        predicted = [p for _, p in lists]
        finite = [i for i, m in enumerate(measured) if np.isfinite(m)]
        rho = _spearman([predicted[i] for i in finite], [measured[i] for i in finite])
        if not np.isnan(rho):
            correlations.append(rho)
        best = min(min(measured), default_measured)
        favourite = measured[int(np.argmin(predicted))]
        rows.append(f"| {name} | {len(lists)} | {rho:.2f} | {default_measured / best:.2f} | {favourite / best:.2f} | "
                    f"{lists[0][1] * 1e3:.3f} / {measured[0] * 1e3:.3f} ms |")
        print(rows[-1], flush=True)
    section = (heading("GPU cost model ranking (apps/gpu_cost_model_ranking.py)") +
               f"Command: `python -m apps.gpu_cost_model_ranking --repeat {a.repeat}`. {device_line}. "
               "Each workload's rule list and its alternatives one region away, compiled and timed with CUDA events. "
               f"Mean rank correlation: {np.mean(correlations) if correlations else float('nan'):.2f}.\n\n" +
               "\n".join(rows) + "\n")
    publish(section, a.write, "gpu-cost-model-ranking")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
