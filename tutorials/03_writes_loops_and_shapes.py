# %% [markdown]
# # 03 — Writes, loops and shapes
#
# Real NumPy code writes into arrays and loops over time steps. This tutorial shows what
# hcompile makes of both, and what a new shape costs (dynamic shapes).
#
# Run it top to bottom (`python tutorials/03_writes_loops_and_shapes.py`) or cell by cell.

# %%
import statistics
import time

import numpy as np

import hcompile as hc

hc.reset()
rng = np.random.default_rng(0)


def median_seconds(fn, make_args, repeat=7):
    times = []
    for _ in range(repeat):
        args = make_args()
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# %% [markdown]
# ## Writes into arrays
#
# Stores into arguments (`x[1:-1] = ...`, `x += y`, `np.add(a, b, out=c)`) are captured. The
# caller's arrays end up exactly as NumPy leaves them, and a right-hand side that reads the
# array being written sees the old values (NumPy's temporary), as here.

# %%
def smooth_in_place(x, weight):
    x[1:-1] = (1 - weight) * x[1:-1] + weight * 0.5 * (x[:-2] + x[2:])
    x *= 2.0
    return x


a = rng.standard_normal(1000)
b = a.copy()
out = hc.hcompile(smooth_in_place)(a, 0.25)
smooth_in_place(b, 0.25)
print("same array object returned:", out is a)
print("argument written as NumPy writes it:", np.allclose(a, b))

# %% [markdown]
# Where no read can see an element already written, the kernel writes the argument where it
# lives: no new array, no copy back. `smooth_in_place` reads neighbours of the elements it
# writes, so its new contents are computed apart and copied in; a scaling is written in place
# (the compile report lists the outputs written in place).

# %%
def scale(x, s):
    x *= s


scaled = hc.hcompile(scale)
scaled(a, 0.5)
print("outputs written in place:", scaled.compile_records[-1]["report"]["in_place_outputs"])

# %% [markdown]
# ## Arguments with structure
#
# Keyword-only parameters, `*args`, `**kwargs`, and tuples, lists and dicts of arrays are taken
# apart into their arrays and scalars: one kernel, guarded on each leaf, and on the structure.

# %%
def affine(x, params, *, activation=np.tanh):
    return activation(x @ params["w"] + params["b"])


params = {"w": rng.standard_normal((8, 4)), "b": rng.standard_normal(4)}
layer = hc.hcompile(affine)
x = rng.standard_normal((16, 8))
print("same as NumPy:", np.allclose(layer(x, params), affine(x, params)))
layer(x, params)
print(layer.cache_info())

# %% [markdown]
# ## A time-stepping loop
#
# `for _ in range(steps)` with a whole-array body is outlined: the body is compiled once and
# called each step, so compiling 1000 steps costs what compiling one does. (Loops of fewer than
# 8 iterations, or whose body indexes with the loop variable, are unrolled and fused instead.)

# %%
def jacobi_2d(u, steps):
    for _ in range(steps):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return u


grid = rng.random((300, 300))
fast = hc.hcompile(jacobi_2d)
t0 = time.perf_counter()
result = fast(grid.copy(), 1000)
print(f"first call (compile + 1000 steps): {time.perf_counter() - t0:.2f} s")
print("matches NumPy:", np.allclose(result, jacobi_2d(grid.copy(), 1000)))
t_numpy = median_seconds(jacobi_2d, lambda: (grid.copy(), 200), repeat=3)
t_fast = median_seconds(fast, lambda: (grid.copy(), 200), repeat=3)
print(f"200 steps: NumPy {t_numpy * 1e3:.1f} ms, hcompile {t_fast * 1e3:.1f} ms ({t_numpy / t_fast:.2f}x)")
body = fast.compile_records[0]["resumes"][0]
print("the loop body:", body.__name__, body.cache_info())

# %% [markdown]
# `explain` shows the loop as a break whose body is its own graph:

# %%
print(hc.explain(jacobi_2d, grid.copy(), 1000))

# %% [markdown]
# ## Floats that change between calls
#
# A time or step size passed as a Python float changes on every call. The first call
# specialises on it; once its value is all that changed, the function compiles once more with
# the float read at run time, and that entry serves every later value. The loop body below
# carries `t += dt` from one iteration to the next: it compiles twice, not 50 times.

# %%
def advect(u, steps, dt):
    t = 0.0
    for _ in range(steps):
        u = u + dt * np.sin(t) * (np.roll(u, 1) - u)
        t += dt
    return u, t


fast_advect = hc.hcompile(advect)
wave = rng.random(10_000)
got, t_end = fast_advect(wave, 50, 0.01)
want, t_want = advect(wave, 50, 0.01)
print("matches NumPy:", np.allclose(got, want), "and the time is a Python float:", t_end == t_want, type(t_end))
body = fast_advect.compile_records[0]["resumes"][0]
print("the loop body's entries:", body.cache_info().entries)

# %% [markdown]
# ## Shapes and recompiles
#
# The first call compiles for the shapes it sees. When a later call differs only in the size of
# some axes (a batch of another size), those axes become *dynamic*: the function compiles once
# more, for every size of them from 2 up, and the log says so. Sizes 0 and 1 keep entries of
# their own (NumPy broadcasts and empties differently there). `dynamic=True` makes every axis
# dynamic from the first call; `dynamic=False` compiles each shape on its own.

# %%
hc.set_logs(recompiles=True)
norm = hc.hcompile(lambda v: v / np.sqrt((v * v).sum()))
for n in (100, 100, 200, 300, 4096, 7):
    norm(rng.standard_normal(n))
print(norm.cache_info())   # two entries: the first call's, then one for every size

# %% [markdown]
# A loop over 20 batch sizes compiles twice. `explain` shows which axes an entry takes at any
# size, and which number stands for each size in the printed graph.

# %%
def softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


fast_softmax = hc.hcompile(softmax_rows)
for batch in range(2, 22):
    x = rng.random((batch, 64))
    assert np.allclose(fast_softmax(x), softmax_rows(x))
print(fast_softmax.cache_info())
print(hc.explain(hc.hcompile(softmax_rows, dynamic=True), rng.random((8, 64))).records[0]["dynamic"])

# %% [markdown]
# Slices a fixed distance from the ends (`x[1:-1]`, `x[2:]`: stencils) are the size plus an
# offset, so a stencil serves every size from the least that leaves each slice an element.

# %%
stencil = hc.hcompile(lambda v: v[1:-1] + v[2:] + v[:-2])
for n in (50, 60, 70, 4096):
    stencil(rng.random(n))
print(stencil.cache_info())
print(stencil.compile_records[1]["dynamic"])

# %% [markdown]
# Code that decides something on a size keeps static shapes: `if len(x) > 4`, `min(n, 5)`,
# `x[:5]` or `x[::2]` along the changing axis, `x.reshape(-1)`. Each new size then compiles
# again (up to `hc.config.recompile_limit` entries, 8 by default; past it new shapes run as plain
# Python with one warning). The compile record says why the axes stayed static.

# %%
halves = hc.hcompile(lambda v: v[::2] * 2)
for n in (50, 60, 70):
    halves(rng.random(n))
print(halves.cache_info())
print(halves.compile_records[1]["dynamic"])
