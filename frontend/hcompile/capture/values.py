"""The abstract values that live on the interpreter's stack besides plain Python objects.

Everything the function computes from Python constants stays a real Python object (ints,
tuples, dtypes, modules ...); only NumPy array data is abstract. An ``ArrayValue`` stands for
one NumPy array or NumPy scalar whose contents are a graph node.
"""
from __future__ import annotations

import numpy as np


class _Null:
    """CPython's NULL stack entry (pushed before a callable that has no ``self``)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        return "NULL"


NULL = _Null()


class Mutations:
    """How many in-place changes the capture has made to arrays and containers (all captures
    of the process; only differences matter). A graph break may replay its instruction in real
    Python only if that instruction changed nothing yet: see ``breaks.py``."""

    count = 0

    @classmethod
    def note(cls):
        cls.count += 1


class ArrayValue:
    """An array (or NumPy scalar) whose data is produced by a graph node.

    ``is_scalar``: stands for a NumPy scalar (``np.float32(…)``) rather than an ndarray; ufuncs
    and reductions return scalars where their result is 0-d. ``arg_index``: set when this *is*
    the caller's argument object (returning it hands back the same object).

    NumPy aliasing: ``view_of`` is the array a view was made from (``root()`` the one owning the
    memory) and ``view_map`` how its elements sit in the root (``views.ViewMap``; None for an
    *opaque* view the map cannot describe). A write replaces the root's node and bumps its
    ``version``; a view whose node was built from an older version is rebuilt from the root when
    next read, so every alias sees the write. ``has_views`` / ``opaque_views``: views (opaque
    ones) were made of this array.
    """

    __slots__ = ("_node", "_make_node", "dtype", "shape", "is_scalar", "arg_index",
                 "view_of", "has_views", "view_map", "opaque_views", "version", "_built_version",
                 "_rebuild", "weak")

    def __init__(self, node, dtype, shape, *, is_scalar=False, make_node=None, arg_index=None,
                 view_of=None, view_map=None, rebuild=None, weak=False):
        # weak: a Python float's value as an operand (``SymbolicFloat.operand``): it takes part in
        # NumPy's type resolution as the Python scalar it is (NEP 50), not as a float64.
        self.weak = weak
        self._node = node
        self._make_node = make_node
        self.dtype = np.dtype(dtype)
        self.shape = tuple(int(s) for s in shape)
        self.is_scalar = is_scalar
        self.arg_index = arg_index
        self.view_of = view_of
        self.has_views = False
        self.view_map = view_map
        self.opaque_views = False
        self.version = 0
        self._rebuild = rebuild       # root ArrayValue -> this view's value (an ArrayValue)
        self._built_version = 0
        if view_of is not None:
            view_of.has_views = True
            root = view_of.root()
            self._built_version = root.version
            if view_map is None:
                root.opaque_views = True

    @property
    def node(self) -> int:
        if self.view_of is not None:
            root = self.root()
            if self._built_version != root.version:
                # The root was written after this view was made: read the new data.
                self._node = self._rebuild(root).node
                self._built_version = root.version
        # Arguments become graph inputs only when their data is actually used.
        if self._node is None:
            self._node = self._make_node()
        return self._node

    def set_node(self, node):
        self._node = node

    def write(self, node):
        """This root array now holds ``node`` (a write); its views re-read it."""
        assert self.view_of is None
        self._node = node
        self.version += 1
        Mutations.note()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def python_type(self):
        """The type Python code would see (for isinstance/type checks)."""
        return self.dtype.type if self.is_scalar else np.ndarray

    def root(self):
        v = self
        while v.view_of is not None:
            v = v.view_of
        return v

    def __repr__(self):
        kind = "scalar" if self.is_scalar else "array"
        return f"<{kind} {self.dtype} {list(self.shape)} node={self._node}>"

    # Guard against accidental use as a concrete value inside the interpreter.
    def __bool__(self):
        raise TypeError("ArrayValue has no concrete truth value")


def scalar_if_0d(v):
    """NumPy's ``PyArray_Return``: a 0-d array result becomes a NumPy scalar. NumPy applies it to
    every method called on a NumPy scalar (``s.copy()``, ``s.reshape(())``, ``s.squeeze()`` are
    scalars) and to the functions that call the method (``np.squeeze(s)``, ``np.transpose(s)``)."""
    if isinstance(v, ArrayValue) and v.ndim == 0 and not v.is_scalar:
        return ArrayValue(v.node, v.dtype, (), is_scalar=True)
    return v


class PythonObject:
    """A mutable object the function reads from outside (a global list or dict, a global array,
    an object of a class we do not model). The graph never looks inside it: any use of it is a
    graph break, where the real object is used in real Python. Only method lookups on builtin
    containers (``LOG.append``) are followed, so that the break falls on the call itself."""

    __slots__ = ("obj", "arg_index")

    def __init__(self, obj, arg_index=None):
        self.obj = obj
        self.arg_index = arg_index      # set for an argument (guarded by type only): see breaks.py

    def __repr__(self):
        return f"<python object {type(self.obj).__name__}>"

    def __bool__(self):
        raise TypeError("PythonObject has no truth value in the capture")


class SymbolicFloat(PythonObject):
    """A Python float whose value is known only when the function runs: a float argument kept
    symbolic (``dynamic``: its value changed between calls), or ``+ - *`` of one with Python
    numbers. Its value is a float64 graph node (``value``). It enters array operations as NumPy's
    weak Python scalar (``operand``); any other use is a graph break, as for every
    ``PythonObject``, where Python gets the float itself (an output of the graph, or the
    argument)."""

    __slots__ = ("value",)

    def __init__(self, value, arg_index=None):
        super().__init__(0.0, arg_index)     # obj: only its type is shown in break reasons
        self.value = value                   # an ArrayValue: float64, 0-d

    def operand(self):
        value = self.value
        return ArrayValue(None, np.float64, (), is_scalar=True, make_node=lambda: value.node,
                          weak=True)

    def __repr__(self):
        return "<symbolic float>"


class MaskedSelection(PythonObject):
    """``x[mask]`` (``masks.py``): ``values`` (an ArrayValue of the mask's shape) at the elements
    where ``mask`` is True, a 1-D array whose length only the data knows."""

    __slots__ = ("values", "mask")

    def __init__(self, values, mask):
        super().__init__(None)
        self.values = values
        self.mask = mask

    def __repr__(self):
        return f"<selection of {self.values!r} by {self.mask!r}>"


def opaque_use(what, value) -> str:
    """The graph-break reason for using ``value``, a ``PythonObject``."""
    if isinstance(value, MaskedSelection):
        return (f"{what} a boolean-mask selection (its length only the data knows: only "
                "elementwise operations with scalars and stores through the same mask are compiled)")
    if isinstance(value, SymbolicFloat):
        return (f"{what} a Python float kept symbolic (its value changes between calls): only "
                "arithmetic and array operations with it are compiled; this use runs as Python")
    return (f"{what} a {type(value.obj).__name__} the graph cannot hold (a mutable value read "
            "from outside cannot be guarded: this use runs as Python)")


class BoundArrayMethod:
    """``x.sum`` before it is called: the array method name plus its ``self``."""

    __slots__ = ("array", "name")

    def __init__(self, array: ArrayValue, name: str):
        self.array = array
        self.name = name

    def __repr__(self):
        return f"<method {self.name} of {self.array!r}>"


def contains_abstract(obj, _depth=0) -> bool:
    """Whether a (possibly nested) concrete container holds anything abstract."""
    if isinstance(obj, (ArrayValue, BoundArrayMethod, PythonObject)) or obj is NULL:
        return True
    if _depth > 20:
        return True
    if isinstance(obj, (tuple, list, set, frozenset)):
        return any(contains_abstract(o, _depth + 1) for o in obj)
    if isinstance(obj, dict):
        return any(contains_abstract(k, _depth + 1) or contains_abstract(v, _depth + 1)
                   for k, v in obj.items())
    if isinstance(obj, slice):
        return any(contains_abstract(o, _depth + 1) for o in (obj.start, obj.stop, obj.step))
    return False
