"""Bytecode capture: turn one call of a NumPy function into a graph.

``capture(fn, args)`` abstractly interprets ``fn``'s bytecode for the given arguments (arrays
become graph inputs; Python scalars are specialised as constants) and returns the graph, the
shape of the return value, and the outside values the graph depends on (to be guarded). What it
cannot capture raises ``hcompile.errors.Unsupported`` with the file and line responsible.

Modules: ``normalize`` (per-Python-version bytecode → canonical instructions), ``interpreter``
(frames and the opcode dispatch table), ``reads`` (what is read from outside the arguments and
its guards), ``values`` (abstract values), ``lookaside`` (what calls and attributes mean),
``elementwise`` / ``reductions`` / ``matmul`` / ``shape_ops`` / ``indexing`` (NumPy semantics as
explicit IR ops), ``numpy_rules`` (NumPy as the oracle for dtypes and axes), ``builder`` (the
wrapper over the C++ graph).
"""
from __future__ import annotations

import types
from dataclasses import dataclass, field

import numpy as np

from ..errors import Unsupported
from ..guards import is_constant_by_identity, is_constant_by_value
from . import breaks
from .breaks import BreakPoint, MaskRef
from .builder import GraphBuilder
from .errors import locate
from .interpreter import _GENERATOR_FLAGS, Frame, Tracer, bind_arguments
from .numpy_rules import is_supported_dtype
from .size_reads import SizeWatch
from ..structure import changed_containers, rebuild
from .values import ArrayValue, MaskedSelection, PythonObject, SymbolicFloat

__all__ = ["Capture", "OutputRef", "ArgRef", "capture", "Unsupported"]


@dataclass(frozen=True)
class OutputRef:
    index: int          # index into graph.outputs
    as_scalar: bool     # hand back a NumPy scalar (ufunc/reduction 0-d result), not a 0-d array
    as_float: bool = False   # hand back a Python float (a SymbolicFloat's value)

    def of(self, outputs):
        """This output among the kernel's ``outputs`` as the Python value it stands for."""
        value = outputs[self.index]
        return float(value) if self.as_float else value


def assemble(shape, outputs, args):
    """The return value a capture's ``shape`` of refs stands for, given the kernel's ``outputs``
    and the call's ``args``."""
    if isinstance(shape, OutputRef):
        return shape.of(outputs)
    if isinstance(shape, ArgRef):
        return args[shape.index]
    if isinstance(shape, MaskRef):   # x[mask]: the array library's own boolean indexing
        return assemble(shape.values, outputs, args)[assemble(shape.mask, outputs, args)]
    if isinstance(shape, (tuple, list)):
        return type(shape)(assemble(s, outputs, args) for s in shape)
    if isinstance(shape, dict):
        return {k: assemble(v, outputs, args) for k, v in shape.items()}
    return shape


def scalar_outputs(cap):
    """Per output of ``cap``'s graph, whether it stands for a NumPy scalar (what NumPy's ufuncs and
    reductions return for one value), not a 0-d array: read at the break point's stack and locals
    where the capture stops at a graph break, else in its return value."""
    as_scalar = [False] * len(cap.graph.outputs)

    def visit(node):
        if isinstance(node, OutputRef):
            as_scalar[node.index] = node.as_scalar
        elif isinstance(node, (tuple, list)):
            for item in node:
                visit(item)
        elif isinstance(node, dict):
            visit(list(node.values()))
        elif isinstance(node, breaks.ViewRef):
            visit(node.root)
        elif isinstance(node, breaks.MethodRef):
            visit(node.owner)
        elif isinstance(node, MaskRef):
            visit([node.values, node.mask])
        elif isinstance(node, breaks.ContainerRef):
            visit([v for _, v in node.items] if node.kind is dict else node.items)

    point = cap.break_point
    if point is not None:
        visit(point.stack)
        visit(list(point.locals.values()))
    else:
        visit(cap.result)
    return as_scalar


def returns_outputs(result, n):
    """Whether a capture's return value ``result`` is its ``n`` kernel outputs as they are: the one
    output, or a tuple of all of them in order (none handed back as a Python float)."""
    if isinstance(result, OutputRef):
        return n == 1 and result.index == 0 and not result.as_float
    return (type(result) is tuple and len(result) == n and n != 1 and
            all(isinstance(r, OutputRef) and r.index == i and not r.as_float for i, r in enumerate(result)))


@dataclass(frozen=True)
class ArgRef:
    index: int          # `return x`: the argument object itself


@dataclass
class Capture:
    graph: object                      # hcompile._C.Graph, outputs set
    result: object                     # tuple/list/dict nesting of OutputRef | ArgRef | constants
    guards: list = field(default_factory=list)       # guards.Guard per outside value read
    identities: dict = field(default_factory=dict)   # (arg a, arg b) -> were they one object
    # Written arguments: (arg index, index into graph.outputs of its final contents), copied into
    # the caller's array after the kernel ran.
    writebacks: list = field(default_factory=list)
    # What a written argument needs of the call: (kind, arg a, arg b, expected), kind "writeable"
    # (a's flag) or "overlap" (a and b may share memory: the capture treats them as separate).
    relations: list = field(default_factory=list)
    # Set when the capture stopped at a graph break that resumes (``result`` is then None): the
    # graph computes what the code after the break needs (see ``breaks.py``).
    break_point: BreakPoint | None = None
    # Captures with ``watch_sizes``: the first decision the code took on a watched size
    # (``size_reads.py``), or None.
    size_decision: str | None = None


RESULT_CONSTANTS = (bool, int, float, str, type(None))


def _new_graph():
    from .. import _C
    return _C.Graph()


def _argument_value(builder, fn, index, arg, opaque=False, dynamic=False, shape=None):
    """The interpreter's view of one argument: arrays and NumPy scalars become lazily created
    graph inputs; Python scalars (and None/str) are specialised as constants, except a float
    kept ``dynamic``, a ``SymbolicFloat`` read from a float64 input. ``shape``: the shape an
    array is captured as, in place of its own (``dynamic_shapes``)."""
    loc = f"{fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"

    def make_input(dtype, shape):
        def make():
            saved, builder.loc = builder.loc, loc
            try:
                return builder.input(index, dtype, shape)
            finally:
                builder.loc = saved
        return make

    if type(arg) is np.ndarray or isinstance(arg, np.generic):
        if not is_supported_dtype(arg.dtype):
            raise Unsupported(f"argument {index} has unsupported dtype {arg.dtype}",
                              fn.__code__.co_filename, fn.__code__.co_firstlineno)
        scalar = isinstance(arg, np.generic)
        shape = arg.shape if shape is None else shape
        return ArrayValue(None, arg.dtype, shape, is_scalar=scalar, arg_index=index,
                          make_node=make_input(arg.dtype, shape))
    if dynamic and type(arg) is float:
        make = make_input(np.dtype(np.float64), ())
        return SymbolicFloat(ArrayValue(None, np.float64, (), is_scalar=True, make_node=make),
                             arg_index=index)
    if type(arg) in RESULT_CONSTANTS or is_constant_by_value(arg) or is_constant_by_identity(arg):
        return arg            # guarded by guards.arg_guard
    if opaque:
        return PythonObject(arg, arg_index=index)
    raise Unsupported(f"argument {index} of type {type(arg).__name__} is not supported",
                      fn.__code__.co_filename, fn.__code__.co_firstlineno)


class _ResultBuilder:
    """Maps the abstract return value to OutputRef/ArgRef leaves and the graph's outputs."""

    def __init__(self, builder):
        self.builder = builder
        self.nodes = []
        self.index_of = {}      # id(ArrayValue) -> output index: one output per array object
        self.keep = []

    def convert(self, value):
        if isinstance(value, ArrayValue):
            if value.arg_index is not None:
                return ArgRef(value.arg_index)
            if id(value) not in self.index_of:
                self.index_of[id(value)] = len(self.nodes)
                self.nodes.append(value.node)
                self.keep.append(value)
            return OutputRef(self.index_of[id(value)], value.is_scalar)
        if type(value) in (tuple, list):
            return type(value)(self.convert(v) for v in value)
        if type(value) is dict and all(type(k) in RESULT_CONSTANTS for k in value):
            return {k: self.convert(v) for k, v in value.items()}
        if isinstance(value, MaskedSelection):
            return MaskRef(self.convert(value.values), self.convert(value.mask), id(value))
        if isinstance(value, SymbolicFloat):
            if value.arg_index is not None:
                return ArgRef(value.arg_index)
            self.nodes.append(value.value.node)
            self.keep.append(value)
            return OutputRef(len(self.nodes) - 1, True, as_float=True)
        if isinstance(value, PythonObject):    # an argument, or a global guarded by identity
            return value.obj if value.arg_index is None else ArgRef(value.arg_index)
        if type(value) in RESULT_CONSTANTS:
            return value
        if isinstance(value, np.generic):   # a NumPy scalar constant: a constant output
            c = self.builder.constant(value, value.dtype)
            self.nodes.append(c.node)
            return OutputRef(len(self.nodes) - 1, True)
        raise Unsupported(f"returning a {type(value).__name__} is not supported")


def capture(fn, args: tuple, *, graph=None, outline_loops=False, opaque_arguments=False,
            structure=None, dynamic_floats=frozenset(), shapes=None, watch_sizes=()) -> Capture:
    """Capture ``fn(*args)`` as a graph. ``graph``: an empty graph to fill (tests); defaults to
    a new ``hcompile._C.Graph``. ``outline_loops``: long loops become a graph break whose body
    is compiled once (``loops.py``) rather than unrolled. ``opaque_arguments``: arguments of
    types the graph cannot hold are ``PythonObject``s (any use of them is a graph break) rather
    than a reason to run the whole function as Python (resume functions and loop bodies).
    ``structure``: a ``hcompile.structure.Spec``; ``args`` are then its leaves, and the
    parameters get containers rebuilt around them. ``dynamic_floats``: indices of float
    arguments read at run time rather than specialised on (``symbolic_floats.py``). ``shapes``:
    {argument index: shape} the arrays are captured as instead of their own (``dynamic_shapes``
    captures again with placeholder extents; nothing reads an argument's elements).
    ``watch_sizes``: those placeholder extents, whose reads by the code are watched."""
    if not isinstance(fn, types.FunctionType):
        raise Unsupported(f"can only compile Python functions, not {type(fn).__name__}")
    code = fn.__code__
    if code.co_flags & _GENERATOR_FLAGS:
        raise Unsupported("generator/coroutine functions are not supported",
                          code.co_filename, code.co_firstlineno)
    builder = GraphBuilder(graph if graph is not None else _new_graph())
    builder.sizes = SizeWatch(watch_sizes)
    tracer = Tracer(builder, fn, args)
    shapes = shapes or {}
    values = [_argument_value(builder, fn, i, a, opaque_arguments, i in dynamic_floats, shapes.get(i))
              for i, a in enumerate(args)]
    mutable = []
    try:
        if structure is None:
            local_values = bind_arguments(fn, values, {})
        else:
            local_values, mutable = rebuild(structure, values)
    except Unsupported as e:
        raise locate(e, code.co_filename, code.co_firstlineno)
    # An outlined loop is a break, and breaks cannot hand on rebuilt lists and dicts: unrolled.
    tracer.outline_loops = outline_loops and not mutable
    try:
        frame = Frame(tracer, fn, local_values)
    except Unsupported as e:     # e.g. an unsupported Python version: blame the def line
        raise locate(e, code.co_filename, code.co_firstlineno)
    results = _ResultBuilder(builder)
    point = result = None
    try:
        returned = frame.run()
    except Unsupported as e:
        locate(e, code.co_filename, code.co_firstlineno)
        # The code after a break would get rebuilt lists and dicts, not the caller's.
        point = breaks.break_point(frame, e, results) if not mutable else None
        if point is None:
            if mutable and getattr(e, "resume_refused", None) is None:
                e.resume_refused = "the function takes a list or dict argument"
            raise
    if changed_containers(mutable):
        raise Unsupported("the function changes a list or dict it was given (the compiled call "
                          "would change a copy)", code.co_filename, code.co_firstlineno)
    if point is None:
        try:
            result = results.convert(returned)
        except Unsupported as e:
            raise locate(e, code.co_filename, frame.lineno)
    written = [v for v in values if isinstance(v, ArrayValue) and v.version > 0]
    relations = _written_argument_relations(written, args, code)
    writebacks = []
    for v in written:
        writebacks.append((v.arg_index, len(results.nodes)))
        results.nodes.append(v.node)
    builder.set_outputs(results.nodes)
    return Capture(builder.graph, result, tracer.reads.guards, dict(tracer.reads.identities),
                   writebacks, relations, point, builder.sizes.decided)


def _written_argument_relations(written, args, code):
    """The guards a written argument needs, checked on this call's arguments: it must be
    writeable (NumPy raises otherwise) and share no memory with another array argument (the
    graph reads each argument as it was when the call began). Raises Unsupported, carrying the
    guards, when this call breaks one of them: such calls run as Python."""
    relations = []
    for v in written:
        a = v.arg_index
        relations.append(("writeable", a, a, bool(args[a].flags.writeable)))
        for j, other in enumerate(args):
            if j != a and type(other) is np.ndarray:
                relations.append(("overlap", a, j, bool(np.may_share_memory(args[a], other))))
    broken = [r for r in relations if r[3] != (r[0] == "writeable")]
    if broken:
        kind, a, j, _ = broken[0]
        why = (f"argument {a} is written but read-only" if kind == "writeable" else
               f"argument {a} is written and shares memory with argument {j}")
        error = Unsupported(why, code.co_filename, code.co_firstlineno)
        error.relations = relations
        raise error
    return relations
