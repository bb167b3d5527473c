# %% [markdown]
# # 06 — The same function on a CUDA GPU
#
# A function compiled by hcompile runs on the GPU when its arrays are there: PyTorch CUDA
# tensors or CuPy arrays go in, arrays of the same library on the same device come out. The
# arrays are wrapped, never copied, and the kernels run on the library's current stream, so they
# order with its own work. `target="cuda"` runs NumPy arguments there too (copied in and out).
#
# The GPU schedule is a fixed rule (every stored region a kernel, 32x8 threads a block, four
# points a thread; a block per row where regions are fused per row, as in softmax), which a GPU
# cost model predicts on the device (its limits read from the CUDA driver, its copy bandwidth
# measured) and max-autotune's alternatives are ranked by. After the first call, calls with PyTorch tensors like these run from the C++
# dispatcher, about 10 µs each. Without a GPU this tutorial shows the schedule it would use and
# skips the rest. Dynamic shapes work here as on the CPU (the last section).

# %%
import os
import tempfile
import time

import numpy as np

import hcompile as hc


def softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def tinyops(x):
    y = 1 / (1 + np.exp(-(x * 2 + 1)))
    y = np.tanh(y * y)
    return y / (np.abs(y) + 1)


# %% [markdown]
# The GPU schedule, compiled for CUDA without running (no GPU needed for this cell), and the
# cost model's prediction of it, here on a reference H100 (on a GPU, the caller's device):

# %%
x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
on_cuda = hc.hcompile(tinyops, target="host-cuda-cuda_capability_86")
on_cuda.compile_only(x)
print(on_cuda.compile_records[-1]["report"]["schedule_source"])
print(on_cuda.compile_records[-1]["report"]["analysis"])

# %% [markdown]
# On a GPU: NumPy arrays on the CPU, then PyTorch CUDA tensors on the GPU, the same function.

# %%
try:
    import torch
    gpu = torch.cuda.is_available()
except ImportError:
    gpu = False
if not gpu:
    print("no CUDA GPU with PyTorch here: the GPU part is skipped")
else:
    f = hc.hcompile(tinyops)
    big = np.random.default_rng(1).standard_normal((8192, 8192)).astype(np.float32)
    on_cpu = f(big)
    t = torch.from_numpy(big).cuda()
    on_gpu = f(t)                              # a torch.Tensor on the same device
    print(type(on_gpu).__name__, on_gpu.device, "matches NumPy:",
          np.allclose(on_gpu.cpu().numpy(), on_cpu, rtol=1e-5, atol=1e-6))
    def ms_per_call(call, arg):
        call(arg)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(10):
            call(arg)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / 10 * 1e3

    for name, call, arg in [("NumPy on the CPU", tinyops, big), ("hcompile on the CPU", f, big),
                            ("hcompile on the GPU", f, t)]:
        print(f"{name}: {ms_per_call(call, arg):.2f} ms")
    print("target='cuda' with NumPy in and out:",
          np.allclose(hc.hcompile(softmax_rows, target="cuda")(big[:64]), softmax_rows(big[:64]), rtol=1e-5))

# %% [markdown]
# NumPy-exact math costs instructions: tinyops' exact `exp`, `tanh` and three IEEE divisions run
# about 108 machine instructions a point, and on an H200 the kernel is bound by them, not by
# memory. `fast_math=True` computes float32 `exp`, `tanh` and division in GPU kernels with the
# GPU's approximate instructions (within 3.2 ulp, NaN and infinities as NumPy's; float64 and CPU
# kernels stay exact). The PTX shows them (no GPU needed; a debug folder keeps a compile's lowered
# statement, whose end is the kernels' PTX):

# %%
fast = hc.hcompile(tinyops, target="host-cuda-cuda_capability_86", fast_math=True)
with tempfile.TemporaryDirectory() as folder:
    os.environ["HCOMPILE_DEBUG_DIR"] = folder
    fast.compile_only(x)
    del os.environ["HCOMPILE_DEBUG_DIR"]
ptx = fast.compile_records[-1]["report"]["lowered_stmt"]
print({op: ptx.count(op) for op in ("ex2.approx", "rcp.approx", "div.full", "div.rn")})
if gpu:
    f_fast = hc.hcompile(tinyops, fast_math=True)
    exact, approximate = f(t), f_fast(t)
    print("largest difference from the exact kernel:", (exact - approximate).abs().max().item())
    for name, call in [("exact", f), ("fast_math", f_fast)]:
        print(f"hcompile on the GPU, {name}: {ms_per_call(call, t):.3f} ms")

# %% [markdown]
# Matrix products on the GPU call cuBLAS (the one PyTorch or CuPy already loaded) on the caller's
# stream, and the elementwise work around them (the bias, the GELU) runs in Halide's kernels that
# read the product's result directly. Small products, or short contractions with few outputs,
# stay Halide kernels: there a thread per output beats the library call's overhead. Batched
# float32 products of short contractions (an attention's heads, split out of one array by views)
# are Halide kernels that stage each block's tiles of both operands in shared memory
# (`gpu_stage_operands`); longer ones are one strided batched cuBLAS call. The schedule says which
# (`call_library`).

# %%
def gelu_mlp(x, w1, b1, w2, b2):
    h = x @ w1 + b1
    h = 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))
    return h @ w2 + b2


if gpu:
    rng = np.random.default_rng(2)
    shapes = [(32, 512), (512, 1024), (1024,), (1024, 512), (512,)]
    host = [rng.standard_normal(s).astype(np.float32) / 16 for s in shapes]
    mlp = hc.hcompile(gelu_mlp)
    got = mlp(*[torch.from_numpy(a).cuda() for a in host])
    print("gelu_mlp matches NumPy:", np.allclose(got.cpu().numpy(), gelu_mlp(*host), rtol=1e-4, atol=1e-5))
    print(mlp.compile_records[-1]["report"]["schedule"])

# %% [markdown]
# An attention's scores: q and k are heads split out of one array of projections, with its bias,
# k transposed. The product reads those views where they lie, each block's tiles of q and k
# staged in shared memory first (no GPU is needed to see the schedule):

# %%
def attention_scores(qkv, bias, heads=8):
    tokens, width = qkv.shape[0] // 16, qkv.shape[1] // 3
    x = qkv + bias
    q = x[:, :width].reshape(16, tokens, heads, width // heads).transpose(0, 2, 1, 3)
    k = x[:, width:2 * width].reshape(16, tokens, heads, width // heads).transpose(0, 2, 1, 3)
    return q @ k.transpose(0, 1, 3, 2) * (1.0 / np.sqrt(width // heads))


rng = np.random.default_rng(3)
qkv, bias = rng.standard_normal((16 * 64, 1536)).astype(np.float32), rng.standard_normal(1536).astype(np.float32)
scores = hc.hcompile(attention_scores, target="host-cuda-cuda_capability_86")
scores.compile_only(qkv, bias)
print(scores.compile_records[-1]["report"]["schedule"])
if gpu:
    got = hc.hcompile(attention_scores)(torch.from_numpy(qkv).cuda(), torch.from_numpy(bias).cuda())
    print("attention scores match NumPy:", np.allclose(got.cpu().numpy(), attention_scores(qkv, bias), rtol=1e-4, atol=1e-4))

# %% [markdown]
# A reduction of a row computed from another reduction of the same row (a variance: the mean,
# then the squared deviations' sum; a log-sum-exp: the max, then the exponentials' sum) runs as one
# kernel: each row's chain in one warp's lanes (or a block's threads for long rows), the row read
# once. The schedule computes both sums per row of the last step (`compute_at_row`); no GPU is
# needed to see it:

# %%
def logsumexp_rows(x):
    m = x.max(axis=-1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=-1))


chain = hc.hcompile(logsumexp_rows, target="host-cuda-cuda_capability_86")
chain.compile_only(x)
print(chain.compile_records[-1]["report"]["schedule"])
if gpu:
    got = hc.hcompile(logsumexp_rows)(torch.from_numpy(x).cuda())
    print("logsumexp matches NumPy:", np.allclose(got.cpu().numpy(), logsumexp_rows(x), rtol=1e-5, atol=1e-5))

# %% [markdown]
# float16 computes as NumPy's float16 does: each step in float32, rounded back to float16, so on
# the CPU an arithmetic chain matches NumPy bit for bit. On the GPU a float16 matrix product runs
# on the tensor cores through cuBLAS, accumulating in float32 as NumPy's float16 product does.
# DESIGN.md's `ln_linear_gelu_res` seed is such a function: a layer norm, a linear layer, GELU
# and the residual.

# %%
def ln_linear_gelu_res(x, weight, bias, w, b):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    h = d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * weight + bias
    h = h @ w + b
    return x + 0.5 * h * (1 + np.tanh(0.7978845608028654 * (h + 0.044715 * h * h * h)))


rng = np.random.default_rng(3)
half = [rng.standard_normal(s).astype(np.float16) for s in [(32, 512), (512,), (512,)]]
half += [(rng.standard_normal((512, 512)) / 22).astype(np.float16), rng.standard_normal(512).astype(np.float16)]
layer = hc.hcompile(ln_linear_gelu_res)
print("float16 on the CPU matches NumPy:", np.allclose(layer(*half).astype(np.float32), ln_linear_gelu_res(*half), atol=1e-2))
if gpu:
    on_device = layer(*[torch.from_numpy(a).cuda() for a in half])
    print(on_device.dtype, "matches NumPy:",
          np.allclose(on_device.cpu().numpy().astype(np.float32), ln_linear_gelu_res(*half), rtol=1e-2, atol=1e-2))

# %% [markdown]
# bfloat16 works the same way, with NumPy's bfloat16 from the `ml_dtypes` package (JAX installs
# it): `torch.bfloat16` tensors on the GPU, ml_dtypes arrays on the CPU. Dtypes are what NumPy
# with ml_dtypes gives (`x @ w` of bfloat16 is float32 there, so this layer returns float32);
# each step rounds to bfloat16 as ml_dtypes does, except that sums accumulate in float32 and round
# once (ml_dtypes rounds every step), as torch does. The product runs on the tensor cores.

# %%
try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None
if ml_dtypes is not None:
    brain = [a.astype(ml_dtypes.bfloat16) for a in half]
    wide = ln_linear_gelu_res(*[a.astype(np.float32) for a in brain])
    print("bfloat16 on the CPU:", layer(*brain).dtype, "close to float32's:",
          np.allclose(layer(*brain), wide, rtol=3e-2, atol=3e-2 * np.abs(wide).max()))
    if gpu:
        on_device = layer(*[torch.from_numpy(a.astype(np.float32)).cuda().to(torch.bfloat16) for a in brain])
        print("torch.bfloat16 on the GPU:", on_device.dtype, "close to float32's:",
              np.allclose(on_device.cpu().numpy(), wide, rtol=3e-2, atol=3e-2 * np.abs(wide).max()))

# %% [markdown]
# An array read across its rows (`x.T`, `np.swapaxes`) would make a warp's loads a row apart each.
# The schedule copies a 32x32 tile of it per block into shared memory along its rows first
# (`gpu_stage_transposed`), 1.6x faster on an H200 (`apps/gpu_transpose_bench.py`).

# %%
transposed = hc.hcompile(lambda a: a.T * 2 + 1, target="host-cuda-cuda_capability_86")
transposed.compile_only(x[:512, :256])
print(transposed.compile_records[-1]["report"]["schedule"])


# %% [markdown]
# A graph break on the GPU resumes as on the CPU: the code before it is a CUDA kernel, the
# instruction runs as Python on the device arrays (here a branch on a value, read back from the
# device), and the code after it is compiled for the GPU in its turn.

# %%
def clipped_or_scaled(x):
    if x.sum() > 0:
        return np.minimum(x, 1.0) * 2
    return np.tanh(x) - 1


branchy = hc.hcompile(clipped_or_scaled, target="host-cuda-cuda_capability_86")
branchy.compile_only(x)
print("graph break:", branchy.compile_records[-1]["break"])
if gpu:
    run = hc.hcompile(clipped_or_scaled)
    for data in (x, -np.abs(x)):
        out = run(torch.from_numpy(data).cuda())
        print("matches NumPy:", np.allclose(out.cpu().numpy(), clipped_or_scaled(data), rtol=1e-5, atol=1e-6))

# %% [markdown]
# Halide's own GPU autoschedulers run on the same lowered pipeline, for comparisons:
# `autoscheduler="Anderson2021"` (or `"Mullapudi2016"`, in its GPU mode, or `"Li2018"`), with the
# device's SM count as their parallelism. `python -m apps.gpu_bench` tabulates them.

# %%
peer = hc.hcompile(softmax_rows, target="host-cuda-cuda_capability_86", autoscheduler="Anderson2021")
peer.compile_only(x[:256, :512])
print(peer.compile_records[-1]["report"]["schedule_source"][:600])

# %% [markdown]
# `mode="reduce-overhead"`: where a call launches many kernels (each about 4-5 µs from the host),
# hcompile captures it in a CUDA graph at its second call and replays it afterwards. Arguments
# that stay the same tensors (the weights) are read where they are; a new batch is copied in; each
# result is a tensor of its own. Calls of fewer than 10 launches keep default mode, which is
# faster for them. Eight normalised layers launch 16 kernels here (`cuda_graphs.launches`): each
# layer's product, and its layer norm as one kernel of a block per row (the tanh and the
# reductions computed per row inside it: a row group, README's GPU section).

# %%
def layer(h, w):
    h = np.tanh(h @ w)
    return (h - h.mean(axis=-1, keepdims=True)) / np.sqrt(h.var(axis=-1, keepdims=True) + 1e-5)


def eight_layers(x, w1, w2, w3, w4):
    for w in (w1, w2, w3, w4, w4, w3, w2, w1):
        x = layer(x, w)
    return x


if gpu:
    rng = np.random.default_rng(3)
    ws = [rng.standard_normal((64, 64)).astype(np.float32) / 8 for _ in range(4)]
    weights = [torch.from_numpy(w).cuda() for w in ws]
    for mode in ("default", "reduce-overhead"):
        f = hc.hcompile(eight_layers, mode=mode)
        batch = torch.randn(16, 64, device="cuda")
        f(batch, *weights), f(batch, *weights)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(200):
            out = f(batch, *weights)
        torch.cuda.synchronize()
        print(f"eight layers of 16x64, {mode}: {(time.perf_counter() - start) / 200 * 1e6:.1f} µs a call")
    want = eight_layers(batch.cpu().numpy(), *ws)
    print("matches NumPy:", np.allclose(out.cpu().numpy(), want, rtol=1e-4, atol=1e-4))

# %% [markdown]
# Dynamic shapes: when a call differs from an earlier one only in some sizes (a batch), hcompile
# compiles once more for any size of them, as on the CPU. The kernel reads the sizes from the
# call's arrays; later calls at sizes never seen run it from the C++ dispatcher. Where only the
# number of rows varies, rows keep their fused block and tiles their 2-D grid, so the kernel for
# any batch runs as fast as the one for a fixed size. Short rows run several a block: that entry
# takes batches of a block's rows or more, and a smaller batch compiles one more entry for the
# sizes below (a row a block). The compile record says what was made dynamic (this cell compiles
# without a GPU too).

# %%
batched = hc.hcompile(softmax_rows, target="host-cuda-cuda_capability_86")
batched.compile_only(x[:300, :512])
batched.compile_only(x[:200, :512])           # only the batch changed
print(batched.compile_records[-1]["dynamic"])
print(batched.compile_records[-1]["report"]["schedule"])
short_rows = hc.hcompile(softmax_rows, target="host-cuda-cuda_capability_86")
batch = np.random.default_rng(1).standard_normal((3000, 64)).astype(np.float32)
for rows in (3000, 2000, 5):                  # a batch of short rows, then a small one
    short_rows.compile_only(batch[:rows])
    print(rows, "rows:", short_rows.compile_records[-1].get("dynamic"))

if gpu:
    g = hc.hcompile(softmax_rows)
    for rows in (64, 100, 7, 1000, 333, 2048, 5, 4096, 50, 800):
        xb = torch.randn(rows, 512, device="cuda")
        assert np.allclose(g(xb).cpu().numpy(), softmax_rows(xb.cpu().numpy()), rtol=1e-5, atol=1e-6)
    print(f"ten batch sizes, {g._cuda._compiles} compiles, every result NumPy's")

# %% [markdown]
# Rows under more axes, as a transformer's activations are: a layer norm over the features of
# (batch, tokens, features), called with batches and sequences of every length. The tokens' blocks
# of rows and the batch's loop are one loop of GPU blocks (the grid's x, the only dimension that
# holds any number of them), so the entry for any batch and sequence keeps the static kernel's
# blocks of rows in a warp's lanes. Fewer tokens than a block's rows compile the entry below them.


# %%
def layer_norm(h, weight, bias):
    mu = h.mean(axis=-1, keepdims=True)
    var = ((h - mu) ** 2).mean(axis=-1, keepdims=True)
    return (h - mu) / np.sqrt(var + 1e-5) * weight + bias


norm = hc.hcompile(layer_norm, target="host-cuda-cuda_capability_86")
w, b = np.ones(64, np.float32), np.zeros(64, np.float32)
for shape in ((8, 128, 64), (4, 128, 64), (6, 77, 64)):   # the batch changes, then the tokens too
    norm.compile_only(np.ones(shape, np.float32), w, b)
print(norm.compile_records[-1]["dynamic"])
print(norm.compile_records[-1]["report"]["schedule"])

if gpu:
    g = hc.hcompile(layer_norm)
    wt, bt = torch.randn(64, device="cuda"), torch.randn(64, device="cuda")
    for shape in ((8, 128, 64), (4, 128, 64), (6, 77, 64), (2, 5, 64), (16, 300, 64), (3, 1000, 64)):
        h = torch.randn(*shape, device="cuda")
        want = layer_norm(h.cpu().numpy(), wt.cpu().numpy(), bt.cpu().numpy())
        assert np.allclose(g(h, wt, bt).cpu().numpy(), want, rtol=1e-4, atol=1e-4)
    print(f"six (batch, tokens) shapes, {g._cuda._compiles} compiles, every result NumPy's")
