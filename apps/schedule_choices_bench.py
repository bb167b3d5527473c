"""What three of the search's choices are worth, measured: each pipeline's chosen list against the
same list with one kind of decision changed, compiled side by side in one process and timed in
turn (the machine drifts; ratios within a row hold).

    python -m apps.schedule_choices_bench [--repeat 9] [--write apps/RESULTS.md]

- Parallel grain: `parallel` and `parallel_update` as chosen (several iterations per task of
  Halide's pool) against one iteration per task.
- Stencil tiles: the chosen groups and tile size against the same groups sliding down 256-row
  tiles (a choice the search does not propose: this is why) and against fixed tile sizes.
- Inline or store: every optional region (a value the partitioner's cost rule inlined where copies
  multiply, or stored though inlined copies would stay small) as the search chose it, against
  the other choice: inlined instead of stored, or stored whole (vectors, parallel rows) instead
  of inlined.
"""
from __future__ import annotations

import argparse

import numpy as np

import hcompile as hc
from apps import pipelines as P
from apps import workloads as W
from apps.bench import heading, publish
from apps.cost_model_ranking import median_seconds

PARALLEL = ("parallel", "parallel_update")


def _grain_pipelines():
    r = np.random.default_rng(0)
    x = r.random((2048, 2048), np.float32)
    yield "row sums 2048x2048", lambda x: x.sum(axis=1), (x,)
    yield "row max 2048x2048", lambda x: x.max(axis=1), (x,)
    yield "x * 2 + 1, 2048x2048", lambda x: x * 2 + 1, (x,)
    for name in ("softmax_rows", "layernorm_rows", "tinyops"):
        yield name, W.WORKLOADS[name].fn, W.WORKLOADS[name].make_inputs("bench")


def _stencil_pipelines():
    apps = {w.name: w for w in P._apps()}
    for name in ("box_blur", "harris", "max_filter", "camera_pipe"):
        yield name, apps[name].fn, apps[name].make_inputs("bench")


def _shared_producer_pipelines():
    """Values read by several consumers, where recomputing and storing trade places."""
    r = np.random.default_rng(1)
    x = r.standard_normal((2048, 2048)).astype(np.float32)

    def exp_two_reductions(x):
        e = np.exp(x) * 2.0
        return e.sum(axis=0), e.max(axis=0)

    def tanh_row_and_column_sums(x):
        t = np.tanh(x) * 0.5
        return t.sum(axis=1), (t * t).sum(axis=0)

    def sqrt_row_range(x):
        s = np.sqrt(np.abs(x)) + 1.0
        return s.max(axis=1) - s.min(axis=1)

    def sin_cos_three_reductions(x):
        s = np.sin(x) * np.cos(x)
        return s.sum(axis=1), s.max(axis=1), s.min(axis=0)

    def poly_neighbours(x):
        p = (x * 0.5 + 1.0) * x
        return p[2:] + p[:-2] - 2.0 * p[1:-1] + p[1:-1] * p[1:-1]

    for fn in (exp_two_reductions, tanh_row_and_column_sums, sqrt_row_range, sin_cos_three_reductions, poly_neighbours):
        yield fn.__name__.replace("_", " "), fn, (x,)
    apps = {w.name: w for w in P._apps()}
    for name in ("unsharp_mask", "bilateral_grid", "camera_pipe", "local_laplacian", "pyramid_interp"):
        yield name, apps[name].fn, apps[name].make_inputs("bench")


def _optional_regions(report):
    """{region: 'inlined' | 'stored'}, what the partitioner's cost rule chose, for the optional
    regions of a compile report."""
    return {int(line.split()[1]): ("stored" if "stored by the cost rule" in line else "inlined")
            for line in report["regions"].splitlines() if "[optional" in line}


def _flipped(fn, args, chosen, region):
    """``chosen`` with ``region`` inlined if it is stored, or stored whole if it is inlined (its
    parallel loop over its last axis, found by trying: the report does not list a region's rank).
    None when no such list compiles (a region other regions are computed in the tiles of cannot
    be inlined)."""
    rest = [d for d in chosen if d[0] != region]
    if not any(d[0] == region and d[1] == "inline" for d in chosen):
        trials = [rest + [(region, "inline", -1, 0, 0)]]  # refused where it holds others' tiles
    else:
        stored = rest + [(region, "compute_root", -1, 0, 0), (region, "vectorize", 0, 16, 0)]
        trials = [stored + [(region, "parallel", last, 8, 0)] for last in (3, 2, 1)] + [stored]
    for trial in trials:
        try:
            hc.hcompile(fn, dynamic=False, fullgraph=True, schedule=trial)(*args)
            return trial
        except hc.CompileError:
            continue
    return None


def _report(fn, args):
    """The compile report of ``fn``'s first graph on ``args``, under the search."""
    compiled = hc.hcompile(fn, dynamic=False)
    compiled(*args)
    return compiled.compile_records[0]["report"]


def _chosen(fn, args, report=None):
    """The search's decision list for ``fn`` on ``args`` (from ``report`` when given)."""
    return [tuple(d) for d in (report or _report(fn, args))["decisions"]]


def _timed(fn, args, lists, repeat):
    """Median seconds of each decision list, the lists compiled first and then timed in turn,
    three rounds."""
    compiled = [hc.hcompile(fn, dynamic=False, schedule=s) for s in lists]
    for c in compiled:
        c(*args)
    rounds = [[median_seconds(c, args, repeat) for c in compiled] for _ in range(3)]
    return np.median(np.array(rounds), axis=0)


def _grain_table(repeat):
    rows = ["| pipeline | grains chosen | chosen ms | one iteration per task ms | speedup |", "|---|---|---|---|---|"]
    for name, fn, args in _grain_pipelines():
        chosen = _chosen(fn, args)
        grains = sorted({d[3] for d in chosen if d[1] in PARALLEL})
        single = [(r, c, ax, 0 if c in PARALLEL else v, v2) for r, c, ax, v, v2 in chosen]
        t_chosen, t_single = _timed(fn, args, [chosen, single], repeat)
        rows.append(f"| {name} | {', '.join(map(str, grains)) or '-'} | {t_chosen * 1e3:.3f} | {t_single * 1e3:.3f} | "
                    f"{t_single / t_chosen:.2f}x |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def _tile_table(repeat):
    rows = ["| app | chosen tiles | chosen ms | sliding, 256-row tiles ms | best of 8 / 32 / 128 rows ms | chosen / best |",
            "|---|---|---|---|---|---|"]
    for name, fn, args in _stencil_pipelines():
        chosen = _chosen(fn, args)
        described = ", ".join(f"{d[3]} rows" for d in chosen if d[1] == "tile_rows") or "none"

        def tiled(rows, slides):
            return [(r, c, ax, rows if c == "tile_rows" else v, slides if c == "tile_rows" else v2)
                    for r, c, ax, v, v2 in chosen]
        fixed = (8, 32, 128)
        times = _timed(fn, args, [chosen, tiled(256, 1)] + [tiled(n, 0) for n in fixed], repeat)
        best = int(np.argmin(times[2:]))
        rows.append(f"| {name} | {described} | {times[0] * 1e3:.3f} | {times[1] * 1e3:.3f} | "
                    f"{times[2 + best] * 1e3:.3f} ({fixed[best]} rows) | {times[0] / times[2 + best]:.2f} |")
        print(rows[-1], flush=True)
    return "\n".join(rows)


def _store_table(repeat):
    """The table, and how many of its choices were the faster or within 3% (a tie)."""
    rows = ["| pipeline | region (cost rule) | search chose | chosen ms | other choice ms | other / chosen |",
            "|---|---|---|---|---|---|"]
    right = 0
    for name, fn, args in _shared_producer_pipelines():
        report = _report(fn, args)
        chosen = _chosen(fn, args, report)
        for region, rule in _optional_regions(report).items():
            inlined = any(d[0] == region and d[1] == "inline" for d in chosen)
            other = _flipped(fn, args, chosen, region)
            if other is None:
                continue
            t_chosen, t_other = _timed(fn, args, [chosen, other], repeat)
            right += t_other >= t_chosen * 0.97
            rows.append(f"| {name} | {region} ({rule}) | {'inline' if inlined else 'store'} | {t_chosen * 1e3:.3f} | "
                        f"{t_other * 1e3:.3f} | {t_other / t_chosen:.2f} |")
            print(rows[-1], flush=True)
    return "\n".join(rows), right, len(rows) - 2


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    a = ap.parse_args(argv)
    grain, tiles = _grain_table(a.repeat), _tile_table(a.repeat)
    store, right, total = _store_table(a.repeat)
    section = (heading("Parallel grain, sliding windows, inline or store (apps/schedule_choices_bench.py)") +
               f"Command: `python -m apps.schedule_choices_bench --repeat {a.repeat}`. Each row compiles the search's "
               "list and the changed lists in one process and times them in turn (medians of three rounds).\n\n"
               "Parallel grain (`parallel` / `parallel_update` in tasks of several iterations):\n\n" +
               grain + "\n\nStencil tiles: the chosen size, sliding windows, fixed sizes (the same "
               "groups):\n\n" + tiles + "\n\nInline or store (each optional region as chosen, against the "
               f"other choice; the search's choice was the faster or within 3% in {right} of {total}):\n\n" +
               store + "\n")
    publish(section, a.write, "schedule-choices")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
