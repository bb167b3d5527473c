"""Running the code after a graph break: the instruction for real, then a resume function.

A capture that stops at a resumable break (``capture/breaks.py``) compiles the graph before it.
Its entry's result builder is a ``Continuation``: given the kernel's outputs and the call's
arguments it rebuilds the interpreter's state (stack and locals), runs the instruction that could
not be captured in real Python (so its side effects happen once, in program order), and calls the
*resume function* for the instruction that comes next: a code object generated with the
``bytecode`` package, whose parameters are the live stack entries and locals, whose prologue
pushes the stack back and jumps to that instruction, and whose body is the original bytecode.
The resume function is itself ``@hcompile``d, with its own cache and guards: the code after the
break is captured in turn (and may break again). A branch on an array value has two resume
functions, one per target, each compiled the first time it is taken.
"""
from __future__ import annotations

import dis
import operator
import sys
import threading
import types
from dataclasses import dataclass

import numpy as np

from .capture.breaks import LIVE_PREFIX, NULL_REF, ContainerRef, MaskRef, MethodRef, ViewRef
from .capture.elementwise import PYTHON_BINARY, PYTHON_COMPARE
from .capture import ArgRef, OutputRef
from .capture.values import NULL
from .errors import Unsupported

_UNARY = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos,
          "UNARY_INVERT": operator.invert, "UNARY_NOT": operator.not_}
_INPLACE = {symbol: getattr(operator, "i" + fn.__name__.strip("_")) for symbol, fn in PYTHON_BINARY.items()}
STACK_PARAMETER = LIVE_PREFIX + "stack{}"
ROOT_PARAMETER = LIVE_PREFIX + "root{}"
_UNBOUND = object()      # a loop body's local that is not bound yet


# -- the state before the break ------------------------------------------------------------------
class _Rebuilder:
    """Python objects for the refs of a break point, one object per ref identity."""

    def __init__(self, outputs, args):
        self.outputs, self.args = outputs, args
        self.containers = {}

    def get(self, ref):
        if ref is NULL_REF:
            return NULL
        if isinstance(ref, OutputRef):
            return ref.of(self.outputs)
        if isinstance(ref, ArgRef):
            return self.args[ref.index]
        if isinstance(ref, ViewRef):
            root = self.get(ref.root)
            if type(root).__module__.startswith("torch"):
                # A PyTorch tensor (the GPU path's outputs): its permute is NumPy's transpose.
                # (view_of stays NumPy's: resume prologues call it, and the capture reads it.)
                index = tuple(slice(*i) if type(i) is tuple else i for i in ref.index)
                return root[index].permute(*ref.perm).reshape(ref.shape)
            return view_of(root, ref.index, ref.perm, ref.shape)
        if isinstance(ref, MethodRef):
            return getattr(self.get(ref.owner), ref.name)
        if isinstance(ref, MaskRef):
            if ref.ident not in self.containers:
                self.containers[ref.ident] = self.get(ref.values)[self.get(ref.mask)]
            return self.containers[ref.ident]
        if isinstance(ref, ContainerRef):
            if ref.ident not in self.containers:
                if ref.kind is dict:
                    self.containers[ref.ident] = {k: self.get(v) for k, v in ref.items}
                else:
                    self.containers[ref.ident] = ref.kind(self.get(v) for v in ref.items)
            return self.containers[ref.ident]
        return ref


# -- the instruction, for real -------------------------------------------------------------------
def execute(ins, stack) -> bool:
    """Runs one canonical instruction (``breaks.REPLAYABLE``) on a concrete ``stack`` as CPython
    would; returns whether a branch jumped to its target."""
    op = ins.opname
    pop = stack.pop
    if op == "CALL":
        args = stack[len(stack) - ins.arg:] if ins.arg else []
        del stack[len(stack) - len(args):]
        self_or_fn, fn_or_null = pop(), pop()
        callee, args = (self_or_fn, args) if fn_or_null is NULL else (fn_or_null, [self_or_fn, *args])
        kw_names = ins.extra.get("kw_names", ())
        n_pos = len(args) - len(kw_names)
        stack.append(callee(*args[:n_pos], **dict(zip(kw_names, args[n_pos:]))))
    elif op == "CALL_FUNCTION_EX":
        kwargs = pop() if ins.arg & 1 else {}
        args, callee = pop(), pop()
        if stack and stack[-1] is NULL:
            pop()
        stack.append(callee(*args, **kwargs))
    elif op == "BINARY_SUBSCR":
        key, container = pop(), pop()
        stack.append(container[key])
    elif op == "STORE_SUBSCR":
        key, container, value = pop(), pop(), pop()
        container[key] = value
    elif op == "DELETE_SUBSCR":
        key, container = pop(), pop()
        del container[key]
    elif op == "BINARY_OP":
        right, left = pop(), pop()
        table = _INPLACE if ins.extra.get("inplace") else PYTHON_BINARY
        stack.append(table[ins.arg](left, right))
    elif op == "COMPARE_OP":
        right, left = pop(), pop()
        stack.append(PYTHON_COMPARE[ins.arg](left, right))
    elif op == "IS_OP":
        right, left = pop(), pop()
        stack.append((left is not right) if ins.arg else (left is right))
    elif op == "CONTAINS_OP":
        container, item = pop(), pop()
        stack.append((item not in container) if ins.arg else (item in container))
    elif op in _UNARY:
        stack.append(_UNARY[op](pop()))
    elif op in ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"):
        return bool(pop()) == (op == "POP_JUMP_IF_TRUE")
    elif op == "LOAD_ATTR":
        stack.append(getattr(pop(), ins.arg))
    elif op == "LOAD_METHOD":
        method = getattr(pop(), ins.arg)
        stack.extend((NULL, method))
    elif op == "STORE_ATTR":
        owner, value = pop(), pop()
        setattr(owner, ins.arg, value)
    elif op == "FORMAT_VALUE":
        flags = ins.arg[1] if isinstance(ins.arg, tuple) else 0
        spec = pop() if flags else ""
        value = pop()
        conv = ins.arg[0] if isinstance(ins.arg, tuple) else None
        stack.append(format(conv(value) if conv is not None else value, spec))
    else:   # breaks.REPLAYABLE and this function disagree: a bug, not the user's problem
        raise AssertionError(f"cannot replay {op}")
    return False


def stack_after(ins, null_slots) -> tuple:
    """Which stack entries are CPython's NULL once ``execute`` has run ``ins`` on a stack whose
    NULL entries are ``null_slots`` (bottom first): what the resume function's prologue pushes."""
    slots = list(null_slots)
    pops, pushes = {
        "CALL": (None, (False,)), "BINARY_SUBSCR": (2, (False,)), "STORE_SUBSCR": (3, ()),
        "DELETE_SUBSCR": (2, ()), "BINARY_OP": (2, (False,)), "COMPARE_OP": (2, (False,)),
        "CONTAINS_OP": (2, (False,)), "IS_OP": (2, (False,)), "POP_JUMP_IF_TRUE": (1, ()), "POP_JUMP_IF_FALSE": (1, ()),
        "LOAD_ATTR": (1, (False,)), "LOAD_METHOD": (1, (True, False)), "STORE_ATTR": (2, ()),
        "CALL_FUNCTION_EX": (None, (False,)),
        "FORMAT_VALUE": (None, (False,)),
    }.get(ins.opname, (1, (False,)))                       # the unary operators
    if ins.opname == "CALL":
        pops = ins.arg + 2
    elif ins.opname == "CALL_FUNCTION_EX":
        pops = 3 if ins.arg & 1 else 2
        if len(slots) > pops and slots[-pops - 1]:
            pops += 1                                       # the NULL under the callable
    elif ins.opname == "FORMAT_VALUE":
        pops = 2 if isinstance(ins.arg, tuple) and ins.arg[1] else 1
    del slots[len(slots) - pops:]
    return tuple(slots) + pushes


# -- the code after the break --------------------------------------------------------------------
def view_of(root, index, perm, shape):
    """A view of ``root`` as a ``breaks.ViewRef`` describes it. Resume prologues call it so that
    the capture of the resume function sees the view made from its root (writes through it then
    reach the root, as in NumPy), rather than two unrelated argument arrays."""
    key = ()
    for item in index:          # in code constants, slices travel as (start, stop, step): hashable
        key = key + ((slice(*item) if type(item) is tuple else item),)
    return root[key].transpose(perm).reshape(shape)


@dataclass(frozen=True)
class Signature:
    """How a resume function receives the state after a break: parameters for the non-NULL stack
    entries, then for the plain locals, then for the roots of view locals that are not locals
    themselves; the prologue rebuilds each view local from its root with ``view_of``."""
    null_slots: tuple       # per stack entry, bottom first: is it CPython's NULL
    local_names: tuple      # locals passed as they are
    views: tuple            # (local name, root parameter, index with slices as triples, perm, shape)
    roots: tuple            # refs of the roots passed as extra parameters (ROOT_PARAMETER)

    @staticmethod
    def of(point, null_slots):
        plain = [n for n, ref in point.locals.items() if not isinstance(ref, ViewRef)]
        # Plain locals that are arrays can serve as roots: one parameter per array object.
        local_of = {}
        for name in plain:
            ref = point.locals[name]
            if isinstance(ref, (ArgRef, OutputRef)):
                local_of.setdefault(ref, name)
        views, roots = [], []
        for name, ref in point.locals.items():
            if not isinstance(ref, ViewRef):
                continue
            root = local_of.get(ref.root)
            if root is None:
                if ref.root not in roots:
                    roots.append(ref.root)
                root = ROOT_PARAMETER.format(roots.index(ref.root))
            index = tuple((i.start, i.stop, i.step) if isinstance(i, slice) else i for i in ref.index)
            views.append((name, root, index, ref.perm, ref.shape))
        return Signature(tuple(null_slots), tuple(plain), tuple(views), tuple(roots))

    @property
    def key(self):
        return (self.null_slots, self.local_names, self.views)


def _instructions(code):
    """``code`` as the bytecode package's abstract instructions, with the position of each CPython
    instruction (by offset) in that list."""
    import bytecode as bc
    original = bc.Bytecode.from_code(code)
    items = list(original)
    positions = [k for k, item in enumerate(items) if isinstance(item, bc.Instr)]
    cpython = [i for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]
    if len(cpython) != len(positions) or any(items[k].name != i.opname for k, i in zip(positions, cpython)):
        raise Unsupported("the bytecode package reads this function differently from dis")
    return original, items, {i.offset: k for k, i in zip(positions, cpython)}


def _prologue_start(code, line):
    import bytecode as bc
    prologue = [bc.Instr("COPY_FREE_VARS", len(code.co_freevars), lineno=line)] if code.co_freevars else []
    return prologue + [bc.Instr("RESUME", 0, lineno=line)]


def _make_function(fn, original, instructions, argnames, suffix):
    code = fn.__code__
    made = original.copy()
    made.clear()
    made.extend(instructions)
    made.argnames = list(argnames)
    made.argcount = len(made.argnames)
    made.posonlyargcount = made.kwonlyargcount = 0
    made.flags = code.co_flags & ~(0x04 | 0x08)         # no *args / **kwargs any more
    made.name = f"{code.co_name}_{suffix}"
    made.qualname = f"{code.co_qualname}_{suffix}"
    function = types.FunctionType(made.to_code(), fn.__globals__, made.name, None, fn.__closure__)
    function.__qualname__ = made.qualname
    return function


def resume_function(fn, offset, signature):
    """A plain function running ``fn``'s code from the instruction at ``offset``, taking its
    state as ``signature`` says."""
    import bytecode as bc

    code = fn.__code__
    original, items, position = _instructions(code)
    start = bc.Label()
    items.insert(position[offset], start)

    line = code.co_firstlineno

    def instr(*a):
        return bc.Instr(*a, lineno=line)

    prologue = _prologue_start(code, line)
    root_names = [ROOT_PARAMETER.format(k) for k in range(len(signature.roots))]
    for name, root, index, perm, shape in signature.views:
        prologue += [instr("PUSH_NULL"), instr("LOAD_CONST", view_of), instr("LOAD_FAST", root),
                     instr("LOAD_CONST", index), instr("LOAD_CONST", perm), instr("LOAD_CONST", shape)]
        if sys.version_info < (3, 12):
            prologue.append(instr("PRECALL", 4))
        prologue += [instr("CALL", 4), instr("STORE_FAST", name)]
    stack_names = []
    for slot, is_null in enumerate(signature.null_slots):
        if is_null:
            prologue.append(instr("PUSH_NULL"))
        else:
            stack_names.append(STACK_PARAMETER.format(slot))
            prologue.append(instr("LOAD_FAST", stack_names[-1]))
    prologue.append(instr("JUMP_FORWARD", start))
    return _make_function(fn, original, prologue + items,
                          stack_names + list(signature.local_names) + root_names, f"resume_at_{offset}")


def loop_body_function(fn, head_offset, body_offset, state_names):
    """One iteration of the loop whose FOR_ITER is at ``head_offset`` (``loops.LoopInfo``) as a
    function ``body(*state) -> state``: its prologue stands in for the iterator and the item,
    jumps to the body (``body_offset``: the store of the loop variable), and every jump
    back to the loop head returns the locals in ``state_names`` instead."""
    import bytecode as bc

    code = fn.__code__
    original, items, position = _instructions(code)
    head_at, body_start, done = position[head_offset], bc.Label(), bc.Label()
    head_labels = set()             # the labels naming the loop head (the items just before it)
    k = head_at - 1
    while k >= 0 and not isinstance(items[k], bc.Instr):
        if isinstance(items[k], bc.Label):
            head_labels.add(id(items[k]))
        k -= 1
    items.insert(position[body_offset], body_start)
    line = code.co_firstlineno

    def instr(*a):
        return bc.Instr(*a, lineno=line)

    for k, item in enumerate(items):
        if isinstance(item, bc.Instr) and isinstance(item.arg, bc.Label) and id(item.arg) in head_labels:
            # Back to the loop head ends the iteration: jump forward to the epilogue instead.
            items[k] = bc.Instr(item.name.replace("BACKWARD", "FORWARD"), done, location=item.location)
    # None stands in for the iterator and for the item (never read: loops.outline_candidate),
    # so that the body does not specialise on the iteration it runs.
    prologue = _prologue_start(code, line) + [instr("LOAD_CONST", None), instr("LOAD_CONST", None),
                                              instr("JUMP_FORWARD", body_start)]
    epilogue = [done] + [instr("LOAD_FAST", n) for n in state_names] + [
        instr("BUILD_TUPLE", len(state_names)), instr("SWAP", 2), instr("POP_TOP"), instr("RETURN_VALUE")]
    return _make_function(fn, original, prologue + items + epilogue, list(state_names),
                          f"loop_body_at_{head_offset}")


class Continuation:
    """The result builder of an entry that stops at a graph break (see the module docstring)."""

    def __init__(self, owner, point, writebacks=()):
        self.owner = owner              # the CompiledFunction the entry belongs to
        self.point = point              # capture.breaks.BreakPoint
        self.writebacks = writebacks    # (argument index, output index) to copy first
        self.signature = Signature.of(point, stack_after(point.instruction, [r is NULL_REF for r in point.stack]))
        self.resumes = {}               # target index -> compiled resume function (``prepare``)

    def prepare(self):
        """Makes the resume functions (and loop body) now, compiled on their first call, so that
        one that cannot be made sends the whole function to Python before anything ran. Returns
        them (explain walks them)."""
        point, owner = self.point, self.owner
        if point.loop is not None:
            exit_signature = Signature(self.signature.null_slots[:-1], loop_exit_names(point), (), ())
            return [owner.loop_body(point.loop, loop_state_names(point)),
                    owner.resume_at(point.loop.exit, exit_signature)]
        self.resumes = {target: owner.resume_at(target, self.signature) for target in point.targets}
        return list(self.resumes.values())

    def __call__(self, outputs, args):
        for arg_index, output_index in self.writebacks:
            np.copyto(args[arg_index], outputs[output_index], casting="no")
        objects = _Rebuilder(outputs, args)
        stack = [objects.get(r) for r in self.point.stack]
        if self.point.loop is not None:
            return self._run_loop(stack, objects)
        # The locals as they were before the instruction: a call rebinds none, but it may mutate
        # what they refer to, which these objects (rebuilt once) then show.
        plain = [objects.get(self.point.locals[name]) for name in self.signature.local_names]
        roots = [objects.get(r) for r in self.signature.roots]
        ins = self.point.instruction
        jumped = execute(ins, stack)
        resume = self.resumes[ins.target if jumped else self.point.index + 1]
        return resume(*[v for v in stack if v is not NULL], *plain, *roots)

    def _run_loop(self, stack, objects):
        """The outlined loop (``capture/loops.py``): the compiled body once per item, then the
        code after the loop."""
        loop = self.point.loop
        iterable = stack.pop()                          # GET_ITER's operand: a range
        names = loop_state_names(self.point)
        values = [objects.get(self.point.locals[n]) if n in self.point.locals else _UNBOUND for n in names]
        body = self.owner.loop_body(loop, names)
        for item in iterable:               # (outlined loops run at least OUTLINE_MIN_TRIPS times)
            values = body(*values)
        state = dict(zip(names, values), **{loop.variable: item})
        after = {}
        for n in loop_exit_names(self.point):
            value = state[n] if n in state else objects.get(self.point.locals[n])
            if value is not _UNBOUND:
                after[n] = value
        signature = Signature(tuple(v is NULL for v in stack), tuple(after), (), ())
        resume = self.owner.resume_at(loop.exit, signature)
        return resume(*[v for v in stack if v is not NULL], *after.values())

    def run(self, *args):
        """The entry's runner when the graph before the break computes nothing."""
        return self(None, args)


def loop_state_names(point):
    """What a loop body receives and returns: the locals it reads or stores (the loop variable
    aside: the driver binds it). The others pass the loop by unchanged, and unguarded: a trip
    count held in a local does not make the body recompile."""
    names = [n for n in point.locals if n != point.loop.variable and n in point.loop.used]
    return tuple(names + [n for n in point.loop.stored if n not in names])


def loop_exit_names(point):
    """The locals the code after an outlined loop may read, in the resume function's order."""
    names = list(point.locals)
    names += [n for n in loop_state_names(point) if n not in names]
    names += [point.loop.variable] if point.loop.variable not in names else []
    return tuple(n for n in names if n in point.loop.live_after)


class ResumeCache:
    """The resume functions (and loop bodies) of one compiled function, made once per key
    (target, stack layout, live locals) and compiled with the function's options."""

    def __init__(self):
        self._lock = threading.Lock()
        self._functions = {}

    def get(self, key, make_function, make_compiled):
        with self._lock:
            compiled = self._functions.get(key)
            if compiled is None:
                compiled = make_compiled(make_function())
                self._functions[key] = compiled
            return compiled

    def functions(self):
        with self._lock:
            return list(self._functions.values())

    def clear(self):
        with self._lock:
            functions = list(self._functions.values())
            self._functions.clear()
        for f in functions:
            f.reset()
