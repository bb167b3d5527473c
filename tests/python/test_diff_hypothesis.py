"""Random elementwise programs (hypothesis), compiled vs NumPy.

Each example is a small expression over 1-3 arrays of random broadcast-compatible shapes and
random dtypes, built as Python source and exec'd into a function (so every example is a fresh
capture + compile). Seeded from HCOMPILE_TEST_SEED; the failing program's source is printed
(hypothesis `note`). HCOMPILE_TEST_EXAMPLES=N changes the number of examples (default 40).

To keep comparisons meaningful without spurious failures, ops that are discontinuous or have a
restricted domain (floor, //, %, comparisons, log, sqrt, exp, casts to int, ...) take leaves
(inputs) only: an intermediate float that differs in the last bit between two correct
implementations must not flip a comparison or a floor. Continuous ops take any subexpression.
"""

import os

import numpy as np
from hypothesis import HealthCheck, assume, given, note, reject, seed, settings
from hypothesis import strategies as st

import numpy_oracle
from numpy_oracle import DTYPES, check, fn_from_src, hc, make, tolerance

VARS = ["a", "b", "c"]

# any subexpression
UNARY_ANY = ["-({})", "np.abs({})", "np.sin({})", "np.cos({})", "np.tanh({})",
             "np.arctan({})", "np.square({})", "({}).astype(np.float64)",
             "({}).astype(np.float32)", "({}) * 0.5", "({}) + 1", "2 * ({})"]
BINARY_ANY = ["({}) + ({})", "({}) - ({})", "({}) * ({})", "np.maximum({}, {})",
              "np.minimum({}, {})"]
# leaves only
UNARY_LEAF = ["np.floor({})", "np.ceil({})", "np.rint({})", "np.sign({})", "np.isnan({})",
              "np.isfinite({})", "np.exp({})", "np.log(np.abs({}) + 1)", "np.sqrt(np.abs({}))",
              "({}).astype(np.int32)", "({}).astype(bool)", "~({})", "({}) > 0", "({}) <= 1",
              "np.arcsin(np.clip({}, -1, 1))", "np.expm1({})", "np.log1p(np.abs({}))"]
BINARY_LEAF = ["({}) // ({})", "({}) % ({})", "({}) < ({})", "({}) == ({})", "({}) & ({})",
               "({}) | ({})", "({}) ^ ({})", "np.arctan2({}, {})", "({}) ** 2"]
CONSTS = ["1", "-2", "3", "0.5", "-1.5", "2.0", "True", "False"]


@st.composite
def programs(draw):
    nvars = draw(st.integers(1, 3))
    base = draw(st.sampled_from([(), (3,), (2, 3), (4, 1, 3), (0, 3), (2, 2, 2), (5, 7)]))
    shapes = []
    for _ in range(nvars):
        nd = draw(st.integers(0, len(base)))
        s = tuple(1 if draw(st.booleans()) and draw(st.booleans()) else n
                  for n in base[len(base) - nd:])
        shapes.append(s)
    dtypes = [draw(st.sampled_from(DTYPES)) for _ in range(nvars)]
    names = VARS[:nvars]
    nodes = [0]  # count of ops

    def leaf():
        if draw(st.integers(0, 5)) == 0:
            return draw(st.sampled_from(CONSTS))
        return draw(st.sampled_from(names))

    def expr(depth):
        if depth == 0 or draw(st.integers(0, 3)) == 0:
            return leaf()
        nodes[0] += 1
        kind = draw(st.integers(0, 4))
        if kind == 0:
            return draw(st.sampled_from(UNARY_ANY)).format(expr(depth - 1))
        if kind == 1:
            return draw(st.sampled_from(BINARY_ANY)).format(expr(depth - 1), expr(depth - 1))
        if kind == 2:
            return draw(st.sampled_from(UNARY_LEAF)).format(draw(st.sampled_from(names)))
        if kind == 3:
            op = draw(st.sampled_from(BINARY_LEAF))
            return op.format(draw(st.sampled_from(names)), leaf())
        # where with a leaf condition, any branches; or division by a leaf / nonzero constant
        if draw(st.booleans()):
            return "np.where({} > 0, {}, {})".format(draw(st.sampled_from(names)),
                                                     expr(depth - 1), expr(depth - 1))
        denom = draw(st.sampled_from(names + ["2", "-0.5", "3.0"]))
        return "({}) / ({})".format(expr(depth - 1), denom)

    body = expr(3)
    if not any(v in body for v in names):
        body = f"{body} + {names[0]}"
    src = f"def f({', '.join(names)}):\n    return {body}\n"
    data_seed = draw(st.integers(0, 2 ** 32 - 1))
    return src, list(zip(shapes, dtypes)), nodes[0] + 1, data_seed


@seed(numpy_oracle.BASE_SEED)
@settings(max_examples=int(os.environ.get("HCOMPILE_TEST_EXAMPLES", "40")), deadline=None, suppress_health_check=list(HealthCheck))
@given(programs())
def test_random_elementwise_programs(prog):
    src, specs, ops, data_seed = prog
    rng = np.random.default_rng(data_seed)
    args = [make(rng, s, dt, "small") for s, dt in specs]
    note(src)
    note(f"inputs: {[(a.dtype.name, a.shape) for a in args]}")
    f = fn_from_src(src)
    # value semantics only: programs NumPy rejects (error types are checked in test_diff_errors /
    # test_diff_elementwise) and float16 results (not an IR dtype) are not interesting here
    expected, exc = numpy_oracle.run_numpy(f, numpy_oracle.clone(args))
    assume(exc is None and not numpy_oracle._involves_float16(expected))
    # tolerance: if any float32 is involved, float32 rounding of intermediates decides it, even
    # when the output is float64; absolute part scaled by the largest intermediate value
    has32 = any(dt == "float32" for _, dt in specs) or "float32" in src
    scale = _largest_intermediate(src, args)
    rtol = atol = None
    if has32:
        rtol, atol = tolerance(np.float32, ops=ops + 1, scale=scale)
    else:
        rtol, atol = tolerance(np.float64, ops=ops + 1, scale=scale)
    # A fresh compiled function per example: examples share source text (and so the memoised
    # function), and many dtype/shape signatures of one function would hit the recompile limit.
    cfn = hc.hcompile(f, fullgraph=True)
    try:
        check(f, *args, rtol=rtol, atol=atol, cfn=cfn)
    except hc.Unsupported as e:
        # float16 intermediates (e.g. np.expm1 of a bool) are outside the IR's dtypes; NumPy's
        # final result may still be float32, so only the refusal tells.
        if "float16" not in str(e):
            raise
        reject()


def _largest_intermediate(src, args):
    """Largest finite |value| among NumPy's intermediates (evaluating every parenthesised
    sub-expression), bounding the absolute rounding error of a chain."""
    body = src.split("return ", 1)[1].strip()
    env = {"np": np, **dict(zip(VARS, args))}
    best = 0.0
    stack, subs = [], [body]
    for i, ch in enumerate(body):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            subs.append(body[stack.pop() + 1:i])
    with np.errstate(all="ignore"):
        for s in subs:
            try:
                best = max(best, numpy_oracle.finite_max_abs(eval(s, env)))
            except Exception:  # noqa: BLE001  (argument lists etc. are not expressions)
                pass
    return max(best, 1.0)
