# %% [markdown]
# # 06 — The same function on a CUDA GPU
#
# A function compiled by hcompile runs on the GPU when its arrays are there: PyTorch CUDA
# tensors or CuPy arrays go in, arrays of the same library on the same device come out. The
# arrays are wrapped, never copied, and the kernels run on the library's current stream, so they
# order with its own work. `target="cuda"` runs NumPy arguments there too (copied in and out).
#
# The GPU schedule is a fixed rule (every stored region a kernel, 32x8 threads a block, four
# points a thread; a block per row where regions are fused per row, as in softmax), no GPU cost
# model yet. After the first call, calls with PyTorch tensors like these run from the C++
# dispatcher, about 10 µs each. Without a GPU this tutorial shows the schedule it would use and
# skips the rest.

# %%
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
# The GPU schedule, compiled for CUDA without running (no GPU needed for this cell):

# %%
x = np.random.default_rng(0).standard_normal((1024, 1024)).astype(np.float32)
on_cuda = hc.hcompile(tinyops, target="host-cuda-cuda_capability_86")
on_cuda.compile_only(x)
print(on_cuda.compile_records[-1]["report"]["schedule_source"])

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
    for name, call, arg in [("NumPy on the CPU", tinyops, big), ("hcompile on the CPU", f, big),
                            ("hcompile on the GPU", f, t)]:
        call(arg)
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(10):
            call(arg)
        torch.cuda.synchronize()
        print(f"{name}: {(time.perf_counter() - start) / 10 * 1e3:.2f} ms")
    print("target='cuda' with NumPy in and out:",
          np.allclose(hc.hcompile(softmax_rows, target="cuda")(big[:64]), softmax_rows(big[:64]), rtol=1e-5))

# %% [markdown]
# Matrix products on the GPU call cuBLAS (the one PyTorch or CuPy already loaded) on the caller's
# stream, and the elementwise work around them (the bias, the GELU) runs in Halide's kernels that
# read the product's result directly. Small products, or short contractions with few outputs,
# stay Halide kernels: there a thread per output beats the library call's overhead. The schedule
# says which (`call_library`).

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
