"""Multi-op fused chains, compiled vs NumPy: softmax, logsumexp, layernorm, gelu, 3x3 blur with
slices, linear + activation, a small MLP, tinyops. Written as ordinary functions."""

import numpy as np
import pytest

from numpy_oracle import check, make


def softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def logsumexp(x):
    m = x.max(axis=1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=1))


def layernorm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def layernorm_var(x):
    return (x - np.mean(x, axis=1, keepdims=True)) / np.std(x, axis=1, keepdims=True)


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def blur3x3(x):
    bx = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3


def linear_relu(x, w, b):
    return np.maximum(x @ w + b, 0)


def mlp(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1.0 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return h @ w2 + b2


def tinyops(x, y):
    a = x * y + 1.0
    b = np.sqrt(np.abs(a)) - y
    c = np.where(b > 0, b, -b * 0.5)
    return np.exp(-c) * x


def sigmoid_bce(z, t):
    p = 1 / (1 + np.exp(-z))
    return -(t * np.log(p + 1e-7) + (1 - t) * np.log(1 - p + 1e-7)).mean()


def normalize_columns(x):
    x = x - x.mean(axis=0)
    n = np.sqrt((x * x).sum(axis=0))
    return x / np.where(n == 0, 1, n), n.argmax()


CHAINS = {
    "softmax": (softmax, [(8, 17)], 4),
    "logsumexp": (logsumexp, [(6, 33)], 5),
    "layernorm": (layernorm, [(5, 24), (24,), (24,)], 8),
    "layernorm_var": (layernorm_var, [(7, 19)], 6),
    "gelu": (gelu, [(9, 31)], 7),
    "blur3x3": (blur3x3, [(34, 67)], 6),
    "linear_relu": (linear_relu, [(12, 20), (20, 9), (9,)], 3),
    "mlp": (mlp, [(6, 16), (16, 32), (32,), (32, 8), (8,)], 12),
    "tinyops": (tinyops, [(33, 65), (33, 65)], 8),
    "normalize_columns": (normalize_columns, [(10, 6)], 6),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(CHAINS))
def test_chain(name, dtype, rng):
    fn, shapes, ops = CHAINS[name]
    args = [make(rng, s, dtype) for s in shapes]
    # absolute tolerance scaled by the inputs' magnitude: these chains cancel (x - mean, sums)
    scale = max(float(np.abs(a).max()) for a in args) ** (2 if name in ("mlp",) else 1)
    k = max(s[-1] for s in shapes)
    check(fn, *args, ops=ops, reduce=k, scale=scale * (k if name == "mlp" else 1))


def test_sigmoid_bce(rng):
    z = make(rng, (40, 3), "float64")
    t = (make(rng, (40, 3), "float64", "uniform") > 0.5).astype(np.float64)
    check(sigmoid_bce, z, t, ops=10, reduce=120, scale=20.0)


def test_softmax_large_rows(rng):
    x = make(rng, (257, 129), "float32") * 10
    check(softmax, x, ops=4, reduce=129, scale=1.0)
