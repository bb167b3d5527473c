"""Dynamic shapes on the GPU: one CUDA entry (cuda.py) for every size of some array axes.

Which axes, and when an entry is generic, is decided as on the CPU (dynamic_shapes.py): under
``dynamic=None`` an axis becomes dynamic when a call differs from an earlier one only in that
axis's size; under ``dynamic=True`` every axis of size 2 or more is dynamic from the first call;
under ``dynamic=False`` none is. A generic entry is compiled from a capture at placeholder
extents and serves every size from the least its slices allow (sizes 0 and 1 stay specialised);
its output shapes are read from the call's arrays (``Kernel.output_shapes``: -1 - k for symbol
k, plus an offset). What cannot be generic keeps the exact shapes, as before.

This module holds the GPU side's pieces: the argument specs compared between calls, the generic
entries' guards, and the output shapes of a call.
"""
from __future__ import annotations

import struct

from . import dynamic_shapes, guards


def specs_of(args, devices):
    """Per argument, what an entry is specialised on: ("array", type, dtype, shape, device) of a
    CUDA array (the layout dynamic_shapes.dynamic_axes compares), the CPU guard of anything else,
    a Python float's by its bits (as the C++ dispatcher compares it): by ``==``, a call with -0.0
    took the entry compiled for 0.0, and NaN never found its own."""
    return [("array", type(a), str(a.dtype), tuple(a.shape), d) if d is not None else
            ("float", float, struct.unpack("<q", struct.pack("<d", a))[0]) if type(a) is float else guards.arg_guard(a)
            for a, d in zip(args, devices)]


class GenericEntry:
    """An entry compiled for any size of some axes: ``specs`` as specs_of makes them, but the size
    of a dynamic axis -m (any size from m); ``relations``: ("same_extent", a, b, True, a_axis,
    b_axis), axes that shared one size when compiled and must stay equal, and ("extent_below", a,
    a, True, a_axis, limit), an axis the entry serves below a size (dynamic_shapes.schedule_bounds)."""

    def __init__(self, head, specs, relations, entry):
        self.head = head                 # (library, device, arguments that are one object)
        self.specs = specs
        self.relations = relations
        self.entry = entry

    def accepts(self, head, specs, args):
        if head != self.head or len(specs) != len(self.specs):
            return False
        for spec, want in zip(specs, self.specs):
            if spec[0] != "array" or want[0] != "array":
                if spec != want:
                    return False
                continue
            if spec[:3] != want[:3] or spec[4] != want[4] or len(spec[3]) != len(want[3]):
                return False
            if any(n != m if m >= 0 else n < -m for n, m in zip(spec[3], want[3])):
                return False
        return all(dynamic_shapes.relation_holds(r, args) for r in self.relations)


def output_shapes(kernel, args):
    """The shapes of a call's outputs: a kernel's static extents, and its symbolic ones read from
    the argument axes whose sizes they are (plus their offsets)."""
    sources = kernel.symbol_sources
    shapes = []
    for shape, offsets in zip(kernel.output_shapes, kernel.output_offsets):
        shapes.append(tuple(n if n >= 0 else int(args[sources[-1 - n][0]].shape[sources[-1 - n][1]]) + offset
                            for n, offset in zip(shape, offsets)))
    return shapes


def is_symbolic(kernel):
    return bool(kernel.symbol_sources)
