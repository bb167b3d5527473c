"""Abstract interpretation of canonical bytecode (see ``normalize.py``) into a graph.

One ``Frame`` per Python function being interpreted (the compiled function, plus one per inlined
helper call). Its operand stack holds real Python objects, except that array data is an
``ArrayValue`` (a graph node). Each canonical opname has one handler in ``HANDLERS``; a missing
handler, or a handler that meets something it cannot model, raises ``Unsupported`` carrying the
file and line of the instruction.

Graph breaks: the top-level frame keeps a ``Checkpoint`` of its state before each instruction,
so that when an instruction cannot be captured, ``breaks.py`` can hand the state before it to a
resume function (each canonical instruction keeps its CPython offset for that).
"""
from __future__ import annotations

import functools
import inspect
import operator
import sys
import types

import numpy as np

from ..errors import Unsupported
from .errors import locate, numpy_raises
from . import elementwise as ew
from . import breaks, loops, masks, stores, symbolic_floats
from .indexing import ArrayRows, getitem, iterate_rows
from .lookaside import SAFE_CONSTANT_TYPES, array_attribute, describe, resolve_call
from .normalize import normalize
from .reads import GuardCollector, is_guardable_constant, is_library_module_name
from .values import (NULL, ArrayValue, BoundArrayMethod, MaskedSelection, Mutations, PythonObject,
                     SymbolicFloat, contains_abstract, opaque_use)

MAX_INSTRUCTIONS = 200_000     # bound on unrolled loops: beyond this, run plain Python
MAX_INLINE_DEPTH = 32
_GENERATOR_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR |
                    inspect.CO_ITERABLE_COROUTINE)

HANDLERS = {}


def handles(*opnames):
    def register(fn):
        for name in opnames:
            HANDLERS[name] = fn
        return fn
    return register


@functools.lru_cache(maxsize=256)
def _normalized(code):
    return normalize(code)


class Tracer:
    """State shared by every frame of one capture: the graph and what must be guarded."""

    def __init__(self, builder, root_fn, args=()):
        self.b = builder
        self.reads = GuardCollector(root_fn, args)
        self.instructions_left = MAX_INSTRUCTIONS
        self.outline_loops = False

    def new_cell(self, *contents):
        return self.reads.own(types.CellType(*contents), "cell")

    def owns_cell(self, cell):
        return id(cell) in self.reads.own_cells


_OPAQUE_CONTAINERS = (list, dict, set)


def get_attribute(tracer, obj, name):
    """``obj.name`` under the capture's rules."""
    if isinstance(obj, MaskedSelection):
        return masks.method(obj, name)
    if isinstance(obj, PythonObject):
        # Only for an object guarded by identity (a global): an argument's object differs per call.
        if obj.arg_index is None and isinstance(obj.obj, _OPAQUE_CONTAINERS) and hasattr(type(obj.obj), name):
            return PythonObject(getattr(obj.obj, name))     # a method lookup, nothing runs
        raise Unsupported(opaque_use(f"attribute .{name} of", obj))
    if isinstance(obj, ArrayValue):
        return array_attribute(tracer.b, obj, name)
    if isinstance(obj, np.ufunc) and name in ("outer", "reduce"):
        return getattr(obj, name)   # a bound method: lookaside.resolve_call gives its meaning
    if isinstance(obj, types.ModuleType):
        try:
            value = getattr(obj, name)
        except AttributeError as e:
            raise Unsupported(f"module {obj.__name__!r} has no attribute {name!r}") from e
        if isinstance(value, np.ndarray):
            raise Unsupported(f"{obj.__name__}.{name} is a NumPy array (constant arrays are "
                              "not supported)")
        tracer.reads.read_module_attribute(obj, name, value)
        return value
    library_type = isinstance(obj, type) and is_library_module_name(obj.__module__)
    if (isinstance(obj, SAFE_CONSTANT_TYPES) and not isinstance(obj, BoundArrayMethod)) \
            or library_type:
        try:
            return getattr(obj, name)
        except AttributeError as e:
            raise Unsupported(f"{type(obj).__name__} has no attribute {name!r}") from e
    raise Unsupported(f"attribute .{name} of a {type(obj).__name__} object")


def _getattr_builtin(tracer, obj, name, *default):
    """``getattr(obj, name[, default])``: the same rules (and guards) as ``obj.name``."""
    try:
        return get_attribute(tracer, obj, name)
    except Unsupported:
        if default and not isinstance(obj, ArrayValue):
            return default[0]
        raise


class Checkpoint:
    """The top-level frame just before one instruction: where a graph break resumes from. The
    stack is copied (handlers pop before they fail); the locals need not be: no handler that can
    fail has rebound one yet, so the frame's own locals are the ones before the instruction."""

    __slots__ = ("index", "stack", "mutations")

    def __init__(self, frame):
        self.index = frame.ip
        self.stack = list(frame.stack)
        self.mutations = Mutations.count


def truth(value, what="branch"):
    if isinstance(value, ArrayValue):
        raise Unsupported(f"data-dependent {what} on an array")
    if isinstance(value, PythonObject):
        raise Unsupported(opaque_use(f"{what} on", value))
    return bool(value)


class Frame:
    def __init__(self, tracer: Tracer, fn: types.FunctionType, local_values: dict, depth=0):
        self.tracer = tracer
        self.b = tracer.b
        self.fn = fn
        self.code = fn.__code__
        self.filename = self.code.co_filename
        self.normalized = _normalized(self.code)
        self.instructions = self.normalized.instructions
        self.globals = fn.__globals__
        builtins_ = getattr(fn, "__builtins__", None) or __builtins__
        self.builtins = builtins_ if isinstance(builtins_, dict) else vars(builtins_)
        self.locals = dict(local_values)
        self.cells = dict(zip(self.code.co_freevars, fn.__closure__ or ()))
        self.stack = []
        self.ip = 0
        self.depth = depth
        self.lineno = self.code.co_firstlineno
        self.checkpoint = None      # top-level frame only: the state before the current instruction

    # -- stack helpers ------------------------------------------------------------------------
    def push(self, v):
        self.stack.append(v)

    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        values = self.stack[-n:]
        del self.stack[-n:]
        return values

    def jump(self, ins):
        self.ip = ins.target

    # -- main loop ----------------------------------------------------------------------------
    def run(self):
        """Interpret to the ``return``; returns the (abstract) return value."""
        self.return_value = NULL
        while self.return_value is NULL:
            if self.ip >= len(self.instructions):
                raise Unsupported("fell off the end of the bytecode", self.filename, self.lineno)
            ins = self.instructions[self.ip]
            if self.depth == 0:
                self.checkpoint = Checkpoint(self)
            self.ip += 1
            self.lineno = ins.lineno
            self.b.loc = f"{self.filename}:{ins.lineno}"
            self.tracer.instructions_left -= 1
            try:
                if self.tracer.instructions_left < 0:
                    raise Unsupported("too many instructions to interpret (a long loop?)")
                handler = HANDLERS.get(ins.opname)
                if handler is None:
                    raise Unsupported(_unsupported_opcode_reason(ins.opname))
                handler(self, ins)
            except Unsupported as e:
                raise locate(e, self.filename, ins.lineno)
            except RecursionError:
                raise
            except Exception as e:   # a frontend bug: never crash the user's program
                raise Unsupported(f"internal error interpreting {ins.opname}: "
                                  f"{type(e).__name__}: {e}", self.filename, ins.lineno) from e
        return self.return_value

    # -- calls --------------------------------------------------------------------------------
    def call(self, fn, args, kwargs):
        if isinstance(fn, PythonObject):
            raise Unsupported(opaque_use(f"call to {describe(fn.obj)}() of", fn))
        if isinstance(fn, masks.SelectionMethod):
            result = masks.reduce(self.b, fn.name, fn.array, args, kwargs)
            if result is None:
                raise Unsupported(opaque_use(f"call to ndarray.{fn.name}() with arguments on", fn.array))
            return result
        if isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType):
            return self.call(fn.__func__, [fn.__self__, *args], kwargs)
        if isinstance(fn, functools.partial):
            self.tracer.reads.call_partial(fn)
            return self.call(fn.func, [*fn.args, *args], {**fn.keywords, **kwargs})
        if fn is getattr:
            return _getattr_builtin(self.tracer, *args, **kwargs)
        wrapped = getattr(type(fn), "__module__", "").startswith("hcompile.") and \
            getattr(fn, "__wrapped__", None)
        if isinstance(wrapped, types.FunctionType):
            # another @hcompile function called from this one: capture its Python code inline
            return self.inline(wrapped, args, kwargs)
        if isinstance(fn, types.FunctionType) and not is_library_module_name(fn.__module__):
            return self.inline(fn, args, kwargs)
        opaque = [a for a in (*args, *kwargs.values()) if isinstance(a, PythonObject)]
        if opaque and all(isinstance(a, SymbolicFloat) for a in opaque):
            result = symbolic_floats.call(self.b, fn, args, kwargs)
            if result is not None:
                return result
        if masks.involved(*opaque) and all(isinstance(a, (SymbolicFloat, MaskedSelection)) for a in opaque):
            result = masks.call(self.b, fn, args, kwargs)
            if result is not None:
                return result
        if opaque:
            raise Unsupported(opaque_use(f"call to {describe(fn)}() with", opaque[0]))
        try:
            return resolve_call(self.b, fn, args, kwargs)
        except Unsupported:
            raise
        except TypeError as e:   # NumPy/Python would reject these arguments too
            raise numpy_raises(e, f"bad call to {describe(fn)}(): {e}") from e

    def inline(self, fn, args, kwargs):
        """Interpret a user helper's bytecode in a child frame (its ops join the same graph)."""
        if fn.__code__.co_flags & _GENERATOR_FLAGS:
            raise Unsupported(f"call to generator/coroutine function {fn.__qualname__}()")
        if self.depth >= MAX_INLINE_DEPTH:
            raise Unsupported(f"inlining {fn.__qualname__}() exceeds depth {MAX_INLINE_DEPTH}"
                              " (recursion?)")
        self.tracer.reads.inline_function(fn)
        local_values = bind_arguments(fn, args, kwargs)
        child = Frame(self.tracer, fn, local_values, self.depth + 1)
        return child.run()


def bind_arguments(fn, args, kwargs) -> dict:
    """Python's argument binding for a plain function, from its code object (parameter names
    like comprehensions' ``.0`` are fine here, unlike with ``inspect.signature``). A call that
    does not bind raises a TypeError with Python's own message."""
    code = fn.__code__
    names = code.co_varnames
    n_pos, n_kwonly = code.co_argcount, code.co_kwonlyargcount
    has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
    has_varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
    pos_names = names[:n_pos]
    kwonly_names = names[n_pos:n_pos + n_kwonly]
    positional_only = set(pos_names[:code.co_posonlyargcount])

    def fail(reason):
        return numpy_raises(TypeError, _python_binding_message(fn, args, kwargs) or
                            f"bad call to {fn.__qualname__}(): {reason}")

    bound = {}
    if len(args) > n_pos and not has_varargs:
        raise fail("too many positional arguments")
    for name, value in zip(pos_names, args):
        bound[name] = value
    extra_kwargs = {}
    for key, value in kwargs.items():
        if key in positional_only and has_varkw:
            extra_kwargs[key] = value             # a positional-only name goes to **kwargs
            continue
        if key in bound or key in positional_only:
            raise fail(f"argument {key!r} given twice or positional-only")
        if key in pos_names or key in kwonly_names:
            bound[key] = value
        elif has_varkw:
            extra_kwargs[key] = value
        else:
            raise fail(f"unexpected keyword argument {key!r}")
    defaults = fn.__defaults__ or ()
    first_default = n_pos - len(defaults)
    for i, name in enumerate(pos_names):
        if name not in bound:
            if i < first_default:
                raise fail(f"missing argument {name!r}")
            bound[name] = defaults[i - first_default]
    kwdefaults = fn.__kwdefaults__ or {}
    for name in kwonly_names:
        if name not in bound:
            if name not in kwdefaults:
                raise fail(f"missing keyword argument {name!r}")
            bound[name] = kwdefaults[name]
    index = n_pos + n_kwonly
    if has_varargs:
        bound[names[index]] = tuple(args[n_pos:])
        index += 1
    if has_varkw:
        bound[names[index]] = extra_kwargs
    return bound


def _python_binding_message(fn, args, kwargs):
    """The message of the TypeError Python raises for this call, found by binding the arguments
    to a stub with ``fn``'s parameters, defaults and qualified name; None if that cannot be made."""
    code = fn.__code__
    n_pos, n_kwonly = code.co_argcount, code.co_kwonlyargcount
    varargs, varkw = code.co_flags & inspect.CO_VARARGS, code.co_flags & inspect.CO_VARKEYWORDS
    names = code.co_varnames[:n_pos + n_kwonly + bool(varargs) + bool(varkw)]
    if not all(n.isidentifier() for n in names):
        return None
    first_default = n_pos - len(fn.__defaults__ or ())
    params = []
    for i, name in enumerate(names[:n_pos]):
        params.append(name + ("=None" if i >= first_default else ""))
        if i == code.co_posonlyargcount - 1:
            params.append("/")
    rest = names[n_pos + n_kwonly:]
    if varargs:
        params.append("*" + rest[0])
    elif n_kwonly:
        params.append("*")
    kwdefaults = fn.__kwdefaults__ or {}
    params += [n + ("=None" if n in kwdefaults else "") for n in names[n_pos:n_pos + n_kwonly]]
    if varkw:
        params.append("**" + rest[-1])
    namespace = {}
    exec(f"def stub({', '.join(params)}): pass", namespace)
    stub = namespace["stub"]
    stub.__code__ = stub.__code__.replace(co_name=code.co_name, co_qualname=code.co_qualname)
    stub.__qualname__ = fn.__qualname__       # what the messages name
    try:
        stub(*args, **kwargs)
    except TypeError as e:
        return str(e)
    return None


def _unsupported_opcode_reason(opname):
    reasons = {
        "RAISE_VARARGS": "raise statement",
        "BEFORE_WITH": "with statement",
        "RETURN_GENERATOR": "generator function",
        "YIELD_VALUE": "yield",
        "STORE_GLOBAL": "assignment to a global variable",
        "DELETE_GLOBAL": "deletion of a global variable",
        "IMPORT_STAR": "import *",
        "LOAD_BUILD_CLASS": "class definition",
        "SETUP_ANNOTATIONS": "annotations",
        "PUSH_EXC_INFO": "exception handler",
        "CHECK_EXC_MATCH": "exception handler",
        "LOAD_SUPER_ATTR": "super()",
    }
    return reasons.get(opname, f"bytecode {opname}") + " is not supported"


# ==== handlers ===============================================================================
# Each takes (frame, canonical instruction). Grouped like the CPython docs.

# -- stack manipulation -----------------------------------------------------------------------
@handles("POP_TOP")
def _pop_top(f, ins):
    f.pop()


@handles("PUSH_NULL")
def _push_null(f, ins):
    f.push(NULL)


@handles("COPY")
def _copy(f, ins):
    f.push(f.stack[-ins.arg])


@handles("SWAP")
def _swap(f, ins):
    f.stack[-1], f.stack[-ins.arg] = f.stack[-ins.arg], f.stack[-1]


# -- loads and stores ---------------------------------------------------------------------------
@handles("LOAD_CONST")
def _load_const(f, ins):
    f.push(ins.arg)


@handles("LOAD_FAST")
def _load_fast(f, ins):
    if ins.arg not in f.locals:
        raise Unsupported(f"local variable {ins.arg!r} referenced before assignment")
    f.push(f.locals[ins.arg])


@handles("LOAD_FAST_AND_CLEAR")
def _load_fast_and_clear(f, ins):
    f.push(f.locals.pop(ins.arg, NULL))


@handles("STORE_FAST")
def _store_fast(f, ins):
    value = f.pop()
    if value is NULL:          # restoring a variable that was unbound (3.12 comprehensions)
        f.locals.pop(ins.arg, None)
    else:
        f.locals[ins.arg] = value


@handles("DELETE_FAST")
def _delete_fast(f, ins):
    f.locals.pop(ins.arg, None)


@handles("LOAD_GLOBAL")
def _load_global(f, ins):
    name = ins.arg
    if name in f.globals:
        value = f.globals[name]
        if not is_guardable_constant(value):
            # A global list, dict, array ...: kept opaque; using it is a graph break (breaks.py).
            f.tracer.reads.read_global_object(f.globals, name, value)
            f.push(PythonObject(value))
            return
        f.tracer.reads.read_global(f.globals, name, value)
    elif name in f.builtins:
        value = f.builtins[name]
        f.tracer.reads.read_builtin(f.globals, f.builtins, name, value)
    else:
        raise Unsupported(f"name {name!r} is not defined")
    f.push(value)


@handles("MAKE_CELL")
def _make_cell(f, ins):
    name = ins.arg
    f.cells[name] = f.tracer.new_cell(*((f.locals.pop(name),) if name in f.locals else ()))


@handles("LOAD_CLOSURE")
def _load_closure(f, ins):
    f.push(f.cells[ins.arg])


@handles("LOAD_DEREF")
def _load_deref(f, ins):
    cell = f.cells[ins.arg]
    try:
        value = cell.cell_contents
    except ValueError as e:
        raise Unsupported(f"free variable {ins.arg!r} referenced before assignment") from e
    f.tracer.reads.read_cell(cell, ins.arg, value)
    f.push(value)


@handles("STORE_DEREF")
def _store_deref(f, ins):
    cell = f.cells[ins.arg]
    if not f.tracer.owns_cell(cell):
        raise Unsupported(f"assignment to nonlocal variable {ins.arg!r} of an enclosing function")
    cell.cell_contents = f.pop()


@handles("DELETE_DEREF")
def _delete_deref(f, ins):
    cell = f.cells[ins.arg]
    if not f.tracer.owns_cell(cell):
        raise Unsupported(f"deletion of nonlocal variable {ins.arg!r}")
    del cell.cell_contents


@handles("LOAD_ATTR")
def _load_attr(f, ins):
    f.push(get_attribute(f.tracer, f.pop(), ins.arg))


@handles("LOAD_METHOD")
def _load_method(f, ins):
    obj = f.pop()
    f.push(NULL)
    f.push(get_attribute(f.tracer, obj, ins.arg))


@handles("STORE_ATTR", "DELETE_ATTR")
def _store_attr(f, ins):
    raise Unsupported(f"assignment to attribute .{ins.arg}")


# -- operators ----------------------------------------------------------------------------------
@handles("BINARY_OP")
def _binary_op(f, ins):
    right = f.pop()
    left = f.pop()
    if masks.involved(left, right):
        f.push(masks.binary(f.b, ins.arg, left, right, in_place=bool(ins.extra.get("inplace"))))
        return
    if symbolic_floats.involved(left, right):
        if not (ins.extra.get("inplace") and isinstance(left, ArrayValue) and not left.is_scalar):
            f.push(symbolic_floats.binary(f.b, ins.arg, left, right))
            return
        right = symbolic_floats.in_place_operand(ins.arg, right)     # `array += x`: a store
    _check_operator_operands(ins.arg, left, right)
    if ins.extra.get("inplace"):
        if isinstance(left, ArrayValue) and not left.is_scalar:
            f.push(stores.inplace_operator(f.b, ins.arg, left, right))
        elif isinstance(left, ArrayValue) or isinstance(right, ArrayValue):
            # NumPy scalars are immutable: `s += x` rebinds, as does `python_number += array`.
            f.push(ew.binary_operator(f.b, ins.arg, left, right))
        else:   # lists/ints: Python's own in-place semantics (lists we built are ours)
            op = getattr(operator, "i" + ew.PYTHON_BINARY[ins.arg].__name__.strip("_"))
            f.push(ew.run_concrete(op, left, right))
    else:
        f.push(ew.binary_operator(f.b, ins.arg, left, right))


def _check_operator_operands(symbol, left, right):
    for v in (left, right):
        if isinstance(v, PythonObject):
            raise Unsupported(opaque_use(f"operator {symbol} on", v))
        if isinstance(v, BoundArrayMethod) or v is NULL:
            raise Unsupported(f"operator {symbol} on a {type(v).__name__}")
    if not isinstance(left, ArrayValue) and not isinstance(right, ArrayValue) and \
            (contains_abstract(left) or contains_abstract(right)) and symbol not in ("+", "*"):
        raise Unsupported(f"operator {symbol} on containers of arrays")


_UNARY_UFUNCS = {"UNARY_NEGATIVE": np.negative, "UNARY_POSITIVE": np.positive,
                 "UNARY_INVERT": np.invert}


@handles("UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT")
def _unary(f, ins):
    v = f.pop()
    if isinstance(v, MaskedSelection):
        f.push(masks.unary(f.b, _UNARY_UFUNCS[ins.opname], v))
    elif isinstance(v, SymbolicFloat):
        f.push(symbolic_floats.unary(f.b, ins.opname, v))
    elif isinstance(v, ArrayValue):
        f.push(ew.apply_ufunc(f.b, _UNARY_UFUNCS[ins.opname], [v]))
    else:
        op = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos,
              "UNARY_INVERT": operator.invert}[ins.opname]
        f.push(ew.run_concrete(op, v))


@handles("UNARY_NOT")
def _unary_not(f, ins):
    f.push(not truth(f.pop(), "`not`"))


@handles("COMPARE_OP")
def _compare_op(f, ins):
    right = f.pop()
    left = f.pop()
    if masks.involved(left, right):
        f.push(masks.compare(f.b, ins.arg, left, right))
        return
    if symbolic_floats.involved(left, right):
        f.push(symbolic_floats.compare(f.b, ins.arg, left, right))
        return
    for v in (left, right):
        if isinstance(v, PythonObject):
            raise Unsupported(opaque_use(f"comparison {ins.arg} on", v))
    if not isinstance(left, ArrayValue) and not isinstance(right, ArrayValue) and \
            (contains_abstract(left) or contains_abstract(right)):
        raise Unsupported(f"comparison {ins.arg} of containers holding arrays (data-dependent)")
    f.push(ew.compare_operator(f.b, ins.arg, left, right))


@handles("IS_OP")
def _is_op(f, ins):
    right = f.pop()
    left = f.pop()
    if isinstance(left, PythonObject) or isinstance(right, PythonObject):
        raise Unsupported(opaque_use("`is` test on", left if isinstance(left, PythonObject) else right))
    same = f.tracer.reads.same_object(left, right)
    f.push((not same) if ins.arg else same)


@handles("CONTAINS_OP")
def _contains_op(f, ins):
    container = f.pop()
    item = f.pop()
    if contains_abstract(container) or contains_abstract(item):
        raise Unsupported("`in` test involving arrays (data-dependent)")
    result = ew.run_concrete(lambda: item in container)
    f.push((not result) if ins.arg else result)


# -- subscripts ---------------------------------------------------------------------------------
@handles("BINARY_SUBSCR")
def _binary_subscr(f, ins):
    key = f.pop()
    container = f.pop()
    for v in (container, key):
        if isinstance(v, PythonObject):
            raise Unsupported(opaque_use("subscript of", v))
    if masks.is_full_mask(container, key):
        f.push(masks.select(container, key))
        return
    if isinstance(container, ArrayValue):
        f.push(getitem(f.b, container, key))
        return
    if contains_abstract(key):
        raise Unsupported("indexing a Python container with an array value (data-dependent)")
    if not isinstance(container, (tuple, list, dict, str, range)):
        raise Unsupported(f"subscript of a {type(container).__name__}")
    f.push(ew.run_concrete(lambda: container[key]))


@handles("STORE_SUBSCR")
def _store_subscr(f, ins):
    key = f.pop()
    container = f.pop()
    value = f.pop()
    if isinstance(value, MaskedSelection) and isinstance(container, ArrayValue):
        masks.store(f.b, container, key, value)
        return
    for v in (container, key, value):
        if isinstance(v, PythonObject):
            raise Unsupported(opaque_use("item assignment with", v))
    if isinstance(container, ArrayValue):
        stores.setitem(f.b, container, key, value)
        return
    if not isinstance(container, (list, dict)) or contains_abstract(key):
        raise Unsupported(f"item assignment on a {type(container).__name__}")
    Mutations.note()
    container[key] = value


@handles("DELETE_SUBSCR")
def _delete_subscr(f, ins):
    key = f.pop()
    container = f.pop()
    if not isinstance(container, (list, dict)) or contains_abstract(key):
        raise Unsupported(f"item deletion on a {type(container).__name__}")
    Mutations.note()
    del container[key]


# -- building containers -------------------------------------------------------------------------
@handles("BUILD_TUPLE")
def _build_tuple(f, ins):
    f.push(tuple(f.popn(ins.arg)))


@handles("BUILD_LIST")
def _build_list(f, ins):
    f.push(list(f.popn(ins.arg)))


@handles("BUILD_SET")
def _build_set(f, ins):
    items = f.popn(ins.arg)
    if contains_abstract(items):
        raise Unsupported("a set of arrays (arrays are unhashable)")
    f.push(set(items))


@handles("BUILD_MAP")
def _build_map(f, ins):
    items = f.popn(2 * ins.arg)
    keys = items[::2]
    if contains_abstract(keys):
        raise Unsupported("an array as a dict key")
    f.push(dict(zip(keys, items[1::2])))


@handles("BUILD_CONST_KEY_MAP")
def _build_const_key_map(f, ins):
    keys = f.pop()
    f.push(dict(zip(keys, f.popn(ins.arg))))


@handles("BUILD_SLICE")
def _build_slice(f, ins):
    f.push(slice(*f.popn(ins.arg)))


@handles("BUILD_STRING")
def _build_string(f, ins):
    f.push("".join(f.popn(ins.arg)))


@handles("FORMAT_VALUE")
def _format_value(f, ins):
    flags = ins.arg[1] if isinstance(ins.arg, tuple) else 0
    spec = f.pop() if flags else ""
    value = f.pop()
    if contains_abstract(value):
        raise Unsupported("formatting an array into a string")
    conv = ins.arg[0] if isinstance(ins.arg, tuple) else None
    if conv is not None:
        value = conv(value)
    f.push(format(value, spec))


@handles("LIST_APPEND")
def _list_append(f, ins):
    v = f.pop()
    f.stack[-ins.arg].append(v)


@handles("SET_ADD")
def _set_add(f, ins):
    v = f.pop()
    if contains_abstract(v):
        raise Unsupported("a set of arrays (arrays are unhashable)")
    f.stack[-ins.arg].add(v)


@handles("MAP_ADD")
def _map_add(f, ins):
    value = f.pop()
    key = f.pop()
    if contains_abstract(key):
        raise Unsupported("an array as a dict key")
    f.stack[-ins.arg][key] = value


@handles("LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE", "DICT_MERGE")
def _extend(f, ins):
    seq = f.pop()
    target = f.stack[-ins.arg]
    if isinstance(seq, ArrayValue):
        seq = list(iterate_rows(f.b, seq))
    if ins.opname in ("DICT_UPDATE", "DICT_MERGE"):
        if not isinstance(seq, dict):
            raise Unsupported(f"** of a {type(seq).__name__}")
        if ins.opname == "DICT_MERGE" and set(seq) & set(target):
            raise Unsupported("duplicate keyword argument")
        target.update(seq)
    elif ins.opname == "SET_UPDATE":
        if contains_abstract(seq):
            raise Unsupported("a set of arrays (arrays are unhashable)")
        target.update(seq)
    else:
        target.extend(_concrete_iterable(seq))


@handles("LIST_TO_TUPLE")
def _list_to_tuple(f, ins):
    f.push(tuple(f.pop()))


def _concrete_iterable(seq):
    if isinstance(seq, (tuple, list, range, str, dict, set, frozenset, zip, enumerate,
                        reversed, type(iter(())), type(iter([])), type(iter(range(0))),
                        type({}.items()), type({}.keys()), type({}.values()))):
        return seq
    if isinstance(seq, ArrayRows):
        return seq
    raise Unsupported(f"iteration over a {type(seq).__name__}")


@handles("UNPACK_SEQUENCE")
def _unpack_sequence(f, ins):
    seq = f.pop()
    items = list(iterate_rows(f.b, seq)) if isinstance(seq, ArrayValue) else \
        list(_concrete_iterable(seq))
    if len(items) != ins.arg:
        raise numpy_raises(ValueError, f"cannot unpack {len(items)} values into {ins.arg}")
    f.stack.extend(reversed(items))


@handles("UNPACK_EX")
def _unpack_ex(f, ins):
    before, after = ins.arg & 0xFF, ins.arg >> 8
    seq = f.pop()
    items = list(iterate_rows(f.b, seq)) if isinstance(seq, ArrayValue) else \
        list(_concrete_iterable(seq))
    if len(items) < before + after:
        raise numpy_raises(ValueError, "not enough values to unpack")
    middle = items[before:len(items) - after]
    values = items[:before] + [middle] + items[len(items) - after:]
    f.stack.extend(reversed(values))


# -- control flow ----------------------------------------------------------------------------
@handles("JUMP")
def _jump(f, ins):
    f.jump(ins)


@handles("POP_JUMP_IF_TRUE")
def _pop_jump_if_true(f, ins):
    if truth(f.pop()):
        f.jump(ins)


@handles("POP_JUMP_IF_FALSE")
def _pop_jump_if_false(f, ins):
    if not truth(f.pop()):
        f.jump(ins)


@handles("POP_JUMP_IF_NONE")
def _pop_jump_if_none(f, ins):
    if f.pop() is None:
        f.jump(ins)


@handles("POP_JUMP_IF_NOT_NONE")
def _pop_jump_if_not_none(f, ins):
    if f.pop() is not None:
        f.jump(ins)


@handles("JUMP_IF_TRUE_OR_POP")
def _jump_if_true_or_pop(f, ins):
    if truth(f.stack[-1]):
        f.jump(ins)
    else:
        f.pop()


@handles("JUMP_IF_FALSE_OR_POP")
def _jump_if_false_or_pop(f, ins):
    if not truth(f.stack[-1]):
        f.jump(ins)
    else:
        f.pop()


@handles("GET_ITER")
def _get_iter(f, ins):
    obj = f.pop()
    if f.tracer.outline_loops and f.depth == 0 and type(obj) is range:
        loop = loops.outline_candidate(f, f.checkpoint.index, obj)
        if loop is not None and breaks.structural_refusal(f) is None:
            error = Unsupported(f"a loop of {loop.trips} iterations: its body is compiled once and "
                                "called from Python each iteration")
            error.loop = loop
            raise error
    if isinstance(obj, ArrayValue):
        f.push(iterate_rows(f.b, obj))
    else:
        f.push(iter(_concrete_iterable(obj)))


@handles("FOR_ITER")
def _for_iter(f, ins):
    try:
        f.push(next(f.stack[-1]))
    except StopIteration:
        f.pop()
        f.jump(ins)


@handles("RETURN_VALUE")
def _return_value(f, ins):
    f.return_value = f.pop()


# -- calls and functions ---------------------------------------------------------------------
@handles("CALL")
def _call(f, ins):
    args = f.popn(ins.arg)
    self_or_fn = f.pop()
    fn_or_null = f.pop()
    if fn_or_null is NULL:
        fn = self_or_fn
    else:
        fn, args = fn_or_null, [self_or_fn, *args]
    kw_names = ins.extra.get("kw_names", ())
    n_pos = len(args) - len(kw_names)
    kwargs = dict(zip(kw_names, args[n_pos:]))
    f.push(f.call(fn, args[:n_pos], kwargs))


@handles("CALL_FUNCTION_EX")
def _call_function_ex(f, ins):
    kwargs = f.pop() if ins.arg & 1 else {}
    args = f.pop()
    fn = f.pop()
    if f.stack and f.stack[-1] is NULL:
        f.pop()
    if isinstance(args, ArrayValue):
        args = list(iterate_rows(f.b, args))
    if not isinstance(kwargs, dict):
        raise Unsupported(f"** of a {type(kwargs).__name__}")
    f.push(f.call(fn, list(_concrete_iterable(args)), dict(kwargs)))


@handles("MAKE_FUNCTION")
def _make_function(f, ins):
    flags = ins.arg
    code = f.pop()
    closure = f.pop() if flags & 0x08 else None
    if flags & 0x04:
        f.pop()                                   # annotations: irrelevant here
    kwdefaults = f.pop() if flags & 0x02 else None
    defaults = f.pop() if flags & 0x01 else None
    # A real function object whose cells and defaults may hold abstract values: it is only ever
    # inlined by us (never called for real: calls for real need concrete arguments).
    fn = types.FunctionType(code, f.globals, code.co_name, defaults, closure)
    fn.__kwdefaults__ = kwdefaults
    fn.__qualname__ = code.co_qualname
    f.push(f.tracer.reads.own(fn, "function"))


@handles("IMPORT_NAME")
def _import_name(f, ins):
    fromlist = f.pop()
    level = f.pop()
    name = ins.arg
    if level != 0 or name not in sys.modules:
        raise Unsupported(f"import of {name!r} (only already-imported absolute modules)")
    if not fromlist:
        name = name.split(".")[0]
    module = sys.modules[name]
    f.tracer.reads.read_module(name, module)
    f.push(module)


@handles("IMPORT_FROM")
def _import_from(f, ins):
    f.push(get_attribute(f.tracer, f.stack[-1], ins.arg))
