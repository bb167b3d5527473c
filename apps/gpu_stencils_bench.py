"""Stencils written with NumPy slices, on a CUDA GPU: hcompile's schedule (four rows a thread
where a region reads a window of rows), the same kernels a row a thread (the rule before it read
windows straight from inputs), and under register caps of 40 and 48 (max-autotune's
alternatives), beside torch eager and torch.compile running the same code, in one process.

    python -m apps.gpu_stencils_bench [--repeat 20] [--write apps/RESULTS.md]

CUDA-event medians; bandwidth is the bytes of the inputs and the output against a device copy.
Every hcompile result is checked against NumPy's on the same inputs. Needs a CUDA GPU with PyTorch.
"""
from __future__ import annotations

import types

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import cuda_ms, peer_bench_start, publish_peer_table

SHAPES = [(8192, 8192), (3001, 4099)]


def laplace5(u):
    """The five-point Laplacian (a heat equation's step reads it)."""
    return u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1] - 4 * u[1:-1, 1:-1]


def jacobi(u, f):
    """One Jacobi step of Poisson's equation."""
    return 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - f[1:-1, 1:-1])


def gradient_magnitude(x):
    gx = x[1:-1, 2:] - x[1:-1, :-2]
    gy = x[2:, 1:-1] - x[:-2, 1:-1]
    return np.sqrt(gx * gx + gy * gy)


def sobel(x):
    gx = (x[:-2, 2:] + 2 * x[1:-1, 2:] + x[2:, 2:]) - (x[:-2, :-2] + 2 * x[1:-1, :-2] + x[2:, :-2])
    gy = (x[2:, :-2] + 2 * x[2:, 1:-1] + x[2:, 2:]) - (x[:-2, :-2] + 2 * x[:-2, 1:-1] + x[:-2, 2:])
    return np.sqrt(gx * gx + gy * gy)


def unsharp(x):
    """An unsharp mask: the image plus 1.5 times its difference from a [1 2 1] blur, clipped."""
    h = (x[:, :-2] + 2 * x[:, 1:-1] + x[:, 2:]) * 0.25
    b = (h[:-2] + 2 * h[1:-1] + h[2:]) * 0.25
    c = x[1:-1, 1:-1]
    return np.clip(c + 1.5 * (c - b), 0.0, 1.0)


def box5(x):
    """A separable 5x5 box blur."""
    h = x[:, :-4] + x[:, 1:-3] + x[:, 2:-2] + x[:, 3:-1] + x[:, 4:]
    return (h[:-4] + h[1:-3] + h[2:-2] + h[3:-1] + h[4:]) * 0.04


def row_differences(x):
    return x[1:] - x[:-1]


STENCILS = {"blur3x3": (W.blur3x3, 1), "unsharp": (unsharp, 1), "box5": (box5, 1), "laplace5": (laplace5, 1),
            "gradient_magnitude": (gradient_magnitude, 1), "sobel": (sobel, 1), "jacobi": (jacobi, 2),
            "row_differences": (row_differences, 1)}


def a_row_a_thread(decisions):
    """The decisions with each region of several rows a thread given one row (blocks of 32x8)."""
    rows = {d[0] for d in decisions if d[1] == "gpu_vector" and d[4] > 1}
    return [(r, c, a, 32, 8) if c == "gpu_tile" and r in rows else (r, c, a, v, 0) if c == "gpu_vector" and r in rows
            else (r, c, a, v, v2) for r, c, a, v, v2 in decisions]


def capped(decisions, cap):
    """The decisions with each region of several rows a thread under `cap` registers."""
    rows = [d[0] for d in decisions if d[1] == "gpu_vector" and d[4] > 1]
    return [d for d in decisions if d[1] != "gpu_registers"] + [(r, "gpu_registers", -1, cap, 0) for r in rows]


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, lambda torch: None)
    if started is None:
        return 0
    args, torch, copy, _ = started
    torch_np = types.SimpleNamespace(sqrt=torch.sqrt, clip=torch.clamp)
    rows = []
    for shape in SHAPES:
        for name, (fn, nargs) in STENCILS.items():
            xs = [torch.rand(*shape, device="cuda") for _ in range(nargs)]
            want = fn(*[x.cpu().numpy() for x in xs])
            nbytes = sum(x.numel() * 4 for x in xs) + want.size * 4
            cells = []

            def hcompile_cell(schedule):
                f = hc.hcompile(fn, fullgraph=True, schedule=schedule)
                got = f(*xs).cpu().numpy()
                if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
                    return "wrong", f
                ms = cuda_ms(torch, f, xs, args.repeat)
                return f"{ms:.3f} ({nbytes / ms / 1e9 / copy * 100:.0f}%)", f

            cell, rule = hcompile_cell(None)
            cells.append(cell)
            decisions = rule.compile_records[-1]["report"]["decisions"]
            several_rows = any(d[1] == "gpu_vector" and d[4] > 1 for d in decisions)
            cells.append(hcompile_cell(a_row_a_thread(decisions))[0] if several_rows else "—")
            for cap in (40, 48):
                cells.append(hcompile_cell(capped(decisions, cap))[0] if several_rows else "—")
            peer = W.rebind(fn, np=torch_np)
            eager = cuda_ms(torch, peer, xs, args.repeat)
            compiled = cuda_ms(torch, torch.compile(peer), xs, args.repeat)
            ours = float(cells[0].split()[0]) if cells[0] != "wrong" else float("nan")
            rows.append(f"| {name} | {shape[0]}x{shape[1]} | " + " | ".join(cells) +
                        f" | {eager:.3f} | {compiled:.3f} | {compiled / ours:.2f}x |")
            print(rows[-1], flush=True)
    publish_peer_table(torch, args, copy, "gpu_stencils_bench", "gpu-stencils",
                       "stencils from NumPy slices, ms (of copy bandwidth)",
                       ["stencil", "shape", "hcompile", "a row a thread", "cap 40", "cap 48", "torch eager",
                        "torch.compile", "torch.compile / hcompile"], rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
