"""What a tuning record is for: the workload key, the versions and the machine.

A workload is a captured graph (printed without source locations, so moving a function in its
file keeps its records) with its arguments' dtypes, shapes and memory layouts, compiled for one
target. Region numbers in a decision list follow from exactly these, for one hcompile version.
"""
from __future__ import annotations

import functools
import hashlib
import re

_LOCATION = re.compile(r"\s+#.*$", re.MULTILINE)


def structural_graph(graph_text):
    """The printed graph without its `# file:line` comments."""
    return _LOCATION.sub("", graph_text)


def arguments_of(args, layouts):
    """The arguments as the key sees them: dtype, shape and layout class per array; type and
    value's kind for the rest (a Python float read as a constant is in the graph already)."""
    out = []
    for a, layout in zip(args, list(layouts) + [None] * (len(args) - len(layouts))):
        if hasattr(a, "dtype") and hasattr(a, "shape"):
            out.append({"dtype": str(a.dtype), "shape": list(a.shape), "layout": layout})
        else:
            out.append({"type": type(a).__name__})
    return out


def workload_key(graph_text, arguments, target):
    text = structural_graph(graph_text) + "\n" + repr(arguments) + "\n" + target
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def fast_math_key(options):
    """What a GPU record's target says of a function's fast_math option: its kernels are other
    kernels (a CPU's are the same either way, and keep one record)."""
    return " fast_math" if options.get("fast_math") else ""


@functools.cache
def versions():
    """(hcompile, Halide): records of other versions are never reused. The versions the C++ was
    built with, as the HCompile plugin reads them (a Halide unpacked without its wheel's
    metadata, as on the GPU machine, has the same answer)."""
    from .. import _C

    return tuple(_C.tuning_versions())


@functools.cache
def machine_fingerprint():
    """CPU model, core count and the host target's features: records measured on another
    machine are kept apart from this one's. (One implementation, in C++, which the HCompile
    plugin reads records with too.)"""
    from .. import _C

    return _C.machine_fingerprint()


def graph_to_json(graph):
    """The graph as JSON nodes (kind, inputs, attrs, dtype, shape), for ``hcompile db verify``
    to rebuild and re-measure a record without the script that made it."""
    import json

    nodes = []
    for i in range(graph.num_nodes):
        nodes.append({"kind": graph.kind(i), "inputs": list(graph.inputs(i)), "attrs": graph.attrs(i),
                      "dtype": graph.dtype(i), "shape": list(graph.shape(i))})
    return json.dumps({"nodes": nodes, "outputs": list(graph.outputs)})


def graph_from_json(text):
    import json

    from .. import _C

    spec = json.loads(text)
    graph = _C.Graph()
    for node in spec["nodes"]:
        kind, attrs = node["kind"], node["attrs"]
        if kind == "input":
            graph.add_input(attrs["arg"], node["dtype"], node["shape"])
        elif kind == "constant":
            graph.add_constant(attrs["value"], node["dtype"])
        else:
            graph.add_op(kind, node["inputs"], attrs)
    graph.set_outputs(spec["outputs"])
    return graph
