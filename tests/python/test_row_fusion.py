"""Row fusion (reductions computed per output row, inside the output's loop): it must be chosen
where rows line up, refused where they do not, and give NumPy's answers either way."""
import numpy as np
import pytest

import hcompile as hc
from numpy_oracle import check, make


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm(x, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * w + b


def row_argmax_mask(x):
    return np.where(x.argmax(axis=-1, keepdims=True) > 3, x - x.min(axis=-1, keepdims=True), x)


def centered_by_column(x):
    return x - x.mean(axis=0, keepdims=True)      # column means: rows do not line up


def centered_by_row_no_keepdims(x):
    return x - x.sum(axis=1)                        # broadcasts the row sums along columns


def regions_text(fn, *args):
    return "\n".join(r["regions"] for r in hc.explain(fn, *args).reports)


@pytest.mark.parametrize("shape", [(2, 1), (3, 5), (37, 129), (257, 64), (4, 3, 17)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_row_fused_softmax_and_layernorm(rng, shape, dtype):
    x = make(rng, shape, dtype, specials=0.02)
    check(softmax, x, ops=4, reduce=shape[-1])
    w, b = make(rng, shape[-1:], dtype), make(rng, shape[-1:], dtype)
    check(layernorm, make(rng, shape, dtype), w, b, ops=8, reduce=shape[-1])


def test_row_fusion_is_chosen_for_softmax(rng):
    text = regions_text(softmax, make(rng, (16, 32), "float32"))
    assert "[computed per row of" in text
    assert "(exp)" in text          # the shared exp is stored per row, not computed twice


@pytest.mark.parametrize("fn", [centered_by_column, centered_by_row_no_keepdims])
def test_row_fusion_is_refused_when_rows_do_not_line_up(rng, fn):
    x = make(rng, (24, 24), "float32")
    assert "[computed per row of" not in regions_text(fn, x)
    check(fn, x, ops=2, reduce=24)


def test_row_fused_argmax(rng):
    check(row_argmax_mask, make(rng, (33, 70), "float32", specials=0.05))


# -- a chain of reductions over the same rows, each row one point of the output (the GPU's point
# rows; the CPU keeps a loop per reduction: test_cuda_point_rows.py) -----------------------------

def variance_rows(x):
    return x.var(axis=-1)


def std_rows_keepdims(x):
    return x.std(axis=-1, keepdims=True)


def logsumexp_rows(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[..., None]).sum(axis=-1))


def spread_over_mean(x):
    return (x.max(axis=-1) - x.min(axis=-1)) / (np.abs(x).mean(axis=-1) + 1)


@pytest.mark.parametrize("shape", [(2, 16), (3, 5), (37, 129), (257, 64), (4, 3, 17), (1000, 20)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_chains_of_row_reductions(rng, shape, dtype):
    n = shape[-1]

    def spread_scale(x):
        # A variance's error is its squared deviations' sum's: 4 m^2 / n a term (test_diff_reductions).
        m = float(np.max(np.abs(np.where(np.isfinite(x), x, 0)), initial=0.0))
        return 4 * m * m / n

    x = make(rng, shape, dtype, specials=0.02)
    check(variance_rows, x, ops=4, reduce=n, scale=spread_scale(x))
    check(std_rows_keepdims, x, ops=5, reduce=n, scale=np.sqrt(spread_scale(x)))
    check(logsumexp_rows, make(rng, shape, dtype, specials=0.02), ops=6, reduce=n)
    check(spread_over_mean, make(rng, shape, dtype, specials=0.02), ops=4, reduce=n)
    # Strided rows: every other column of a wider array.
    x = make(rng, shape[:-1] + (2 * n,), dtype)[..., ::2]
    check(variance_rows, x, ops=4, reduce=n, scale=spread_scale(x))

