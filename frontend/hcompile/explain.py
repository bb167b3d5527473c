"""``hc.explain(fn, *args)``: what hcompile makes of one call, without guessing.

It compiles a fresh copy of ``fn`` for these arguments and reports the graphs captured, the graph
breaks (with file:line), the outside values each entry is guarded on and the compile steps' times.
It does not run ``fn``: the capture interprets the bytecode abstractly, so the function's side
effects (prints, writes, mutations) do not happen, and no kernel runs.
"""
from __future__ import annotations

from . import guards


class Explanation:
    def __init__(self, name, records):
        self.name = name
        self.graphs = [r["graph"] for r in records if r["graph"] is not None and r["break"] is None]
        self.break_reasons = [r["break"] for r in records if r["break"] is not None]
        self.graph_count = len(self.graphs)
        self.graph_break_count = len(self.break_reasons)
        self.reports = [r["report"] for r in records if r["report"] is not None]
        self.compile_seconds = sum(r["seconds"] for r in records)
        self.guards = [g for r in records for g in r.get("guards", ())]
        # Graphs captured but not compiled (past the compile-size budget, a Halide error): they run
        # as plain Python, which is not a graph break but costs the same.
        self.compile_failures = [r["compile_failure"] for r in records if r.get("compile_failure")]
        self.ran_function = False     # compiled only: fn's own code (and side effects) did not run

    def __str__(self):
        lines = [f"hcompile.explain({self.name})",
                 f"  graphs: {self.graph_count}   graph breaks: {self.graph_break_count}   "
                 f"compile time: {self.compile_seconds * 1e3:.1f} ms",
                 "  (compiled without running the function: its side effects did not happen)"]
        for i, b in enumerate(self.break_reasons):
            lines.append(f"  break {i}: {b.filename}:{b.lineno}: {b.reason}")
        for reason in self.compile_failures:
            lines.append(f"  captured but runs as Python (not compiled): {reason}")
        if self.guards:
            lines.append("  guarded outside values: " +
                         ", ".join(guards.describe_guard(g) for g in self.guards))
        for i, g in enumerate(self.graphs):
            lines.append(f"  graph {i}:")
            lines.extend("    " + line for line in g.rstrip().splitlines())
        for i, report in enumerate(self.reports):
            lines.append(f"  fused regions of graph {i}:")
            lines.extend("    " + line for line in report["regions"].rstrip().splitlines())
            lines.append(f"  schedule of graph {i} ({report['target']}):")
            lines.extend("    " + line for line in report["schedule"].rstrip().splitlines())
        return "\n".join(lines)

    __repr__ = __str__


def explain(fn, *args, **kwargs):
    """Compile ``fn`` afresh for these arguments and report what was captured and why not.

    ``fn`` itself is not called: its side effects do not happen (unlike ``torch._dynamo.explain``,
    which runs the function). Arguments Python would reject raise ``TypeError``."""
    from .api import CompiledFunction
    options = {}
    if isinstance(fn, CompiledFunction):
        options = dict(fn.options, fullgraph=False)
        fn = fn._fn
    compiled = CompiledFunction(fn, **options)
    compiled.compile_only(*args, **kwargs)
    return Explanation(getattr(fn, "__qualname__", repr(fn)), compiled.compile_records)
