"""Arguments with structure: tuples, lists and dicts of arrays and scalars (nested), keyword-only
parameters, ``*args`` and ``**kwargs``.

A call is bound as Python binds it, then flattened into *leaves* (the arrays and scalars the
dispatcher guards and the kernel takes, in order) and a ``Spec`` (the parameters, and for each
the nesting: container types, lengths, dict keys). The spec selects a family of compiled entries;
within it the leaves are guarded like the arguments of a plain function. Capture rebuilds the
containers around the leaves' abstract values (``rebuild``), so the function's own code indexes,
unpacks and iterates them as Python does.

The containers the function sees are rebuilt, not the caller's: a function that changes a list
or dict it was given (``xs.append``, ``d[k] = v``) is found by ``changed_containers`` after
capture and runs as Python, so the caller sees the change.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import Unsupported
from .guards import is_constant_by_value

MAX_LEAVES = 256     # more leaves than this run as Python: one kernel argument each
MAX_DEPTH = 8
KEY_TYPES = (str, int, bool, type(None))   # dict keys compared exactly by == and hash

LEAF = None          # a Spec tree node for one leaf


@dataclass(frozen=True)
class Spec:
    names: tuple     # parameter names, in the code's order (positional, keyword-only, *, **)
    trees: tuple     # per parameter: LEAF, or (container type, children)
    kinds: tuple     # per parameter: "pos", "kwonly", "varargs" or "varkw"


def _is_container(value):
    if type(value) is tuple:
        return not is_constant_by_value(value)   # tuples of ints/str stay guarded by value
    if type(value) is list:
        return True
    return type(value) is dict and all(type(k) in KEY_TYPES for k in value)


def _tree(value, leaves, depth=0):
    if not _is_container(value):
        leaves.append(value)
        return LEAF
    if depth >= MAX_DEPTH:
        raise Unsupported(f"an argument nested deeper than {MAX_DEPTH} containers")
    if type(value) is dict:
        children = tuple((type(k), k, _tree(v, leaves, depth + 1)) for k, v in value.items())
    else:
        children = tuple(_tree(v, leaves, depth + 1) for v in value)
    if len(leaves) > MAX_LEAVES:
        raise Unsupported(f"arguments holding more than {MAX_LEAVES} arrays and scalars")
    return (type(value), children)


def flatten(bound: dict, fn) -> tuple:
    """(spec, leaves) for the bound arguments of ``fn`` (interpreter.bind_arguments); spec is
    None where the call is plain: positional parameters only, no containers."""
    code = fn.__code__
    n_pos, n_kwonly = code.co_argcount, code.co_kwonlyargcount
    kinds = ["pos"] * n_pos + ["kwonly"] * n_kwonly
    if code.co_flags & 0x04:
        kinds.append("varargs")
    if code.co_flags & 0x08:
        kinds.append("varkw")
    names = code.co_varnames[:len(kinds)]
    leaves = []
    trees = tuple(_tree(bound[name], leaves) for name in names)
    if all(kind == "pos" for kind in kinds) and all(t is LEAF for t in trees):
        return None, leaves
    return Spec(tuple(names), trees, tuple(kinds)), leaves


def rebuild(spec: Spec, leaf_values) -> tuple:
    """(locals by parameter name, the lists and dicts built, each with a snapshot of its items)
    from the leaves' values, in the order ``flatten`` took them."""
    it = iter(leaf_values)
    mutable = []

    def build(tree):
        if tree is LEAF:
            return next(it)
        kind, children = tree
        if kind is dict:
            value = {k: build(child) for _, k, child in children}
            mutable.append((value, list(value.items())))
        else:
            value = kind(build(child) for child in children)
            if kind is list:
                mutable.append((value, list(value)))
        return value

    local_values = {name: build(tree) for name, tree in zip(spec.names, spec.trees)}
    return local_values, mutable


def changed_containers(mutable) -> bool:
    """Whether the function changed a list or dict argument (items compared by identity)."""
    for container, before in mutable:
        after = list(container.items()) if type(container) is dict else list(container)
        if len(after) != len(before):
            return True
        for a, b in zip(after, before):
            if type(container) is dict:
                if a[0] != b[0] or type(a[0]) is not type(b[0]) or a[1] is not b[1]:
                    return True
            elif a is not b:
                return True
    return False


def describe(spec: Spec) -> str:
    """The spec as a signature-like line, for logs and explain: ``f(x, pair=(·, ·), *args=(·,))``."""
    def show(tree):
        if tree is LEAF:
            return "·"
        kind, children = tree
        if kind is dict:
            return "{" + ", ".join(f"{k!r}: {show(c)}" for _, k, c in children) + "}"
        inner = ", ".join(show(c) for c in children)
        return f"({inner}{',' if len(children) == 1 else ''})" if kind is tuple else f"[{inner}]"
    prefix = {"pos": "", "kwonly": "", "varargs": "*", "varkw": "**"}
    return ", ".join(f"{prefix[k]}{n}={show(t)}" for n, t, k in zip(spec.names, spec.trees, spec.kinds))
