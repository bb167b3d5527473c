"""The captures of the frontend corpus, printed canonically, to compare Python versions.

``python tests/capture_versions.py OUT.json`` captures every function of
``tests/python/test_frontend_corpus.py`` (on seeded inputs) into the test graph double, without
the compiled extension, and writes per function the nodes (kind, dtype, shape, inputs, attrs),
where the graph breaks and why. Run it under Python 3.11 and 3.12 and compare the two files:
the bytecode differs between the versions (``capture/normalize.py`` maps it to one canonical
form), the captured graphs must not. Where ``hcompile._C`` is not built (a machine with another
Python), a stand-in module whose ``Graph`` is the double is installed first.
"""
from __future__ import annotations

import json
import os
import sys
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "python"), os.path.join(HERE, "..", "frontend")]

from test_capture_graph_double import FakeGraph, graph_nodes  # noqa: E402

try:
    from hcompile import _C  # noqa: F401
except ImportError:   # no extension for this Python: capture needs only a graph to fill
    stub = types.ModuleType("hcompile._C")
    stub.Graph = FakeGraph
    stub.__getattr__ = lambda name: (lambda *a, **k: None)
    sys.modules["hcompile._C"] = stub

from hcompile import structure  # noqa: E402
from hcompile.capture import capture  # noqa: E402
from hcompile.capture.interpreter import bind_arguments  # noqa: E402
from hcompile.errors import Unsupported  # noqa: E402
import test_frontend_corpus as corpus  # noqa: E402


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (np.generic, float)):
        return repr(value)
    return value


def capture_corpus():
    out = {}
    for name, body, params, makers, kw_makers, _, _ in corpus.CORPUS:
        rng = np.random.default_rng(0)
        f = corpus._function(name, body, params)
        args = [m(rng) for m in makers]
        kwargs = {k: m(rng) for k, m in kw_makers.items()}
        bound = {}
        try:
            spec, leaves = structure.flatten(bind_arguments(f, args, kwargs), f)
            cap = capture(f, tuple(leaves), graph=FakeGraph(), outline_loops=True, structure=spec)
            bound["nodes"] = [_plain([n[0], n[1], n[2], n[3], n[4]]) for n in graph_nodes(cap.graph)]
            bound["outputs"] = list(cap.graph.outputs)
            point = cap.break_point
            bound["break"] = None if point is None else [point.index, point.instruction.opname, point.reason.reason]
        except Unsupported as e:
            bound["unsupported"] = e.reason
        out[name] = bound
    return out


if __name__ == "__main__":
    result = {"python": list(sys.version_info[:3]), "captures": capture_corpus()}
    with open(sys.argv[1], "w") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
    n = len(result["captures"])
    print(f"captured {n} corpus functions under Python {sys.version.split()[0]} into {sys.argv[1]}")
