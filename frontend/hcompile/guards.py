"""Guard specs: what the C++ dispatcher checks on every call before reusing a compiled entry.

Per argument (``arg_guard``): the exact type; for arrays also dtype, shape and memory layout; for
Python scalars the value the graph specialised on. Per outside value the capture read
(``Guard``, built by the capture's ``Tracer``): globals, builtins, closure cells, module
attributes, a helper's ``__code__``/``__defaults__``, a ``functools.partial``'s fields. Per pair
of arguments the code compared with ``is`` (``identities``): whether they are one object.
The tuple formats are the ones ``_C.Dispatcher.add_entry`` takes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _C
from .dynamic_shapes import describe_size

_LAYOUT_NAMES = {0: "C-contiguous", 1: "inner-dense", 2: "strided",
                 3: "copied (misaligned, odd or 32-bit-overflowing strides)", 4: "byte-swapped (copied)"}
_ABSENT = object()


@dataclass(frozen=True, eq=False)
class Guard:
    """One value read from outside the arguments: where it lives and how it is checked.

    ``access``: "item" (``container[key]``, a dict such as a module's globals), "cell" (a closure
    cell's contents) or "attr" (``getattr(container, key)``). ``check``: "equal" (same type and
    value, floats by bits: specialised scalars), "identical" (the same object: one pointer
    compare, for functions, classes, modules, code objects, dtypes) or "absent" (the name must
    still be missing: a global that resolved to a builtin). ``source`` names it for logs."""
    source: str
    access: str
    check: str
    container: object
    key: object = None
    expected: object = None

    def spec(self):
        return (self.access, self.check, self.container, self.key, self.expected)

    def current(self):
        """The value now (``_ABSENT`` when missing); for logs, the dispatcher checks in C++."""
        if self.access == "item":
            return self.container.get(self.key, _ABSENT)
        if self.access == "cell":
            try:
                return self.container.cell_contents
            except ValueError:
                return _ABSENT
        return getattr(self.container, self.key, _ABSENT)

    def holds(self):
        now = self.current()
        if self.check == "absent":
            return now is _ABSENT
        if self.check == "identical" or now is _ABSENT:
            return now is self.expected
        return type(now) is type(self.expected) and (
            np.float64(now).tobytes() == np.float64(self.expected).tobytes()
            if type(now) is float else now == self.expected)


def check_for(value):
    """How an outside value is guarded: scalars by value, everything else by identity."""
    return "equal" if type(value) in (bool, int, float, str, type(None)) else "identical"


# A float argument read at run time (a SymbolicFloat in the capture): any float matches.
DYNAMIC_FLOAT = ("dynamic_float", float)


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
    if is_constant_by_value(arg):
        return ("equal", kind, arg)
    if is_constant_by_identity(arg):
        return ("identity", kind, arg)
    return ("type", kind)


# Constant arguments besides Python scalars (a shape tuple, a dtype, a ufunc or helper passed in;
# the locals a resume function receives): the capture specialises on them, the guard keeps them.
# NumPy's own functions (np.sum, np.where ...) are _ArrayFunctionDispatcher objects in NumPy 2.
_CODE_LIKE = (type, type(np), type(lambda: 0), type(len), np.ufunc, type(np.sum))


def is_constant_by_value(arg, _depth=0) -> bool:
    """Immutable and compared exactly by ``==``: dtypes, and tuples of ints, bools, strings, None
    and such tuples (floats are left out: ``==`` does not tell -0.0 from 0.0)."""
    if isinstance(arg, np.dtype):
        return True
    if type(arg) is tuple and _depth < 8:
        return all(type(v) in (int, bool, str, type(None)) or is_constant_by_value(v, _depth + 1)
                   for v in arg)
    return False


def is_constant_by_identity(arg) -> bool:
    """Functions, builtins, modules, classes and ufuncs: specialised on as the object they are."""
    if isinstance(arg, type(len)) and arg.__self__ is not None and not isinstance(arg.__self__, type(np)):
        return False          # a bound builtin method (`lst.append`) carries mutable state
    return isinstance(arg, _CODE_LIKE)


def layouts(args):
    """Per argument: the layout kernels get specialised on (0 for non-arrays). Arrays of the
    copied class reach the kernel as the dispatcher's C-contiguous copy."""
    return [_C.kernel_layout(_C.classify_layout(a)) if type(a) is np.ndarray else 0 for a in args]


def describe(spec):
    kind = spec[0]
    if kind == "array":
        shape = "(" + ", ".join(describe_size(s) for s in spec[3]) + ("," if len(spec[3]) == 1 else "") + ")"
        return f"ndarray shape={shape} typenum={spec[2]} layout={_LAYOUT_NAMES[spec[4]]}"
    if kind in ("int", "float", "str", "bool", "equal"):
        return f"{spec[1].__name__} == {spec[2]!r}"
    if kind == "dynamic_float":
        return "any float (read at run time)"
    if kind == "identity":
        return f"is {getattr(spec[2], '__qualname__', spec[2])!r}"
    return f"type {spec[1].__name__}"


def describe_guard(guard):
    if guard.check == "absent":
        return f"{guard.source} absent"
    shown = guard.expected if guard.check == "equal" else \
        f"<{type(guard.expected).__name__} {getattr(guard.expected, '__qualname__', '')}>".replace(" >", ">")
    return f"{guard.source} {'==' if guard.check == 'equal' else 'is'} {shown}"


def diff(old, new, old_values=()):
    """Why a new guard set differs from an old one, for the recompile log."""
    reasons = []
    for i, (a, b) in enumerate(zip(old, new)):
        if a != b:
            reasons.append(f"arg {i}: {describe(a)} -> {describe(b)}")
    if len(old) != len(new):
        reasons.append(f"{len(old)} -> {len(new)} arguments")
    reasons += [f"{g.source} changed" for g in old_values if not g.holds()]
    return "; ".join(reasons) or "argument identity or a global, closure or attribute value changed"
