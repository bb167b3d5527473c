"""Guard specs: what the C++ dispatcher checks on every call before reusing a compiled entry.

One spec per argument (exact type; for arrays also dtype, shape and memory layout; for Python
scalars the value the graph specialised on), plus one per global or closure value the capture
read. The tuple formats are the ones ``_C.Dispatcher.add_entry`` takes.
"""
from __future__ import annotations

import numpy as np

from . import _C

_LAYOUT_NAMES = {0: "C-contiguous", 1: "inner-dense", 2: "strided",
                 3: "copied (misaligned, odd or 32-bit-overflowing strides)", 4: "byte-swapped (copied)"}


def arg_guard(arg):
    kind = type(arg)
    if kind is np.ndarray:
        return ("array", kind, arg.dtype.num, tuple(arg.shape), _C.classify_layout(arg))
    if isinstance(arg, np.generic):
        return ("npscalar", kind)
    if kind is bool:
        return ("bool", kind, arg)
    if kind is int:
        return ("int", kind, arg)
    if kind is float:
        return ("float", kind, arg)
    if kind is str:
        return ("str", kind, arg)
    if arg is None:
        return ("none", kind, None)
    return ("type", kind)


def value_guards(fn, capture):
    guards = [(fn.__globals__, name, value) for name, value in capture.global_reads.items()]
    for index, value in capture.cell_reads.items():
        guards.append((fn.__closure__[index], None, value))
    return guards


def layouts(args):
    """Per argument: the layout kernels get specialised on (0 for non-arrays). Arrays of the
    copied class reach the kernel as the dispatcher's C-contiguous copy."""
    return [_C.kernel_layout(_C.classify_layout(a)) if type(a) is np.ndarray else 0 for a in args]


def describe(spec):
    kind = spec[0]
    if kind == "array":
        return f"ndarray shape={spec[3]} typenum={spec[2]} layout={_LAYOUT_NAMES[spec[4]]}"
    if kind in ("int", "float", "str", "bool"):
        return f"{spec[1].__name__} == {spec[2]!r}"
    return f"type {spec[1].__name__}"


def diff(old, new):
    """Why a new guard set differs from an old one, for the recompile log."""
    reasons = []
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            reasons.append(f"arg {i}: {describe(a)} -> {describe(b)}")
    if len(old) != len(new):
        reasons.append(f"{len(old)} -> {len(new)} arguments")
    return "; ".join(reasons) or "a global or closure value changed"
