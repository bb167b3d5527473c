"""A stand-in for ``hcompile._C.Graph`` used by the capture tests until/unless the real one
is importable. It checks the IR's strictness (same dtype and shape on elementwise inputs, ...)
per core/OPS.md so that capture bugs show up here; it is test code only."""
import numpy as np
import pytest

UNARY_SAME = {"neg", "abs", "square", "sign", "exp", "log", "log1p", "expm1", "sqrt", "sin",
              "cos", "tan", "tanh", "sinh", "cosh", "arcsin", "arccos", "arctan", "reciprocal",
              "floor", "ceil", "rint", "trunc", "invert", "popcount"}
UNARY_BOOL = {"isnan", "isfinite", "isinf"}
FLOAT_ONLY = {"exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
              "cosh", "arcsin", "arccos", "arctan", "isnan", "isfinite", "isinf",
              "div", "arctan2"}       # reciprocal also takes ints (core/OPS.md)
BINARY_SAME = {"add", "sub", "mul", "div", "floordiv", "mod", "pow", "maximum", "minimum",
               "arctan2", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
REDUCE = {"sum", "prod", "max", "min", "any", "all"}


class FakeGraph:
    def __init__(self):
        self.nodes = []     # (kind, dtype, shape, inputs, attrs, loc)
        self.outputs = []

    def _add(self, kind, dtype, shape, inputs, attrs, loc):
        self.nodes.append((kind, np.dtype(dtype).name, list(shape), list(inputs), dict(attrs),
                           loc))
        return len(self.nodes) - 1

    def add_input(self, arg, dtype, shape, loc=""):
        return self._add("input", dtype, shape, [], {"arg": arg}, loc)

    def add_constant(self, value, dtype, loc=""):
        assert isinstance(value, (bool, int, float)), value
        return self._add("constant", dtype, [], [], {"value": value}, loc)

    def dtype(self, n):
        return self.nodes[n][1]

    def shape(self, n):
        return list(self.nodes[n][2])

    def kind(self, n):
        return self.nodes[n][0]

    def set_outputs(self, outs):
        self.outputs = list(outs)

    def add_op(self, kind, inputs, attrs={}, loc=""):
        for k, v in attrs.items():
            assert isinstance(v, (int, float, str, list)), (k, v)
        ins = [(self.dtype(i), tuple(self.shape(i))) for i in inputs]
        dt, sh = ins[0] if ins else (None, None)

        def fail(msg):
            raise ValueError(f"{kind}: {msg} (inputs {ins}, attrs {attrs})")

        if kind in FLOAT_ONLY and not dt.startswith("float"):
            fail("needs float")
        if kind in UNARY_SAME | UNARY_BOOL:
            if kind in ("neg", "abs", "square", "sign") and dt == "bool":
                fail("numeric")
            return self._add(kind, "bool" if kind in UNARY_BOOL else dt, sh, inputs, attrs, loc)
        if kind in BINARY_SAME | COMPARE | {"where"}:
            vals = ins[1:] if kind == "where" else ins
            if kind == "where" and ins[0][0] != "bool":
                fail("cond bool")
            if len({v[0] for v in vals}) != 1 or len({v[1] for v in ins}) != 1:
                fail("dtype/shape mismatch")
            if kind in ("sub", "div", "floordiv", "mod", "pow") and dt == "bool":
                fail("no bool")
            return self._add(kind, "bool" if kind in COMPARE else vals[0][0], sh, inputs,
                             attrs, loc)
        if kind == "cast":
            return self._add(kind, attrs["dtype"], sh, inputs, attrs, loc)
        if kind == "broadcast":
            if tuple(np.broadcast_shapes(sh, tuple(attrs["shape"]))) != tuple(attrs["shape"]):
                fail("bad broadcast")
            return self._add(kind, dt, attrs["shape"], inputs, attrs, loc)
        if kind == "reshape":
            if int(np.prod(sh)) != int(np.prod(attrs["shape"])):
                fail("bad reshape")
            return self._add(kind, dt, attrs["shape"], inputs, attrs, loc)
        if kind == "transpose":
            return self._add(kind, dt, [sh[p] for p in attrs["perm"]], inputs, attrs, loc)
        if kind == "slice":
            shape = [len(range(a, b, c)) for a, b, c in
                     zip(attrs["starts"], attrs["stops"], attrs["steps"])]
            assert len(shape) == len(sh)
            return self._add(kind, dt, shape, inputs, attrs, loc)
        if kind == "slice_update":
            shape = [len(range(a, b, c)) for a, b, c in
                     zip(attrs["starts"], attrs["stops"], attrs["steps"])]
            if list(ins[1][1]) != shape or ins[1][0] != dt:
                fail("value is not the slice's shape and dtype")
            return self._add(kind, dt, sh, inputs, attrs, loc)
        if kind in REDUCE:
            if kind in ("any", "all") and dt != "bool":
                fail("bool only")
            axes, keep = attrs["axes"], attrs["keepdims"]
            assert all(0 <= a < len(sh) for a in axes) and len(set(axes)) == len(axes)
            shape = [1 if i in axes else s for i, s in enumerate(sh)] if keep else \
                [s for i, s in enumerate(sh) if i not in axes]
            return self._add(kind, dt, shape, inputs, attrs, loc)
        if kind in ("argmax", "argmin"):
            ax = attrs["axis"]
            assert 0 <= ax < len(sh)
            shape = [1 if i == ax else s for i, s in enumerate(sh)] if attrs["keepdims"] else \
                [s for i, s in enumerate(sh) if i != ax]
            return self._add(kind, "int64", shape, inputs, attrs, loc)
        if kind == "matmul":
            (da, sa), (db, sb) = ins
            if da != db or len(sa) < 2 or len(sa) != len(sb) or sa[:-2] != sb[:-2] or \
                    sa[-1] != sb[-2]:
                fail("bad matmul")
            return self._add(kind, da, list(sa[:-1]) + [sb[-1]], inputs, attrs, loc)
        fail("unknown kind")

    def verify(self):
        pass

    def __str__(self):
        lines = []
        for i, (kind, dt, sh, ins, attrs, loc) in enumerate(self.nodes):
            a = ", ".join(f"{k}={v}" for k, v in attrs.items())
            lines.append(f"%{i} = {kind}({', '.join('%' + str(j) for j in ins)}"
                         f"{'; ' + a if a else ''}) : {dt}{sh}")
        lines.append("return " + ", ".join(f"%{o}" for o in self.outputs))
        return "\n".join(lines)


_ELEMENTWISE_NUMPY = {
    "neg": np.negative, "abs": np.absolute, "square": np.square, "sign": np.sign,
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh,
    "cosh": np.cosh, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "reciprocal": np.reciprocal, "floor": np.floor, "ceil": np.ceil, "rint": np.rint,
    "trunc": np.trunc, "isnan": np.isnan, "isfinite": np.isfinite, "isinf": np.isinf,
    "invert": np.invert, "add": np.add, "sub": np.subtract, "mul": np.multiply,
    "div": np.true_divide, "floordiv": np.floor_divide, "mod": np.remainder,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum, "arctan2": np.arctan2,
    "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift, "right_shift": np.right_shift,
    "popcount": lambda x: np.bitwise_count(x.view(x.dtype.str.replace("i", "u"))).astype(x.dtype),
    "eq": np.equal, "ne": np.not_equal, "lt": np.less,
    "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "where": np.where,
    "matmul": np.matmul,
}


def graph_nodes(graph):
    """(kind, dtype, shape, inputs, attrs, loc) per node, for the double or the real _C.Graph."""
    if isinstance(graph, FakeGraph):
        return list(graph.nodes)
    return [(graph.kind(i), graph.dtype(i), list(graph.shape(i)), list(graph.inputs(i)),
             dict(graph.attrs(i)), graph.loc(i)) for i in range(graph.num_nodes)]


def evaluate(graph, args):
    """Run a graph (double or real) with NumPy, one IR op at a time (OPS.md semantics)."""
    vals = []
    with np.errstate(all="ignore"):
        for kind, dt, sh, ins, attrs, _ in graph_nodes(graph):
            xs = [vals[i] for i in ins]
            if kind == "input":
                v = np.asarray(args[attrs["arg"]])
            elif kind == "constant":
                v = np.array(attrs["value"], dtype=dt)
            elif kind == "cast":
                v = xs[0].astype(dt)
            elif kind == "broadcast":
                v = np.broadcast_to(xs[0], attrs["shape"])
            elif kind == "reshape":
                v = xs[0].reshape(attrs["shape"])
            elif kind == "transpose":
                v = xs[0].transpose(attrs["perm"])
            elif kind == "slice":
                v = xs[0]
                for ax, (a, b, c) in enumerate(zip(attrs["starts"], attrs["stops"],
                                                   attrs["steps"])):
                    v = v.take(np.arange(a, b, c, dtype=np.int64), axis=ax)
            elif kind == "slice_update":
                v = xs[0].copy()
                index = np.ix_(*(np.arange(a, b, c, dtype=np.int64) for a, b, c in
                                 zip(attrs["starts"], attrs["stops"], attrs["steps"])))
                v[index] = xs[1]
            elif kind in REDUCE:
                fn = getattr(np, kind)
                kw = {"dtype": dt} if kind in ("sum", "prod") else {}
                v = fn(xs[0], axis=tuple(attrs["axes"]), keepdims=bool(attrs["keepdims"]), **kw)
            elif kind in ("argmax", "argmin"):
                v = getattr(np, kind)(xs[0], axis=attrs["axis"],
                                      keepdims=bool(attrs["keepdims"])).astype(np.int64)
            else:
                v = _ELEMENTWISE_NUMPY[kind](*xs)
            v = np.asarray(v)
            assert v.dtype == np.dtype(dt), (kind, v.dtype, dt)
            assert list(v.shape) == list(sh), (kind, v.shape, sh)
            vals.append(v)
    return [vals[o] for o in list(graph.outputs)]


def rebuild_result(cap, outputs, args):
    """What the compiled function would return, from a Capture and its graph's outputs."""
    from hcompile.capture import ArgRef, OutputRef

    def conv(r):
        if isinstance(r, OutputRef):
            v = outputs[r.index]
            return v[()] if r.as_scalar else v.copy()
        if isinstance(r, ArgRef):
            return args[r.index]
        if type(r) in (tuple, list):
            return type(r)(conv(x) for x in r)
        return r
    return conv(cap.result)


def real_graph_available():
    try:
        from hcompile import _C   # noqa: F401
        return True
    except Exception:
        return False


def test_double_is_consistent():
    g = FakeGraph()
    x = g.add_input(0, "float32", [2, 3])
    with pytest.raises(ValueError):
        g.add_op("add", [x, g.add_constant(1.0, "float32")])
