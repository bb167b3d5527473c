"""``hc.explain(fn, *args)``: what hcompile makes of one call, without guessing.

It compiles a fresh copy of ``fn`` for these arguments and reports the graphs captured, the graph
breaks (with file:line), the outside values each entry is guarded on and the compile steps' times.
Capture interprets the bytecode abstractly, so it does not run ``fn``; only where a graph break
resumes does ``explain`` call the compiled function once, to capture the code after the break
(and it says so).
"""
from __future__ import annotations

from . import guards


class Explanation:
    def __init__(self, name, records, ran_function=False):
        self.name = name
        # Every entry compiled, the function's and its resume functions', in the order compiled
        # (graphs are numbered in the order they run).
        self.records = records
        self.graphs = [r["graph"] for r in records if r["graph"] is not None]
        self.break_reasons = [r["break"] for r in records if r["break"] is not None]
        self.graph_count = len(self.graphs)
        self.graph_break_count = len(self.break_reasons)
        self.reports = [r["report"] for r in records if r["report"] is not None]
        self.compile_seconds = sum(r["seconds"] for r in records)
        self.guards = [g for r in records for g in r.get("guards", ())]
        # Graphs captured but not compiled (past the compile-size budget, a Halide error): they run
        # as plain Python, which is not a graph break but costs the same.
        self.compile_failures = [r["compile_failure"] for r in records if r.get("compile_failure")]
        self.ran_function = ran_function

    def __str__(self):
        lines = [f"hcompile.explain({self.name})",
                 f"  graphs: {self.graph_count}   graph breaks: {self.graph_break_count}   "
                 f"compile time: {self.compile_seconds * 1e3:.1f} ms"]
        lines.append("  (ran the function once to capture the code after its graph breaks: its side "
                     "effects happened)" if self.ran_function else
                     "  (compiled without running the function: its side effects did not happen)")
        for i, b in enumerate(self.break_reasons):
            lines.append(f"  break {i}: {b.filename}:{b.lineno}: {b.reason}")
            if b.source_line:
                lines.append(f"      {b.source_line}")
            if b.resumes:
                lines.append("      the code before it is compiled; the instruction runs as Python; "
                             "the code after it resumes compiled")
            else:
                lines.append("      the whole function runs as Python" +
                             (f" (no resume: {b.refused})" if b.refused else ""))
        for reason in self.compile_failures:
            lines.append(f"  captured but runs as Python (not compiled): {reason}")
        if self.guards:
            lines.append("  guarded outside values: " +
                         ", ".join(guards.describe_guard(g) for g in self.guards))
        graph_index = 0
        for r in self.records:
            if r["graph"] is None:
                continue
            i, graph_index = graph_index, graph_index + 1
            lines.append(f"  graph {i}{' (ends at a graph break)' if r['break'] is not None else ''}:")
            if r.get("dynamic"):
                lines.append(f"    shapes: {r['dynamic']}")
            lines.extend("    " + line for line in r["graph"].rstrip().splitlines())
            report = r["report"]
            if report is None:
                continue
            if report.get("optimized_graph", "").strip() != r["graph"].strip():
                lines.append(f"  graph {i} after optimization (the fused regions number these nodes):")
                lines.extend("    " + line for line in report["optimized_graph"].rstrip().splitlines())
            lines.append(f"  fused regions of graph {i}:")
            lines.extend("    " + line for line in report["regions"].rstrip().splitlines())
            if report.get("analysis"):
                lines.append(f"  the autoscheduler's view of graph {i} (its analysis, the machine, the cost model):")
                lines.extend("    " + line for line in report["analysis"].rstrip().splitlines())
            lines.append(f"  schedule of graph {i} ({report['target']}), one decision per line:")
            lines.extend("    " + line for line in report["schedule"].rstrip().splitlines())
            lines.append(f"  schedule of graph {i} as Halide C++ directives:")
            lines.extend("    " + line for line in report["schedule_source"].rstrip().splitlines())
        return "\n".join(lines)

    __repr__ = __str__


def _records_in_compile_order(compiled):
    """The compile records of ``compiled`` and of the resume functions its breaks lead to."""
    records, seen = [], set()

    def walk(function):
        if id(function) in seen:
            return
        seen.add(id(function))
        for record in function.compile_records:
            records.append(record)
            for resume in record.get("resumes", ()):
                walk(resume)

    walk(compiled)
    return sorted(records, key=lambda r: r.get("started", 0.0))


def explain(fn, *args, run=None, **kwargs):
    """Compile ``fn`` afresh for these arguments and report what was captured and why not.

    Capture alone does not call ``fn``: its side effects do not happen. The code after a graph
    break that resumes is captured only when it runs, so where there is one, ``explain`` calls
    the compiled function once (and says so); ``run=False`` never calls it, ``run=True`` always
    does. Arguments Python would reject raise ``TypeError``."""
    from .api import CompiledFunction
    options = {}
    if isinstance(fn, CompiledFunction):
        options = dict(fn.options, fullgraph=False)
        fn = fn._fn
    compiled = CompiledFunction(fn, **options)
    compiled.compile_only(*args, **kwargs)
    resumes = any(r["break"] is not None and r["break"].resumes for r in compiled.compile_records)
    ran = bool(run) or (run is None and resumes)
    if ran:
        compiled(*args, **kwargs)
    return Explanation(getattr(fn, "__qualname__", repr(fn)), _records_in_compile_order(compiled), ran)
