"""bfloat16 (ml_dtypes' NumPy dtype), compiled vs NumPy with ml_dtypes.

Dtypes are NumPy's with ml_dtypes registered (the capture asks NumPy: ``bf16 * 2.5`` is float32,
``bf16 @ bf16`` float32, ``np.dot`` bfloat16, ``bf16 + int16`` float32). Values:
- arithmetic chains bit for bit: ml_dtypes computes every operation in float32 and rounds it to
  bfloat16, and so does hcompile (core's widen_float16);
- functions (exp, tanh, ...) within one bfloat16 step of ml_dtypes' (our float32 functions
  against the C library's, each rounded to bfloat16);
- conversions bit for bit (through float32, as ml_dtypes converts);
- sums, means and products accumulate in float32 and round once, as torch does. That is the one
  place hcompile departs from ml_dtypes, whose sums round every step (4096 ones sum to 256): the
  reference here is the float32 computation rounded to bfloat16.
"""
import numpy as np
import pytest

import hcompile as hc
from numpy_oracle import make

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
STEP = 2.0 ** -7      # bfloat16's relative spacing (8 bits of precision)


def bf16(rng, shape, kind="normal", specials=0.0, layout="C"):
    return make(rng, shape, np.float32, kind, specials=specials, layout=layout).astype(BF16)


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint16) if a.dtype == BF16 else a


def assert_same(got, want, *, steps=0, atol=0.0):
    """Same type, dtype and shape; bfloat16 values within `steps` of bfloat16's relative spacing
    (0: the same bits, NaN for NaN) and `atol`; other dtypes as NumPy's."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w, steps=steps, atol=atol)
        return
    assert type(got) is type(want), (type(got), type(want))
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    g, w = np.asarray(got), np.asarray(want)
    if w.dtype.kind in "biu":
        assert np.array_equal(g, w)
    elif steps == 0 and atol == 0:
        same = (_bits(g) == _bits(w)) | (np.isnan(g.astype(np.float64)) & np.isnan(w.astype(np.float64)))
        assert same.all(), f"{(~same).sum()} of {w.size} differ: got {g[~same][:5]}, NumPy {w[~same][:5]}"
    else:
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=steps * STEP,
                                   atol=atol, equal_nan=True)


def numpy_and_compiled(fn, *args):
    with np.errstate(all="ignore"):
        want = fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
        got = hc.hcompile(fn, fullgraph=True)(*args)
    return got, want


def chain(x, y):
    return (x * y + x) / (y - np.float32(0.5).astype(BF16)) - np.sqrt(np.abs(x)) * np.array(3, BF16)


@pytest.mark.parametrize("shape", [(), (1,), (0, 4), (7,), (33, 65), (3, 1, 5)])
@pytest.mark.parametrize("layout", ["C", "F", "step", "rev"])
def test_arithmetic_chains_are_bit_exact(rng, shape, layout):
    if layout != "C" and len(shape) < 2:
        pytest.skip("layouts of 2-D and more")
    x = bf16(rng, shape, "mixed", specials=0.05, layout=layout)
    y = bf16(rng, shape, "normal", specials=0.05)
    got, want = numpy_and_compiled(chain, x, y)
    assert_same(got, want)


UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tanh", "sinh", "arctan",
         "floor", "ceil", "rint", "trunc", "square", "sign", "abs", "negative",
         "isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_within_a_bfloat16_step(rng, name):
    fn = getattr(np, name)
    x = bf16(rng, (41, 37), "mixed", specials=0.05)
    got, want = numpy_and_compiled(lambda a: fn(a), x)
    assert_same(got, want, steps=1)


@pytest.mark.parametrize("expr", [
    "np.maximum(x, y)", "np.minimum(x, y)", "x < y", "x == y", "np.where(x > y, x, y * y)",
    "np.clip(x, y, x + y)", "x * 2.5", "x + 1", "x * np.float32(0.3)", "x + np.arange(19, dtype=np.int8)",
    "x * (y > 0)", "np.power(np.abs(x), y)", "x // y", "x % y", "x ** 2"])
def test_binary_ops_and_promotion(rng, expr):
    x = bf16(rng, (23, 19), "mixed", specials=0.03)
    y = bf16(rng, (23, 19), "pos")
    fn = eval(f"lambda x, y: {expr}")
    got, want = numpy_and_compiled(fn, x, y)
    exact = expr not in ("np.power(np.abs(x), y)", "x // y", "x % y")
    assert_same(got, want, steps=0 if exact else 1)


@pytest.mark.parametrize("other", ["int16", "float16", "int32", "uint64", "float64"])
def test_promotion_is_the_calls(rng, other):
    # np.result_type refuses bfloat16 with int16 or float16, yet the call computes in float32
    # (ml_dtypes); hcompile follows the call.
    x = bf16(rng, (5, 7), "normal")
    y = make(rng, (7,), other, "nonneg" if other.startswith("u") else "small")
    got, want = numpy_and_compiled(lambda a, b: a + b * a, x, y)
    assert_same(got, want, steps=0, atol=0)


def test_conversions_are_numpys(rng):
    base = make(rng, (3000,), np.float32, "normal").astype(np.float64)
    # float64 values beside bfloat16's halfway points, and the edges of its range.
    half = np.spacing(base.astype(BF16).astype(np.float32)).astype(np.float64) * 2.0 ** 15
    near = np.concatenate([base, base * (1 + 2.0 ** -8), base * (1 + 2.0 ** -8 + 2.0 ** -40), base + half,
                           [3.3895e38, 3.3961e38, 3.4e38, 1e300, -1e300, np.inf, -np.inf, np.nan, 0.0, -0.0,
                            1e-40, 9.2e-41, 2.0 ** -133, 2.0 ** 60 + 2.0 ** 52 * 3]])
    for dtype in ["float64", "float32", "float16", "int64", "int32", "uint8", "int8", "bool"]:
        with np.errstate(all="ignore"):
            src = near.astype(dtype)
        got, want = numpy_and_compiled(lambda a: a.astype(BF16), src)
        assert_same(got, want)
    x = np.concatenate([bf16(rng, (500,), "normal") * np.array(100, BF16),
                        np.array([np.inf, -np.inf, np.nan, 3.3895e38, -0.0], BF16)])
    for dtype in ["float64", "float32", "float16", "bool", "int32", "uint8"]:
        finite = dtype in ("int32", "uint8")
        src = np.nan_to_num(x, posinf=0, neginf=0) if finite else x
        if dtype == "uint8":
            src = np.abs(src) % np.array(200, BF16)
        got, want = numpy_and_compiled(lambda a, d=dtype: a.astype(d), src)
        assert_same(got, want)


def test_constants_and_scalars_round_as_numpy_rounds_them(rng):
    x = bf16(rng, (31,), "normal")
    for fn in (lambda a: a * np.array(0.1, BF16), lambda a: a + ml_dtypes.bfloat16(1e-3),
               lambda a: np.where(a > 0, a, np.array(np.nan, BF16)), lambda a, s=ml_dtypes.bfloat16(3.3): a - s):
        got, want = numpy_and_compiled(fn, x)
        assert_same(got, want)
    got, want = numpy_and_compiled(lambda a, s: a * s, x, ml_dtypes.bfloat16(0.3))   # a bfloat16 scalar argument
    assert_same(got, want)


def _float32_then_rounded(fn, *args):
    wide = fn(*[a.astype(np.float32) for a in args])
    return wide.astype(BF16) if isinstance(wide, np.ndarray) else np.float32(wide).astype(BF16)


@pytest.mark.parametrize("op", ["sum", "mean", "prod", "var", "std"])
@pytest.mark.parametrize("axis", [None, -1, 0])
def test_sums_accumulate_in_float32(rng, op, axis):
    x = bf16(rng, (24, 40), "pos" if op == "prod" else "normal")
    if op == "prod":
        x = (x.astype(np.float32) / 8 + 0.7).astype(BF16)
    fn = lambda a: getattr(np, op)(a, axis=axis)   # noqa: E731
    got = hc.hcompile(fn, fullgraph=True)(x)
    want = _float32_then_rounded(fn, x)
    assert got.dtype == BF16 and np.shape(got) == np.shape(want)
    n = x.size if axis is None else x.shape[axis]
    # float32 sums in another order, then one bfloat16 rounding (var: of a difference of sums)
    assert_same(np.asarray(got), np.asarray(want), steps=1 if op != "var" and op != "std" else 2,
                atol=1e-6 * n)


def test_a_long_sum_is_not_a_running_bfloat16_sum(rng):
    ones = np.ones(4096, BF16)
    assert float(np.sum(ones)) == 256.0          # ml_dtypes: every step rounded
    got = hc.hcompile(lambda a: a.sum(), fullgraph=True)(ones)
    assert got.dtype == BF16 and float(got) == 4096.0
    assert float(hc.hcompile(lambda a: a.mean(), fullgraph=True)(ones)) == 1.0


@pytest.mark.parametrize("op", ["max", "min", "argmax", "argmin"])
def test_extremes_are_exact(rng, op):
    x = bf16(rng, (17, 29), "mixed", specials=0.02)
    got, want = numpy_and_compiled(lambda a: getattr(np, op)(a, axis=1), x)
    assert_same(got, want)


@pytest.mark.parametrize("m, k, n", [(1, 8, 1), (16, 64, 8), (65, 33, 17)])
def test_matrix_products(rng, m, k, n):
    a = bf16(rng, (m, k), "unit")
    b = bf16(rng, (k, n), "unit")
    got, want = numpy_and_compiled(lambda x, y: x @ y, a, b)          # float32, as NumPy's
    assert_same(got, want, steps=0, atol=1e-5 * k)
    got = hc.hcompile(lambda x, y: np.dot(x, y), fullgraph=True)(a, b)  # bfloat16, as NumPy's
    want = _float32_then_rounded(lambda x, y: x @ y, a, b)
    assert_same(got, want, steps=1, atol=1e-5 * k)


def test_softmax_and_layernorm(rng):
    from apps import workloads as W
    x = bf16(rng, (33, 128), "normal")
    w = bf16(rng, (128,), "normal")
    b = bf16(rng, (128,), "normal")
    # (layernorm_rows adds the Python float 1e-5: float32 from there on, as NumPy's dtype says)
    for fn, args in ((W.softmax_rows, (x,)), (W.layernorm_rows, (x, w, b))):
        got = hc.hcompile(fn, fullgraph=True)(*args)
        want = fn(*[a.astype(np.float32) for a in args])
        assert got.dtype == fn(*args).dtype
        # a handful of bfloat16 roundings along the way, each within half a step
        np.testing.assert_allclose(got.astype(np.float32), want, rtol=4 * STEP, atol=4 * STEP * np.abs(want).max())


def test_slices_broadcasts_and_writes(rng):
    x = bf16(rng, (12, 10), "normal")
    v = bf16(rng, (10,), "normal")

    def stencil(a):
        return (a[:-2, 1:-1] + a[1:-1, 1:-1] + a[2:, 1:-1]) / np.array(3, BF16)

    def write(a, row):
        a[2:5] = a[2:5] * np.array(2, BF16) + row
        return a

    for fn, args in ((stencil, (x,)), (lambda a, r: a + r[None, :] * a[:, :1], (x, v)), (write, (x, v))):
        got, want = numpy_and_compiled(fn, *[a.copy() for a in args])
        assert_same(got, want)


def test_bfloat16_compiles_for_cuda(rng):
    """Without a GPU the CUDA kernels are still built: bfloat16 loads and stores in the kernels,
    a product of bfloat16 arrays for cuBLAS (tensor cores) where it is big enough."""
    x = bf16(rng, (64, 512), "normal")
    w = bf16(rng, (512, 512), "unit")
    f = hc.hcompile(lambda a, b: np.tanh(np.dot(a, b)) + a, target="host-cuda-cuda_capability_86", fullgraph=True)
    f.compile_only(x, w)
    record = f.compile_records[-1]
    assert record["break"] is None and "gpu_tile" in record["report"]["schedule"], record


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


@pytest.mark.gpu
def test_bfloat16_tensors_on_the_gpu(rng):
    """torch.bfloat16 CUDA tensors: arithmetic bit for bit as ml_dtypes' (float32 rounded back each
    step), functions within a bfloat16 step, sums in float32, and a product of bfloat16 matrices
    through cuBLAS on the tensor cores (float32 accumulation, as NumPy's float32 product)."""
    torch = _torch_cuda()
    if torch is None:
        pytest.skip("no CUDA GPU with PyTorch")
    from apps import workloads as W

    def to_torch(a):
        return torch.from_numpy(np.ascontiguousarray(a).view(np.int16)).view(torch.bfloat16).cuda()

    def to_numpy(t):
        return t.cpu().view(torch.int16).numpy().view(BF16) if t.dtype == torch.bfloat16 else t.cpu().numpy()

    x = bf16(rng, (300, 257), "mixed", specials=0.03)
    y = bf16(rng, (300, 257), "normal")
    got = hc.hcompile(chain, fullgraph=True)(to_torch(x), to_torch(y))
    assert got.dtype == torch.bfloat16 and got.is_cuda
    with np.errstate(all="ignore"):
        assert_same(to_numpy(got), chain(x, y))
        for name in ("exp", "tanh", "sin", "log1p"):
            fn = getattr(np, name)
            assert_same(to_numpy(hc.hcompile(lambda a: fn(a), fullgraph=True)(to_torch(x))), fn(x), steps=1)
    total = hc.hcompile(lambda a: a.sum(axis=1), fullgraph=True)(to_torch(y))
    assert_same(to_numpy(total), y.astype(np.float32).sum(axis=1).astype(BF16), steps=1, atol=1e-3)
    # argmax over rows in a warp's lanes (values widened to float32 for the shuffles), over short
    # rows a thread each: NaN and ties as NumPy's on the same values in float32.
    for shape in ((2048, 64), (1000, 16)):
        z = bf16(rng, shape, "mixed", specials=0.03)
        for fn in (lambda a: a.argmax(axis=-1), lambda a: np.argmin(a, axis=-1)):
            got = hc.hcompile(fn, fullgraph=True)(to_torch(z)).cpu().numpy()
            np.testing.assert_array_equal(got, fn(z.astype(np.float32)), err_msg=str(shape))

    shapes = [(32, 512), (512,), (512,), (512, 512), (512,)]
    args = [bf16(rng, s, "normal") for s in shapes]
    args[3] = (args[3].astype(np.float32) / 22).astype(BF16)
    f = hc.hcompile(W.ln_linear_gelu_res, fullgraph=True)
    got = to_numpy(f(*[to_torch(a) for a in args]))
    assert got.dtype == W.ln_linear_gelu_res(*args).dtype == np.float32   # bfloat16 @ bfloat16
    # Against float32 (ml_dtypes' own answer sums the layer norm's rows in bfloat16 step by step):
    # bfloat16 rounds each step of the layer norm, a few steps' worth of the answer's magnitude.
    want = W.ln_linear_gelu_res(*[a.astype(np.float32) for a in args])
    np.testing.assert_allclose(got, want, rtol=3e-2, atol=3e-2 * np.abs(want).max())
    schedule = "\n".join(r["report"]["schedule"] for r in f.compile_records if r.get("report"))
    assert "call_library" in schedule
