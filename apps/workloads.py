"""Benchmark workloads: plain NumPy functions, their input makers, and peer versions.

Each workload is written once as an ordinary NumPy function (module-level ``np.`` calls, the
code a user would decorate with ``@hcompile``). The jax.numpy peer is *the same code object*
rebound to a globals dict where ``np`` is ``jax.numpy`` (see :func:`rebind`), so NumPy and JAX
run literally the same bytecode. Torch's API differs (``dim``/``keepdim``, ``max`` returning
indices), so each workload has a short torch version written the way a torch user would
(``torch.softmax``, ``F.layer_norm``, ``F.gelu``): that is also the strongest torch-eager peer.

Sizes: ``"bench"`` is the CPU benchmark size (DESIGN.md §6, CPU column); ``"small"`` is for
smoke tests and must stay well under a second per workload on 2 cores.
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Callable

import numpy as np

# --------------------------------------------------------------------------------------------
# The NumPy functions (what @hcompile compiles). Keep them plain: module-global `np`, no
# closures, no helpers, so the bytecode capture sees exactly what a user would write.
# --------------------------------------------------------------------------------------------


def tinyops(x):
    """Six chained elementwise ops."""
    y = x * 2
    y = y + 1
    y = 1 / (1 + np.exp(-y))
    y = y * y
    y = np.tanh(y)
    return y / (np.abs(y) + 1)


def softmax_rows(x):
    """Numerically stable softmax over the last axis."""
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def layernorm_rows(x, weight, bias):
    """Layer norm over the last axis with affine weight/bias, eps 1e-5 (biased variance)."""
    mu = np.mean(x, axis=-1, keepdims=True)
    d = x - mu
    var = np.mean(d * d, axis=-1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * weight + bias


def blur3x3(x):
    """Separable 3x3 box blur, valid region only: output is (H-2, W-2)."""
    h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
    return (h[:-2, :] + h[1:-1, :] + h[2:, :]) / 3


def matmul_softmax_100(x, y):
    """softmax(x @ y) over the last axis."""
    z = x @ y
    m = np.max(z, axis=-1, keepdims=True)
    e = np.exp(z - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def gelu_mlp(x, w1, b1, w2, b2):
    """Linear -> GELU (tanh approximation) -> Linear. Weights stored (in, out)."""
    h = x @ w1 + b1
    h = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return h @ w2 + b2


def add_one(x):
    """The per-call overhead probe: about as little work as a call can carry."""
    return x + 1


def _layer_norm(x, weight, bias):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * weight + bias


def _gelu(h):
    return 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))


def ln_linear_gelu_res(x, weight, bias, w, b):
    """Layer norm -> Linear -> GELU (tanh) -> + residual (DESIGN.md's seed; float16 on the GPU)."""
    return x + _gelu(_layer_norm(x, weight, bias) @ w + b)


def transformer_layer(x, wqkv, bqkv, wo, bo, g1, b1, w1, c1, w2, c2, g2, b2, heads=8):
    """A post-norm transformer encoder layer on (batch, tokens, width) x: multi-head
    self-attention, residual and layer norm, a GELU MLP of 4x the width, residual and layer norm.
    Weights stored (in, out)."""
    batch, tokens, width = x.shape
    hd = width // heads
    rows = x.reshape(batch * tokens, width)
    qkv = rows @ wqkv + bqkv

    def split_heads(part):
        return part.reshape(batch, tokens, heads, hd).transpose(0, 2, 1, 3)

    q = split_heads(qkv[:, :width])
    k = split_heads(qkv[:, width:2 * width])
    v = split_heads(qkv[:, 2 * width:])
    s = q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(hd))
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    o = (p @ v).transpose(0, 2, 1, 3).reshape(batch * tokens, width)
    y = _layer_norm(rows + o @ wo + bo, g1, b1)
    y = _layer_norm(y + _gelu(y @ w1 + c1) @ w2 + c2, g2, b2)
    return y.reshape(batch, tokens, width)


# --------------------------------------------------------------------------------------------
# Torch versions (idiomatic; equal to the NumPy ones within float32 tolerance).
# Imported lazily so this module works without torch installed.
# --------------------------------------------------------------------------------------------


def _torch_fns():
    import torch
    import torch.nn.functional as F

    def t_tinyops(x):
        y = x * 2
        y = y + 1
        y = torch.sigmoid(y)
        y = y * y
        y = torch.tanh(y)
        return y / (torch.abs(y) + 1)

    def t_softmax_rows(x):
        return torch.softmax(x, dim=-1)

    def t_layernorm_rows(x, weight, bias):
        return F.layer_norm(x, x.shape[-1:], weight, bias, eps=1e-5)

    def t_blur3x3(x):
        h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
        return (h[:-2, :] + h[1:-1, :] + h[2:, :]) / 3

    def t_matmul_softmax_100(x, y):
        return torch.softmax(x @ y, dim=-1)

    def t_gelu_mlp(x, w1, b1, w2, b2):
        return F.gelu(x @ w1 + b1, approximate="tanh") @ w2 + b2

    def t_add_one(x):
        return x + 1

    def t_ln_linear_gelu_res(x, weight, bias, w, b):
        h = F.layer_norm(x, x.shape[-1:], weight, bias, eps=1e-5)
        return x + F.gelu(h @ w + b, approximate="tanh")

    def t_transformer_layer(x, wqkv, bqkv, wo, bo, g1, b1, w1, c1, w2, c2, g2, b2, heads=8):
        batch, tokens, width = x.shape
        rows = x.reshape(batch * tokens, width)
        q, k, v = (rows @ wqkv + bqkv).reshape(batch, tokens, 3, heads, width // heads).permute(2, 0, 3, 1, 4)
        o = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(batch * tokens, width)
        y = F.layer_norm(rows + o @ wo + bo, (width,), g1, b1, eps=1e-5)
        y = F.layer_norm(y + F.gelu(y @ w1 + c1, approximate="tanh") @ w2 + c2, (width,), g2, b2, eps=1e-5)
        return y.reshape(batch, tokens, width)

    return {
        "tinyops": t_tinyops,
        "softmax_rows": t_softmax_rows,
        "layernorm_rows": t_layernorm_rows,
        "blur3x3": t_blur3x3,
        "matmul_softmax_100": t_matmul_softmax_100,
        "gelu_mlp": t_gelu_mlp,
        "add_one": t_add_one,
        "ln_linear_gelu_res": t_ln_linear_gelu_res,
        "transformer_layer": t_transformer_layer,
    }


_TORCH_CACHE: dict[str, Callable] | None = None


def torch_fn(name: str) -> Callable:
    """The torch version of workload or app ``name`` (raises ImportError without torch,
    KeyError when it has none)."""
    global _TORCH_CACHE
    if _TORCH_CACHE is None:
        from .pipelines import torch_versions

        _TORCH_CACHE = {**_torch_fns(), **torch_versions()}
    return _TORCH_CACHE[name]


def rebind(fn: Callable, _done: dict | None = None, **names) -> Callable:
    """A copy of ``fn`` running the same code object with some globals replaced.

    ``rebind(softmax_rows, np=jax.numpy)`` is the jax.numpy version of the NumPy function. The
    module's own helper functions that ``fn`` calls (``_down2`` in ``pipelines.py``) are rebound
    the same way, so they see the replaced names too.
    """
    done = {} if _done is None else _done
    if fn in done:
        return done[fn]
    g = dict(fn.__globals__)
    g.update(names)
    new = types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)
    done[fn] = new
    for name in _names_used(fn.__code__):
        helper = fn.__globals__.get(name)
        if isinstance(helper, types.FunctionType) and helper.__module__ == fn.__module__ and name not in names:
            g[name] = rebind(helper, done, **names)
    new.__qualname__ = fn.__qualname__
    new.__doc__ = fn.__doc__
    return new


def _names_used(code: types.CodeType) -> set[str]:
    """Global names read by ``code`` and the functions nested in it."""
    out = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names_used(c)
    return out


def jax_fn(name: str) -> Callable:
    """The jax.numpy version of workload ``name``: the NumPy code with ``np`` = ``jax.numpy``."""
    import jax.numpy as jnp

    return rebind(get(name).fn, np=jnp)


# --------------------------------------------------------------------------------------------
# Input makers. All float32, deterministic per seed; scaled so outputs are O(1), which keeps one
# float32 tolerance meaningful for every workload.
# --------------------------------------------------------------------------------------------


def _rng(seed):
    return np.random.default_rng(seed)


def _randn(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape, dtype=np.float32) * np.float32(scale)).astype(np.float32)


def _square(size, bench_n, small_n, seed):
    n = bench_n if size == "bench" else small_n
    return (_randn(_rng(seed), n, n),)


def inputs_tinyops(size="bench", seed=0):
    return _square(size, 2048, 67, seed)


def inputs_softmax_rows(size="bench", seed=0):
    rng = _rng(seed)
    n, m = (2048, 2048) if size == "bench" else (37, 129)
    return (_randn(rng, n, m, scale=3.0),)


def inputs_layernorm_rows(size="bench", seed=0):
    rng = _rng(seed)
    n, m = (2048, 2048) if size == "bench" else (33, 96)
    x = _randn(rng, n, m, scale=2.0) + np.float32(0.5)
    w = (1 + 0.1 * _randn(rng, m)).astype(np.float32)
    b = (0.1 * _randn(rng, m)).astype(np.float32)
    return (x, w, b)


def inputs_blur3x3(size="bench", seed=0):
    return _square(size, 2048, 53, seed)


def inputs_matmul_softmax_100(size="bench", seed=0):
    rng = _rng(seed)
    n = 100 if size == "bench" else 24
    return (_randn(rng, n, n, scale=1 / math.sqrt(n)), _randn(rng, n, n))


def inputs_gelu_mlp(size="bench", seed=0):
    rng = _rng(seed)
    b, d, h = (32, 512, 1024) if size == "bench" else (4, 32, 48)
    x = _randn(rng, b, d)
    w1 = _randn(rng, d, h, scale=1 / math.sqrt(d))
    b1 = _randn(rng, h, scale=0.1)
    w2 = _randn(rng, h, d, scale=1 / math.sqrt(h))
    b2 = _randn(rng, d, scale=0.1)
    return (x, w1, b1, w2, b2)


def inputs_ln_linear_gelu_res(size="bench", seed=0, dtype=np.float16):
    """DESIGN.md §6: 32 rows of 512 through a 512x512 layer, float16 (the GPU's size)."""
    rng = _rng(seed)
    b, d = (32, 512) if size == "bench" else (4, 32)
    arrays = (_randn(rng, b, d), 1 + _randn(rng, d, scale=0.1), _randn(rng, d, scale=0.1),
              _randn(rng, d, d, scale=1 / math.sqrt(d)), _randn(rng, d, scale=0.1))
    return tuple(a.astype(dtype) for a in arrays)


def inputs_transformer_layer(size="bench", seed=0):
    """DESIGN.md §6: batch 16, 64 tokens, width 512 (8 heads), float32."""
    rng = _rng(seed)
    batch, tokens, d = (16, 64, 512) if size == "bench" else (2, 8, 64)
    ones = lambda: 1 + _randn(rng, d, scale=0.1)  # noqa: E731
    return (_randn(rng, batch, tokens, d), _randn(rng, d, 3 * d, scale=1 / math.sqrt(d)),
            _randn(rng, 3 * d, scale=0.1), _randn(rng, d, d, scale=1 / math.sqrt(d)), _randn(rng, d, scale=0.1),
            ones(), _randn(rng, d, scale=0.1), _randn(rng, d, 4 * d, scale=1 / math.sqrt(d)),
            _randn(rng, 4 * d, scale=0.1), _randn(rng, 4 * d, d, scale=1 / math.sqrt(4 * d)),
            _randn(rng, d, scale=0.1), ones(), _randn(rng, d, scale=0.1))


def inputs_add_one(size="bench", seed=0):
    return (np.ones(1, dtype=np.float32),)


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    name: str
    fn: Callable  # the NumPy function
    make_inputs: Callable  # (size="bench"|"small", seed=0) -> tuple of float32 arrays
    rtol: float  # float32 tolerance vs NumPy (fused code may reassociate / use other libm)
    atol: float
    description: str
    peers_missing: tuple = ()  # peers with no version of this workload (e.g. "jax.jit")

    def check(self, got, want) -> tuple[bool, float]:
        """(allclose, max abs error) of ``got`` against the NumPy result ``want``."""
        got = np.asarray(got)
        want = np.asarray(want)
        if got.shape != want.shape:
            return False, float("inf")
        err = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) if want.size else 0.0
        return bool(np.allclose(got, want, rtol=self.rtol, atol=self.atol)), err


# Elementwise and reduction workloads: a few float32 ulps of disagreement per op.
_EW = dict(rtol=1e-4, atol=1e-5)
# Matmul workloads: accumulation order differs between BLAS / Halide / XLA.
_MM = dict(rtol=1e-3, atol=1e-4)

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("tinyops", tinyops, inputs_tinyops, **_EW,
                 description="6 chained elementwise ops, 2048² f32"),
        Workload("softmax_rows", softmax_rows, inputs_softmax_rows, **_EW,
                 description="stable softmax over rows, 2048² f32"),
        Workload("layernorm_rows", layernorm_rows, inputs_layernorm_rows, **_EW,
                 description="layer norm over rows + affine, 2048² f32"),
        Workload("blur3x3", blur3x3, inputs_blur3x3, **_EW,
                 description="separable 3×3 box blur via slices, 2048² f32"),
        Workload("matmul_softmax_100", matmul_softmax_100, inputs_matmul_softmax_100, **_MM,
                 description="softmax(x @ y), 100×100 f32"),
        Workload("gelu_mlp", gelu_mlp, inputs_gelu_mlp, **_MM,
                 description="32×512 → Linear 1024 → GELU(tanh) → Linear 512, f32"),
    ]
}

OVERHEAD = Workload("add_one", add_one, inputs_add_one, **_EW,
                    description="x + 1 on a 1-element f32 array (per-call overhead)")



def get(name: str) -> Workload:
    """A workload or app (``pipelines.APPS``) by name, the overhead probe ``add_one`` included."""
    if name == OVERHEAD.name:
        return OVERHEAD
    if name in WORKLOADS:
        return WORKLOADS[name]
    from .pipelines import APPS

    return APPS[name]


__all__ = [
    "get",
    "WORKLOADS", "OVERHEAD", "Workload", "rebind", "torch_fn", "jax_fn",
    "tinyops", "softmax_rows", "layernorm_rows", "blur3x3", "matmul_softmax_100", "gelu_mlp",
    "add_one",
]
