"""Graph breaks that resume: what the code after an uncapturable instruction needs.

When the top-level frame meets an instruction it cannot capture (``print``, a branch on an array
value, ``.item()``, a call into an unknown library ...), the function need not run entirely as
Python. Following Dynamo's protocol, the graph built so far runs as a kernel, the instruction
runs in real Python, and the code after it continues in a *resume function* (``resume.py``)
that is captured in turn. This module decides whether a break can resume, and describes the
interpreter's state before the instruction (stack and bound locals) as references the runtime
rebuilds from the kernel's outputs and the call's arguments:

* ``OutputRef`` / ``ArgRef``: an array the graph computed, or an argument object itself (with
  its writes copied back first, so the object keeps its identity);
* ``ViewRef``: a view of an argument or of a computed array, rebuilt by basic indexing of that
  root so that writes through it after the break still reach the root, as in NumPy;
* ``MethodRef``: ``x.item`` before it is called; ``NULL_REF``: CPython's NULL stack entry;
* ``MaskRef``: a boolean-mask selection (``masks.py``), compacted as ``values[mask]``;
* ``ContainerRef``: a tuple/list/dict holding any of these (one object per container, so that
  two names for one list stay one list); anything else is passed as the Python object it is.

A break resumes only where the resume function can start cleanly: at the top level (a break in
an inlined helper breaks at the call into it, provided that call changed nothing yet), outside
loops and ``try``/``with`` blocks, and in functions without cell variables. Elsewhere the whole
function runs as Python, as before, and ``explain`` says why.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Unsupported
from .values import (NULL, ArrayValue, BoundArrayMethod, MaskedSelection, Mutations, PythonObject,
                     contains_abstract)

# Canonical instructions the runtime knows how to run for real at a break (resume.execute).
REPLAYABLE = frozenset({
    "CALL", "CALL_FUNCTION_EX", "BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "BINARY_OP",
    "COMPARE_OP", "CONTAINS_OP", "IS_OP", "UNARY_NOT", "UNARY_NEGATIVE", "UNARY_POSITIVE", "UNARY_INVERT",
    "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR",
    "FORMAT_VALUE",
})
BRANCHES = frozenset({"POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"})
# The names resume functions give their stack and view-root parameters (resume.py): dead once
# the prologue ran, so never live state at a later break.
LIVE_PREFIX = "__hc_"


@dataclass(frozen=True)
class ViewRef:
    root: object        # ArgRef | OutputRef of the array owning the memory
    index: tuple        # basic index into the root (ints and slices, one per root axis)
    perm: tuple         # then transposed: view axis order among the kept root axes
    shape: tuple        # then reshaped (size-1 axes inserted): the view's shape


@dataclass(frozen=True)
class MethodRef:
    owner: object
    name: str


@dataclass(frozen=True)
class MaskRef:
    values: object      # ref of the full-shape values
    mask: object        # ref of the boolean mask
    ident: int          # rebuilt once per identity: ``values[mask]``, a new array (masks.py)


@dataclass(frozen=True)
class ContainerRef:
    kind: type          # tuple, list or dict
    items: tuple        # refs (for a dict: (key, ref) pairs)
    ident: int          # rebuilt once per identity


class _NullRef:
    def __repr__(self):
        return "NULL"


NULL_REF = _NullRef()


@dataclass
class BreakPoint:
    """Where a capture stopped, and the state the code after the break starts from."""
    index: int                  # canonical instruction that did not capture
    instruction: object         # normalize.Instr
    reason: Unsupported         # why (with file and line)
    stack: list = field(default_factory=list)     # refs, bottom first
    locals: dict = field(default_factory=dict)    # bound local name -> ref
    loop: object = None         # loops.LoopInfo when the "instruction" is a whole outlined loop

    @property
    def targets(self):
        """Canonical indices where the code after the instruction may continue."""
        if self.loop is not None:
            return (self.loop.exit,)
        if self.instruction.opname in BRANCHES:
            return (self.index + 1, self.instruction.target)
        return (self.index + 1,)


def structural_refusal(frame) -> str | None:
    """Why no break can resume at the instruction ``frame`` (the top-level frame) is about to
    run, whatever the instruction: where it sits and what the function is. None if it can."""
    code = frame.code
    if code.co_cellvars:
        return "a function whose locals are captured by an inner function (cell variables)"
    instructions = frame.instructions
    index = frame.checkpoint.index
    for start, end in frame.normalized.protected_ranges:
        if start <= instructions[index].offset < end:
            return "a break inside a try or with block"
    for j, other in enumerate(instructions):
        if other.target is not None and other.target <= index < j and other.opname != "FOR_ITER":
            return "a break inside a loop"
    return None


def why_not_resumable(frame, error) -> str | None:
    """Why the break ``error`` met in ``frame`` (the top-level frame) cannot resume, or None."""
    checkpoint = frame.checkpoint
    if checkpoint is None:
        return "the break is before the first instruction"
    if getattr(error, "numpy_error_type", None) is not None:
        return "NumPy raises here (the whole function runs as Python, raising NumPy's own error)"
    if error.reason.startswith(("too many instructions", "internal error")):
        return error.reason
    instructions = frame.instructions
    index = checkpoint.index
    ins = instructions[index]
    loop = getattr(error, "loop", None)
    if ins.opname not in REPLAYABLE and loop is None:
        return f"resuming after {ins.opname} is not supported"
    if Mutations.count != checkpoint.mutations:
        return "the instruction had already changed an array or a container"
    refusal = structural_refusal(frame)
    if refusal is not None:
        return refusal
    targets = (loop.exit,) if loop is not None else \
        (index + 1, ins.target) if ins.opname in BRANCHES else (index + 1,)
    for t in targets:
        if t >= len(instructions) or (t > 0 and instructions[t - 1].offset == instructions[t].offset):
            return "the code after the break does not start at an instruction boundary"
    return None


_READS = ("LOAD_FAST", "LOAD_FAST_AND_CLEAR", "DELETE_FAST")


def live_locals(instructions, index, loop) -> set:
    """Names the code after instruction ``index`` may read: read at a later index, or anywhere
    if control can jump back before the break. (Conservative: never misses a read.)"""
    later = instructions[index + 1:]
    if any(ins.target is not None and ins.target <= index for ins in later):
        return {ins.arg for ins in instructions if ins.opname in _READS}
    names = {ins.arg for ins in later if ins.opname in _READS}
    if loop is not None:
        names |= set(loop.used)
    return names


class LiveState:
    """Converts the interpreter's values at a break into refs, adding graph outputs as needed
    (through ``results``, the capture's output collector)."""

    def __init__(self, results):
        self.results = results
        self.seen = {}

    def ref(self, value):
        if value is NULL:
            return NULL_REF
        if isinstance(value, ArrayValue):
            return self._array(value)
        if isinstance(value, BoundArrayMethod):
            return MethodRef(self.ref(value.array), value.name)   # an array's, or a selection's
        if isinstance(value, MaskedSelection):
            return MaskRef(self._array(value.values), self._array(value.mask), id(value))
        if isinstance(value, PythonObject):
            return self.results.convert(value)     # the global itself, or the argument
        if type(value) in (tuple, list, dict):
            key = id(value)
            if key not in self.seen:
                self.seen[key] = None         # a container that holds itself: not rebuilt
                items = (tuple((k, self.ref(v)) for k, v in value.items()) if type(value) is dict
                         else tuple(self.ref(v) for v in value))
                if type(value) is dict and contains_abstract(tuple(value)):
                    raise Unsupported("a dict keyed by arrays is live at the break")
                self.seen[key] = ContainerRef(type(value), items, key)
            if self.seen[key] is None:
                raise Unsupported("a self-referencing container is live at the break")
            return self.seen[key]
        if contains_abstract(value):
            raise Unsupported(f"a {type(value).__name__} holding arrays is live at the break")
        return value

    def _array(self, value):
        if value.view_of is None or value.arg_index is not None:
            return self.results.convert(value)
        if value.view_map is None:
            raise Unsupported("a reshaped or broadcast view is live at the break")
        root = value.root()
        if root.opaque_views:
            raise Unsupported("a view of an array with reshaped views is live at the break")
        view_map = value.view_map
        index, kept = [], []
        for axis, start, step in view_map.entries:
            if axis is None:
                index.append(start)
                continue
            count = view_map.shape[axis]
            stop = start + step * count
            index.append(slice(start, stop if stop >= 0 else None, step))
            kept.append(axis)
        perm = tuple(sorted(range(len(kept)), key=lambda i: kept[i]))   # kept axes to view order
        return ViewRef(self.results.convert(root), tuple(index), perm, tuple(value.shape))


def break_point(frame, error, results) -> BreakPoint | None:
    """The resumable break for ``error`` met while interpreting ``frame``, or None (why not is
    then ``error.resume_refused``, for the log and ``explain``)."""
    why = why_not_resumable(frame, error)
    if why is None:
        checkpoint = frame.checkpoint
        try:
            state = LiveState(results)
            stack = [state.ref(v) for v in checkpoint.stack]
            # Only locals the code after the break may read cross it (fewer guards, and a dead
            # Python int does not make the resume function recompile); a resume function's own
            # stack parameters are dead once its prologue ran.
            live = live_locals(frame.instructions, checkpoint.index, getattr(error, "loop", None))
            local_refs = {name: state.ref(v) for name, v in frame.locals.items()
                          if name in live and not name.startswith(LIVE_PREFIX)}
        except Unsupported as e:
            why = e.reason
        else:
            return BreakPoint(checkpoint.index, frame.instructions[checkpoint.index], error,
                              stack, local_refs, getattr(error, "loop", None))
    error.resume_refused = why
    return None
