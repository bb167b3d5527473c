# %% [markdown]
# # 05 — Tuning: max-autotune, the tuning database, `hcompile tune`
#
# The default mode schedules with a cost model: fast to decide, but a model. `mode="max-autotune"`
# measures instead: the search's schedule and the model's likeliest alternatives (each region's
# best alternative first) are compiled, checked against the search's schedule's answer and timed
# on the call's own arguments, and the fastest wins. Every measurement goes to a SQLite tuning database; later
# compiles of the same workload (the same graph, argument shapes, dtypes and layouts, target,
# hcompile and Halide versions, machine), in any mode and any process, use its best record.
#
# Run it top to bottom (`python tutorials/05_tuning.py`) or cell by cell. It writes only to a
# temporary folder.

# %%
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

import hcompile as hc

work = tempfile.mkdtemp(prefix="hcompile-tutorial-05-")
hc.config.tuning_db = os.path.join(work, "tuning.sqlite")
hc.config.tuning_trials = 8      # schedules measured per pipeline (default 24)
hc.config.tuning_seconds = 20    # and at most this long (default 60)
rng = np.random.default_rng(0)

# %% [markdown]
# ## max-autotune on one function
#
# The compile record says what was measured: the search's time, the best time, the number of
# schedules tried. The winner must beat the search's list by 2%, and again when the two are
# timed once more in turn, or the search's list stays: on a noisy machine one lucky sample
# must not pick a schedule.

# %%
def layer_norm(x, g, b):
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


x = rng.standard_normal((1024, 768)).astype(np.float32)
g = rng.standard_normal(768).astype(np.float32)
b = rng.standard_normal(768).astype(np.float32)

tuned = hc.hcompile(layer_norm, mode="max-autotune")
assert np.allclose(tuned(x, g, b), layer_norm(x, g, b), rtol=1e-4, atol=1e-5)
summary = tuned.compile_records[0]["tuning"]
print(f"{summary['trials']} schedules measured in {summary['tuning_seconds']:.1f} s: "
      f"search {summary['default_seconds'] * 1e3:.3f} ms, best {summary['best_seconds'] * 1e3:.3f} ms")

# %% [markdown]
# ## A default-mode compile picks up the record
#
# The precedence, in one place: an explicit `schedule=` list, then the best tuning record,
# then the search. A new compiled function of the same code and shapes finds the record.

# %%
again = hc.hcompile(layer_norm)
again(x, g, b)
print("schedule from:", again.compile_records[0]["schedule_origin"])

# %% [markdown]
# ## From the command line
#
# `hcompile tune SCRIPT [ARGS...]` runs a script with every `@hcompile` function in
# max-autotune mode, shows a progress bar per pipeline, and ends with a table and a plot of the
# best time against the trial. A second run on the same database reuses the records and takes
# about the script's own time; a plain run of the script picks them up too. `hcompile db show`
# lists the records, `hcompile db verify` re-measures the best ones, `hcompile db clear`
# empties the database. Ctrl-C keeps every measurement made so far.

# %%
script = os.path.join(work, "blur.py")
with open(script, "w") as f:
    f.write(textwrap.dedent("""
        import numpy as np
        import hcompile as hc

        @hc.hcompile
        def blur(img):
            h = (img[:, :-2] + img[:, 1:-1] + img[:, 2:]) / 3
            return (h[:-2] + h[1:-1] + h[2:]) / 3

        img = np.random.default_rng(0).random((1024, 1024), dtype=np.float32)
        out = blur(img)
        print("blur:", out.shape, blur.compile_records[0]["schedule_origin"])
    """))
db = os.path.join(work, "cli.sqlite")
for args in (["tune", "--trials", "6", "--db", db, "--plot", os.path.join(work, "tune.png"), script],
             ["tune", "--trials", "6", "--db", db, script],
             ["db", "show", "--db", db]):
    run = subprocess.run([sys.executable, "-m", "hcompile.cli", *args], capture_output=True, text=True, check=True)
    print("$ hcompile", " ".join(args[:1] + [a for a in args[1:] if not a.startswith(work)]))
    print(run.stdout)
print("plot written:", os.path.exists(os.path.join(work, "tune.png")))

# %% [markdown]
# ## The same autoscheduler for pipelines written in Halide
#
# hcompile's autoscheduler is also a Halide plugin, `HCompile`, for pipelines written directly
# in Halide: its analysis, search and schedules, applied to the pipeline's own Funcs. Load it
# from Halide's Python bindings with `hl.load_plugin(hc.plugin_path())`; a generator takes it as
# `-p <hc.plugin_path()> autoscheduler=HCompile` (CMake: `add_halide_library(... AUTOSCHEDULER
# <imported plugin target>)`, as `apps/halide_apps/CMakeLists.txt` does). Like Halide's own
# autoschedulers it needs estimates on the outputs and inputs; the schedule it writes is
# `schedule_source`. Its parameters: `parallelism` (cores), `variant` (the Nth alternative list,
# one Func's decisions away from the search's).

# %%
import halide as hl

hl.load_plugin(hc.plugin_path())
x_, y_ = hl.Var("x"), hl.Var("y")
image = hl.ImageParam(hl.Float(32), 2, "image")
clamped = hl.BoundaryConditions.repeat_edge(image)
blur_x, blur_y = hl.Func("blur_x"), hl.Func("blur_y")
blur_x[x_, y_] = (clamped[x_ - 1, y_] + clamped[x_, y_] + clamped[x_ + 1, y_]) / 3
blur_y[x_, y_] = (blur_x[x_, y_ - 1] + blur_x[x_, y_] + blur_x[x_, y_ + 1]) / 3
image.dim(0).set_estimate(0, 1024)
image.dim(1).set_estimate(0, 1024)
blur_y.set_estimate(x_, 0, 1024).set_estimate(y_, 0, 1024)
pipeline = hl.Pipeline(blur_y)
target = hl.get_jit_target_from_environment()
result = pipeline.apply_autoscheduler(target, hl.AutoschedulerParams("HCompile", {"parallelism": "2"}))
print(result.schedule_source)

img = np.random.default_rng(1).random((1024, 1024), dtype=np.float32)
image.set(hl.Buffer(img))
out = hl.Buffer(hl.Float(32), [1024, 1024])
pipeline.realize(out)
padded = np.pad(img, 1, mode="edge")
rows = (padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]) / 3
print("matches NumPy:", np.allclose(np.asarray(out), (rows[:-2] + rows[1:-1] + rows[2:]) / 3, atol=1e-6))
