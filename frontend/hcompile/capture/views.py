"""NumPy views as maps onto their root array, so that writes go where NumPy's go.

NumPy's basic indexing, transposes and axis insertions/removals give views: arrays that share
their base's memory, so a write through either is seen by the other. The capture is functional
(a write makes a new graph node), so it keeps, for every view, how its elements sit in the
*root* array (the one that owns the memory): a ``ViewMap``. With it

* a view is re-derived from its root's current node after the root is written (``rebuild``), and
* a write into a view becomes a write into a slice of the root (``root_slice``).

A ``ViewMap`` has one entry per root axis: ``(axis, start, step)`` says that root index =
``start + step * i`` for the view's index ``i`` along ``axis``; ``axis`` is None for a root axis
the view has fixed at ``start`` (an integer index). View axes no entry names have size 1 (added
by ``None`` or ``expand_dims``). Views the map cannot describe (a reshape that merges or splits
axes, ``broadcast_to``) are *opaque*: reading them is fine, writes through them or into their
root are not captured (``stores.py`` raises Unsupported, so the function runs as Python).
"""
from __future__ import annotations

from dataclasses import dataclass

from .values import ArrayValue


@dataclass(frozen=True)
class ViewMap:
    entries: tuple          # per root axis: (view axis or None, start, step)
    shape: tuple            # the view's shape

    @staticmethod
    def identity(shape) -> "ViewMap":
        return ViewMap(tuple((i, 0, 1) for i in range(len(shape))), tuple(shape))

    def index(self, selection, out_shape) -> "ViewMap":
        """The map of ``view[key]``: ``selection`` holds, per view axis, ``("int", i)`` or
        ``("slice", start, step, out_axis)``; ``out_shape`` is the result's shape."""
        entries = []
        for axis, start, step in self.entries:
            if axis is None:
                entries.append((None, start, 0))
                continue
            sel = selection[axis]
            if sel[0] == "int":
                entries.append((None, start + step * sel[1], 0))
            else:
                _, s, st, out_axis = sel
                entries.append((out_axis, start + step * s, step * st))
        return ViewMap(tuple(entries), tuple(out_shape))

    def transpose(self, perm) -> "ViewMap":
        inverse = {p: i for i, p in enumerate(perm)}
        entries = tuple((None if a is None else inverse[a], s, st) for a, s, st in self.entries)
        return ViewMap(entries, tuple(self.shape[p] for p in perm))

    def regroup(self, new_shape):
        """The map after a reshape that only inserts or removes size-1 axes, else None."""
        old_kept = [i for i, n in enumerate(self.shape) if n != 1]
        new_kept = [i for i, n in enumerate(new_shape) if n != 1]
        if [self.shape[i] for i in old_kept] != [new_shape[i] for i in new_kept]:
            return None
        moved = dict(zip(old_kept, new_kept))
        entries = tuple((None, s, 0) if a is None or a not in moved else (moved[a], s, st)
                        for a, s, st in self.entries)
        return ViewMap(entries, tuple(new_shape))

    # -- from the root and back ----------------------------------------------------------------
    def _root_slice_attrs(self, root_shape):
        starts, stops, steps, counts = [], [], [], []
        for (axis, start, step), n in zip(self.entries, root_shape):
            count = 1 if axis is None else self.shape[axis]
            step = 1 if axis is None else step
            starts.append(start)
            stops.append(start + step * count)
            steps.append(step)
            counts.append(count)
        return starts, stops, steps, counts

    def _mapped_order(self):
        """The view axes that root axes map to, in root-axis order."""
        return [a for a, _, _ in self.entries if a is not None]

    def rebuild(self, b, root):
        """The view's value, built from ``root``'s current value (an ArrayValue)."""
        starts, stops, steps, counts = self._root_slice_attrs(root.shape)
        r = root
        if any(st != 0 or sp != n or sd != 1 for st, sp, sd, n in zip(starts, stops, steps, root.shape)):
            r = b.op("slice", [root], {"starts": starts, "stops": stops, "steps": steps})
        order = self._mapped_order()
        r = b.reshape(r, [self.shape[a] for a in order])
        perm = sorted(range(len(order)), key=lambda k: order[k])
        if perm != list(range(len(order))):
            r = b.op("transpose", [r], {"perm": perm})
        return b.reshape(r, self.shape)

    def root_slice(self, b, value, root_shape):
        """Where a value of the view's shape goes in the root: (starts, stops, steps, value in
        the slice's shape), the value an ArrayValue already cast and broadcast to ``shape``."""
        starts, stops, steps, counts = self._root_slice_attrs(root_shape)
        order = self._mapped_order()
        unmapped = [a for a in range(len(self.shape)) if a not in order]
        r = value
        perm = order + unmapped
        if perm != list(range(len(perm))):
            r = b.op("transpose", [r], {"perm": perm})
        return starts, stops, steps, b.reshape(r, counts)

    def covers(self, root_shape) -> bool:
        """Whether the view is the whole root in its own order (a write replaces it)."""
        return all(a == i and s == 0 and st == 1 and self.shape[a] == n
                   for i, ((a, s, st), n) in enumerate(zip(self.entries, root_shape))) \
            and len(self.shape) == len(root_shape)


def make_view(b, result, base, derive=None):
    """``result`` (an ArrayValue of the same data) as a NumPy view of ``base``. ``derive`` maps
    the base's ViewMap to the result's; without it (or over an opaque base) the view is opaque."""
    if base.is_scalar:
        return ArrayValue(result.node, result.dtype, result.shape)   # scalars are immutable
    base_map = base.view_map if base.view_of is not None else ViewMap.identity(base.shape)
    vmap = derive(base_map) if derive is not None and base_map is not None else None
    rebuild = None
    if vmap is not None:
        def rebuild(root, vmap=vmap):
            return vmap.rebuild(b, root)
    return ArrayValue(result.node, result.dtype, result.shape, view_of=base, view_map=vmap,
                      rebuild=rebuild)
