"""``backend="eager"``: run a captured graph with NumPy, op by op.

It shares nothing with the Halide lowering, so comparing it with the original function checks the
bytecode capture alone, and comparing it with the compiled kernel checks the lowering alone.
"""
from __future__ import annotations

import numpy as np

_UNARY = {
    "neg": np.negative, "abs": np.abs, "square": np.square, "sign": np.sign, "exp": np.exp,
    "log": np.log, "log1p": np.log1p, "log2": np.log2, "log10": np.log10, "exp2": np.exp2, "cbrt": np.cbrt, "expm1": np.expm1, "sqrt": np.sqrt, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "arcsinh": np.arcsinh, "arccosh": np.arccosh,
    "arctanh": np.arctanh, "reciprocal": np.reciprocal,
    "floor": np.floor, "ceil": np.ceil, "rint": np.rint, "trunc": np.trunc, "isnan": np.isnan,
    "isfinite": np.isfinite, "isinf": np.isinf, "invert": np.invert, "signbit": np.signbit,
    # the set bits of the two's-complement bits (NumPy's bitwise_count of an unsigned view)
    "popcount": lambda x: np.bitwise_count(x.view(x.dtype.str.replace("i", "u"))).astype(x.dtype),
}
_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "maximum": np.maximum,
    "minimum": np.minimum, "arctan2": np.arctan2, "hypot": np.hypot, "copysign": np.copysign,
    "left_shift": np.left_shift, "right_shift": np.right_shift,
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or, "bitwise_xor": np.bitwise_xor, "eq": np.equal, "ne": np.not_equal,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
}
_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any, "all": np.all}


def _slice_index(attrs):
    index = []
    for start, stop, step in zip(attrs["starts"], attrs["stops"], attrs["steps"]):
        index.append(slice(start, None if stop < 0 else stop, step))
    return tuple(index)


def _slice_update(x, value, attrs):
    out = x.copy()
    out[_slice_index(attrs)] = value
    return out


def _eval(graph, node, values, args):
    kind = graph.kind(node)
    attrs = graph.attrs(node)
    dtype = np.dtype(graph.dtype(node))
    xs = [values[i] for i in graph.inputs(node)]
    if kind == "input":
        return np.asarray(args[attrs["arg"]])
    if kind == "constant":
        return np.asarray(attrs["value"]).astype(dtype)
    if kind == "cast":
        return xs[0].astype(dtype)
    if kind == "broadcast":
        return np.broadcast_to(xs[0], attrs["shape"])
    if kind in _UNARY:
        return _UNARY[kind](xs[0])
    if kind in _BINARY:
        if kind in ("add", "mul") and dtype == np.bool_:
            return (np.logical_or if kind == "add" else np.logical_and)(*xs)
        return _BINARY[kind](*xs)
    if kind == "where":
        return np.where(*xs)
    if kind in _REDUCE:
        return _REDUCE[kind](xs[0], axis=tuple(attrs["axes"]), keepdims=bool(attrs["keepdims"]))
    if kind in ("argmax", "argmin"):
        fn = np.argmax if kind == "argmax" else np.argmin
        return fn(xs[0], axis=attrs["axis"], keepdims=bool(attrs["keepdims"])).astype(np.int64)
    if kind == "matmul":
        return np.matmul(*xs)
    if kind == "transpose":
        return np.transpose(xs[0], attrs["perm"])
    if kind == "reshape":
        return np.reshape(xs[0], attrs["shape"])
    if kind == "slice":
        return xs[0][_slice_index(attrs)]
    if kind == "slice_update":
        return _slice_update(xs[0], xs[1], attrs)
    raise NotImplementedError(f"eager backend: no rule for op {kind!r}")


def run_graph(graph, args):
    """The graph's outputs for these call arguments, as fresh NumPy arrays."""
    values = {}
    with np.errstate(all="ignore"):
        for node in range(graph.num_nodes):
            values[node] = _eval(graph, node, values, args)
    return [np.array(values[o], dtype=graph.dtype(o), copy=True) for o in graph.outputs]
