"""Turn a code object's bytecode into one canonical, version-independent instruction list.

The interpreter only ever sees the canonical form below, so supporting a new CPython means
adding a rewrite table here, not touching the handlers. Canonical instructions differ from
CPython's in these ways:

* caches, ``RESUME``, ``PRECALL``, ``NOP``, ``EXTENDED_ARG`` and the like are dropped;
* jumps are one of ``JUMP``, ``POP_JUMP_IF_{TRUE,FALSE,NONE,NOT_NONE}``,
  ``JUMP_IF_{TRUE,FALSE}_OR_POP`` and ``FOR_ITER``, with ``target`` = index into the list;
  ``FOR_ITER``'s target is where execution continues once the iterator is exhausted (the
  iterator already popped), so 3.12's ``END_FOR`` disappears;
* ``LOAD_GLOBAL`` with the NULL bit becomes ``PUSH_NULL`` + ``LOAD_GLOBAL``;
* a method load (3.11 ``LOAD_METHOD``, 3.12 ``LOAD_ATTR`` with the low bit) is ``LOAD_METHOD``,
  which pushes NULL then the bound attribute, so ``CALL`` has a single calling convention;
* ``KW_NAMES`` is folded into the following ``CALL`` (``kw_names``);
* ``BINARY_OP`` carries the operator symbol (``'+'``) and an ``inplace`` flag;
* 3.12 shorthands are expanded: ``RETURN_CONST`` -> ``LOAD_CONST`` + ``RETURN_VALUE``,
  ``BINARY_SLICE``/``STORE_SLICE`` -> ``BUILD_SLICE 2`` + subscript, ``CALL_INTRINSIC_1`` ->
  the named operation, ``LOAD_FAST_CHECK`` -> ``LOAD_FAST``.

Every canonical instruction keeps the offset and source line of the CPython instruction it came
from (future resume functions need the offsets; error messages need the lines).
"""
from __future__ import annotations

import bisect
import dis
import sys
from dataclasses import dataclass, field
from types import CodeType

SUPPORTED_VERSIONS = ((3, 11), (3, 12))

# Instructions that have no effect on the abstract state.
_DROPPED = {
    "CACHE", "RESUME", "PRECALL", "NOP", "EXTENDED_ARG", "COPY_FREE_VARS",
}

_JUMP_RENAMES = {
    # 3.11 directional jumps; 3.12 kept only the undirected names.
    "JUMP_FORWARD": "JUMP",
    "JUMP_BACKWARD": "JUMP",
    "JUMP_BACKWARD_NO_INTERRUPT": "JUMP",
    "JUMP_NO_INTERRUPT": "JUMP",
    "POP_JUMP_FORWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_BACKWARD_IF_TRUE": "POP_JUMP_IF_TRUE",
    "POP_JUMP_FORWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_BACKWARD_IF_FALSE": "POP_JUMP_IF_FALSE",
    "POP_JUMP_FORWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_BACKWARD_IF_NONE": "POP_JUMP_IF_NONE",
    "POP_JUMP_FORWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
    "POP_JUMP_BACKWARD_IF_NOT_NONE": "POP_JUMP_IF_NOT_NONE",
}
_CANONICAL_JUMPS = {
    "JUMP", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE",
    "POP_JUMP_IF_NOT_NONE", "JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP", "FOR_ITER",
}

# 3.12 CALL_INTRINSIC_1 operations we understand, by their dis name.
_INTRINSICS_1 = {
    "INTRINSIC_UNARY_POSITIVE": "UNARY_POSITIVE",
    "INTRINSIC_LIST_TO_TUPLE": "LIST_TO_TUPLE",
}


@dataclass
class Instr:
    opname: str
    arg: object = None          # canonical argument (a name, a constant, a count, an operator ...)
    offset: int = -1            # offset of the CPython instruction this came from
    lineno: int | None = None
    target: int | None = None   # for jumps: index into the canonical list
    extra: dict = field(default_factory=dict)   # e.g. {'kw_names': (...)} or {'inplace': True}

    def __repr__(self):
        tgt = f" ->{self.target}" if self.target is not None else ""
        ext = f" {self.extra}" if self.extra else ""
        return f"<{self.opname} {self.arg!r}{tgt}{ext} @{self.offset} L{self.lineno}>"


@dataclass
class NormalizedCode:
    code: CodeType
    instructions: list[Instr]
    # (start_offset, end_offset) ranges covered by an exception handler: the interpreter never
    # raises, but resume functions must not be started inside one of these.
    protected_ranges: list[tuple[int, int]]

    def index_of_offset(self, offset: int) -> int:
        for i, ins in enumerate(self.instructions):
            if ins.offset >= offset:
                return i
        return len(self.instructions)


def _version():
    return sys.version_info[:2]


def check_version():
    if _version() not in SUPPORTED_VERSIONS:
        from ..errors import Unsupported
        raise Unsupported(f"Python {'.'.join(map(str, _version()))} bytecode is not supported yet")


def _exception_ranges(code: CodeType):
    parse = getattr(dis, "_parse_exception_table", None)
    if parse is None:
        return []
    return [(e.start, e.end) for e in parse(code)]


def _binary_op_symbol(arg: int):
    name, symbol = dis._nb_ops[arg]
    inplace = name.startswith("NB_INPLACE_")
    return symbol.rstrip("=") if inplace else symbol, inplace


def normalize(code: CodeType) -> NormalizedCode:
    """Canonical instructions of ``code`` (see the module docstring)."""
    check_version()
    v312 = _version() >= (3, 12)
    raw = list(dis.get_instructions(code))
    out: list[Instr] = []
    jump_offsets: list[tuple[Instr, int]] = []   # (canonical instr, CPython target offset)
    pending_kw_names = None
    lineno = code.co_firstlineno

    for ins in raw:
        if ins.positions is not None and ins.positions.lineno is not None:
            lineno = ins.positions.lineno
        op = ins.opname

        def emit(opname, arg=None, **extra):
            i = Instr(opname, arg, ins.offset, lineno, extra=extra)
            out.append(i)
            return i

        if op in _DROPPED:
            continue
        if op == "KW_NAMES":
            pending_kw_names = code.co_consts[ins.arg]
            continue
        op = _JUMP_RENAMES.get(op, op)

        if op in _CANONICAL_JUMPS:
            target = ins.argval
            if op == "FOR_ITER" and v312:
                # 3.12 jumps to END_FOR, which the exhausted iterator skips over.
                target = next(r.offset for r in raw if r.offset > target
                              and r.opname not in ("CACHE",))
            jump_offsets.append((emit(op), target))
        elif op == "END_FOR":
            # Only reached by falling off FOR_ITER's target adjustment; never executed.
            continue
        elif op == "LOAD_GLOBAL":
            if ins.arg & 1:
                emit("PUSH_NULL")
            emit("LOAD_GLOBAL", ins.argval)
        elif op == "LOAD_ATTR":
            if v312 and ins.arg & 1:
                emit("LOAD_METHOD", ins.argval)
            else:
                emit("LOAD_ATTR", ins.argval)
        elif op == "LOAD_METHOD":
            emit("LOAD_METHOD", ins.argval)
        elif op == "LOAD_FAST_CHECK":
            emit("LOAD_FAST", ins.argval)
        elif op == "CALL":
            emit("CALL", ins.arg, kw_names=tuple(pending_kw_names or ()))
            pending_kw_names = None
        elif op == "BINARY_OP":
            symbol, inplace = _binary_op_symbol(ins.arg)
            emit("BINARY_OP", symbol, inplace=inplace)
        elif op == "RETURN_CONST":
            emit("LOAD_CONST", ins.argval)
            emit("RETURN_VALUE")
        elif op == "BINARY_SLICE":
            emit("BUILD_SLICE", 2)
            emit("BINARY_SUBSCR")
        elif op == "STORE_SLICE":
            emit("BUILD_SLICE", 2)
            emit("STORE_SUBSCR")
        elif op == "CALL_INTRINSIC_1":
            emit(_INTRINSICS_1.get(ins.argrepr, f"CALL_INTRINSIC_1:{ins.argrepr}"))
        elif op == "COMPARE_OP":
            emit("COMPARE_OP", ins.argval)
        else:
            # Everything else is canonical as is; argval is dis's decoded argument (a name,
            # a constant, a count). For IS_OP/CONTAINS_OP it is the invert flag.
            emit(op, ins.argval)

    # Jump targets: CPython offsets -> canonical indices. A target offset always starts a
    # canonical instruction (or lies past a dropped one), so take the first at or after it.
    offsets = [c.offset for c in out]        # non-decreasing
    for instr, target in jump_offsets:
        instr.target = bisect.bisect_left(offsets, target)
    return NormalizedCode(code, out, _exception_ranges(code))
