"""Random programs mixing stores, graph breaks (print, a branch on an array, a global list),
and loops (short: unrolled; long: outlined), compiled and compared with plain Python on fresh
copies: the result, the argument after the call, what was printed and what was logged."""
from __future__ import annotations

import contextlib
import io

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import hcompile as hc
from numpy_oracle import target_options

N = 16
constants = st.sampled_from([0.5, -1.25, 2.0, 3.0])
bounds = st.tuples(st.integers(0, N - 2), st.integers(1, N)).filter(lambda ab: ab[0] < ab[1])

STATEMENTS = {
    "compute": lambda d: f"y = np.sin(x) * {d(constants)} + y",
    "store": lambda d: "x[{0}:{1}] = y[{0}:{1}] * {2}".format(*d(bounds), d(constants)),
    "inplace": lambda d: f"x += {d(constants)}",
    "print": lambda d: "print('sum', round(float(y.sum()), 3))",
    "branch": lambda d: f"if y.sum() > {d(constants)}:\n    y = y * 2\nelse:\n    y = y - 1",
    "loop": lambda d: f"for _ in range({d(st.sampled_from([3, 10]))}):\n"
                      f"    x[1:-1] = 0.5 * (x[:-2] + x[2:])\n    y = y * 0.9",
    "log": lambda d: "LOG.append(round(float(x[0]), 6))",
}


@st.composite
def programs(draw):
    kinds = draw(st.lists(st.sampled_from(sorted(STATEMENTS)), min_size=1, max_size=6))
    lines = ["y = x * 1.0"]
    for kind in kinds:
        lines.extend(STATEMENTS[kind](draw).splitlines())
    body = "\n".join("    " + line for line in lines)
    return f"def f(x):\n{body}\n    return x.copy(), y\n"


def _run(fn, x, log):
    log.clear()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        result = fn(x)
    return result, x, out.getvalue(), list(log)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), st.integers(0, 2**31 - 1))
def test_random_programs_with_stores_breaks_and_loops(source, seed):
    log = []
    namespace = {"np": np, "LOG": log}
    exec(compile(source, "<random-program>", "exec"), namespace)
    fn = namespace["f"]
    compiled = hc.hcompile(fn, **target_options())
    x = np.random.default_rng(seed).standard_normal(N)
    for _ in range(2):                      # the second call runs the cached entries
        want = _run(fn, x.copy(), log)
        got = _run(compiled, x.copy(), log)
        for a, b in zip(got[0], want[0]):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=source)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-12, err_msg=source)
        assert got[2] == want[2], source
        assert got[3] == want[3], source
