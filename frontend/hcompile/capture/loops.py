"""Long ``for`` loops whose body is whole-array code: compile the body once, run the loop.

Unrolling a loop into one graph fuses its iterations, which is what a short loop wants; a
time-stepping loop of a thousand steps would make a graph (and a compile) a thousand bodies
long. So a ``for _ in range(n)`` at the top level of the function, with ``n`` above
``OUTLINE_MIN_TRIPS``, becomes a graph break of a special kind (Dynamo would unroll it): the code
before the loop is compiled, the loop itself runs in Python calling a *body function* (the
loop's bytecode as a function of the live locals, returning them; compiled once, cached like
any other), and the code after the loop continues in a resume function.

Only loops the body function can express exactly are outlined: the loop variable is not read
in the body (a body that indexes with it would specialise on every value and recompile each
iteration; such loops are unrolled as before), the body has no ``break`` or ``return`` (control
leaves only by finishing an iteration or by ``continue``), and the iterable is a ``range``.
"""
from __future__ import annotations

from dataclasses import dataclass

from .breaks import live_locals

OUTLINE_MIN_TRIPS = 8


@dataclass(frozen=True)
class LoopInfo:
    head: int           # canonical index of the FOR_ITER
    exit: int           # where the loop continues once exhausted (FOR_ITER's target)
    variable: str       # the loop variable (stored, never read in the body)
    stored: tuple       # names the body stores (may be unbound before the loop)
    used: tuple         # names the body reads or stores: the only locals its function takes
    trips: int
    live_after: tuple   # names the code after the loop may read (breaks.live_locals)


def outline_candidate(frame, get_iter_index, iterable) -> LoopInfo | None:
    """The loop starting at GET_ITER ``get_iter_index`` if its body can run as a compiled
    function, else None (it is then unrolled)."""
    if type(iterable) is not range or len(iterable) < OUTLINE_MIN_TRIPS or frame.depth != 0:
        return None
    ins = frame.instructions
    head = get_iter_index + 1
    if head >= len(ins) or ins[head].opname != "FOR_ITER":
        return None
    exit_ = ins[head].target
    body = range(head + 1, exit_)
    if not body or ins[head + 1].opname != "STORE_FAST":
        return None
    variable = ins[head + 1].arg
    stored, used = [], set()
    for i in body:
        op = ins[i]
        if op.opname in ("RETURN_VALUE", "YIELD_VALUE") or op.opname.startswith(("DELETE_", "SETUP_")):
            return None
        if op.target is not None and op.target != head and not (head < op.target < exit_):
            return None          # a break, or a jump out of the loop
        if op.opname in ("LOAD_FAST", "LOAD_FAST_AND_CLEAR") and op.arg == variable:
            return None          # the body reads the loop variable
        if op.opname in ("STORE_DEREF", "LOAD_DEREF", "LOAD_CLOSURE", "MAKE_CELL"):
            return None          # cells: the body function could not share them
        if op.opname == "STORE_FAST" and op.arg not in stored and op.arg != variable:
            stored.append(op.arg)
        if op.opname in ("LOAD_FAST", "STORE_FAST", "LOAD_FAST_AND_CLEAR", "DELETE_FAST"):
            used.add(op.arg)
    if ins[exit_ - 1].opname != "JUMP" or ins[exit_ - 1].target != head:
        return None
    live_after = live_locals(ins, exit_ - 1, None)
    return LoopInfo(head, exit_, variable, tuple(stored), tuple(sorted(used)), len(iterable),
                    tuple(sorted(live_after)))
