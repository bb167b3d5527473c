"""Array sizes the function's own code reads, watched while capturing at placeholder sizes.

``dynamic_shapes`` captures a function again with dynamic axes set to placeholder extents and
compares the graphs. A graph cannot show a decision the code took on a size: ``if len(x) > 4``,
``min(x.shape[0], 5)``, ``x[:n - 1]``, ``range(n)`` give the same graph at every placeholder,
which are all large, yet another graph for ``n = 3``. So in those captures a size the code reads
(``x.shape``, ``x.size``, ``len(x)``, ``np.shape``) that depends on a placeholder is a
``SizeRead``: an int that records any comparison, truth test, hash or use as an index, and
whose arithmetic stays a ``SizeRead``. Once recorded, the entry keeps static shapes. Plain
arithmetic into a constant (``x / x.shape[0]``) is left to the graph comparison, which accepts
a constant only as scale * size + offset of one dynamic axis; so are uses as an index or a
slice bound (Python reads an int subclass's value without calling ``__index__``), which land in
the graph's attributes and shapes.
"""
from __future__ import annotations


class SizeWatch:
    """What a capture watches: the placeholder extents, and the first use that decides on one."""

    def __init__(self, placeholders=()):
        self.placeholders = frozenset(placeholders)
        self.decided = None      # a description of the first deciding use, once there is one

    def wrap_shape(self, shape):
        if not self.placeholders:
            return shape
        return tuple(SizeRead(s, self) if s in self.placeholders else s for s in shape)

    def wrap_count(self, count, shape):
        """A product of sizes (``x.size``): watched when any factor is a placeholder."""
        if self.placeholders and any(s in self.placeholders for s in shape):
            return SizeRead(count, self)
        return count


def _deciding(name):
    base = getattr(int, name)

    def method(self, *args):
        if self._watch.decided is None:
            self._watch.decided = f"the code uses a dynamic size in `{name}`"
        return base(self, *args)
    method.__name__ = name
    return method


def _arithmetic(name):
    base = getattr(int, name)

    def method(self, *args):
        result = base(self, *args)
        return SizeRead(result, self._watch) if type(result) is int else result
    method.__name__ = name
    return method


class SizeRead(int):
    def __new__(cls, value, watch):
        obj = super().__new__(cls, value)
        obj._watch = watch
        return obj

    def __repr__(self):
        return int.__repr__(self)


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__hash__",
              "__str__", "__format__"):
    setattr(SizeRead, _name, _deciding(_name))
for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__",
              "__rfloordiv__", "__mod__", "__rmod__", "__neg__", "__pos__", "__abs__", "__pow__",
              "__lshift__", "__rshift__", "__and__", "__or__", "__xor__"):
    setattr(SizeRead, _name, _arithmetic(_name))

NO_WATCH = SizeWatch()
