"""Dynamic shapes: what a loop over changing batch sizes costs, and what a generic kernel costs.

``python -m apps.dynamic_shapes_bench [--write apps/RESULTS.md]``

For each workload (blur3x3: a stencil, whose slices are the size minus a fixed offset), one
process runs a loop over 20 batch sizes (the same sizes for every peer):
hcompile with the default ``dynamic=None`` (the second size compiles once for every size), with
``dynamic=False`` (a compile per size, capped by the recompile limit, past which calls run as
NumPy), jax.jit (a trace and compile per shape) and NumPy. The loop's wall time includes every
compile. Then the steady-state call at one size: the generic kernel against the kernel
specialised to that size, median of repeated timed batches. Every result is checked against
NumPy.
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

import hcompile as hc


def softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layernorm_rows(x, g, b):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def mlp(x, w, b):
    return np.maximum(x @ w + b, 0)


def column_mean(x):
    return x.mean(axis=0) - x.min(axis=0)


def blur3x3(x):
    h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
    return (h[:-2] + h[1:-1] + h[2:]) / 3


def _inputs(name, n, rng):
    if name == "softmax_rows":
        return (rng.random((n, 256)),)
    if name == "layernorm_rows":
        return (rng.random((n, 512), dtype=np.float32), rng.random(512, dtype=np.float32),
                rng.random(512, dtype=np.float32))
    if name == "mlp":
        return (rng.random((n, 128), dtype=np.float32), rng.random((128, 128), dtype=np.float32),
                rng.random(128, dtype=np.float32))
    if name == "blur3x3":
        return (rng.random((n, 512), dtype=np.float32),)
    return (rng.random((n, 64)),)


WORKLOADS = {"softmax_rows": softmax_rows, "layernorm_rows": layernorm_rows, "mlp": mlp,
             "column_mean": column_mean, "blur3x3": blur3x3}
SIZES = [int(s) for s in np.random.default_rng(7).integers(64, 4096, 20)]
STEADY_SIZE = 2000


def _jax_version(fn):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    source = {"softmax_rows": lambda x: (lambda e: e / e.sum(axis=1, keepdims=True))(jnp.exp(x - x.max(axis=1, keepdims=True))),
              "layernorm_rows": lambda x, g, b: (lambda m: (lambda v: (x - m) / jnp.sqrt(v + 1e-5) * g + b)(
                  ((x - m) ** 2).mean(axis=-1, keepdims=True)))(x.mean(axis=-1, keepdims=True)),
              "mlp": lambda x, w, b: jnp.maximum(x @ w + b, 0),
              "column_mean": lambda x: x.mean(axis=0) - x.min(axis=0),
              "blur3x3": lambda x: (lambda h: (h[:-2] + h[1:-1] + h[2:]) / 3)(
                  (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3)}[fn.__name__]
    compiled = jax.jit(source)
    return lambda *args: np.asarray(compiled(*args))


def _close(got, want):
    tol = 1e-4 if want.dtype == np.float32 else 1e-10
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=tol, atol=tol))


def _loop(run, name, check):
    """Seconds for one call at each size (compiles included); whether every result matched."""
    ok = True
    start = time.perf_counter()
    for n in SIZES:
        args = _inputs(name, n, np.random.default_rng(n))
        got = run(*args)
        if check:
            ok = ok and _close(np.asarray(got), WORKLOADS[name](*args))
    return time.perf_counter() - start, ok


def _steady_ms(run, args, repeat=15):
    run(*args)
    batch = max(1, int(0.02 / max(1e-6, _once(run, args))))
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(batch):
            run(*args)
        samples.append((time.perf_counter() - start) / batch * 1e3)
    return statistics.median(samples)


def _once(run, args):
    start = time.perf_counter()
    run(*args)
    return time.perf_counter() - start


def table():
    loop_rows = ["| workload | NumPy loop, s | hcompile dynamic=None, s (entries) | hcompile dynamic=False, s (entries) "
                 "| jax.jit, s | all match NumPy |", "|---|---|---|---|---|---|"]
    steady_rows = [f"| workload (n={STEADY_SIZE}) | NumPy, ms | hcompile generic, ms | hcompile specialised, ms "
                   "| generic / specialised |", "|---|---|---|---|---|"]
    for name, fn in WORKLOADS.items():
        numpy_s, _ = _loop(fn, name, check=False)
        dynamic = hc.hcompile(fn)
        dynamic_s, ok_dynamic = _loop(dynamic, name, check=True)
        static = hc.hcompile(fn, dynamic=False)
        static_s, ok_static = _loop(static, name, check=True)
        jax_fn = _jax_version(fn)
        jax_cell = "n/a"
        ok_jax = True
        if jax_fn is not None:
            jax_s, ok_jax = _loop(jax_fn, name, check=True)
            jax_cell = f"{jax_s:.2f}"
        loop_rows.append(f"| {name} | {numpy_s:.3f} | {dynamic_s:.2f} ({dynamic.cache_info().entries}) | "
                         f"{static_s:.2f} ({static.cache_info().entries}) | {jax_cell} | "
                         f"{'yes' if ok_dynamic and ok_static and ok_jax else 'NO'} |")
        args = _inputs(name, STEADY_SIZE, np.random.default_rng(1))
        generic = hc.hcompile(fn, dynamic=True)
        specialised = hc.hcompile(fn, dynamic=False)
        assert _close(generic(*args), fn(*args)) and _close(specialised(*args), fn(*args))
        numpy_ms, generic_ms, special_ms = (_steady_ms(f, args) for f in (fn, generic, specialised))
        steady_rows.append(f"| {name} | {numpy_ms:.3f} | {generic_ms:.3f} | {special_ms:.3f} | "
                           f"{generic_ms / special_ms:.2f} |")
    return "\n".join(loop_rows) + "\n\n" + "\n".join(steady_rows) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="add or replace this section in a results file")
    opts = parser.parse_args(argv)
    command = "python -m apps.dynamic_shapes_bench" + (f" --write {opts.write}" if opts.write else "")
    from apps.bench import heading, publish
    section = (heading("Dynamic shapes") +
               f"- command: `{command}`\n- batch sizes (rows), the same for every peer: {SIZES}\n"
               f"- `dynamic=False` compiles per size up to `hc.config.recompile_limit` (8), then runs NumPy\n\n{table()}")
    publish(section, opts.write, "dynamic_shapes")


if __name__ == "__main__":
    main()
