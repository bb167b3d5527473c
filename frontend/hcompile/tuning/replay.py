"""A recorded workload compiled again away from the function it came from: its graph (from the
database's JSON), a decision list, and argument values. `hcompile db verify` re-measures records
with it; Ray tasks compile and time trials with it on other machines (distributed.py)."""
from __future__ import annotations

from .. import _C, guards


def compile_call(graph, target, values, schedule):
    """(a no-argument call running `graph` compiled with `schedule` on `values`, the compile
    report); `schedule` None: the search's. `values`: arrays only."""
    kernel, report = _C.compile_graph(graph, target, guards.layouts(values), False, [], [], [], [], "hcompile", schedule)
    dispatcher = _C.Dispatcher(lambda *a: None)
    dispatcher.add_entry([guards.arg_guard(v) for v in values], [], kernel, [False] * len(graph.outputs), None)

    def call():
        result = dispatcher(*values)
        if result is _C.MISS:
            raise RuntimeError("the replayed entry's guards refused the arguments")
        return result
    return call, report
