"""Dynamic shapes: one compiled entry for every size of some array axes.

Which axes: under ``dynamic=None`` (the default) an axis becomes dynamic when a call differs from
an earlier entry only in that axis's size; under ``dynamic=True`` every axis is dynamic from the
first call; under ``dynamic=False`` none is. Sizes 0 and 1 stay specialised (broadcasting and
empty arrays behave differently there), so a dynamic axis is guarded to be at least 2.

How: dynamic axes whose sizes are equal in this call share one symbol (they may be broadcast
together; the guard then keeps them equal). The function is captured twice more, with every
symbol set to a placeholder extent (a prime whose window of +-2 MAX_OFFSET holds no integer of
the graph). The entry is generic only when all three captures (graphs, results, guards,
writebacks, the state at a graph break) are the same but where a shape or extent attribute
holds a symbol's size plus a fixed offset (``x[1:-1]`` has n - 2 elements), or a constant is
scale * size + offset (a mean's count), and the compiler's check
(``core/include/hcompile/symbols.h``) accepts every use of a symbolic axis. The kernel is
compiled from a placeholder capture and reads the sizes from the call's arrays; the guard takes
every size from the least that leaves each slice an element. Anything else (a decision on a
size the code read, ``x[:5]``, ``x[::2]``, ``x.reshape(-1)`` of a dynamic axis with others)
keeps the shapes static: ``NotGeneric`` says why and the caller compiles for the exact shapes.
"""
from __future__ import annotations

import struct

from . import _C
from .errors import Unsupported

MIN_EXTENT = 2           # sizes 0 and 1 stay specialised
MAX_OFFSET = 64          # a slice's length may be a dynamic size plus -64..64 (_C's kMaxSymbolOffset)

# Attributes that hold extents (broadcast/reshape targets, the input's own shape, slice ends):
# a symbol's placeholder may stand in them. Any other difference between captures is a value
# computed from a size, which the compiled code would freeze.
_EXTENT_ATTRS = ("shape", "stops")


class NotGeneric(Exception):
    """The capture depends on a dynamic extent in a way one kernel cannot follow."""


def dynamic_axes(arg_specs, args, earlier, dynamic, known):
    """The (argument, axis) pairs to compile symbolically: ``known`` (axes made dynamic before)
    plus, under ``dynamic=True``, every axis of every array argument, and under
    ``dynamic=None`` every axis whose size is all that differs from an ``earlier`` guard set.
    Axes of size 0 or 1 in this call are left out. ``known`` is updated."""
    if dynamic is False:
        return set()
    arrays = {i for i, spec in enumerate(arg_specs) if spec[0] == "array"}
    if dynamic:
        known |= {(i, axis) for i in arrays for axis in range(len(arg_specs[i][3]))}
    else:
        for old in earlier:
            changed = _changed_axes(old, arg_specs, arrays)
            if changed:
                known |= changed
    return {(i, axis) for i, axis in known
            if i in arrays and axis < args[i].ndim and args[i].shape[axis] >= MIN_EXTENT}


def _changed_axes(old, new, arrays):
    """The axes whose sizes differ when that is all that differs between two guard sets."""
    if old is None or len(old) != len(new):
        return set()
    changed = set()
    for i, (a, b) in enumerate(zip(old, new)):
        if a == b:
            continue
        if i not in arrays or a[0] != "array" or a[:3] != b[:3] or a[4] != b[4] or len(a[3]) != len(b[3]):
            return set()
        changed |= {(i, axis) for axis, (m, n) in enumerate(zip(a[3], b[3])) if m != n}
    return changed


def guard_specs(arg_specs, axes, smallest=None):
    """``arg_specs`` with the size of every dynamic axis replaced by -m, any size from m up
    (``smallest[(arg, axis)]``, else MIN_EXTENT)."""
    specs = list(arg_specs)
    for i, axis in axes:
        shape = list(specs[i][3])
        shape[axis] = -(smallest or {}).get((i, axis), MIN_EXTENT)
        specs[i] = specs[i][:3] + (tuple(shape),) + specs[i][4:]
    return specs


def schedule_bounds(smallest, compiled_symbols, report, record):
    """(``smallest`` raised, relations) for the guard of an entry whose schedule serves only some
    sizes of a symbol: from ``report["symbol_least"]`` (a GPU block of several rows along a
    symbolic axis needs that many rows) and below ``report["symbol_below"]`` (the entry compiled
    for a call with fewer rows than a larger call's blocks: a row a block), each on the symbol's
    first axis (its others are guarded equal to it). The compile record's ``dynamic`` line says so.
    """
    raised, relations = dict(smallest), []
    below = report.get("symbol_below") or [0] * len(compiled_symbols)
    for (_, arg, axis), least, limit in zip(compiled_symbols, report.get("symbol_least") or [], below):
        if least > raised.get((arg, axis), MIN_EXTENT):
            raised[(arg, axis)] = least
            record["dynamic"] += f" (blocks of rows: argument {arg} axis {axis} from {least})"
        if limit > 0:
            relations.append(("extent_below", arg, arg, True, axis, limit))
            record["dynamic"] += f" (a row a block: argument {arg} axis {axis} below {limit})"
    return raised, relations


def relation_holds(relation, args):
    """Whether a generic entry's relation (same_extent_relations, schedule_bounds) holds."""
    kind, a, b, expected, a_axis, other = relation
    size = args[a].shape[a_axis]
    return (size == args[b].shape[other] if kind == "same_extent" else size < other) == expected


def describe_size(size):
    """A guard spec's size: exact, or the least of any size (guard_specs)."""
    return f"any>={-size}" if size < 0 else str(size)


def symbols_of(args, axes):
    """Dynamic axes grouped into symbols: axes of equal size in this call share one (NumPy's
    broadcasting may have relied on the equality). A list of (size, [(arg, axis), ...])."""
    by_size = {}
    for i, axis in sorted(axes):
        by_size.setdefault(int(args[i].shape[axis]), []).append((i, axis))
    return sorted(by_size.items())


def same_extent_relations(symbols):
    """Guards keeping every axis of a symbol as large as its first one."""
    relations = []
    for _, members in symbols:
        (a, a_axis), rest = members[0], members[1:]
        relations += [("same_extent", a, b, True, a_axis, b_axis) for b, b_axis in rest]
    return relations


def generic_capture(capture_at, base, args, symbols):
    """(capture, symbols, extent values, smallest) to compile symbolically: the first three as
    ``_C.compile_graph`` takes them, (placeholder extent, argument, axis) per symbol and
    (constant node, symbol, scale, offset) per constant that is a size (a mean's count); then
    the least size each dynamic axis is compiled for, {(arg, axis): size} (a slice ``x[1:-1]``
    of it must keep one element). Or NotGeneric.

    ``capture_at(shapes, watched)`` captures the function with arrays taken as ``shapes`` ({arg:
    shape}), watching the code's reads of the ``watched`` sizes (``capture.size_reads``);
    ``base`` is the capture at the call's own shapes."""
    used = _ints_in(base.graph) | {size for size, _ in symbols}
    first = _placeholders(len(symbols), used, start=1009)
    second = _placeholders(len(symbols), used | set(first), start=5003)
    captures = []
    for values in (first, second):
        shapes = {}
        for (_, members), value in zip(symbols, values):
            for i, axis in members:
                shape = list(shapes.get(i, args[i].shape))
                shape[axis] = value
                shapes[i] = tuple(shape)
        try:
            captured = capture_at(shapes, values)
        except Unsupported as e:
            raise NotGeneric(f"with other sizes the capture stops: {e.reason}") from None
        if captured.size_decision is not None:
            raise NotGeneric(captured.size_decision)
        captures.append(captured)
    extents = [[size for size, _ in symbols], first, second]
    offsets = {}
    extent_values = _require_same(base, captures, extents, offsets)
    smallest = {}
    for k, (size, members) in enumerate(symbols):
        least = max(MIN_EXTENT, 1 - min(offsets.get(k, [0])))    # every slice of it keeps an element
        if size < least:
            raise NotGeneric(f"a slice of {describe(members)} is empty at this size")
        smallest.update((member, least) for member in members)
    compiled_symbols = [(value, *members[0]) for (_, members), value in zip(symbols, first)]
    try:
        _C.check_symbolic_extents(captures[0].graph, compiled_symbols)
    except ValueError as e:
        raise NotGeneric(str(e)) from None
    return captures[0], compiled_symbols, extent_values, smallest


def _placeholders(count, used, start):
    """Primes from ``start`` whose windows of +-2 MAX_OFFSET hold no used integer and no other
    placeholder: a static extent can then never pass for a dynamic one plus an offset."""
    values, candidate = [], start
    while len(values) < count:
        window = range(candidate - 2 * MAX_OFFSET, candidate + 2 * MAX_OFFSET + 1)
        if _is_prime(candidate) and not any(v in used or v in values for v in window):
            values.append(candidate)
        candidate += 1
    return values


def _is_prime(n):
    return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))


def _ints_in(graph):
    """Every integer in the graph's shapes and integer attributes."""
    found = set()
    for node in range(graph.num_nodes):
        found.update(graph.shape(node))
        for value in graph.attrs(node).values():
            if type(value) is int:
                found.add(value)
            elif type(value) in (list, tuple):
                found.update(v for v in value if type(v) is int)
    return found


def _require_same(base, captures, extents, offsets):
    """The constants that are sizes ((node, symbol, scale, offset) each); raises NotGeneric
    unless the captures agree everywhere else but in symbolic extents."""
    graphs = [base.graph] + [c.graph for c in captures]
    if len({g.num_nodes for g in graphs}) != 1 or len({tuple(g.outputs) for g in graphs}) != 1:
        raise NotGeneric("the graph's structure depends on the sizes")
    extent_values = []
    for node in range(base.graph.num_nodes):
        size = _same_node(graphs, node, extents, offsets)
        if size is not None:
            extent_values.append((node, *size))
    for name in ("result", "writebacks", "relations"):
        if any(repr(getattr(c, name)) != repr(getattr(base, name)) for c in captures):
            raise NotGeneric(f"the function's {name} depends on the sizes")
    if any(_break_state(c.break_point) != _break_state(base.break_point) for c in captures):
        raise NotGeneric("the state at the graph break depends on the sizes")
    if any([g.spec() for g in c.guards] != [g.spec() for g in base.guards] or c.identities != base.identities
           for c in captures):
        raise NotGeneric("what the function reads depends on the sizes")
    return extent_values


def _break_state(point):
    """What the code after a graph break starts from, as comparable text: where it resumes, and
    the values it is handed (graph outputs by index, and Python values, which must not be
    sizes)."""
    if point is None:
        return None
    return (point.index, repr(point.stack), repr(sorted(point.locals.items())), repr(point.loop))


def _same_node(graphs, node, extents, offsets):
    """Raises NotGeneric unless the node is the same in every capture but for symbolic extents;
    for a constant whose value is a size, that size as (symbol, scale, offset)."""
    first = graphs[0]
    for g in graphs[1:]:
        if (g.kind(node), g.dtype(node), g.inputs(node), g.loc(node)) != \
                (first.kind(node), first.dtype(node), first.inputs(node), first.loc(node)):
            raise NotGeneric(f"node %{node} depends on the sizes")
    where = f"node %{node} ({first.kind(node)}, {first.loc(node)})"
    _same_extents([g.shape(node) for g in graphs], extents, where, offsets)
    attrs = [g.attrs(node) for g in graphs]
    size = None
    for key in attrs[0]:
        values = [a.get(key) for a in attrs]
        if key in _EXTENT_ATTRS and all(type(v) in (list, tuple) for v in values):
            _same_extents(values, extents, where, offsets)
        elif any(not _identical(v, values[0]) for v in values[1:]):
            size = _as_size(values, extents) if key == "value" and first.kind(node) == "constant" else None
            if size is None:
                raise NotGeneric(f"{where}: its {key} is computed from a dynamic size")
    return size


def _as_size(values, extents):
    """(symbol, scale, offset) when the constant's value in each capture is scale * extent +
    offset of one symbol, with integer scale and offset; else None."""
    if not all(isinstance(v, (int, float)) and float(v).is_integer() for v in values):
        return None
    values = [int(v) for v in values]
    for k, column in enumerate(zip(*extents)):
        scale, rest = divmod(values[1] - values[2], column[1] - column[2])
        offset = values[1] - scale * column[1]
        if rest == 0 and scale != 0 and all(v == scale * n + offset for v, n in zip(values, column)):
            return k, scale, offset
    return None


def _same_extents(shapes, extents, where, offsets):
    """Each position holds one static size in all captures, or in each one symbol's extent
    plus one offset of at most MAX_OFFSET (recorded in ``offsets``: symbol -> offsets seen)."""
    if len({len(s) for s in shapes}) != 1:
        raise NotGeneric(f"{where}: its rank depends on the sizes")
    for column in zip(*shapes):
        if len(set(column)) == 1:
            continue
        for k, symbol in enumerate(zip(*extents)):
            offset = column[0] - symbol[0]
            if abs(offset) <= MAX_OFFSET and all(v - s == offset for v, s in zip(column, symbol)):
                offsets.setdefault(k, []).append(offset)
                break
        else:
            raise NotGeneric(f"{where}: its shape depends on the sizes other than as a dynamic axis")


def _identical(a, b):
    if type(a) is float and type(b) is float:
        return struct.pack("<d", a) == struct.pack("<d", b)
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        return len(a) == len(b) and all(_identical(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def describe(axes):
    return ", ".join(f"argument {i} axis {axis}" for i, axis in sorted(axes))


__all__ = ["MIN_EXTENT", "MAX_OFFSET", "NotGeneric", "dynamic_axes", "guard_specs", "schedule_bounds", "relation_holds",
           "describe_size", "symbols_of",
           "same_extent_relations", "generic_capture", "describe"]
