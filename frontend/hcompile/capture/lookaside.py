"""What a call, or an attribute of an array, means: tables from Python/NumPy callables to graph
builders.

Lookup order for a call (``resolve_call``): array methods; NumPy functions we model; any NumPy
ufunc; builtins we model; pure functions run on constants (math, operator, NumPy scalar types,
methods of plain Python containers). User Python functions are not here: the interpreter inlines
them. Anything else is ``Unsupported`` naming the callee.
"""
from __future__ import annotations

import types

import numpy as np

from ..errors import Unsupported
from .errors import numpy_raises
from . import elementwise as ew
from . import numpy_rules as rules
from . import array_functions, joins, ranges, rearrange, shape_ops
from . import stores
from .derived_reductions import DERIVED_FUNCTIONS, ufunc_reduce
from .einsum import einsum
from .indexing import iterate_rows
from .matmul import dot, inner, matmul, matvec, vdot, vecdot, vecmat
from .reductions import REDUCTIONS
from .values import ArrayValue, BoundArrayMethod, Mutations, contains_abstract, scalar_if_0d
from .views import make_view

# -- NumPy functions -----------------------------------------------------------------------

NUMPY_FUNCTIONS = {
    np.sum: REDUCTIONS["sum"], np.prod: REDUCTIONS["prod"],
    np.max: REDUCTIONS["max"], np.amax: REDUCTIONS["max"],
    np.min: REDUCTIONS["min"], np.amin: REDUCTIONS["min"],
    np.argmax: REDUCTIONS["argmax"], np.argmin: REDUCTIONS["argmin"],
    np.mean: REDUCTIONS["mean"], np.var: REDUCTIONS["var"], np.std: REDUCTIONS["std"],
    np.any: REDUCTIONS["any"], np.all: REDUCTIONS["all"],
    np.copyto: stores.copyto, np.where: ew.where, np.clip: ew.clip, np.round: ew.round_, np.around: ew.round_,
    np.matmul: matmul, np.dot: dot, np.inner: inner, np.vdot: vdot, np.einsum: einsum,
    np.flip: rearrange.flip, np.fliplr: rearrange.fliplr, np.flipud: rearrange.flipud, np.rot90: rearrange.rot90,
    np.moveaxis: rearrange.moveaxis, np.atleast_1d: rearrange.at_least(1), np.atleast_2d: rearrange.at_least(2),
    np.atleast_3d: rearrange.at_least(3), np.column_stack: rearrange.column_stack, np.dstack: rearrange.dstack,
    np.tile: rearrange.tile, np.repeat: rearrange.repeat, np.meshgrid: rearrange.meshgrid,
    np.split: rearrange.split, np.array_split: rearrange.array_split,
    np.hsplit: rearrange.split_along("hsplit", lambda ndim: 1 if ndim > 1 else 0, 1),
    np.vsplit: rearrange.split_along("vsplit", lambda ndim: 0, 2),
    np.dsplit: rearrange.split_along("dsplit", lambda ndim: 2, 3),
    np.nan_to_num: array_functions.nan_to_num, np.select: array_functions.select, **DERIVED_FUNCTIONS,
    np.transpose: shape_ops.transpose, np.reshape: shape_ops.reshape,
    np.expand_dims: shape_ops.expand_dims, np.squeeze: shape_ops.squeeze,
    np.ravel: shape_ops.ravel, np.copy: shape_ops.copy, np.swapaxes: shape_ops.swapaxes,
    np.broadcast_to: shape_ops.broadcast_to,
    np.concatenate: joins.concatenate, np.stack: joins.stack, np.hstack: joins.hstack,
    np.vstack: joins.vstack, np.roll: joins.roll, np.outer: ew.numpy_outer,
    np.eye: shape_ops.eye, np.identity: shape_ops.identity, np.arange: ranges.arange,
    np.linspace: ranges.linspace, np.tri: ranges.tri, np.tril: ranges.tril, np.triu: ranges.triu,
    np.diff: array_functions.diff, np.diag: array_functions.diag, np.diagonal: array_functions.diagonal,
    np.trace: array_functions.trace, np.linalg.norm: array_functions.norm, np.isclose: array_functions.isclose,
    np.zeros: shape_ops.zeros, np.ones: shape_ops.ones, np.full: shape_ops.full,
    np.empty: shape_ops.zeros,
    np.zeros_like: shape_ops.zeros_like, np.ones_like: shape_ops.ones_like,
    np.full_like: shape_ops.full_like, np.empty_like: shape_ops.empty_like,
    np.asarray: shape_ops.asarray, np.asanyarray: shape_ops.asarray,
    np.ascontiguousarray: shape_ops.ascontiguousarray, np.array: shape_ops.array,
    np.shape: lambda b, a: b.sizes.wrap_shape(a.shape) if isinstance(a, ArrayValue) else np.shape(a),
    np.ndim: lambda b, a: a.ndim if isinstance(a, ArrayValue) else np.ndim(a),
    np.size: lambda b, a: b.sizes.wrap_count(a.size, a.shape) if isinstance(a, ArrayValue) else np.size(a),
}
# NumPy 2's gufuncs of products, where this NumPy has them (vecdot 2.0, matvec and vecmat 2.2).
NUMPY_FUNCTIONS.update({getattr(np, name): fn for name, fn in (("vecdot", vecdot), ("matvec", matvec),
                                                               ("vecmat", vecmat)) if hasattr(np, name)})

# NumPy implements these by calling the argument's method, so for a NumPy scalar they return a
# scalar like the method does (``values.scalar_if_0d``).
_CALLS_THE_METHOD = {np.transpose, np.reshape, np.squeeze, np.swapaxes}

# NumPy callables that are pure functions of constants (the answer is a constant).
_PURE_NUMPY = {np.dtype, np.finfo, np.iinfo, np.result_type, np.promote_types, np.can_cast,
               np.issubdtype, np.isscalar, np.broadcast_shapes}

# -- array methods and attributes -------------------------------------------------------------


def _astype(b, a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    if order != "K" or subok is not True:
        raise Unsupported("astype(order=/subok=) is not supported")
    return ew.astype(b, a, dtype, copy=copy, casting=casting)


def _data_dependent(name):
    def handler(b, a, *args, **kwargs):
        raise Unsupported(f"data-dependent .{name}() of an array")
    return handler


ARRAY_METHODS = {
    **{name: fn for name, fn in REDUCTIONS.items()},
    "astype": _astype, "diagonal": array_functions.diagonal, "trace": array_functions.trace,
    "reshape": shape_ops.method_reshape, "transpose": shape_ops.method_transpose,
    "squeeze": shape_ops.squeeze, "ravel": shape_ops.ravel, "flatten": shape_ops.flatten,
    "swapaxes": shape_ops.swapaxes, "copy": shape_ops.method_copy,
    "clip": lambda b, a, min=None, max=None, **kw: ew.clip(b, a, min, max, **kw),
    "round": ew.round_, "dot": lambda b, a, other, out=None: dot(b, a, other, out),
    "item": _data_dependent("item"), "tolist": _data_dependent("tolist"),
    "tobytes": _data_dependent("tobytes"),
    "__abs__": lambda b, a: ew.apply_ufunc(b, np.absolute, [a]),
    # a real array's conjugate is the array itself (NumPy hands back `self`)
    "conj": lambda b, a: a, "conjugate": lambda b, a: a,
    "repeat": lambda b, a, repeats, axis=None: rearrange.repeat(b, a, repeats, axis),
}

ARRAY_ATTRIBUTES = {
    "shape": lambda b, a: b.sizes.wrap_shape(a.shape),
    "ndim": lambda b, a: a.ndim,
    "dtype": lambda b, a: a.dtype,
    "size": lambda b, a: b.sizes.wrap_count(a.size, a.shape),
    "itemsize": lambda b, a: a.dtype.itemsize,
    "nbytes": lambda b, a: b.sizes.wrap_count(a.size, a.shape) * a.dtype.itemsize,
    "T": lambda b, a: shape_ops.transpose(b, a),
    "mT": lambda b, a: shape_ops.swapaxes(b, a, -1, -2),
    "real": lambda b, a: make_view(b, a, a, lambda m: m),
}


# A NumPy scalar's ``.T`` and ``.real`` (real dtypes) are the scalar itself.
_SCALAR_SELF_ATTRIBUTES = ("T", "real")


def array_attribute(b, a: ArrayValue, name: str):
    if a.is_scalar:
        if not hasattr(a.python_type, name):     # ndarray-only: .dot, .mT, .partition ...
            raise numpy_raises(AttributeError, f"'numpy.{a.python_type.__name__}' object has no "
                                               f"attribute '{name}'")
        if name in _SCALAR_SELF_ATTRIBUTES:
            return a
    if name in ARRAY_ATTRIBUTES:
        return ARRAY_ATTRIBUTES[name](b, a)
    if name in ARRAY_METHODS:
        return BoundArrayMethod(a, name)
    raise Unsupported(f"array attribute .{name} is not supported")


# -- builtins --------------------------------------------------------------------------------

def _len(b, obj):
    if isinstance(obj, ArrayValue):
        if obj.ndim == 0:
            raise numpy_raises(TypeError, "len() of a 0-d array")
        return b.sizes.wrap_shape(obj.shape)[0]
    return len(obj)


def _abs(b, x):
    if isinstance(x, ArrayValue):
        return ew.apply_ufunc(b, np.absolute, [x])
    return ew.run_concrete(abs, x)


def _conversion(fn):
    def handler(b, *args, **kwargs):
        if contains_abstract(args) or contains_abstract(kwargs):
            raise Unsupported(f"data-dependent conversion {fn.__name__}() of an array")
        return ew.run_concrete(fn, *args, **kwargs)
    return handler


def _unsupported_call(name, why=""):
    def handler(b, *args, **kwargs):
        raise Unsupported(f"call to {name}(){why}")
    return handler


def _isinstance(b, obj, classinfo):
    if isinstance(obj, ArrayValue):
        return issubclass(obj.python_type, classinfo)
    return isinstance(obj, classinfo)


def _type(b, obj, *rest):
    if rest:
        raise Unsupported("type() with three arguments")
    return obj.python_type if isinstance(obj, ArrayValue) else type(obj)


def _sum(b, iterable, start=0):
    if isinstance(iterable, ArrayValue):
        total = start
        for row in iterate_rows(b, iterable):
            total = ew.binary_operator(b, "+", total, row)
        return total
    total = start
    for item in iterable:
        total = ew.binary_operator(b, "+", total, item)
    return total


def _round(b, number, ndigits=None):
    if isinstance(number, ArrayValue):
        if number.is_scalar or ndigits is not None:
            raise Unsupported("round() of a NumPy scalar (data-dependent Python int)")
        return ew.round_(b, number)
    return ew.run_concrete(round, number, ndigits)


def _pow(b, base, exp, mod=None):
    if mod is not None:
        return _conversion(pow)(b, base, exp, mod)
    return ew.binary_operator(b, "**", base, exp)


def _divmod(b, x, y):
    return (ew.binary_operator(b, "//", x, y), ew.binary_operator(b, "%", x, y))


def _compare_elements(fn):
    """min/max/sorted/any/all of Python values compare or test elements: fine for constants,
    data-dependent for arrays."""
    def handler(b, *args, **kwargs):
        # One dict argument is iterated: its keys are the elements, its values are not looked at.
        elements = [list(args[0])] if len(args) == 1 and type(args[0]) is dict else args
        if contains_abstract(elements) or contains_abstract(kwargs):
            raise Unsupported(f"builtin {fn.__name__}() on arrays (data-dependent)")
        return ew.run_concrete(fn, *args, **kwargs)
    return handler


def _structural(fn):
    """Builtins that only move values around (tuple, zip, ...): abstract elements are fine, but
    iterating over an array itself means row-by-row unrolling."""
    def handler(b, *args, **kwargs):
        args = tuple(iterate_rows(b, a) if isinstance(a, ArrayValue) else a for a in args)
        if any(isinstance(a, BoundArrayMethod) for a in args) or contains_abstract(kwargs):
            raise Unsupported(f"{fn.__name__}() of an array method")
        return fn(*args, **kwargs)
    return handler


BUILTINS = {
    len: _len, abs: _abs, isinstance: _isinstance, type: _type, sum: _sum, round: _round,
    pow: _pow, divmod: _divmod,   # getattr: the interpreter's (it guards module attributes)
    int: _conversion(int), float: _conversion(float), bool: _conversion(bool),
    complex: _conversion(complex), str: _conversion(str), repr: _conversion(repr),
    format: _conversion(format), hash: _conversion(hash), issubclass: _conversion(issubclass),
    range: _conversion(range), slice: _conversion(slice), chr: _conversion(chr),
    ord: _conversion(ord),
    min: _compare_elements(min), max: _compare_elements(max),
    sorted: _compare_elements(sorted), any: _compare_elements(any),
    all: _compare_elements(all), set: _compare_elements(set),
    frozenset: _compare_elements(frozenset),
    tuple: _structural(tuple), list: _structural(list), zip: _structural(zip),
    enumerate: _structural(enumerate), reversed: _structural(reversed),
    dict: _structural(dict),
    print: _unsupported_call("print"), input: _unsupported_call("input"),
    open: _unsupported_call("open"), id: _unsupported_call("id", " (object identity)"),
    iter: _unsupported_call("iter"), next: _unsupported_call("next"),
    map: _unsupported_call("map"), filter: _unsupported_call("filter"),
}

# Methods of plain containers we created ourselves: they move values without looking at them.
_CONTAINER_MUTATORS = {
    (list, "append"), (list, "extend"), (list, "insert"), (list, "pop"), (list, "copy"),
    (list, "reverse"), (list, "clear"), (dict, "get"), (dict, "keys"), (dict, "values"),
    (dict, "items"), (dict, "update"), (dict, "setdefault"), (dict, "pop"), (dict, "copy"),
}
SAFE_CONSTANT_TYPES = (bool, int, float, complex, str, bytes, type(None), tuple, list, dict,
                       set, frozenset, slice, range, np.generic, np.dtype, np.finfo, np.iinfo,
                       type(Ellipsis))


def _is_pure_constant_function(fn) -> bool:
    if fn in _PURE_NUMPY:
        return True
    if isinstance(fn, type) and issubclass(fn, np.generic):
        return True          # np.float32(2.0)
    module = getattr(fn, "__module__", None)
    if isinstance(fn, types.BuiltinFunctionType) and module in ("math", "_operator", "operator"):
        return True
    self_obj = getattr(fn, "__self__", None)
    if isinstance(fn, types.BuiltinMethodType) and isinstance(self_obj, SAFE_CONSTANT_TYPES) \
            and not isinstance(self_obj, types.ModuleType):
        return True          # "{}".format(...), (1, 2).index(2), dtype.newbyteorder() ...
    return False


def describe(fn) -> str:
    if isinstance(fn, BoundArrayMethod):
        return f"ndarray.{fn.name}"
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    if module in ("builtins", ""):
        return name
    if isinstance(fn, np.ufunc):
        return f"numpy.{fn.__name__}"
    if module.startswith("numpy"):
        module = "numpy"   # numpy._core.fromnumeric.cumsum -> numpy.cumsum
        for sub in ("fft", "linalg", "random"):
            if f".{sub}" in getattr(fn, "__module__", ""):
                module = f"numpy.{sub}"
    return f"{module}.{name}"


def _scalar_type_call(b, cls, args, kwargs):
    """``np.float32(x)``: a constant, or for arrays a cast (0-d gives a NumPy scalar)."""
    if len(args) == 1 and not kwargs and isinstance(args[0], ArrayValue):
        x = args[0]
        dtype = rules.check_supported_dtype(np.dtype(cls))
        r = ew.astype(b, x, dtype)
        if x.ndim == 0 and not r.is_scalar:
            r = ArrayValue(r.node, r.dtype, r.shape, is_scalar=True)
        return r
    return None


def _call_ufunc(b, ufunc, args, kwargs):
    """A ufunc call; ``out=`` (keyword, 1-tuple or the positional argument after the inputs)
    writes the result into that array."""
    out = kwargs.pop("out", None)
    if len(args) == ufunc.nin + 1 and ufunc.nout == 1 and out is None:
        out = args.pop()
    if isinstance(out, tuple) and len(out) == 1:
        out = out[0]
    if out is None:
        return ew.apply_ufunc(b, ufunc, args, **kwargs)
    ew.apply_ufunc(b, ufunc, args, **kwargs) if kwargs else None    # rejects unsupported keywords
    return stores.ufunc_into(b, ufunc, args, out)


def resolve_call(b, fn, args, kwargs):
    """Result of ``fn(*args, **kwargs)`` for anything the interpreter does not inline."""
    if isinstance(fn, BoundArrayMethod):
        result = ARRAY_METHODS[fn.name](b, fn.array, *args, **kwargs)
        return scalar_if_0d(result) if fn.array.is_scalar else result
    handler = _lookup(NUMPY_FUNCTIONS, fn)
    if handler is not None:
        result = handler(b, *args, **kwargs)
        target = args[0] if args else kwargs.get("a")
        if fn in _CALLS_THE_METHOD and isinstance(target, ArrayValue) and target.is_scalar:
            return scalar_if_0d(result)
        return result
    if isinstance(fn, np.ufunc):
        return _call_ufunc(b, fn, list(args), kwargs)
    if isinstance(fn, types.BuiltinMethodType) and isinstance(getattr(fn, "__self__", None), np.ufunc) \
            and fn.__name__ == "outer":
        return ew.outer(b, fn.__self__, *args, **kwargs)
    if isinstance(fn, types.BuiltinMethodType) and isinstance(getattr(fn, "__self__", None), np.ufunc) \
            and fn.__name__ == "reduce":
        return ufunc_reduce(b, fn.__self__, *args, **kwargs)
    handler = _lookup(BUILTINS, fn)
    if handler is not None:
        return handler(b, *args, **kwargs)
    if isinstance(fn, type) and issubclass(fn, np.generic):
        r = _scalar_type_call(b, fn, args, kwargs)
        if r is not None:
            return r
    self_obj = getattr(fn, "__self__", None)
    if isinstance(fn, types.BuiltinMethodType) and isinstance(self_obj, (list, dict)) and \
            (type(self_obj), fn.__name__) in _CONTAINER_MUTATORS:
        Mutations.note()
        return fn(*args, **kwargs)
    if _is_pure_constant_function(fn):
        if contains_abstract(args) or contains_abstract(kwargs):
            raise Unsupported(f"call to {describe(fn)}() with an array argument "
                              "(data-dependent)")
        return ew.run_concrete(fn, *args, **kwargs)
    raise Unsupported(f"call to {describe(fn)}() is not supported")


def _lookup(table, fn):
    try:
        return table.get(fn)
    except TypeError:   # unhashable callable
        return None
