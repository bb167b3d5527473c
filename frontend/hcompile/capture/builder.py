"""A thin layer over the C++ ``Graph``: source locations, constants and no-op elision.

The C++ graph owns the typing rules (dtype and shape of every op); this wrapper never computes a
result shape itself, it reads it back with ``graph.shape(node)``. What it adds is Python-side
convenience: the current source location is attached to every node, casts/broadcasts/reshapes
that would change nothing are skipped, and a rejected op becomes ``Unsupported`` (so a frontend
bug degrades to running plain Python instead of crashing the user's program).
"""
from __future__ import annotations

import numpy as np

from ..errors import Unsupported
from .numpy_rules import check_supported_dtype, python_constant_for
from .size_reads import NO_WATCH
from .values import ArrayValue


class GraphBuilder:
    def __init__(self, graph):
        self.graph = graph
        self.loc = ""   # "file:line" of the instruction being interpreted
        self.sizes = NO_WATCH   # sizes the code reads, watched (size_reads.py)

    # -- leaves -------------------------------------------------------------------------------
    def input(self, arg_index: int, dtype, shape) -> int:
        return self.graph.add_input(arg_index, np.dtype(dtype).name, [int(s) for s in shape],
                                    self.loc)

    def constant(self, value, dtype) -> ArrayValue:
        """A 0-d constant of ``dtype``; ``value`` is a Python or NumPy scalar."""
        dtype = np.dtype(dtype)
        check_supported_dtype(dtype)
        node = self.graph.add_constant(python_constant_for(value, dtype), dtype.name, self.loc)
        return self.value(node)

    # -- ops ----------------------------------------------------------------------------------
    def op(self, kind: str, inputs, attrs=None, *, is_scalar=False) -> ArrayValue:
        ids = [v.node if isinstance(v, ArrayValue) else int(v) for v in inputs]
        try:
            node = self.graph.add_op(kind, ids, dict(attrs or {}), self.loc)
        except ValueError as e:   # the core's typing rules disagree with what we emitted
            raise Unsupported(f"internal: graph builder rejected {kind}: {e}") from e
        return self.value(node, is_scalar=is_scalar)

    def value(self, node: int, *, is_scalar=False) -> ArrayValue:
        return ArrayValue(node, self.graph.dtype(node), self.graph.shape(node),
                          is_scalar=is_scalar)

    # -- structural helpers that skip no-ops ---------------------------------------------------
    def cast(self, v: ArrayValue, dtype) -> ArrayValue:
        dtype = np.dtype(dtype)
        if v.dtype == dtype:
            return v
        check_supported_dtype(dtype)
        return self.op("cast", [v], {"dtype": dtype.name})

    def broadcast(self, v: ArrayValue, shape) -> ArrayValue:
        shape = tuple(int(s) for s in shape)
        if v.shape == shape:
            return v
        return self.op("broadcast", [v], {"shape": list(shape)})

    def reshape(self, v: ArrayValue, shape) -> ArrayValue:
        shape = tuple(int(s) for s in shape)
        if v.shape == shape:
            return v
        return self.op("reshape", [v], {"shape": list(shape)})

    def full(self, value, dtype, shape) -> ArrayValue:
        return self.broadcast(self.constant(value, dtype), shape)

    def set_outputs(self, nodes):
        self.graph.set_outputs(list(nodes))
