# %% [markdown]
# # 01 — Your first `@hcompile`
#
# hcompile reads the bytecode of an ordinary NumPy function, captures its array operations
# into a graph, fuses them into Halide pipelines and JIT-compiles them for this CPU. Later
# calls check cheap guards (dtype, rank, shapes…) and run the cached kernel.
#
# This file is a notebook written as a script: run it top to bottom with
# `python tutorials/01_first_compile.py`, or open it cell by cell (`# %%`) in an editor that
# understands that format.

# %%
import statistics
import time

import numpy as np

import hcompile as hc

hc.reset()  # start from empty in-memory caches, so the counters below start at zero


def gelu_residual(x, bias):
    """A fused-friendly chain: bias add, tanh-approximated GELU, residual."""
    h = x + bias
    g = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return x + g


# %% [markdown]
# ## Compile it
#
# `hc.hcompile(fn)` (or `@hc.hcompile` on the definition) returns a callable with the same
# signature. Nothing is compiled until the first call, because the graph depends on the
# arguments' dtypes and ranks.

# %%
fast = hc.hcompile(gelu_residual)

rng = np.random.default_rng(0)
x = rng.standard_normal((1024, 1024), dtype=np.float32)
bias = rng.standard_normal(1024, dtype=np.float32)

t0 = time.perf_counter()
out = fast(x, bias)  # first call: capture + Halide compile
compile_s = time.perf_counter() - t0

expected = gelu_residual(x, bias)  # plain NumPy
print("dtype and shape:", out.dtype, out.shape)
print("matches NumPy:", np.allclose(out, expected, rtol=1e-4, atol=1e-5))
print("max |difference|:", float(np.max(np.abs(out - expected))))
assert out.dtype == expected.dtype and out.shape == expected.shape
assert np.allclose(out, expected, rtol=1e-4, atol=1e-5)

# %% [markdown]
# Fused float32 code may round a little differently from NumPy's op-by-op evaluation (a
# different `tanh`, operations reassociated), so compare with a float32 tolerance, not `==`.
#
# ## Time it
#
# The first call paid for compilation; later calls only check guards and run the kernel.


# %%
def median_ms(fn, *args, repeat=15):
    fn(*args)  # warm
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter_ns()
        fn(*args)
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1e6


numpy_ms = median_ms(gelu_residual, x, bias)
hcompile_ms = median_ms(fast, x, bias)
print(f"first call (compile): {compile_s:.2f} s  (the first compile in a process also pays "
      "Halide's one-time JIT start-up)")
print(f"NumPy:    {numpy_ms:8.3f} ms")
print(f"hcompile: {hcompile_ms:8.3f} ms   ({numpy_ms / hcompile_ms:.2f}x NumPy)")

# %% [markdown]
# ## What did it capture?
#
# `hc.explain(fn, *args)` traces the function on those arguments and reports the graphs it
# captured and any graph breaks (code that had to run as plain Python), with file:line.

# %%
explanation = hc.explain(gelu_residual, x, bias)
print(explanation)
print("graphs:", explanation.graph_count, " graph breaks:", explanation.graph_break_count)

# %% [markdown]
# ## The cache, and recompiles
#
# Each compiled function keeps one entry per guard set. Calling again with the same kind of
# input is a cache hit. A new rank (here 2-D → 3-D) fails the guards, so the function is
# compiled again: a *recompile*. A new size of the same rank may or may not need one: shapes
# are symbolic by default, so hcompile can often reuse the kernel; the counters say what
# happened.

# %%
print("after the calls above:  ", fast.cache_info())

fast(rng.standard_normal((1024, 1024), dtype=np.float32), bias)  # same guards: a hit
print("same shape, new values: ", fast.cache_info())

x_wide = rng.standard_normal((512, 1024), dtype=np.float32)
before = fast.cache_info().recompiles
out_wide = fast(x_wide, bias)
assert np.allclose(out_wide, gelu_residual(x_wide, bias), rtol=1e-4, atol=1e-5)
info = fast.cache_info()
print("new size, same rank:    ", info,
      "-> recompiled" if info.recompiles > before else "-> reused (symbolic shape)")

x3 = rng.standard_normal((4, 256, 1024), dtype=np.float32)
before = fast.cache_info().recompiles
out3 = fast(x3, bias)
assert np.allclose(out3, gelu_residual(x3, bias), rtol=1e-4, atol=1e-5)
info = fast.cache_info()
print("new rank (3-D):         ", info)
assert info.recompiles > before, "a new rank must fail the guards and recompile"

# %% [markdown]
# ## Graph breaks, and `fullgraph=True`
#
# Some code cannot be captured: a `print`, a data-dependent `if`, an unknown library call.
# By default that is a *graph break*: the unsupported part runs as plain Python and the answer
# is NumPy's; the array code around it stays compiled where hcompile can resume after the break
# (otherwise the whole function runs as Python — `explain` shows how many graphs were kept). With `fullgraph=True` hcompile instead refuses, raising
# `hc.Unsupported` with the reason and the file:line of the offending code. Use it when you
# want to be sure everything is compiled.


# %%
def chatty(x):
    y = np.exp(-x * x)
    print("computed y")  # cannot be captured
    return y * 2


strict = hc.hcompile(chatty, fullgraph=True)
try:
    strict(x)
except hc.Unsupported as e:
    print("hc.Unsupported:", e)
    print(f"  where: {e.filename}:{e.lineno}")
    print(f"  why:   {e.reason}")
else:
    raise AssertionError("fullgraph=True should have raised hc.Unsupported")

lenient = hc.hcompile(chatty)  # the default: break the graph, keep the right answer
assert np.allclose(lenient(x), chatty(x), rtol=1e-4, atol=1e-5)
explanation = hc.explain(chatty, x)
print(explanation)
for br in explanation.break_reasons:
    print(f"graph break at {br.filename}:{br.lineno}: {br.reason}")

# %% [markdown]
# Next: `python -m apps.demo` compiles a few more realistic functions, and
# `python -m apps.bench` compares hcompile with NumPy, torch.compile and jax.jit.
