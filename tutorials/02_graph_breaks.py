# %% [markdown]
# # 02 — Graph breaks: what they cost, how to see them, how to fix them
#
# hcompile captures a function by reading its bytecode. Some instructions cannot become part of
# a compiled graph: a `print`, a branch on an array's value, `.item()`, a call into a library we
# do not model. Each is a *graph break*. hcompile does not give up on the whole function there:
#
# 1. the graph captured so far runs as one compiled kernel,
# 2. the instruction runs in real Python (so `print` prints, once, in program order),
# 3. the code after it continues in a generated *resume function*, which is captured and
#    compiled in turn, with its own cache and guards.
#
# Run this file top to bottom (`python tutorials/02_graph_breaks.py`) or cell by cell.

# %%
import statistics
import time

import numpy as np

import hcompile as hc

hc.reset()
rng = np.random.default_rng(0)
x = rng.standard_normal(1_000_000, dtype=np.float32)
y = rng.standard_normal(1_000_000, dtype=np.float32)


def median_seconds(fn, *args, repeat=15):
    fn(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# %% [markdown]
# ## A function with a break in the middle
#
# `norm_and_report` logs a statistic half way. The `float(...)` of an array value is a break:
# its result is a Python number the graph cannot hold.

# %%
LOG = []


def norm_and_report(a, b):
    h = np.tanh(a * 0.5 + b) * np.exp(-b * b)
    LOG.append(float(h.max()))        # graph break: a Python float, and a list's side effect
    return np.sqrt(h * h + 1.0) - 1.0


def norm_only(a, b):                  # the same work without the break: the statistic returned
    h = np.tanh(a * 0.5 + b) * np.exp(-b * b)
    return np.sqrt(h * h + 1.0) - 1.0, h.max()


# %% [markdown]
# `hc.explain` shows each break with its file, line and source line, and the graphs in the
# order they run. Because the code after the break is only captured when it runs, `explain`
# calls the function once here, and says so (`run=False` never calls it).

# %%
print(hc.explain(norm_and_report, x, y))

# %% [markdown]
# ## It stays fast
#
# The break costs a second kernel launch, one round trip through Python and storing `h` (the
# code after the break reads it back), measured here against the same work without the break.

# %%
with_break = hc.hcompile(norm_and_report)
without_break = hc.hcompile(norm_only)
LOG.clear()
np.testing.assert_allclose(with_break(x, y), norm_and_report(x, y), rtol=1e-5, atol=1e-6)
assert LOG[0] == LOG[1]             # the side effect happened once per call, with the same value
t_numpy = median_seconds(norm_and_report, x, y)
t_break = median_seconds(with_break, x, y)
t_fused = median_seconds(without_break, x, y)
print(f"NumPy            {t_numpy * 1e3:7.2f} ms")
print(f"hcompile, break  {t_break * 1e3:7.2f} ms   ({t_numpy / t_break:.2f}x NumPy)")
print(f"hcompile, none   {t_fused * 1e3:7.2f} ms   ({t_numpy / t_fused:.2f}x NumPy)")

# %% [markdown]
# ## Branches on array values
#
# `if s > 0:` on an array value breaks too. Both sides become resume functions; each is
# compiled the first time it is taken.

# %%
def signed_scale(a):
    s = a.sum()
    if s > 0:
        out = a * 2.0
    else:
        out = -a
    return out + 1.0


branchy = hc.hcompile(signed_scale)
for sign in (1.0, -1.0, 1.0):
    a = sign * np.abs(x)
    np.testing.assert_allclose(branchy(a), signed_scale(a), rtol=1e-6)
taken = branchy.compile_records[0]["resumes"]
print("resume functions:", [r.__name__ for r in taken], "entries:", [r.cache_info().entries for r in taken])

# %% [markdown]
# ## Breaks that do not resume
#
# A break inside a loop, a `try`/`with` block, or a function whose locals are captured by an
# inner function still runs the *whole* function as Python: always the right answer, but no
# speedup. `explain` says which, and why.

# %%
def loop_with_print(a):
    for step in range(3):
        a = a * 0.5
        print("step", step)
    return a


print(hc.explain(loop_with_print, x[:4], run=False))

# %% [markdown]
# ## Fixing a break
#
# `fullgraph=True` turns every break into an error naming the file and line, which is how to
# find them in code that must compile whole. Move the Python-side work out of the hot
# function, or compute it as an array (`h.max()` instead of `float(h.max())`) and convert it
# after the call.

# %%
strict = hc.hcompile(norm_and_report, fullgraph=True)
try:
    strict(x, y)
except hc.Unsupported as e:
    print("fullgraph=True:", e)


def norm_and_statistic(a, b):
    h = np.tanh(a * 0.5 + b) * np.exp(-b * b)
    return np.sqrt(h * h + 1.0) - 1.0, h.max()


fixed = hc.hcompile(norm_and_statistic, fullgraph=True)
out, peak = fixed(x, y)
LOG.append(float(peak))
print("fixed: one graph, no break:", hc.explain(norm_and_statistic, x, y).graph_count == 1)
