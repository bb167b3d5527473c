# %% [markdown]
# # 04 — The autoscheduler
#
# hcompile lowers each fused region of a graph to Halide Funcs; a *schedule* then says how each
# is computed: stored at the root or inside another region's rows, vectorized, run in parallel,
# reduced in vector lanes, tiled in registers, or handed to BLAS. This tutorial takes one
# pipeline through the fixed baseline heuristic, hcompile's cost-model search, and Halide's
# own three CPU autoschedulers, and shows the decisions, the Halide schedule source and the
# cost model's view.
#
# Run it top to bottom (`python tutorials/04_autoscheduler.py`) or cell by cell.

# %%
import statistics
import time

import numpy as np

import hcompile as hc

hc.reset()
rng = np.random.default_rng(0)


def median_ms(fn, args, repeat=9):
    fn(*args)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


# %% [markdown]
# ## One pipeline
#
# A small MLP block: a matrix product, a bias, GELU, and a row softmax. The first product is
# 256 x 1024 x 256, large enough that hcompile calls BLAS (NumPy's own OpenBLAS) for it.

# %%
def block(x, w, b):
    h = x @ w + b
    h = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h ** 3)))
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


x = rng.standard_normal((256, 1024)).astype(np.float32)
w = rng.standard_normal((1024, 256)).astype(np.float32) / 32
b = rng.standard_normal(256).astype(np.float32)
want = block(x, w, b)

# %% [markdown]
# ## Five schedules for the same lowered pipeline
#
# `autoscheduler="hcompile"` (the default) runs the search; `"baseline"` the fixed heuristic
# it started from; `"Adams2019"`, `"Mullapudi2016"` and `"Li2018"` give the very pipeline
# hcompile lowered to Halide's own autoschedulers, with estimates from the call's shapes.
# Every one computes NumPy's answer; they differ in speed.

# %%
timings = {}
for name in ["hcompile", "baseline", "Adams2019", "Mullapudi2016", "Li2018"]:
    compiled = hc.hcompile(block, autoscheduler=name, dynamic=False)
    got = compiled(x, w, b)
    timings[name] = median_ms(compiled, (x, w, b))
    print(f"{name:14s} {timings[name]:7.3f} ms   matches NumPy: {np.allclose(got, want, rtol=1e-4, atol=1e-6)}")
print(f"{'NumPy':14s} {median_ms(block, (x, w, b)):7.3f} ms")

# %% [markdown]
# ## What the search decided, and why
#
# A schedule is a list of decisions: small values `(region, choice, axis, value, value2)`.
# `explain` prints them one per line, then the same schedule as Halide C++ directives, and,
# above both, the autoscheduler's view: per region the points, the work and bytes per point it
# counted, the machine model (measured once on this machine and cached), and the cost model's
# prediction for the chosen list against the baseline's.

# %%
compiled = hc.hcompile(block, dynamic=False)
print(hc.explain(compiled, x, w, b))

# %% [markdown]
# ## Reading the cost model
#
# The search ranks each region's candidates with an analytical model: vector arithmetic against
# the core's measured rate, bytes against memory bandwidth, parallel loops against the core
# count plus a launch cost and a claim per task. (A parallel loop runs in tasks of several
# iterations, "parallel axis 1 in tasks of 128": Halide's pool hands out one task at a time,
# and a task per row of a 2048-row softmax cost it 1.5x.) A region keeps the baseline's decisions unless the model predicts a
# clear gain. The report also lists *variants*: whole lists one region away from the choice,
# with their predictions. Compiling a few of them with an explicit `schedule=` shows how the
# model's ranking compares with the clock (`python -m apps.cost_model_ranking` does this for
# every benchmark pipeline).

# %%
compiled(x, w, b)        # explain compiled its own copy; this call compiles the function's entry
report = compiled.compile_records[0]["report"]
print("decisions:", report["decisions"])
variants = report["variants"]
for decisions, predicted in [variants[0], variants[len(variants) // 2], variants[-1]]:
    explicit = hc.hcompile(block, dynamic=False, schedule=decisions)
    got = explicit(x, w, b)
    mine, chosen = set(map(tuple, decisions)), set(map(tuple, report["decisions"]))
    print(f"predicted {1e3 * predicted:7.3f} ms, measured {median_ms(explicit, (x, w, b)):7.3f} ms, "
          f"matches NumPy: {np.allclose(got, want, rtol=1e-4, atol=1e-6)}, "
          f"adds {sorted(mine - chosen)}, drops {sorted(chosen - mine)}")

# %% [markdown]
# ## Stencils: computing producers per tile of their consumer
#
# An image pipeline reads its intermediates through small windows: a gradient reads three rows
# of the gray image, a 3x3 sum three rows of each gradient product. Stored whole at the root,
# every intermediate goes to memory and back. The search's last step finds, for each tiled
# candidate, the regions its tiles can compute themselves (read only by the group, through
# windows of rows, which Halide's bounds inference measures on each definition), and weighs the
# rows recomputed at tile edges against the memory traffic saved. Where it gains, the consumer
# gets `tile_rows` (its rows split into tiles run in parallel) and each producer
# `compute_at_tile`. Harris corners, from the apps suite (`apps/pipelines.py`):

# %%
import pathlib  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # the repository root: apps/
from apps.pipelines import harris  # noqa: E402

img = rng.random((3, 768, 1024), dtype=np.float32)
fused = hc.hcompile(harris)
apart = hc.hcompile(harris, autoscheduler="baseline")  # every region at the root
print("matches NumPy:", np.allclose(fused(img), harris(img), rtol=1e-3, atol=1e-7))
for d in fused.compile_records[0]["report"]["decisions"]:
    if d[1] in ("tile_rows", "compute_at_tile"):
        print(d)
print(f"per tile: {median_ms(fused, (img,)):.2f} ms;  all at the root: {median_ms(apart, (img,)):.2f} ms")

# %% [markdown]
# ## Inline or store
#
# A value read at several places can be recomputed at each (inlined into its readers) or
# computed once and stored. The fusion partitioner marks such values *optional* regions
# ("[optional: ...]" in the report's regions) and the search decides with its cost model:
# recomputing costs the value's arithmetic at every place it is read (for a reduction, at every
# reduced point); storing costs a pass to memory and back. Here an exponential read by two
# reductions is worth storing, a square root and an add are not; the other choice, given as an
# explicit list, shows what the model avoided.

# %%
def exp_two_reductions(x):
    e = np.exp(x) * 2.0
    return e.sum(axis=0), e.max(axis=0)


def sqrt_row_range(x):
    s = np.sqrt(np.abs(x)) + 1.0
    return s.max(axis=1) - s.min(axis=1)


big = rng.standard_normal((2048, 2048)).astype(np.float32)
for fn in (exp_two_reductions, sqrt_row_range):
    chosen = hc.hcompile(fn, dynamic=False)
    chosen(big)
    report = chosen.compile_records[0]["report"]
    decisions = [tuple(d) for d in report["decisions"]]
    optional = [line for line in report["regions"].splitlines() if "[optional" in line]
    region = int(optional[0].split()[1])
    stored = not any(d[0] == region and d[1] == "inline" for d in decisions)
    rest = [d for d in decisions if d[0] != region]
    other = rest + ([(region, "inline", -1, 0, 0)] if stored else
                    [(region, "compute_root", -1, 0, 0), (region, "vectorize", 0, 16, 0), (region, "parallel", 1, 8, 0)])
    flipped = hc.hcompile(fn, dynamic=False, schedule=other)
    as_tuple = lambda r: r if isinstance(r, tuple) else (r,)  # noqa: E731
    for got, ref in zip(as_tuple(flipped(big)) + as_tuple(chosen(big)), as_tuple(fn(big)) * 2):
        assert np.allclose(got, ref, rtol=1e-4, atol=1e-4)
    print(f"{fn.__name__}: the search chose to {'store' if stored else 'inline'} region {region}: "
          f"{median_ms(chosen, (big,), 21):.2f} ms; the other choice: {median_ms(flipped, (big,), 21):.2f} ms")

# %% [markdown]
# ## Sums of matrix products
#
# A 3x3 convolution can be written as nine shifted matrix products added up. Each product
# alone is large enough for BLAS, but then nine 3.2 MB products are stored and summed. hcompile
# instead folds `c + a0 @ b0 + a1 @ b1 + ...` (products read nowhere else, 256 contracted
# elements at most) into one `matmul_sum` region: every product accumulates into the same
# register tile of the output. That is an algorithm choice, like calling BLAS, so Halide's
# autoschedulers are given the products apart, the form they schedule best.

# %%
import inspect  # noqa: E402

from apps.pipelines import conv_layer as conv3x3  # noqa: E402

print(inspect.getsource(conv3x3))
images = rng.standard_normal((2, 32, 32, 64)).astype(np.float32)
weights = (rng.standard_normal((3, 3, 64, 64)) / 24).astype(np.float32)
bias = rng.standard_normal(64).astype(np.float32)
want = conv3x3(images, weights, bias)
for name in ["hcompile", "Adams2019"]:
    compiled = hc.hcompile(conv3x3, autoscheduler=name, dynamic=False)
    got = compiled(images, weights, bias)
    regions = compiled.compile_records[0]["report"]["regions"]
    kinds = [line.split("(")[1].split(")")[0] for line in regions.splitlines()]
    print(f"{name:10s} {median_ms(compiled, (images, weights, bias), 15):6.2f} ms   regions: {', '.join(kinds)}"
          f"   matches NumPy: {np.allclose(got, want, rtol=1e-4, atol=1e-4)}")
print(f"{'NumPy':10s} {median_ms(conv3x3, (images, weights, bias), 15):6.2f} ms")
