"""The apps suite: image pipelines after Halide's classic apps, and ML blocks, as plain NumPy.

Each app is written the way a NumPy user writes it (module-global ``np``, slices, broadcasting,
reductions, ``np.concatenate`` for edges, reshape tricks for blocks and up-sampling), from the
algorithm's description, not translated from Halide's code. The harness (``apps/bench.py
--suite apps``) compiles each with ``@hcompile`` and runs it against NumPy, Halide's three CPU
autoschedulers on the pipeline hcompile lowered, torch and jax.jit where a version exists.

Sizes: ``"bench"`` makes NumPy take roughly 10-200 ms on the 2-core machine; ``"small"`` is for
the tests (odd sizes where the algorithm allows, well under a second each).

Where an app cannot be captured whole (the histogram in ``hist_equalize``), hcompile runs the
rest compiled and the histogram as Python (a graph break): the table says how many graphs and
breaks each app has.
"""

from __future__ import annotations

import math

import numpy as np

# --------------------------------------------------------------------------------------------
# Image pipelines
# --------------------------------------------------------------------------------------------


def box_blur(x):
    """5x5 box blur, separable, valid region: (H-4, W-4)."""
    h = (x[:, :-4] + x[:, 1:-3] + x[:, 2:-2] + x[:, 3:-1] + x[:, 4:]) * 0.2
    return (h[:-4] + h[1:-3] + h[2:-2] + h[3:-1] + h[4:]) * 0.2


def unsharp_mask(img):
    """Sharpen an RGB image (3, H, W) by its luma's difference from a 7-tap Gaussian blur."""
    gray = 0.299 * img[0] + 0.587 * img[1] + 0.114 * img[2]
    # Gaussian, sigma 1.5, taps normalised to 1 (weights of -3..3).
    w0, w1, w2, w3 = 0.26601, 0.21300, 0.10936, 0.03598
    bx = (w3 * gray[:, :-6] + w2 * gray[:, 1:-5] + w1 * gray[:, 2:-4] + w0 * gray[:, 3:-3]
          + w1 * gray[:, 4:-2] + w2 * gray[:, 5:-1] + w3 * gray[:, 6:])
    blur = (w3 * bx[:-6] + w2 * bx[1:-5] + w1 * bx[2:-4] + w0 * bx[3:-3]
            + w1 * bx[4:-2] + w2 * bx[5:-1] + w3 * bx[6:])
    center = gray[3:-3, 3:-3]
    sharpen = 2 * center - blur
    ratio = sharpen / (center + 1e-3)
    return img[:, 3:-3, 3:-3] * ratio


def harris(img):
    """Harris corner response of an RGB image (3, H, W): (H-4, W-4)."""
    gray = 0.299 * img[0] + 0.587 * img[1] + 0.114 * img[2]
    # Sobel gradients on the valid region.
    ix = ((gray[:-2, 2:] - gray[:-2, :-2]) + 2 * (gray[1:-1, 2:] - gray[1:-1, :-2])
          + (gray[2:, 2:] - gray[2:, :-2])) / 12
    iy = ((gray[2:, :-2] - gray[:-2, :-2]) + 2 * (gray[2:, 1:-1] - gray[:-2, 1:-1])
          + (gray[2:, 2:] - gray[:-2, 2:])) / 12
    ixx, iyy, ixy = ix * ix, iy * iy, ix * iy

    def box3(a):
        r = a[:, :-2] + a[:, 1:-1] + a[:, 2:]
        return r[:-2] + r[1:-1] + r[2:]

    sxx, syy, sxy = box3(ixx), box3(iyy), box3(ixy)
    det = sxx * syy - sxy * sxy
    trace = sxx + syy
    return det - 0.04 * trace * trace


def bilateral_grid(img):
    """Edge-aware smoothing of a gray image in [0, 1] (H, W multiples of 8) through a bilateral
    grid: splat 8x8 blocks into 11 intensity bins, blur the grid, slice it back.

    Dense formulation: splatting is a tent weight per (bin, pixel) summed over each block, and
    slicing interpolates linearly between bins (nearest block in space)."""
    s, bins = 8, 10
    H, W = img.shape
    h, w = H // s, W // s
    z = np.arange(bins + 1, dtype=np.float32).reshape(bins + 1, 1, 1, 1, 1)
    blocks = img.reshape(h, s, w, s)
    tent = np.maximum(0, 1 - np.abs(blocks * bins - z))
    grid_v = np.sum(tent * blocks, axis=(2, 4))
    grid_w = np.sum(tent, axis=(2, 4))
    grid = np.stack([grid_v, grid_w])  # (2, bins + 1, h, w)
    for axis in (1, 2, 3):  # [1, 2, 1] / 4 with edges clamped, along bins, rows, columns
        n = grid.shape[axis]
        first = grid[(slice(None),) * axis + (slice(0, 1),)]
        last = grid[(slice(None),) * axis + (slice(n - 1, n),)]
        g = np.concatenate([first, grid, last], axis=axis)
        lo = g[(slice(None),) * axis + (slice(0, n),)]
        mid = g[(slice(None),) * axis + (slice(1, n + 1),)]
        hi = g[(slice(None),) * axis + (slice(2, n + 2),)]
        grid = (lo + 2 * mid + hi) * 0.25
    up = np.broadcast_to(grid[:, :, :, None, :, None], (2, bins + 1, h, s, w, s)).reshape(2, bins + 1, H, W)
    weight = np.maximum(0, 1 - np.abs(img * bins - z.reshape(bins + 1, 1, 1)))
    v = np.sum(weight * up[0], axis=0)
    wsum = np.sum(weight * up[1], axis=0)
    return v / np.maximum(wsum, 1e-6)


def _down2(x):
    """Blur [1, 2, 1] / 4 along the last two axes (edges clamped), keep every other pixel."""
    c = np.concatenate([x[..., :1], x, x[..., -1:]], axis=-1)
    c = (c[..., :-2] + 2 * c[..., 1:-1] + c[..., 2:]) * 0.25
    r = np.concatenate([c[..., :1, :], c, c[..., -1:, :]], axis=-2)
    r = (r[..., :-2, :] + 2 * r[..., 1:-1, :] + r[..., 2:, :]) * 0.25
    return r[..., ::2, ::2]


def _up2(x):
    """Nearest-neighbour up-sampling by 2 along the last two axes."""
    *lead, h, w = x.shape
    return np.broadcast_to(x[..., :, None, :, None], (*lead, h, 2, w, 2)).reshape(*lead, 2 * h, 2 * w)


def local_laplacian(img):
    """Local Laplacian filter (detail enhancement) of a gray image in [0, 1] (H, W multiples of
    8): 4 pyramid levels, 8 intensity levels processed at once as a leading axis."""
    levels, k = 4, 8
    alpha, beta = 1.0, 1.0
    g_levels = np.linspace(0, 1, k, dtype=np.float32).reshape(k, 1, 1)
    d = img - g_levels
    processed = beta * d + g_levels + alpha * d * np.exp(-d * d * 12.5)
    gauss = [img]
    pgauss = [processed]
    for _ in range(levels - 1):
        gauss.append(_down2(gauss[-1]))
        pgauss.append(_down2(pgauss[-1]))
    out = None
    for lvl in range(levels - 1, -1, -1):
        lap = pgauss[lvl] if lvl == levels - 1 else pgauss[lvl] - _up2(pgauss[lvl + 1])
        # Interpolate between intensity levels by the input's own Gaussian pyramid value.
        t = gauss[lvl] * (k - 1)
        weight = np.maximum(0, 1 - np.abs(t - np.arange(k, dtype=np.float32).reshape(k, 1, 1)))
        picked = np.sum(weight * lap, axis=0)
        out = picked if out is None else _up2(out) + picked
    return out


def camera_pipe(raw):
    """A simplified camera pipeline: a GRBG Bayer mosaic (H, W even) in [0, 1] to an 8-bit RGB
    image (3, H/2 - 2, W/2 - 2): hot-pixel suppression, quad demosaic, colour correction, gamma
    curve, luma sharpening, quantisation."""
    # Hot pixels: clamp each photosite to the largest of its same-colour neighbours.
    c = raw[2:-2, 2:-2]
    nmax = np.maximum(np.maximum(raw[:-4, 2:-2], raw[4:, 2:-2]), np.maximum(raw[2:-2, :-4], raw[2:-2, 4:]))
    clean = np.minimum(c, nmax)
    g = (clean[0::2, 0::2] + clean[1::2, 1::2]) * 0.5
    r = clean[0::2, 1::2]
    b = clean[1::2, 0::2]
    ccm = ((1.6, -0.4, -0.2), (-0.3, 1.5, -0.2), (0.0, -0.5, 1.5))
    rgb = [np.clip(m[0] * r + m[1] * g + m[2] * b, 0, 1) for m in ccm]
    curved = [ch ** (1 / 2.2) for ch in rgb]
    luma = 0.299 * curved[0] + 0.587 * curved[1] + 0.114 * curved[2]
    blur = (luma[:-2, 1:-1] + luma[2:, 1:-1] + luma[1:-1, :-2] + luma[1:-1, 2:] + 4 * luma[1:-1, 1:-1]) / 8
    detail = luma[1:-1, 1:-1] - blur
    out = np.stack([ch[1:-1, 1:-1] + 0.8 * detail for ch in curved])
    return np.round(np.clip(out, 0, 1) * 255).astype(np.uint8)


def stencil_chain(x):
    """32 five-point stencils in a row (each shrinks the image by one pixel per side)."""
    for _ in range(32):
        x = (x[1:-1, 1:-1] * 0.5 + (x[:-2, 1:-1] + x[2:, 1:-1] + x[1:-1, :-2] + x[1:-1, 2:]) * 0.125)
    return x


def pyramid_interp(rgba):
    """Fill the holes of an RGBA image (4, H, W; H, W multiples of 32; alpha 0 where unknown)
    by pyramid interpolation: premultiply, downsample 6 levels, then fill each level from the
    coarser one where its alpha is short of 1, and normalise."""
    levels = 6
    pre = np.concatenate([rgba[:3] * rgba[3:], rgba[3:]])
    down = [pre]
    for _ in range(levels - 1):
        down.append(_down2(down[-1]))
    filled = down[-1]
    for lvl in range(levels - 2, -1, -1):
        cur = down[lvl]
        filled = cur + (1 - cur[3:]) * _up2(filled)
    return filled[:3] / np.maximum(filled[3:], 1e-6)


def hist_equalize(img):
    """Histogram equalisation of an 8-bit gray image: a 256-bin histogram, its cumulative
    distribution, a lookup per pixel. (The histogram is a scatter, which hcompile does not
    capture: it runs as Python.)"""
    hist = np.bincount(img.ravel(), minlength=256)
    cdf = np.cumsum(hist)
    lut = np.round((cdf - cdf[0]) * 255.0 / max(cdf[-1] - cdf[0], 1)).astype(np.uint8)
    return lut[img]


def max_filter(x):
    """9x9 maximum filter, valid region (H-8, W-8), separable."""
    w = x.shape[1] - 8
    m = x[:, 0:w]
    for i in range(1, 9):
        m = np.maximum(m, x[:, i:i + w])
    h = m.shape[0] - 8
    out = m[0:h]
    for i in range(1, 9):
        out = np.maximum(out, m[i:i + h])
    return out


def conv_layer(x, w, b):
    """A 3x3 convolution, stride 1, zero padding 1, NHWC layout, bias and ReLU:
    x (N, H, W, C), w (3, 3, C, K), b (K,) -> (N, H, W, K)."""
    n, hh, ww, c = x.shape
    xp = np.zeros((n, hh + 2, ww + 2, c), dtype=x.dtype)
    xp[:, 1:-1, 1:-1, :] = x
    out = b
    for dy in range(3):
        for dx in range(3):
            out = out + xp[:, dy:dy + hh, dx:dx + ww, :].reshape(n * hh * ww, c) @ w[dy, dx]
    return np.maximum(out, 0).reshape(n, hh, ww, w.shape[-1])


def iir_blur(x):
    """First-order IIR blur (a = 0.25) down the columns and back up, then along the rows the
    same way: a recursion over rows, written as a loop that stores row by row."""
    a = 0.25
    y = x.copy()
    rows = y.shape[0]
    for i in range(1, rows):
        y[i] = (1 - a) * y[i] + a * y[i - 1]
    for i in range(rows - 2, -1, -1):
        y[i] = (1 - a) * y[i] + a * y[i + 1]
    y = y.T.copy()
    for i in range(1, y.shape[0]):
        y[i] = (1 - a) * y[i] + a * y[i - 1]
    for i in range(y.shape[0] - 2, -1, -1):
        y[i] = (1 - a) * y[i] + a * y[i + 1]
    return y.T


# --------------------------------------------------------------------------------------------
# ML blocks (softmax, layernorm, GELU MLP and tinyops are in workloads.py)
# --------------------------------------------------------------------------------------------


def rmsnorm(x, weight):
    """RMSNorm over the last axis, eps 1e-6."""
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * weight


def attention(q, k, v):
    """Single-head scaled dot-product attention: softmax(q k^T / sqrt(d)) v."""
    s = q @ k.T * (1 / math.sqrt(q.shape[-1]))
    m = np.max(s, axis=-1, keepdims=True)
    e = np.exp(s - m)
    return (e / np.sum(e, axis=-1, keepdims=True)) @ v


# --------------------------------------------------------------------------------------------
# Torch versions: the apps written only with slicing and arithmetic run unchanged on tensors;
# the others have short idiomatic versions. Imported lazily.
# --------------------------------------------------------------------------------------------


def torch_versions() -> dict:
    import torch
    import torch.nn.functional as F

    def t_max_filter(x):
        return F.max_pool2d(x[None, None], 9, stride=1)[0, 0]

    def t_conv_layer(x, w, b):
        # channels-last in and out, as the NumPy version; torch picks its own conv algorithm.
        y = F.conv2d(x.permute(0, 3, 1, 2), w.permute(3, 2, 0, 1), b, padding=1)
        return torch.relu(y).permute(0, 2, 3, 1)

    def t_rmsnorm(x, weight):
        return x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-6) * weight

    def t_attention(q, k, v):
        return F.scaled_dot_product_attention(q[None], k[None], v[None])[0]

    return {
        "box_blur": box_blur,
        "unsharp_mask": unsharp_mask,
        "harris": harris,
        "stencil_chain": stencil_chain,
        "max_filter": t_max_filter,
        "conv_layer": t_conv_layer,
        "rmsnorm": t_rmsnorm,
        "attention": t_attention,
    }


# --------------------------------------------------------------------------------------------
# Inputs. Float32 images in [0, 1] unless said otherwise; deterministic per seed.
# --------------------------------------------------------------------------------------------


def _rng(seed):
    return np.random.default_rng(seed)


def _uniform(rng, *shape):
    return rng.random(shape, dtype=np.float32)


def _pick(size, bench, small):
    return bench if size == "bench" else small


def inputs_box_blur(size="bench", seed=0):
    return (_uniform(_rng(seed), *_pick(size, (2048, 2048), (37, 53))),)


def inputs_rgb(size="bench", seed=0):
    return (_uniform(_rng(seed), 3, *_pick(size, (1536, 2048), (29, 43))),)


def inputs_gray_blocks(size="bench", seed=0):
    """Gray image whose sides are multiples of 8 (block and pyramid apps)."""
    return (_uniform(_rng(seed), *_pick(size, (1024, 1536), (40, 56))),)


def inputs_camera_pipe(size="bench", seed=0):
    return (_uniform(_rng(seed), *_pick(size, (1536, 2048), (34, 46))),)


def inputs_stencil_chain(size="bench", seed=0):
    return (_uniform(_rng(seed), *_pick(size, (1024, 1024), (71, 83))),)


def inputs_pyramid_interp(size="bench", seed=0):
    rng = _rng(seed)
    h, w = _pick(size, (1024, 1024), (64, 96))
    rgba = _uniform(rng, 4, h, w)
    rgba[3] = (rgba[3] > 0.7).astype(np.float32)  # 30% of pixels known
    return (rgba,)


def inputs_hist_equalize(size="bench", seed=0):
    rng = _rng(seed)
    shape = _pick(size, (2048, 2048), (37, 41))
    # A low-contrast image: values crowd into 60..140, as equalisation expects.
    return (np.clip(rng.normal(100, 15, shape), 0, 255).astype(np.uint8),)


def inputs_max_filter(size="bench", seed=0):
    return (_uniform(_rng(seed), *_pick(size, (1536, 1536), (31, 45))),)


def inputs_conv_layer(size="bench", seed=0):
    rng = _rng(seed)
    n, h, w, c, k = _pick(size, (4, 56, 56, 64, 64), (2, 7, 9, 5, 6))
    x = rng.standard_normal((n, h, w, c), dtype=np.float32)
    wt = (rng.standard_normal((3, 3, c, k), dtype=np.float32) / np.float32(math.sqrt(9 * c))).astype(np.float32)
    b = (0.1 * rng.standard_normal(k, dtype=np.float32)).astype(np.float32)
    return (x, wt, b)


def inputs_iir_blur(size="bench", seed=0):
    return (_uniform(_rng(seed), *_pick(size, (1024, 1024), (23, 31))),)


def inputs_rmsnorm(size="bench", seed=0):
    rng = _rng(seed)
    n, m = _pick(size, (2048, 2048), (33, 96))
    return (rng.standard_normal((n, m), dtype=np.float32),
            (1 + 0.1 * rng.standard_normal(m, dtype=np.float32)).astype(np.float32))


def inputs_attention(size="bench", seed=0):
    rng = _rng(seed)
    n, d = _pick(size, (512, 64), (37, 16))
    return tuple(rng.standard_normal((n, d), dtype=np.float32) for _ in range(3))


def _apps():
    from .workloads import Workload

    ew = dict(rtol=1e-4, atol=1e-5)
    mm = dict(rtol=1e-3, atol=1e-4)
    no_jax = ("jax.jit",)  # in-place stores or a data-dependent histogram: no jax.jit version
    return [
        Workload("box_blur", box_blur, inputs_box_blur, **ew,
                 description="5×5 box blur, separable slices, 2048² f32"),
        Workload("unsharp_mask", unsharp_mask, inputs_rgb, **ew,
                 description="luma, 7-tap Gaussian, sharpen ratio × RGB, 3×1536×2048 f32"),
        Workload("harris", harris, inputs_rgb, rtol=1e-3, atol=1e-7,
                 description="gray, Sobel, structure tensor, 3×3 sums, response, 3×1536×2048 f32"),
        Workload("bilateral_grid", bilateral_grid, inputs_gray_blocks, rtol=1e-3, atol=1e-5,
                 description="dense bilateral grid: 8×8 blocks × 11 bins, blur, slice, 1024×1536 f32"),
        Workload("local_laplacian", local_laplacian, inputs_gray_blocks, rtol=1e-3, atol=1e-5,
                 description="4 pyramid levels × 8 intensity levels, 1024×1536 f32"),
        Workload("camera_pipe", camera_pipe, inputs_camera_pipe, rtol=0, atol=1,
                 description="hot pixels, demosaic, colour matrix, gamma, sharpen, u8; 1536×2048 raw"),
        Workload("stencil_chain", stencil_chain, inputs_stencil_chain, **ew,
                 description="32 five-point stencils, 1024² f32"),
        Workload("pyramid_interp", pyramid_interp, inputs_pyramid_interp, rtol=1e-3, atol=1e-5,
                 description="fill holes through a 6-level pyramid, 4×1024² f32"),
        Workload("hist_equalize", hist_equalize, inputs_hist_equalize, rtol=0, atol=0,
                 description="256-bin histogram, CDF, lookup, 2048² u8", peers_missing=no_jax),
        Workload("max_filter", max_filter, inputs_max_filter, rtol=0, atol=0,
                 description="9×9 max filter, separable, 1536² f32"),
        Workload("conv_layer", conv_layer, inputs_conv_layer, **mm,
                 description="3×3 conv N=4 C=64→64 56², bias, ReLU, NHWC f32", peers_missing=no_jax),
        Workload("iir_blur", iir_blur, inputs_iir_blur, **ew,
                 description="first-order IIR both ways along both axes (row loops), 1024² f32",
                 peers_missing=no_jax),
        Workload("rmsnorm", rmsnorm, inputs_rmsnorm, **ew,
                 description="RMSNorm over rows × weight, 2048² f32"),
        Workload("attention", attention, inputs_attention, **mm,
                 description="single-head attention, 512×64 f32"),
    ]


APPS = {w.name: w for w in _apps()}
# The workloads.py blocks that belong to the suite too (ML blocks written there first).
SHARED_WORKLOADS = ("softmax_rows", "layernorm_rows", "gelu_mlp", "tinyops")
