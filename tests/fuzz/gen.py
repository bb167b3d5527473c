"""Seeded random NumPy programs over expression DAGs, emitted as Python source.

A program is a list of nodes in topological order: the function's arguments, literal constants
(inlined into the source), and operations, each a source template such as ``np.maximum({0}, {1})``
over earlier nodes. Operands are picked from all earlier nodes, so subexpressions are shared.
Every candidate operation is run with NumPy on the first input set while the program is built:
only what NumPy accepts is kept (and a few candidates NumPy rejects become "error programs", whose
compiled version must raise the same exception type). NumPy also tells each node's dtype and
shape, so the generator needs no typing rules of its own.

The generator draws every decision through a `Chooser`: `RandomChooser(seed)` for long runs
(program i of a run with seed S is `RandomChooser((S, i))`), `HypothesisChooser(data)` for the
hypothesis test (hypothesis then shrinks the decisions; the simplest choice is always first).
"""

from __future__ import annotations

import dataclasses
import random
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import values

# ------------------------------------------------------------------------------------------
# Choosers


class RandomChooser:
    def __init__(self, seed):
        self._r = random.Random(repr(seed))

    def integer(self, lo: int, hi: int) -> int:
        return self._r.randint(lo, hi)

    def chance(self, p: float) -> bool:
        return self._r.random() < p

    def choice(self, seq):
        return seq[self.integer(0, len(seq) - 1)]

    def weighted(self, table: dict):
        keys = list(table)
        return self._r.choices(keys, weights=[table[k] for k in keys])[0]


class HypothesisChooser(RandomChooser):
    """Decisions drawn from a hypothesis `data` object; shrinking moves toward the first choice
    and toward `chance` being False."""

    def __init__(self, data):
        from hypothesis import strategies as st

        self._data, self._st = data, st

    def integer(self, lo, hi):
        return self._data.draw(self._st.integers(lo, hi))

    def chance(self, p):
        return self._data.draw(self._st.integers(0, 999)) >= 1000 - int(p * 1000)

    def weighted(self, table):
        keys = list(table)
        total = sum(table.values())
        k = self._data.draw(self._st.floats(0, total, exclude_max=True))
        for key in keys:
            k -= table[key]
            if k < 0:
                return key
        return keys[-1]


# ------------------------------------------------------------------------------------------
# Programs


@dataclass
class InputSpec:
    name: str
    kind: str  # "array" | "npscalar" (a NumPy scalar, varies per input set) | "pyscalar" (fixed)
    shape: tuple = ()
    dtype: str = "float64"
    value: object = None  # the fixed value of a pyscalar


@dataclass
class Node:
    kind: str  # "input" | "const" | "op"
    text: str  # input: its name; const: literal source text; op: template over {0}, {1}, ...
    args: tuple = ()
    rule: str = ""  # the error model's rule for this op (model.RULES)
    params: dict = field(default_factory=dict)


@dataclass
class Program:
    inputs: list
    nodes: list  # one "input" node per InputSpec first, then consts and ops in topological order
    outputs: list  # node indices
    as_tuple: bool
    data_seed: int
    expect_error: bool = False  # NumPy raises on input set 0 (an error program)
    fixed: dict = field(default_factory=dict)  # input set -> raw inputs (shrunk values)

    # -- source --------------------------------------------------------------------------
    def names(self) -> list:
        out, k = [], 0
        for n in self.nodes:
            if n.kind == "op":
                k += 1
                out.append(f"t{k}")
            else:
                out.append(n.text)
        return out

    def expr(self, i: int, names=None) -> str:
        names = names or self.names()
        n = self.nodes[i]
        return n.text.format(*[names[a] for a in n.args]) if n.kind == "op" else names[i]

    def source(self) -> str:
        names = self.names()
        lines = [f"def f({', '.join(s.name for s in self.inputs)}):"]
        for i, n in enumerate(self.nodes):
            if n.kind == "op":
                lines.append(f"    {names[i]} = {self.expr(i, names)}")
        outs = [names[i] for i in self.outputs]
        ret = ", ".join(outs) + ("," if len(outs) == 1 else "") if self.as_tuple else outs[0]
        lines.append(f"    return {ret}")
        return "\n".join(lines) + "\n"

    def function(self, filename: str = "<fuzz>"):
        import linecache

        text = self.source()
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        g = {"np": np, "__name__": "tests.fuzz.generated"}
        exec(compile(text, filename, "exec"), g)
        return g["f"]

    # -- inputs and evaluation -------------------------------------------------------------
    def raw_inputs(self, which: int) -> list:
        """Input set `which` as (C-order value, layout) pairs: 0 ordinary values (the set the
        program was built on), 1 special values, 2 ordinary values in odd layouts. Each input
        has its own random stream, so dropping an input (the shrinker) keeps the others."""
        if which in self.fixed:
            return self.fixed[which]
        regime = "special" if which == 1 else "normal"
        out = []
        for s in self.inputs:
            rng = np.random.default_rng([self.data_seed, which, ord(s.name)])
            layout = "C"
            if s.kind == "pyscalar":
                v = s.value
            elif s.kind == "npscalar":
                v = np.dtype(s.dtype).type(values.make_array(rng, (), s.dtype, regime)[()])
            else:
                v = values.make_array(rng, s.shape, s.dtype, regime)
                if which == 2:
                    layout = values.ODD_LAYOUTS[rng.integers(len(values.ODD_LAYOUTS))]
            out.append((v, layout))
        return out

    def make_inputs(self, which: int) -> list:
        """Fresh argument objects for input set `which` (see raw_inputs)."""
        return [values.with_layout(v, lay) if isinstance(v, np.ndarray) else v
                for v, lay in self.raw_inputs(which)]

    def evaluate(self, args) -> list:
        """Every node's NumPy value on `args` (raises what NumPy raises)."""
        vals = []
        names = self.names()
        env = {"np": np}
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, n in enumerate(self.nodes):
                if n.kind == "input":
                    v = args[i]
                elif n.kind == "const":
                    v = eval(n.text, env)
                else:
                    v = eval(self.expr(i, names), env)
                    if np.size(v) > MAX_ELEMENTS:  # a shrink candidate that broadcasts up
                        raise ValueError(f"node {names[i]} has {np.size(v)} elements")
                if n.kind != "const":  # constants are inlined in the source
                    env[names[i]] = v
                vals.append(v)
        return vals

    def evaluate_last(self, vals):
        """NumPy value of the last node given the values `vals` of all earlier ones."""
        names = self.names()
        env = {"np": np}
        for i in self.nodes[-1].args:
            env[names[i]] = vals[i]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval(self.expr(len(self.nodes) - 1, names), env)

    # -- editing (the shrinker) --------------------------------------------------------------
    def replaced(self, target: int, by: int) -> "Program":
        """The program with every use of node `target` (and outputs) redirected to node `by`."""
        nodes = [dataclasses.replace(n, args=tuple(by if a == target else a for a in n.args))
                 for n in self.nodes]
        outs = [by if o == target else o for o in self.outputs]
        return dataclasses.replace(self, nodes=nodes, outputs=outs).pruned()

    def pruned(self) -> "Program":
        """Drop nodes no output depends on (inputs stay: they are the signature)."""
        live = set(self.outputs)
        for i in range(len(self.nodes) - 1, -1, -1):
            if i in live:
                live.update(self.nodes[i].args)
        keep = [i for i, n in enumerate(self.nodes) if n.kind == "input" or i in live]
        remap = {old: new for new, old in enumerate(keep)}
        nodes = [dataclasses.replace(self.nodes[i], args=tuple(remap[a] for a in self.nodes[i].args))
                 for i in keep]
        outs = [remap[o] for o in self.outputs]
        return dataclasses.replace(self, nodes=nodes, outputs=outs)

    def op_kinds(self) -> list:
        return sorted({n.params.get("op", n.rule) for n in self.nodes if n.kind == "op"})


# ------------------------------------------------------------------------------------------
# Vocabulary

MATH = ["exp", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "sinh", "cosh", "arcsin",
        "arccos", "arctan", "exp2", "log2", "log10", "cbrt", "arcsinh", "arccosh", "arctanh"]
# (template, error-model rule, params); "op" names the operation in reports and model lookups
UNARY = (
    [("-{0}", "neg", {"op": "negative"}), ("np.negative({0})", "neg", {"op": "negative"}),
     ("np.abs({0})", "neg", {"op": "absolute"}), ("abs({0})", "neg", {"op": "absolute"}),
     ("np.sqrt({0})", "ieee", {"op": "sqrt"}), ("np.square({0})", "ieee", {"op": "square"}),
     ("np.reciprocal({0})", "ieee", {"op": "reciprocal"}),
     ("np.sign({0})", "step", {"op": "sign"}), ("np.floor({0})", "step", {"op": "floor"}),
     ("np.ceil({0})", "step", {"op": "ceil"}), ("np.rint({0})", "step", {"op": "rint"}),
     ("np.trunc({0})", "step", {"op": "trunc"}), ("np.round({0})", "step", {"op": "rint"}),
     ("np.isnan({0})", "classify", {"op": "isnan"}),
     ("np.isfinite({0})", "classify", {"op": "isfinite"}),
     ("np.isinf({0})", "classify", {"op": "isinf"}), ("~{0}", "exact", {"op": "invert"})]
    + [(f"np.{m}({{0}})", "math", {"op": m}) for m in MATH])
BINARY = [
    ("{0} + {1}", "ieee", {"op": "add"}), ("{0} - {1}", "ieee", {"op": "subtract"}),
    ("{0} * {1}", "ieee", {"op": "multiply"}), ("{0} / {1}", "ieee", {"op": "true_divide"}),
    ("{0} // {1}", "divmod", {"op": "floor_divide"}), ("{0} % {1}", "divmod", {"op": "remainder"}),
    ("{0} ** {1}", "math", {"op": "power"}), ("np.maximum({0}, {1})", "minmax", {"op": "maximum"}),
    ("np.minimum({0}, {1})", "minmax", {"op": "minimum"}),
    ("np.arctan2({0}, {1})", "math", {"op": "arctan2"}), ("np.hypot({0}, {1})", "math", {"op": "hypot"}),
    ("{0} == {1}", "compare", {"op": "equal"}), ("{0} != {1}", "compare", {"op": "not_equal"}),
    ("{0} < {1}", "compare", {"op": "less"}), ("{0} <= {1}", "compare", {"op": "less_equal"}),
    ("{0} > {1}", "compare", {"op": "greater"}),
    ("{0} >= {1}", "compare", {"op": "greater_equal"}),
    ("{0} & {1}", "exact", {"op": "bitwise_and"}), ("{0} | {1}", "exact", {"op": "bitwise_or"}),
    ("{0} ^ {1}", "exact", {"op": "bitwise_xor"})]
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "argmax", "argmin", "any", "all", "var", "std"]

FLOAT_LITS = ["0.0", "1.0", "2.0", "0.5", "-1.0", "-0.0", "3.0", "-1.5", "0.1", "np.nan",
              "np.inf", "-np.inf", "1e-300", "5e-324", "1e-45", "1e38", "3.4e38", "1e308",
              "float('nan')", "-2.5"]
INT_LITS = ["0", "1", "2", "-1", "3", "7", "-8", "100", "127", "-128", "255", "256", "32767",
            "65535", "2147483647", "-2147483648", "4294967295", "9223372036854775807",
            "-9223372036854775808", "18446744073709551615"]
BOOL_LITS = ["True", "False"]
SLICE_PARTS = [":", "::2", "::-1", "1:", ":-1", "1::2", "-2:", "::-2", "2:0:-1", "5:1", "0",
               "-1", "1", "None"]
MAX_ELEMENTS = 4096


def _paren(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _kind(v) -> str:
    if isinstance(v, np.ndarray):
        return v.dtype.kind
    if isinstance(v, np.generic):
        return v.dtype.kind
    return {bool: "b", int: "i", float: "f"}.get(type(v), "?")


def _acceptable(v) -> bool:
    """Values a node may have: claimed dtypes only (float16 is NumPy's choice for some bool/int8
    math, not an IR dtype; object arrays come from huge Python ints), small arrays."""
    if isinstance(v, (np.ndarray, np.generic)):
        return v.dtype.name in values.DTYPES and v.size <= MAX_ELEMENTS and v.ndim <= 6
    if isinstance(v, bool) or isinstance(v, float):
        return True
    return isinstance(v, int) and -2 ** 63 <= v < 2 ** 64


class _Builder:
    def __init__(self, ch, prog: Program, vals: list):
        self.ch, self.prog, self.vals = ch, prog, vals
        self.errors = []  # (node, exception type) NumPy raised for

    # -- operands ----------------------------------------------------------------------------
    def pick(self, pred=None):
        cands = [i for i, n in enumerate(self.prog.nodes)
                 if n.kind != "const" and (pred is None or pred(self.vals[i]))]
        if not cands:
            return None
        if self.ch.chance(0.6):
            return self.ch.choice(cands[-3:])
        return self.ch.choice(cands)

    def const(self, like=None) -> int:
        ch = self.ch
        if ch.chance(0.12):
            dt = ch.choice(values.DTYPES[1:])
            lit = ch.choice(["1", "0", "3", "-1", "0.5", "-0.0", "np.nan", "100", "-2.5"])
            if np.dtype(dt).kind in "iu":
                lit = ch.choice(["0", "1", "3", "7", "100"])
            text = f"np.{dt}({lit})"
        else:
            k = _kind(self.vals[like]) if like is not None else "f"
            pools = {"f": [FLOAT_LITS] * 3 + [INT_LITS], "b": [BOOL_LITS, INT_LITS, FLOAT_LITS]}
            pool = ch.choice(pools.get(k, [INT_LITS] * 3 + [FLOAT_LITS, BOOL_LITS]))
            text = _paren(ch.choice(pool[:4] if ch.chance(0.4) else pool))
        self.prog.nodes.append(Node("const", text))
        self.vals.append(eval(text, {"np": np}))
        return len(self.prog.nodes) - 1

    def arg_or_const(self, like):
        if self.ch.chance(0.6):
            try_shape = np.shape(self.vals[like])

            def fits(v):
                try:
                    np.broadcast_shapes(np.shape(v), try_shape)
                    return True
                except ValueError:
                    return False

            i = self.pick(None if self.ch.chance(0.03) else fits)
            if i is not None:
                return i
        return self.const(like)

    def array_like(self, v) -> bool:
        return isinstance(v, (np.ndarray, np.generic))

    # -- one candidate operation ---------------------------------------------------------------
    def add(self, text, args, rule, params) -> bool:
        node = Node("op", text, tuple(args), rule, dict(params))
        self.prog.nodes.append(node)
        try:
            v = self.prog.evaluate_last(self.vals)
        except Exception as e:  # noqa: BLE001  (NumPy rejected it: maybe an error program)
            self.prog.nodes.pop()
            if len(self.errors) < 3:
                self.errors.append(node)
            return False
        if not _acceptable(v):
            self.prog.nodes.pop()
            return False
        self.vals.append(v)
        return True

    # -- operation families --------------------------------------------------------------------
    def unary(self):
        x = self.pick()
        text, rule, params = self.ch.choice(UNARY)
        return self.add(text, [x], rule, params)

    def binary(self):
        text, rule, params = self.ch.choice(BINARY)
        x = self.pick()
        y = self.arg_or_const(x)
        if self.ch.chance(0.3):
            x, y = y, x
        if params["op"] == "power" and not any(self.array_like(self.vals[i]) for i in (x, y)):
            return False  # Python int ** int can take minutes (2 ** 40 ** 2 ** 40)
        return self.add(text, [x, y], rule, params)

    def cast(self):
        x = self.pick()
        dt = self.ch.choice(values.DTYPES)
        spelled = self.ch.choice([f"np.{dt}", f"'{dt}'"] + (
            [{"bool": "bool", "int64": "int", "float64": "float"}[dt]]
            if dt in ("bool", "int64", "float64") else []))
        if not self.array_like(self.vals[x]):
            return False
        return self.add(f"{{0}}.astype({spelled})", [x], "cast", {"op": "astype", "dtype": dt})

    def where(self):
        c = self.pick(lambda v: _kind(v) == "b") if self.ch.chance(0.8) else self.pick()
        if c is None:
            return False
        a = self.arg_or_const(c)
        b = self.arg_or_const(c)
        return self.add("np.where({0}, {1}, {2})", [c, a, b], "where", {"op": "where"})

    def clip(self):
        x = self.pick()
        lo, hi = self.arg_or_const(x), self.arg_or_const(x)
        text = "np.clip({0}, {1}, {2})"
        if self.array_like(self.vals[x]) and self.ch.chance(0.4):
            text = "{0}.clip({1}, {2})"
        return self.add(text, [x, lo, hi], "minmax", {"op": "clip"})

    def reduce(self):
        ch = self.ch
        x = self.pick(self.array_like)
        if x is None:
            return False
        op = ch.choice(REDUCTIONS)
        nd = np.ndim(self.vals[x])
        kw, axis = [], None
        r = ch.integer(0, 99)
        if nd and r < 55:
            axis = ch.integer(-nd, nd - 1)
            kw.append(f"axis={axis}")
        elif nd >= 2 and r < 70 and not op.startswith("arg"):
            axis = tuple(sorted(set(ch.integer(-nd, nd - 1) for _ in range(ch.integer(1, nd)))))
            kw.append(f"axis={axis}")
        elif r < 73:
            axis = nd + ch.integer(0, 1)
            kw.append(f"axis={axis}")  # out of range: NumPy raises AxisError
        keep = ch.chance(0.3)
        if keep:
            kw.append("keepdims=True")
        ddof = 1 if op in ("var", "std") and ch.chance(0.25) else 0
        if ddof:
            kw.append("ddof=1")
        fname = {"max": "max", "min": "min"}.get(op, op)
        if ch.chance(0.5):
            text = f"{{0}}.{op}({', '.join(kw)})"
        else:
            text = f"np.{fname}({', '.join(['{0}'] + kw)})"
        params = {"op": op, "axis": axis, "keepdims": keep, "ddof": ddof}
        rule = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "reduce_minmax",
                "min": "reduce_minmax", "argmax": "arg", "argmin": "arg", "any": "anyall",
                "all": "anyall", "var": "var", "std": "var"}[op]
        return self.add(text, [x], rule, params)

    def structure(self):
        ch = self.ch
        x = self.pick(lambda v: isinstance(v, np.ndarray))
        if x is None:
            return False
        v = self.vals[x]
        nd = v.ndim
        form = ch.integer(0, 6)
        if form <= 2 and nd:
            parts = [ch.choice(SLICE_PARTS) for _ in range(ch.integer(1, nd))]
            if ch.chance(0.15):
                parts.insert(ch.integer(0, len(parts)), "None")
            if ch.chance(0.1):
                parts.insert(0, "...")
            text = "{0}[" + ", ".join(parts) + "]"
        elif form == 3:
            perm = list(range(nd))
            random.Random(ch.integer(0, 999)).shuffle(perm)
            text = ch.choice(["{0}.T", "np.transpose({0})", f"{{0}}.transpose({tuple(perm)})"])
        elif form == 4:
            n = v.size
            divs = [d for d in range(1, n + 1) if n % d == 0] or [0]
            d = ch.choice(divs)
            shape = ch.choice([(-1,), (d, -1), (n // d if d else 0, d), (1, n), (d, 1, -1),
                               (n + 1,)])
            text = f"{{0}}.reshape({shape})"
        elif form == 5:
            text = f"np.expand_dims({{0}}, {ch.integer(-nd - 1, nd)})"
        else:
            ones = [i for i, s in enumerate(v.shape) if s == 1]
            text = (f"np.squeeze({{0}}, axis={ch.choice(ones)})" if ones and ch.chance(0.5)
                    else ch.choice(["{0}.squeeze()", "{0}.copy()"]))
        return self.add(text, [x], "struct", {"op": "view"})

    def matmul(self):
        ch = self.ch
        x = self.pick(lambda v: isinstance(v, np.ndarray) and 1 <= v.ndim <= 3)
        if x is None:
            return False
        sx = self.vals[x].shape

        def fits(v):
            s = np.shape(v)
            if len(s) == 1:
                return s[0] == sx[-1]
            return len(s) >= 2 and s[-2] == sx[-1] and len(s) <= 3

        y = self.pick(fits)
        op = ch.choice(["{} @ {}", "np.matmul({}, {})", "np.dot({}, {})"])
        fn = "dot" if op.startswith("np.dot") else "matmul"
        if y is not None and ch.chance(0.7) and (fn == "matmul" or np.ndim(self.vals[y]) <= 2):
            return self.add(op.format("{0}", "{1}"), [x, y], "matmul",
                            {"op": "matmul", "fn": fn, "lhs": "{0}", "rhs": "{1}"})
        lhs, rhs = ch.choice([("{0}", "{0}.T"), ("{0}.T", "{0}"), ("{0}", "{0}")])
        if len(sx) == 3:
            lhs, rhs, op, fn = "{0}", "{0}.transpose(0, 2, 1)", "{} @ {}", "matmul"
        return self.add(op.format(lhs, rhs), [x], "matmul",
                        {"op": "matmul", "fn": fn, "lhs": lhs, "rhs": rhs})

    def create(self):
        ch = self.ch
        like = self.pick(self.array_like)
        shape = np.shape(self.vals[like]) if like is not None else (ch.integer(0, 4),)
        dt = ch.choice(values.DTYPES)
        kind = ch.integer(0, 3)
        if kind == 0:
            lit = self.prog.nodes[self.const()].text
            self.prog.nodes.pop()
            self.vals.pop()
            text = f"np.full({shape}, {lit}, dtype=np.{dt})"
        elif kind == 1:
            text = f"np.zeros({shape}, dtype=np.{dt})"
        elif kind == 2:
            text = f"np.ones({shape}, np.{dt})"
        else:
            text = f"np.full({shape}, {self.prog.nodes[self.const()].text})"
            self.prog.nodes.pop()
            self.vals.pop()
        return self.add(text, [], "exact", {"op": "create"})


FAMILIES = {"unary": 20, "binary": 34, "cast": 8, "where": 6, "clip": 3, "reduce": 14,
            "structure": 10, "matmul": 4, "create": 3}


def _inputs(ch) -> list:
    rank = ch.weighted({1: 3, 2: 4, 0: 1, 3: 2, 4: 1})
    base = [ch.choice([3, 2, 4, 1, 5, 7, 8, 16]) for _ in range(rank)]
    if rank and ch.chance(0.05):
        base[ch.integer(0, rank - 1)] = 0
    same = ch.chance(0.5)
    dtype_weights = {"float64": 3, "float32": 3, "int32": 1, "int64": 1, "bool": 1.5, "int8": 1,
                     "int16": 1, "uint8": 1, "uint16": 1, "uint32": 1, "uint64": 1}
    first = ch.weighted(dtype_weights)
    specs = []
    for i in range(ch.integer(1, 3)):
        nd = rank if ch.chance(0.6) else ch.integer(0, rank)
        shape = tuple(1 if ch.chance(0.15) else n for n in base[rank - nd:])
        dt = first if same or i == 0 else ch.weighted(dtype_weights)
        specs.append(InputSpec("abc"[i], "array", shape, dt))
    if ch.chance(0.25):
        if ch.chance(0.5):
            specs.append(InputSpec("s", "npscalar", (), ch.weighted(dtype_weights)))
        else:
            value = ch.choice([2.0, 0.5, -1.0, 3, -2, 0, True, 0.0, -0.0, float("nan"), 1e300,
                               float("inf"), 255, 2 ** 40])
            specs.append(InputSpec("s", "pyscalar", (), type(value).__name__, value))
    return specs


def generate(ch, data_seed: int, max_ops: int = 8) -> Program:
    """A program NumPy accepts on its input set 0, or (a few) one NumPy rejects there."""
    specs = _inputs(ch)
    prog = Program(specs, [Node("input", s.name) for s in specs], [], False, data_seed)
    vals = list(prog.make_inputs(0))
    b = _Builder(ch, prog, vals)
    target = ch.integer(1, max_ops)
    for _ in range(4 * target):
        if sum(n.kind == "op" for n in prog.nodes) >= target:
            break
        getattr(b, ch.weighted(FAMILIES))()
    ops = [i for i, n in enumerate(prog.nodes) if n.kind == "op"]
    if b.errors and (not ops or ch.chance(0.08)):
        node = ch.choice(b.errors)
        prog.nodes.append(node)
        prog.outputs = [len(prog.nodes) - 1]
        prog.expect_error = True
        return prog.pruned()
    if not ops:
        b.add("{0} + {1}", [0, b.const(0)], "ieee", {"op": "add"})
        ops = [len(prog.nodes) - 1]
    prog.outputs = [ops[-1]]
    if ch.chance(0.25):
        extra = ch.choice([i for i, n in enumerate(prog.nodes) if n.kind != "const"])
        if extra != ops[-1]:
            prog.outputs.append(extra)
    prog.as_tuple = len(prog.outputs) > 1 or ch.chance(0.05)
    return prog.pruned()


def program(seed, index: int, max_ops: int = 8) -> Program:
    """Program `index` of a run with `seed` (deterministic)."""
    ch = RandomChooser((seed, index))
    return generate(ch, data_seed=ch.integer(0, 2 ** 32 - 1), max_ops=max_ops)
