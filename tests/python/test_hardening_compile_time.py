"""Compile time is bounded (issue 5, item 6), checked by structure, not by the clock.

The classes that compiled for minutes:
- a chain of 5-point stencil stages written as slices: inlining every stage into the next made
  5^k terms; the partitioner now stores a stage once inlining it would compute it at too many
  places or past a region's size bound (core/src/fusion.cpp);
- an unrolled loop accumulating transcendentals: one huge function for LLVM; regions are bounded
  in size, and a whole graph past the compile-size budget runs as Python
  (runtime/src/compile_graph.cpp, check_compile_budget);
- integer powers of 0-d unsigned arrays: the repeated-squaring tree doubled with every exponent
  bit; steps are now named (core/src/lowering/elementwise_rules.cpp), a value read on axes of
  extent 1 is read at index 0 (core/src/lowering/lower.cpp, definition_index), and a power reads
  its base back through its own Func, whose value has no bounds (define_integer_power);
- a value read twice by each step of a chain (`x = x - x // 3`, `x = np.tanh(x) * 0.5 + x`):
  each step's lets sat inside the next step's let values, and Halide's let removal walked them
  as a tree; lets are one flat chain now (core/src/lowering/lower.cpp, LowerContext::compute);
- products of a narrow value in 64 bits (`a.astype(np.uint64) ** 65535`): Halide's interval
  arithmetic checks products for overflow in 32 bits, so the intervals grew as trees; 64-bit
  operands hide their range (elementwise_rules.cpp, wrapping_multiply).
Each case must also give NumPy's answer. A hang would stop the suite, so the slow cases run in a
worker with a generous limit (a watchdog for minutes-long compiles, not a speed assertion).
"""
import multiprocessing as mp

import numpy as np
import pytest

from numpy_oracle import IDENTITY, assert_same_result, fn_from_src, hc

needs_compiler = pytest.mark.skipif(IDENTITY, reason="checks the real compiler's partition")

WATCHDOG_S = 300  # minutes-long compiles were the bug; a healthy run takes seconds


def stencil_chain(stages):
    """A chain of 5-point stencil stages written as slices, as a literal-source function."""
    return fn_from_src(
        "def f(u):\n"
        f"    for _ in range({stages}):\n"
        "        u = 0.2 * (u[1:-1, 1:-1] + u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])\n"
        "    return u\n")


def _regions(cf):
    report = cf.compile_records[-1]["report"]
    assert report is not None, "the function was not compiled"
    return [line for line in report["regions"].splitlines() if line.startswith("region ")]


@needs_compiler
@pytest.mark.parametrize("stages", [2, 8, 16])
def test_stencil_chain_stores_stages_instead_of_inlining_them(stages, rng):
    f = stencil_chain(stages)
    u = rng.random((48, 40)).astype(np.float32)
    cf = hc.hcompile(f, fullgraph=True)
    assert_same_result(cf(u), f(u), ops=3 * stages)
    regions = _regions(cf)
    # Two stages fit in one region (25 terms); eight or more cannot (5^8 terms): stages stored.
    assert len(regions) >= (1 if stages == 2 else stages // 3), regions


def _loop(n, op):
    return fn_from_src(
        "def f(a):\n"
        "    s = 0.0\n"
        f"    for i in range({n}):\n"
        f"        s = s + np.{op}(a[i, i])\n"
        "    return s\n")


@needs_compiler
def test_unrolled_loop_under_the_budget_compiles_in_bounded_regions(rng):
    f = _loop(300, "tanh")
    a = rng.random((300, 300))
    cf = hc.hcompile(f, fullgraph=True)
    assert_same_result(cf(a), f(a), ops=300)
    # 300 tanh (10 op units each) in regions of at most 256 units: no single huge function.
    assert len(_regions(cf)) >= 12


@needs_compiler
def test_graph_past_the_compile_budget_runs_as_python(rng, caplog):
    f = _loop(1000, "exp")
    a = rng.random((1000, 1000))
    cf = hc.hcompile(f)
    with caplog.at_level("WARNING", logger="hcompile.graph_breaks"):
        got = cf(a)
    assert_same_result(got, f(a))
    assert "compile-size budget" in caplog.text
    assert cf.compile_records[-1]["report"] is None
    explained = str(hc.explain(f, a))
    assert "captured but runs as Python (not compiled)" in explained and "compile-size budget" in explained
    with pytest.raises(hc.CompileError, match="compile-size budget"):
        hc.hcompile(f, fullgraph=True)(a)


def _slow_cases(queue):
    """The programs that took minutes, in one worker process; reports (name, ok) pairs."""
    import hcompile
    rng = np.random.default_rng(5)
    u = rng.random((64, 64)).astype(np.float32)
    stencil8 = stencil_chain(8)
    got = hcompile.hcompile(stencil8, fullgraph=True)(u)
    queue.put(("stencil8", bool(np.allclose(got, stencil8(u), rtol=1e-4))))
    for dt in (np.uint32, np.uint64):
        x, e = np.array(3, dt), np.array(2**40 + 5 if dt == np.uint64 else 2**31 + 5, dt)
        pw = hcompile.hcompile(lambda x, e: x ** e, fullgraph=True)
        queue.put((f"pow0d_{dt.__name__}", bool(pw(x, e) == x ** e)))
    # Rules that read an operand several times (casts to uint32, where, maximum) over math
    # functions: Halide walked the reuse as a tree (operands are named now, lower.cpp).
    a = rng.random((7, 4)) * 4 - 2
    chain = lambda a: (np.maximum(np.arctan2(a ** -2.5, a), a).astype(np.uint32) < 2.0,  # noqa: E731
                       np.where(np.tanh(a) > 0, np.log1p(a ** 1.5), a).astype(np.uint64))
    with np.errstate(all="ignore"):
        got, expected = hcompile.hcompile(chain, fullgraph=True)(a), chain(a)
    queue.put(("multi_use_chain", all(np.array_equal(g, e) for g, e in zip(got, expected))))
    # An integer power (16 squarings) inlined into tanh: bounds inference expanded the chain's
    # symbolic bounds as a tree (hours). Integer powers are stored now (fusion.cpp).
    b, c = rng.random((8, 8)).astype(np.float32), np.arange(-4, 4, dtype=np.int8)[:, None]
    tanh_pow = lambda b, c: np.tanh((c < b) ** 65535)  # noqa: E731
    queue.put(("tanh_of_int_pow", bool(np.array_equal(hcompile.hcompile(tanh_pow, fullgraph=True)(b, c),
                                                      tanh_pow(b, c)))))
    # Size-1 axes: Halide folds their loops to one point and carried the squaring chain of a
    # value read there as a tree (fuzz seed 3, program 61780); read at 0 by lowering now.
    one = np.array([3], np.uint32)
    for name, src, args in [("pow_size1_new_axis", "return (a ** a)[None]", (one,)),
                            ("pow_size1_expand_dims", "return np.expand_dims(a ** a, -2)", (one,)),
                            ("pow_size1_slices", "return (a[:1] ** a[1:2])[None]", (np.arange(2, 6, dtype=np.uint32)[:, None],)),
                            ("pow_size1_uint64", "return (a[:, :1] ** a[:, 1:2]) + a", (np.array([[3, 2**40 + 5]], np.uint64),))]:
        g = fn_from_src(f"def f(a):\n    {src}\n")
        queue.put((name, bool(np.array_equal(hcompile.hcompile(g, fullgraph=True)(*args), g(*args)))))
    # A run-time exponent on a base with narrow value bounds (a reciprocal: 0 or 1, cast to
    # uint64): the simplifier peeled the inlined base into the squaring chain and walked it as a
    # tree (device fuzz, program 616503). An integer power now reads its base back through its
    # own Func, in an update, whose value has no bounds to Halide (lower.cpp).
    b = np.array([0, 1, 2, 4294967295, 7], np.uint32)
    for name, src in [("pow_runtime_exp_reciprocal_u64", "return np.reciprocal(b).astype(np.uint64) ** s"),
                      ("pow_runtime_exp_or", "return 0 | np.reciprocal(b) ** s"),
                      ("pow_runtime_exp_mod", "return (b % 2).astype(np.uint64) ** s")]:
        g = fn_from_src(f"def f(b, s):\n    {src}\n")
        with np.errstate(all="ignore"):
            got, want = hcompile.hcompile(g, fullgraph=True)(b, np.uint64(3)), g(b, np.uint64(3))
        queue.put((name, bool(np.array_equal(got, want))))
    # One element of an integer power (a slice, an index): the power runs at one point, and
    # box_touched expanded the squaring chain of an element read there as a tree (device fuzz,
    # program 873732: `np.ceil(a ** a)[2:0:-1]`), with a run-time or a 64-bit constant exponent.
    a = np.array([7, 9], np.uint64)
    m = np.arange(1, 7, dtype=np.uint64).reshape(2, 3)
    for name, src, args in [("pow_one_element_reversed", "return np.ceil(a ** a)[2:0:-1]", (a,)),
                            ("pow_one_element_index", "return (a ** a)[1]", (a,)),
                            ("pow_one_element_layout_base", "return (a[::-1] ** (a + 1))[1:2]", (a,)),
                            ("pow_one_element_2d", "return (a ** a)[1:2, 0:1]", (m,)),
                            ("pow_one_element_max_exponent", "return (a ** np.uint64(2**64 - 1))[1:2]", (a,))]:
        g = fn_from_src(f"def f(a):\n    {src}\n")
        queue.put((name, bool(np.array_equal(hcompile.hcompile(g, fullgraph=True)(*args), g(*args)))))
    # 64-bit products of a narrow value (uint8 cast up): minutes for 2**16 - 1 as the exponent
    # (device fuzz, seed 3, program 1368471), for ever with 64 exponent bits.
    small = np.array([0, 1, 3, 255], np.uint8)
    for name, src in [("pow_narrow_base_u64", "return a.astype(np.uint64) ** 65535"),
                      ("pow_narrow_base_u64_max", "return a.astype(np.uint64) ** np.uint64(2**64 - 1)"),
                      ("pow_narrow_base_i64", "return a.astype(np.int64) ** 65535"),
                      ("squarings_u64", "x = a.astype(np.uint64)\n    r = x\n    for _ in range(20):\n"
                                        "        x = x * x\n        r = r * x\n    return r")]:
        g = fn_from_src(f"def f(a):\n    {src}\n")
        queue.put((name, bool(np.array_equal(hcompile.hcompile(g, fullgraph=True)(small), g(small)))))
    # float64 powers under a reduction that tests for NaN (max, min, argmax): Halide's is_nan
    # walked the power's shared expression as a tree (fuzz, seed 777, program 304: for ever).
    floats = np.array([-161.5, 1.5, 5e-324, 289.0, 0.5])
    for name, src in [("pow_max", "return (a ** 255).max(axis=0)"), ("pow_min", "return (a ** 3).min()"),
                      ("pow_argmax", "return (a ** 1.5).argmax()"), ("pow_nanmax_exp", "return np.exp((a ** 3).max())")]:
        g = fn_from_src(f"def f(a):\n    {src}\n")
        with np.errstate(all="ignore"):
            got, want = hcompile.hcompile(g, fullgraph=True)(floats), g(floats)
        queue.put((name, bool(np.array_equal(got, want, equal_nan=True))))
    # Chains whose every step reads the previous value twice.
    for dt in ("uint32", "int64", "uint64", "float64"):
        for step in ("x - x // 3", "(x << 1) | x", "x * x + x", "np.tanh(x) * 0.5 + x * 0.25"):
            if dt == "float64" and "<<" in step:
                continue
            g = fn_from_src(f"def f(a):\n    x = a.astype(np.{dt})\n    for _ in range(40):\n"
                            f"        x = {step}\n    return x\n")
            got, want = hcompile.hcompile(g, fullgraph=True)(small), g(small)
            if want.dtype.kind == "f":  # tanh is within an ulp or two of NumPy's, not bit-equal
                same = got.dtype == want.dtype and np.allclose(got, want, rtol=1e-12, equal_nan=True)
            else:
                same = np.array_equal(got, want)
            queue.put((f"reuse_chain_{dt}_{step}", bool(same)))
    queue.put(("done", True))


@needs_compiler
def test_former_minutes_long_compiles_finish():
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    worker = ctx.Process(target=_slow_cases, args=(queue,))
    worker.start()
    worker.join(WATCHDOG_S)
    hung = worker.is_alive()
    if hung:
        worker.kill()
        worker.join()
    results = {}
    while not queue.empty():
        name, ok = queue.get()
        results[name] = ok
    assert not hung, f"compiles still running after {WATCHDOG_S} s; finished: {results}"
    assert results.get("done"), f"worker died (exit {worker.exitcode}); finished: {results}"
    assert all(results.values()), [name for name, ok in results.items() if not ok]
