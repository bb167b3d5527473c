"""Everything a capture reads from outside its arguments, and the guard that keeps it valid.

The graph bakes in what the function saw: which helper ran, which ufunc, which global scalar,
whether two arguments were one object. Each such read records a ``guards.Guard`` (Dynamo's
guard builder in miniature) so that a later call whose world differs misses the entry and
recompiles instead of returning a stale answer:

* a global: its entry in the globals dict of the frame that read it (any module's), by value for
  scalars and by identity for everything else; a name resolved from builtins: the global must
  stay absent and the builtins entry the same object;
* a closure cell's contents (any cell that existed before the capture);
* an attribute of a user module: that module's dict entry (library modules, NumPy and the
  standard library, are taken as fixed: ``np`` itself is guarded where it is read);
* a user function that is inlined: its ``__code__``, and ``__defaults__``/``__kwdefaults__``
  (the function object can be changed in place, as IPython's autoreload does); what its body
  reads is guarded in turn by the same rules;
* a ``functools.partial``: its ``func``, ``args``, ``keywords`` and the keyword values;
* ``x is y`` between two arguments: whether they are one object (``identities``).

Values that could change without a guard noticing (lists, dicts, arrays, arbitrary objects) are
refused: the function runs as Python.
"""
from __future__ import annotations

import sys
import types

import numpy as np

from ..errors import Unsupported
from ..guards import Guard, check_for
from .values import ArrayValue

_MISSING = object()
# Immutable values that may be baked into a graph (compared by value or identity).
_IMMUTABLE_VALUES = (bool, int, float, complex, str, bytes, type(None), np.generic, np.dtype,
                     type(Ellipsis), range, slice)
_CODE_LIKE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
              types.MethodType, np.ufunc)


def is_library_module_name(name: str) -> bool:
    top = (name or "").split(".")[0]
    return top == "numpy" or top in sys.stdlib_module_names or top == "builtins"


def is_guardable_constant(value, _depth=0) -> bool:
    """Whether a value read from outside can be specialised on: immutable scalars, dtypes,
    code-like objects (guarded by identity), and tuples/frozensets of those."""
    if isinstance(value, np.ndarray) or _depth > 20:
        return False
    if isinstance(value, types.BuiltinMethodType):
        # `len`, `math.sqrt` (bound to their module) or `"{}".format`: fine; `LOG.append` or
        # `rng.random` would change state the graph cannot replay.
        owner = value.__self__
        return owner is None or isinstance(owner, types.ModuleType) or \
            is_guardable_constant(owner, _depth + 1)
    if isinstance(value, _IMMUTABLE_VALUES) or isinstance(value, _CODE_LIKE):
        return True
    if type(value) in (tuple, frozenset):
        return all(is_guardable_constant(v, _depth + 1) for v in value)
    # Other callables (functools.partial, builtin methods of constants ...) are checked again
    # when called; here they only need a fixed identity.
    return callable(value) and not isinstance(value, (list, dict, set))


def check_guardable(what, value):
    if isinstance(value, np.ndarray):
        raise Unsupported(f"{what} is a NumPy array (constant arrays are not supported)")
    if not is_guardable_constant(value):
        raise Unsupported(f"{what} of type {type(value).__name__} cannot be guarded "
                          "(a mutable value)")


def _module_label(namespace):
    return namespace.get("__name__", "?") if isinstance(namespace, dict) else "?"


class GuardCollector:
    """The guards of one capture, deduplicated by where they read from."""

    def __init__(self, root_fn, args):
        self.args = args
        self.own_cells = set()        # ids of cells made during this capture: nothing to guard
        self.own_functions = set()    # ids of functions made during this capture
        self._keep = []               # keeps own objects alive so their ids stay unique
        self._guards = {}             # (access, id(container), key) -> Guard
        self.identities = {}          # (arg a, arg b) -> whether they were one object
        # The root's defaults become arguments (bound by api.py); its code is what we capture.
        self._add(f"{root_fn.__qualname__}.__code__", "attr", "identical", root_fn, "__code__",
                  root_fn.__code__)

    @property
    def guards(self):
        return list(self._guards.values())

    def _add(self, source, access, check, container, key, expected):
        slot = (access, id(container), key)
        if slot not in self._guards:
            self._guards[slot] = Guard(source, access, check, container, key, expected)

    def own(self, obj, kind):
        (self.own_cells if kind == "cell" else self.own_functions).add(id(obj))
        self._keep.append(obj)
        return obj

    # -- names ----------------------------------------------------------------------------
    def read_global(self, namespace, name, value):
        check_guardable(f"global {name!r}", value)
        self._add(f"{_module_label(namespace)}.{name}", "item", check_for(value), namespace, name,
                  value)

    def read_global_object(self, namespace, name, value):
        """A global the graph keeps opaque (``values.PythonObject``): only which object it is
        matters, since every use of it runs in Python at a graph break."""
        self._add(f"{_module_label(namespace)}.{name}", "item", "identical", namespace, name, value)

    def read_builtin(self, namespace, builtins_dict, name, value):
        """A name missing from the globals: a later global of that name would shadow it."""
        self._add(f"{_module_label(namespace)}.{name}", "item", "absent", namespace, name, None)
        self._add(f"builtins.{name}", "item", check_for(value), builtins_dict, name, value)

    def read_cell(self, cell, name, value):
        if id(cell) in self.own_cells:
            return
        check_guardable(f"closure variable {name!r}", value)
        self._add(f"<cell {name}>", "cell", check_for(value), cell, None, value)

    def read_module_attribute(self, module, name, value):
        if is_library_module_name(module.__name__):
            return                    # NumPy and the standard library are taken as fixed
        namespace = vars(module)
        if namespace.get(name, _MISSING) is not value:
            raise Unsupported(f"module attribute {module.__name__}.{name} is computed by the "
                              "module (cannot be guarded)")
        self.read_global(namespace, name, value)

    def read_module(self, name, module):
        """``import name`` inside the function: sys.modules must still hold that module."""
        if not is_library_module_name(name):
            self._add(f"sys.modules[{name!r}]", "item", "identical", sys.modules, name, module)

    # -- callables --------------------------------------------------------------------------
    def inline_function(self, fn):
        """A user function about to be interpreted: its code and defaults are part of the graph."""
        if id(fn) in self.own_functions:
            return
        label = fn.__qualname__
        self._add(f"{label}.__code__", "attr", "identical", fn, "__code__", fn.__code__)
        for attr, values in (("__defaults__", fn.__defaults__ or ()),
                             ("__kwdefaults__", (fn.__kwdefaults__ or {}).values())):
            if getattr(fn, attr) is None:
                continue              # every parameter was passed: defaults added later are unused
            for v in values:
                check_guardable(f"a default value of {label}()", v)
            self._add(f"{label}.{attr}", "attr", "identical", fn, attr, getattr(fn, attr))

    def call_partial(self, p):
        label = f"<partial of {getattr(p.func, '__qualname__', type(p.func).__name__)}>"
        for attr in ("func", "args", "keywords"):
            self._add(f"{label}.{attr}", "attr", "identical", p, attr, getattr(p, attr))
        for i, v in enumerate(p.args):
            check_guardable(f"{label}.args[{i}]", v)
        for k, v in p.keywords.items():
            check_guardable(f"{label}.keywords[{k!r}]", v)
            self._add(f"{label}.keywords[{k!r}]", "item", check_for(v), p.keywords, k, v)

    # -- identity -------------------------------------------------------------------------
    def same_object(self, left, right):
        """``left is right``; between two argument objects the answer depends on the call."""
        if isinstance(left, ArrayValue) and isinstance(right, ArrayValue) and left is not right \
                and left.arg_index is not None and right.arg_index is not None:
            a, b = sorted((left.arg_index, right.arg_index))
            same = self.args[a] is self.args[b]
            self.identities[(a, b)] = same
            return same
        return left is right

