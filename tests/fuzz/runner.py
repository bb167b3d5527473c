"""Run one generated program compiled and with NumPy, on several input sets; shrink failures.

One compile serves several checks (compiles cost 0.05-0.4 s and dominate): input set 0 (the
values the program was built on), set 1 (special values, same shapes: the same kernel) and set 2
(odd layouts: one more compile). A mismatch is one of these kinds:
  value, type, dtype, shape, readonly        the result differs (compare.py)
  raised, compile-error                      compiled raised where NumPy returned
  no-raise, exception-type                   NumPy raised, compiled did not / raised another type
  modified-input, identity                   the call wrote to an input / `return x` is not x
  crash, hang                                (found by the driver, which runs programs in workers)
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field

import os

import numpy as np

from . import compare, gen, model, values

SETS = (0, 1, 2)


@dataclass
class Outcome:
    status: str  # "ok" | "mismatch" | "unsupported"
    kind: str = ""
    message: str = ""
    input_set: int = -1
    calls: int = 0  # compiled calls compared
    notes: list = field(default_factory=list)  # input sets skipped (unsupported layouts)


def _quiet(fn, args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(*args), None
        except Exception as e:  # noqa: BLE001  (any exception is part of the semantics)
            return None, e


def _same_bits(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and a.tobytes() == b.tobytes())
    return type(a) is type(b) and (a == b or a != a and b != b)


def check_call(prog, f, cf, which: int, hc) -> Outcome:
    """Compare one compiled call with NumPy on input set `which`."""
    snapshot, np_args, hc_args = (prog.make_inputs(which) for _ in range(3))
    ref, np_exc = _quiet(f, np_args)
    got, hc_exc = _quiet(cf, hc_args)
    if np_exc is not None and isinstance(hc_exc, hc.Unsupported):
        # fullgraph refuses what NumPy rejects; the default mode must raise NumPy's error
        got, hc_exc = _quiet(hc.hcompile(f), prog.make_inputs(which))
    if hc_exc is not None and isinstance(hc_exc, hc.Unsupported):
        return Outcome("unsupported", message=_reason(hc_exc), input_set=which)
    if np_exc is not None:
        if hc_exc is None:
            return Outcome("mismatch", "no-raise", f"NumPy raised {type(np_exc).__name__}: "
                           f"{np_exc}; compiled returned {compare._show(got)}", which)
        if not compare.same_exception(np_exc, hc_exc):
            return Outcome("mismatch", "exception-type",
                           f"NumPy raised {type(np_exc).__name__}: {np_exc}; compiled raised "
                           f"{type(hc_exc).__name__}: {hc_exc}", which)
        return Outcome("ok", input_set=which, calls=1)
    if hc_exc is not None:
        kind = "compile-error" if isinstance(hc_exc, hc.CompileError) else "raised"
        return Outcome("mismatch", kind, f"compiled raised {type(hc_exc).__name__}: "
                       f"{str(hc_exc)[:400]}; NumPy returned {compare._show(ref)}", which)
    for i, (before, after) in enumerate(zip(snapshot, hc_args)):
        if not _same_bits(np.asarray(before), np.asarray(after)):
            return Outcome("mismatch", "modified-input", f"the call modified argument {i}",
                           which)
    for i, a in enumerate(np_args):
        if ref is a and i in prog.outputs and got is not hc_args[i]:  # `return x`
            return Outcome("mismatch", "identity",
                           f"NumPy returns argument {i} itself, compiled a different object",
                           which)
    vals = prog.evaluate(prog.make_inputs(which))
    models = model.build(prog, vals)
    outs = [models[i] for i in prog.outputs]
    bad = compare.compare(got, ref, tuple(outs) if prog.as_tuple else outs[0])
    if bad:
        return Outcome("mismatch", bad[0], bad[1], which)
    return Outcome("ok", input_set=which, calls=1)


def _reason(e) -> str:
    """An Unsupported message without its file:line prefix (for grouping)."""
    text = str(e).split("\n", 1)[0]
    head, sep, rest = text.partition(": ")
    return rest if sep and ":" in head else text


# Set to "1" (`--dynamic`): every program compiles with dynamic=True, so every axis of size 2 or
# more is symbolic from the first call: the generic kernels meet the whole op space.
DYNAMIC_ENV = "HCOMPILE_FUZZ_DYNAMIC"
# An autoscheduler name (`--autoscheduler`): Halide's peers meet the whole op space too.
AUTOSCHEDULER_ENV = "HCOMPILE_FUZZ_AUTOSCHEDULER"


def run(prog, hc, sets=SETS) -> Outcome:
    """Compile `prog` once and check it on `sets`; the first mismatch wins."""
    f = prog.function()
    cf = hc.hcompile(f, fullgraph=True, dynamic=True if os.environ.get(DYNAMIC_ENV) == "1" else None,
                     **({"autoscheduler": os.environ[AUTOSCHEDULER_ENV]} if os.environ.get(AUTOSCHEDULER_ENV) else {}))
    calls, notes = 0, []
    for which in sets:
        o = check_call(prog, f, cf, which, hc)
        if o.status == "unsupported":
            if which == sets[0]:
                return o
            notes.append(f"set {which}: {o.message}")  # a layout the kernel does not take
            continue
        if o.status == "mismatch":
            o.calls = calls
            return o
        calls += 1
    return Outcome("ok", calls=calls, notes=notes)


# ------------------------------------------------------------------------------------------
# Shrinking: smaller programs (and simpler inputs) that fail the same way


def _numpy_behaves_alike(prog, cand, which) -> bool:
    """The candidate still runs under NumPy as the original did (raises or not) and keeps to
    claimed dtypes."""
    try:
        vals = cand.evaluate(cand.make_inputs(which))
    except Exception:  # noqa: BLE001
        return prog.expect_error or _raises(prog, which)
    if _raises(prog, which):
        return False
    return all(gen._acceptable(v) for v, n in zip(vals, cand.nodes) if n.kind == "op")


def _raises(prog, which) -> bool:
    try:
        prog.evaluate(prog.make_inputs(which))
        return False
    except Exception:  # noqa: BLE001
        return True


def _structure_candidates(prog):
    if len(prog.outputs) > 1 or prog.as_tuple:
        for o in prog.outputs:
            yield dataclasses.replace(prog, outputs=[o], as_tuple=False).pruned()
    for i in range(len(prog.nodes) - 1, -1, -1):
        n = prog.nodes[i]
        if n.kind != "op":
            continue
        for a in dict.fromkeys(n.args):
            if prog.nodes[a].kind != "const":
                yield prog.replaced(i, a)
    used = {a for n in prog.nodes for a in n.args} | set(prog.outputs)
    for i, n in enumerate(prog.nodes):
        if n.kind == "input" and i not in used:
            yield _drop_input(prog, i)


def _drop_input(prog, i):
    nodes = [dataclasses.replace(n, args=tuple(a - (a > i) for a in n.args))
             for j, n in enumerate(prog.nodes) if j != i]
    fixed = {k: [r for j, r in enumerate(v) if j != i] for k, v in prog.fixed.items()}
    return dataclasses.replace(prog, inputs=[s for j, s in enumerate(prog.inputs) if j != i],
                               nodes=nodes, outputs=[o - (o > i) for o in prog.outputs],
                               fixed=fixed)


def _value_candidates(prog, which):
    """Each input in C order, then each array input filled with one of its own values (zeros
    first)."""
    raw = prog.raw_inputs(which)
    for i, (v, layout) in enumerate(raw):
        if layout != "C":
            new = list(raw)
            new[i] = (v, "C")
            yield dataclasses.replace(prog, fixed={**prog.fixed, which: new})
    for i, (v, layout) in enumerate(raw):
        if not isinstance(v, np.ndarray) or v.size <= 1:
            continue
        distinct = list(dict.fromkeys(v.reshape(-1).tolist()))
        fills = [0] + [x for x in distinct if x != 0][:5]
        if len(distinct) == 1:
            continue
        for x in fills:
            new = list(raw)
            new[i] = (np.full(v.shape, x, v.dtype), layout)
            yield dataclasses.replace(prog, fixed={**prog.fixed, which: new})


def shrink(prog, outcome: Outcome, still_fails, budget: int = 40):
    """Greedy: take the first smaller candidate that `still_fails` the same way, repeat.
    `still_fails(prog, which)` returns the new Outcome or None; each call costs a compile."""
    which = outcome.input_set
    if which not in prog.fixed:
        prog = dataclasses.replace(prog, fixed={which: prog.raw_inputs(which)})
    for candidates in (_structure_candidates, lambda p: _value_candidates(p, which)):
        progress = True
        while progress and budget > 0:
            progress = False
            for cand in candidates(prog):
                if not _numpy_behaves_alike(prog, cand, which):
                    continue
                budget -= 1
                o = still_fails(cand, which)
                if o is not None and o.kind == outcome.kind:
                    prog, outcome, progress = cand, o, True
                    break
                if budget <= 0:
                    break
    return prog, outcome


def in_process_fails(hc):
    def still_fails(cand, which):
        o = run(cand, hc, sets=(which,))
        return o if o.status == "mismatch" else None
    return still_fails


# ------------------------------------------------------------------------------------------
# Repro scripts


def _literal(v) -> str:
    if isinstance(v, np.ndarray) and v.size > 1 and (v == v.flat[0]).all() and \
            np.signbit(v).all() == np.signbit(v).any():
        return f"np.full({v.shape}, {_literal(v.reshape(-1)[0])}, dtype=np.{v.dtype.name})"
    if isinstance(v, np.ndarray):
        body = repr(v.tolist()) if v.dtype.kind != "f" else _float_list(v)
        return f"np.array({body}, dtype=np.{v.dtype.name})"
    if isinstance(v, np.generic):
        return f"np.{v.dtype.name}({_float_lit(v.item()) if v.dtype.kind == 'f' else v.item()!r})"
    if isinstance(v, float):
        return _float_lit(v)
    return repr(v)


def _float_lit(x: float) -> str:
    return repr(x) if np.isfinite(x) else {"nan": "nan", "inf": "inf", "-inf": "-inf"}[repr(x)]


def _float_list(v) -> str:
    def rec(x):
        return "[" + ", ".join(rec(y) for y in x) + "]" if isinstance(x, list) else _float_lit(x)
    return rec(v.tolist())


def repro_source(prog, outcome: Outcome, header: str) -> str:
    which = outcome.input_set
    raw = prog.raw_inputs(which if which >= 0 else 0)
    lines = [f"# {line}" for line in header.splitlines()]
    lines += [f"# {outcome.kind}: {line}" for line in outcome.message.splitlines()[:6]]
    lines += ["import numpy as np", "import hcompile as hc", "", "nan, inf = np.nan, np.inf", "",
              prog.source(), ""]
    argexprs = []
    for spec, (v, layout) in zip(prog.inputs, raw):
        lines.append(f"{spec.name}0 = {_literal(v)}")
        argexprs.append(values.layout_source(f"{spec.name}0", layout, np.ndim(v))
                        if values.layout_applies(v, layout) else f"{spec.name}0")
    lines += [f"args = [{', '.join(argexprs)}]", "",
              "with np.errstate(all='ignore'):",
              "    print('NumPy:   ', repr(f(*args)))",
              "print('hcompile:', repr(hc.hcompile(f, fullgraph=True)(*args)))", ""]
    return "\n".join(lines)


def write_repro(out_dir, name, prog, outcome: Outcome, header: str) -> str:
    import os

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.py")
    with open(path, "w") as fh:
        fh.write(repro_source(prog, outcome, header))
    raw = prog.raw_inputs(max(outcome.input_set, 0))
    np.savez(os.path.join(out_dir, f"{name}.npz"),
             **{s.name: np.asarray(v) for s, (v, _) in zip(prog.inputs, raw)})
    return path
