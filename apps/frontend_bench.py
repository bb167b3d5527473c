"""Benchmarks of what the frontend captures: writes into arrays, time-stepping loops, graph breaks.

``python -m apps.frontend_bench [--repeat N] [--steps N] [--write apps/RESULTS.md]``

Time-stepped stencils written as NumPy code that stores into its arguments (Jacobi 1-D and 2-D,
heat 3-D, FDTD 2-D, horizontal diffusion) and gemm with ``C[:] = alpha * A @ B + beta * C``, run by plain NumPy,
hcompile (the loop's body compiled once), numba (``@njit`` on the same source where numba takes
it) and jax.jit (a functional rewrite with ``.at[].set`` and ``lax.fori_loop``, jax's own idiom);
a peer that does not import is skipped. Then graph breaks: a function with one break against its
break-free twin, and per-call overhead with 1, 4 and 16 array arguments and with one break.

Every peer's result is checked against NumPy before it is timed. Inputs are copied before each
timed call (outside the timing), so every call starts from the same state. Times are medians.
"""
from __future__ import annotations

import argparse
import io
import contextlib
import logging
import statistics
import time
from pathlib import Path

import numpy as np

import hcompile as hc


# -- workloads: plain NumPy, writing into their arguments ------------------------------------------
def jacobi_1d(a, b, steps):
    for _ in range(steps):
        b[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3.0
        a[1:-1] = (b[:-2] + b[1:-1] + b[2:]) / 3.0
    return a


def jacobi_2d(a, b, steps):
    for _ in range(steps):
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1] + a[:-2, 1:-1])
        a[1:-1, 1:-1] = 0.2 * (b[1:-1, 1:-1] + b[1:-1, :-2] + b[1:-1, 2:] + b[2:, 1:-1] + b[:-2, 1:-1])
    return a


def heat_3d(a, b, steps):
    for _ in range(steps):
        b[1:-1, 1:-1, 1:-1] = (0.125 * (a[2:, 1:-1, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[:-2, 1:-1, 1:-1])
                               + 0.125 * (a[1:-1, 2:, 1:-1] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[1:-1, :-2, 1:-1])
                               + 0.125 * (a[1:-1, 1:-1, 2:] - 2.0 * a[1:-1, 1:-1, 1:-1] + a[1:-1, 1:-1, :-2])
                               + a[1:-1, 1:-1, 1:-1])
        a[1:-1, 1:-1, 1:-1] = (0.125 * (b[2:, 1:-1, 1:-1] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[:-2, 1:-1, 1:-1])
                               + 0.125 * (b[1:-1, 2:, 1:-1] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[1:-1, :-2, 1:-1])
                               + 0.125 * (b[1:-1, 1:-1, 2:] - 2.0 * b[1:-1, 1:-1, 1:-1] + b[1:-1, 1:-1, :-2])
                               + b[1:-1, 1:-1, 1:-1])
    return a


def fdtd_2d(ex, ey, hz, fict, steps):
    for t in range(steps):
        ey[0, :] = fict[0]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return hz


def hdiff(in_field, out_field, coeff, steps):
    # Horizontal diffusion (COSMO, as in npbench), stepped: each step's output is the next
    # step's interior input.
    I, J, K = out_field.shape
    for _ in range(steps):
        lap = 4.0 * in_field[1:I + 3, 1:J + 3, :] - (
            in_field[2:I + 4, 1:J + 3, :] + in_field[0:I + 2, 1:J + 3, :] +
            in_field[1:I + 3, 2:J + 4, :] + in_field[1:I + 3, 0:J + 2, :])
        res = lap[1:, 1:J + 1, :] - lap[:-1, 1:J + 1, :]
        flx = np.where((res * (in_field[2:I + 3, 2:J + 2, :] - in_field[1:I + 2, 2:J + 2, :])) > 0, 0, res)
        res = lap[1:I + 1, 1:, :] - lap[1:I + 1, :-1, :]
        fly = np.where((res * (in_field[2:I + 2, 2:J + 3, :] - in_field[2:I + 2, 1:J + 2, :])) > 0, 0, res)
        out_field[:, :, :] = in_field[2:I + 2, 2:J + 2, :] - coeff[:, :, :] * (
            flx[1:, :, :] - flx[:-1, :, :] + fly[:, 1:, :] - fly[:, :-1, :])
        in_field[2:I + 2, 2:J + 2, :] = out_field
    return out_field


def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C
    return C


def _inputs(name, steps, rng):
    f = np.float64
    if name == "jacobi_1d":
        return (rng.random(4000, dtype=f), rng.random(4000, dtype=f), steps)
    if name == "jacobi_2d":
        return (rng.random((250, 250), dtype=f), rng.random((250, 250), dtype=f), steps)
    if name == "heat_3d":
        return (rng.random((40, 40, 40), dtype=f), rng.random((40, 40, 40), dtype=f), steps)
    if name == "fdtd_2d":
        return (rng.random((200, 240), dtype=f), rng.random((200, 240), dtype=f),
                rng.random((200, 240), dtype=f), np.full(1, 0.5), steps)
    if name == "hdiff":
        return (rng.random((68, 68, 40), dtype=f), np.zeros((64, 64, 40)),
                rng.random((64, 64, 40), dtype=f) * 0.025, max(1, steps // 10))
    return (1.5, 1.2, rng.random((400, 450), dtype=f), rng.random((400, 500), dtype=f),
            rng.random((500, 450), dtype=f))


WORKLOADS = {"jacobi_1d": jacobi_1d, "jacobi_2d": jacobi_2d, "heat_3d": heat_3d, "fdtd_2d": fdtd_2d,
             "hdiff": hdiff, "gemm": gemm}


# -- peers ------------------------------------------------------------------------------------------
def _numba_versions():
    try:
        import numba
    except Exception:
        return {}
    return {name: numba.njit(fn) for name, fn in WORKLOADS.items() if name != "fdtd_2d"} | \
        {"fdtd_2d": numba.njit(fdtd_2d)}


def _jax_versions():
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)
    except Exception:
        return {}

    def stencil_loop(step):
        def run(*args):
            *arrays, steps = args
            out = jax.lax.fori_loop(0, steps, lambda _, s: step(*s), tuple(arrays))
            return out[0]
        return jax.jit(run, static_argnums=None)

    def j1(a, b):
        b = b.at[1:-1].set((a[:-2] + a[1:-1] + a[2:]) / 3.0)
        return a.at[1:-1].set((b[:-2] + b[1:-1] + b[2:]) / 3.0), b

    def j2(a, b):
        def st(x):
            return 0.2 * (x[1:-1, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:] + x[2:, 1:-1] + x[:-2, 1:-1])
        b = b.at[1:-1, 1:-1].set(st(a))
        return a.at[1:-1, 1:-1].set(st(b)), b

    def h3(a, b):
        def st(x):
            c = x[1:-1, 1:-1, 1:-1]
            return (0.125 * (x[2:, 1:-1, 1:-1] - 2.0 * c + x[:-2, 1:-1, 1:-1])
                    + 0.125 * (x[1:-1, 2:, 1:-1] - 2.0 * c + x[1:-1, :-2, 1:-1])
                    + 0.125 * (x[1:-1, 1:-1, 2:] - 2.0 * c + x[1:-1, 1:-1, :-2]) + c)
        b = b.at[1:-1, 1:-1, 1:-1].set(st(a))
        return a.at[1:-1, 1:-1, 1:-1].set(st(b)), b

    def fd(hz, ex, ey, fict):
        ey = ey.at[0, :].set(fict[0])
        ey = ey.at[1:, :].set(ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :]))
        ex = ex.at[:, 1:].set(ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1]))
        return hz, ex, ey, fict

    def hd(in_field, out_field, coeff):
        I, J, _ = out_field.shape
        lap = 4.0 * in_field[1:I + 3, 1:J + 3, :] - (
            in_field[2:I + 4, 1:J + 3, :] + in_field[0:I + 2, 1:J + 3, :] +
            in_field[1:I + 3, 2:J + 4, :] + in_field[1:I + 3, 0:J + 2, :])
        res = lap[1:, 1:J + 1, :] - lap[:-1, 1:J + 1, :]
        flx = jnp.where((res * (in_field[2:I + 3, 2:J + 2, :] - in_field[1:I + 2, 2:J + 2, :])) > 0, 0, res)
        res = lap[1:I + 1, 1:, :] - lap[1:I + 1, :-1, :]
        fly = jnp.where((res * (in_field[2:I + 2, 2:J + 3, :] - in_field[2:I + 2, 1:J + 2, :])) > 0, 0, res)
        out_field = in_field[2:I + 2, 2:J + 2, :] - coeff * (
            flx[1:, :, :] - flx[:-1, :, :] + fly[:, 1:, :] - fly[:, :-1, :])
        return in_field.at[2:I + 2, 2:J + 2, :].set(out_field), out_field, coeff

    hd_loop = jax.jit(lambda i, o, c, steps: jax.lax.fori_loop(0, steps, lambda _, s: hd(*s), (i, o, c))[1])
    fd_loop = stencil_loop(fd)
    return {
        "jacobi_1d": stencil_loop(j1), "jacobi_2d": stencil_loop(j2), "heat_3d": stencil_loop(h3),
        "fdtd_2d": lambda ex, ey, hz, fict, steps: fd_loop(hz, ex, ey, fict, steps),
        "hdiff": hd_loop,
        "gemm": jax.jit(lambda alpha, beta, C, A, B: alpha * A @ B + beta * C),
    }


def _time(fn, args, repeat):
    """Median seconds of ``fn(*fresh copies of args)``; the copies are made outside the timing."""
    times = []
    for _ in range(repeat):
        fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        t0 = time.perf_counter()
        out = fn(*fresh)
        if hasattr(out, "block_until_ready"):
            out.block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _first_call(fn, args):
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    t0 = time.perf_counter()
    out = fn(*fresh)
    if hasattr(out, "block_until_ready"):
        out.block_until_ready()
    return time.perf_counter() - t0, np.asarray(out)


def stencil_table(steps, repeat):
    rng = np.random.default_rng(0)
    peers = {"hcompile": {n: hc.hcompile(f) for n, f in WORKLOADS.items()},
             "numba": _numba_versions(), "jax.jit": _jax_versions()}
    names = [p for p in peers if peers[p]]
    rows = ["| workload | NumPy ms | " + " | ".join(f"{p} ms (vs NumPy)" for p in names) +
            " | hcompile first call s | hcompile graphs / breaks |",
            "|---" * (4 + len(names)) + "|"]
    for name, fn in WORKLOADS.items():
        args = _inputs(name, steps, rng)
        _, want = _first_call(fn, args)
        t_np = _time(fn, args, repeat)
        cells = []
        first = ""
        for peer in names:
            version = peers[peer].get(name)
            if version is None:
                cells.append("n/a")
                continue
            try:
                first_s, got = _first_call(version, args)
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
                t = _time(version, args, repeat)
                cells.append(f"{t * 1e3:.3f} ({t_np / t:.2f}×)")
                if peer == "hcompile":
                    first = f"{first_s:.2f}"
            except Exception as e:              # a peer that fails is reported, not hidden
                cells.append(f"failed: {type(e).__name__}")
        with contextlib.redirect_stdout(io.StringIO()):
            e = hc.explain(fn, *[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        rows.append(f"| {name} | {t_np * 1e3:.3f} | " + " | ".join(cells) +
                    f" | {first} | {e.graph_count} / {e.graph_break_count} |")
    return "\n".join(rows) + "\n"


# -- graph breaks and per-call overhead -------------------------------------------------------------
LOG = []


def with_break(a, b):
    h = np.tanh(a * 0.5 + b) * np.exp(-b * b)
    LOG.append(float(h.max()))
    return np.sqrt(h * h + 1.0) - 1.0


def break_free_twin(a, b):
    h = np.tanh(a * 0.5 + b) * np.exp(-b * b)
    return np.sqrt(h * h + 1.0) - 1.0, h.max()


def _overhead_fn(n):
    names = [f"x{i}" for i in range(n)]
    namespace = {}
    body = " + ".join(names) if n > 1 else "x0 + x0"
    exec(f"def add_{n}({', '.join(names)}):\n    return {body}\n", namespace)
    return namespace[f"add_{n}"]


def one_break_overhead(x):
    y = x + 1
    LOG.append(0)
    return y + 1


def _per_call_us(fn, args, calls=20000):
    fn(*args)
    fn(*args)
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        best = min(best, (time.perf_counter() - t0) / calls)
    return best * 1e6


def break_table(repeat):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(1_000_000, dtype=np.float32)
    y = rng.standard_normal(1_000_000, dtype=np.float32)
    t_np = _time(with_break, (x, y), repeat)
    t_break = _time(hc.hcompile(with_break), (x, y), repeat)
    t_twin = _time(hc.hcompile(break_free_twin), (x, y), repeat)
    kept = (t_np / t_break) / (t_np / t_twin)
    rows = ["| function | NumPy ms | hcompile ms (vs NumPy) |", "|---|---|---|",
            f"| one graph break (`LOG.append(float(h.max()))`) | {t_np * 1e3:.3f} | {t_break * 1e3:.3f} ({t_np / t_break:.2f}×) |",
            f"| break-free twin (returns `h.max()`) | {t_np * 1e3:.3f} | {t_twin * 1e3:.3f} ({t_np / t_twin:.2f}×) |",
            "", f"The break keeps {kept * 100:.0f}% of the twin's speedup.", "",
            "| per-call overhead, 1-element float32 arrays | NumPy µs | hcompile µs |", "|---|---|---|"]
    one = np.ones(1, np.float32)
    for n in (1, 4, 16):
        fn = _overhead_fn(n)
        args = [one] * n
        args = [one.copy() for _ in range(n)]
        rows.append(f"| {n} argument{'s' if n > 1 else ''} | {_per_call_us(fn, args):.2f} | "
                    f"{_per_call_us(hc.hcompile(fn), args):.2f} |")
    rows.append(f"| 1 argument, one graph break | {_per_call_us(one_break_overhead, [one], 5000):.2f} | "
                f"{_per_call_us(hc.hcompile(one_break_overhead), [one], 5000):.2f} |")
    LOG.clear()
    return "\n".join(rows) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--write", type=Path, help="add or replace this section in a results file")
    opts = parser.parse_args(argv)
    logging.disable(logging.WARNING)            # the expected break/recompile logs
    command = "python -m apps.frontend_bench" + (f" --repeat {opts.repeat}" if opts.repeat != 7 else "") + \
        (f" --steps {opts.steps}" if opts.steps != 200 else "") + (f" --write {opts.write}" if opts.write else "")
    stencils = stencil_table(opts.steps, opts.repeat)
    breaks = break_table(opts.repeat)
    from apps.bench import heading, publish
    section = (heading("Frontend: stores, loops, graph breaks") +
               f"- command: `{command}`\n- {opts.steps} time steps per stencil call; float64; median of {opts.repeat} calls on fresh copies\n\n"
               f"**Time-stepped stencils and gemm, median ms per call**\n\n{stencils}\n"
               f"**Graph breaks and per-call overhead**\n\n{breaks}")
    publish(section, opts.write, "frontend")


if __name__ == "__main__":
    main()
