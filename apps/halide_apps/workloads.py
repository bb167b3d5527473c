"""The Halide apps' inputs, at the sizes their generators' estimates name, and their answers
computed with NumPy (each written the way the generator defines it, edges included)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class HalideApp:
    name: str
    make_inputs: Callable[[np.random.Generator], list]   # arrays (NumPy order) and scalars
    output: tuple                                         # (NumPy shape, dtype)
    reference: Callable[..., np.ndarray]
    rtol: float = 1e-4


def _blur(a):
    p = np.pad(a, 1, mode="edge")
    bx = (p[:, :-2] + p[:, 1:-1] + p[:, 2:]) / np.float32(3)
    return (bx[:-2] + bx[1:-1] + bx[2:]) / np.float32(3)


def _gray(rgb):   # (3, h, w) -> (h, w)
    return np.float32(0.299) * rgb[0] + np.float32(0.587) * rgb[1] + np.float32(0.114) * rgb[2]


def _unsharp(rgb):
    sigma = 1.5
    k = [np.float32(np.exp(-i * i / (2 * sigma * sigma)) / (np.sqrt(2 * 3.14159265) * sigma)) for i in range(4)]
    g = _gray(rgb)
    p = np.pad(g, 3, mode="edge")
    h, w = g.shape
    by = k[0] * p[3:3 + h] + sum(k[i] * (p[3 - i:3 - i + h] + p[3 + i:3 + i + h]) for i in (1, 2, 3))   # (h, w + 6)
    bx = k[0] * by[:, 3:3 + w] + sum(k[i] * (by[:, 3 - i:3 - i + w] + by[:, 3 + i:3 + i + w]) for i in (1, 2, 3))
    return (2 * g - bx) / g * rgb


def _harris(rgb):
    g = np.pad(_gray(rgb), 2, mode="edge")   # the gray image with the rows Sobel and the box reach
    h, w = rgb.shape[1] + 2, rgb.shape[2] + 2

    def at(dy, dx):
        return g[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
    c1, c2 = np.float32(1 / 12), np.float32(2 / 12)
    iy = -c1 * at(-1, -1) + c1 * at(1, -1) - c2 * at(-1, 0) + c2 * at(1, 0) - c1 * at(-1, 1) + c1 * at(1, 1)
    ix = -c1 * at(-1, -1) + c1 * at(-1, 1) - c2 * at(0, -1) + c2 * at(0, 1) - c1 * at(1, -1) + c1 * at(1, 1)

    def box(v):
        return sum(v[dy:dy + h - 2, dx:dx + w - 2] for dy in range(3) for dx in range(3))
    sxx, syy, sxy = box(ix * ix), box(iy * iy), box(ix * iy)
    trace = sxx + syy
    return sxx * syy - sxy * sxy - np.float32(0.04) * trace * trace


def _bilateral_grid(image, r_sigma):
    s = 8
    h, w = image.shape
    inv = np.float32(1) / np.float32(r_sigma)
    gh, gw = h // s + 6, w // s + 6           # grid cells -2 .. n/s + 3 on each axis
    gy, gx = np.meshgrid(np.arange(gh) - 2, np.arange(gw) - 2, indexing="ij")
    nz = int(inv) + 6
    hist = np.zeros((2, nz + 4, gh, gw), np.float32)   # (c, z + 2, y, x)
    for ry in range(s):
        for rx in range(s):
            yy = np.clip(gy * s + ry - s // 2, 0, h - 1)
            xx = np.clip(gx * s + rx - s // 2, 0, w - 1)
            val = np.clip(image[yy, xx], 0, 1)
            zi = (val * inv + np.float32(0.5)).astype(np.int32)
            np.add.at(hist[0], (zi + 2, gy + 2, gx + 2), val)
            np.add.at(hist[1], (zi + 2, gy + 2, gx + 2), 1)
    taps = [1, 4, 6, 4, 1]

    def blur(v, axis):
        n = v.shape[axis] - 4
        return sum(np.float32(t) * np.take(v, np.arange(i, i + n), axis=axis) for i, t in enumerate(taps))
    grid = blur(blur(blur(hist, 1), 3), 2)              # z, x, y: (c, z, y - 2, x - 2) from cell 0
    v = np.clip(image, 0, 1)
    zv = v * inv
    zj = zv.astype(np.int32)
    zf = zv - zj
    y, x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    xf, yf = (x % s).astype(np.float32) / s, (y % s).astype(np.float32) / s
    xi, yi = x // s, y // s

    def at(c, dz, dy, dx):
        return grid[c, zj + dz, yi + dy, xi + dx]

    def lerp(a, b, t):
        return a + t * (b - a)

    def interp(c):
        return lerp(lerp(lerp(at(c, 0, 0, 0), at(c, 0, 0, 1), xf), lerp(at(c, 0, 1, 0), at(c, 0, 1, 1), xf), yf),
                    lerp(lerp(at(c, 1, 0, 0), at(c, 1, 0, 1), xf), lerp(at(c, 1, 1, 0), at(c, 1, 1, 1), xf), yf), zf)
    return interp(0) / interp(1)


def _conv_layer(inp, filt, bias):
    n, hp, wp, ci = inp.shape
    out = np.broadcast_to(bias, (n, hp - 2, wp - 2, bias.shape[0])).astype(np.float64)
    for dy in range(3):
        for dx in range(3):
            out = out + inp[:, dy:dy + hp - 2, dx:dx + wp - 2, :].astype(np.float64) @ filt[dy, dx].astype(np.float64)
    return np.maximum(out, 0)


def _hist_equalize(image):
    cdf = np.cumsum(np.bincount(image.ravel(), minlength=256)).astype(np.int64)
    return (cdf[image] * 255 // image.size).astype(np.uint8)


def _rgb(rng, h, w):
    return rng.uniform(0.1, 1.0, (3, h, w)).astype(np.float32)


APPS = {a.name: a for a in [
    HalideApp("blur", lambda rng: [rng.random((3072, 4096), np.float32)], ((3072, 4096), np.float32), _blur),
    HalideApp("unsharp", lambda rng: [_rgb(rng, 2560, 1536)], ((3, 2560, 1536), np.float32), _unsharp),
    HalideApp("harris", lambda rng: [_rgb(rng, 2560, 1536)], ((2560, 1536), np.float32), _harris, rtol=1e-3),
    HalideApp("bilateral_grid", lambda rng: [rng.random((2560, 1536), np.float32), 0.1], ((2560, 1536), np.float32),
              _bilateral_grid, rtol=1e-3),
    HalideApp("conv_layer", lambda rng: [rng.standard_normal((4, 58, 58, 64), np.float32),
                                         rng.standard_normal((3, 3, 64, 64), np.float32) / 24,
                                         rng.standard_normal(64, np.float32)],
              ((4, 56, 56, 64), np.float32), _conv_layer, rtol=1e-3),
    HalideApp("matmul", lambda rng: [rng.standard_normal((1024, 1024), np.float32),
                                     rng.standard_normal((1024, 1024), np.float32)],
              ((1024, 1024), np.float32), lambda a, b: a.astype(np.float64) @ b, rtol=1e-3),
    HalideApp("hist_equalize", lambda rng: [rng.integers(0, 256, (2560, 1536), dtype=np.uint8)],
              ((2560, 1536), np.uint8), _hist_equalize, rtol=0),
]}


def check(app: HalideApp, got, inputs):
    """Raises AssertionError where `got` differs from NumPy's answer beyond the app's tolerance."""
    want = app.reference(*inputs)
    if app.rtol == 0:
        np.testing.assert_array_equal(got, want)
    else:
        scale = max(float(np.abs(want).max()), 1e-30)
        np.testing.assert_allclose(got, want, rtol=app.rtol, atol=app.rtol * scale)
