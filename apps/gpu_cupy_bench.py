"""The seed workloads on CuPy arrays against the same calls on PyTorch tensors, in one process.

    python -m apps.gpu_cupy_bench [--repeat 20] [--write apps/RESULTS.md]

For each workload: hcompile on CuPy arrays, hcompile on PyTorch tensors (the same kernels), the
NumPy function run eagerly by CuPy (its `np` rebound to `cupy`) and torch eager's version; µs a
call at the workloads' small sizes (the host's work: loops of calls synchronised at their end)
and ms a call at the GPU sizes (CUDA events; both libraries queue on the device's default
stream). hcompile's CuPy results are checked against NumPy's. Needs a CUDA GPU with PyTorch and
CuPy.
"""
from __future__ import annotations

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.gpu_bench import (SIZES, bench_inputs, cuda_ms, overhead_us, peer_bench_start, publish_peer_table,
                            sum_all, tolerance, torch_versions)

NAMES = ["tinyops", "softmax_rows", "layernorm_rows", "blur3x3", "sum_all", "matmul_softmax_100", "gelu_mlp",
         "transformer_layer"]


def _function(name):
    return sum_all if name == "sum_all" else getattr(W, name)


def _inputs(name, small, rng):
    if small:
        return list(getattr(W, "inputs_" + name)("small")) if name != "sum_all" else [
            rng.standard_normal((67, 67)).astype(np.float32)]
    return bench_inputs(name, rng)


def row(torch, cupy, name, small, repeat, peers):
    """One table line: hcompile on CuPy and on PyTorch, CuPy eager, torch eager."""
    rng = np.random.default_rng(len(name))
    host = _inputs(name, small, rng)
    on_cupy = [cupy.asarray(a) for a in host]
    on_torch = [torch.from_numpy(a).cuda() for a in host]
    fn = _function(name)
    compiled = hc.hcompile(fn)
    got = compiled(*on_cupy)
    rtol, atol = tolerance(name)
    want = fn(*host)
    np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=rtol * 10, atol=atol * 10 * max(1.0, float(np.abs(want).max())))
    assert isinstance(got, cupy.ndarray), type(got)
    eager_cupy = W.rebind(fn, np=cupy)
    timed = [(compiled, on_cupy), (compiled, on_torch), (eager_cupy, on_cupy), (peers[name], on_torch)]
    cells = []
    for f, a in timed:
        try:
            cells.append(f"{overhead_us(torch, f, *a):.1f}" if small else f"{cuda_ms(torch, f, a, repeat):.3f}")
        except Exception as e:  # noqa: BLE001  (CuPy lacks a function the NumPy code calls)
            print(f"{name}: {type(e).__name__}: {e}")
            cells.append("—")
    return f"| {name} | {'×'.join(str(n) for n in host[0].shape)} | {' | '.join(cells)} |"


def main(argv=None) -> int:
    started = peer_bench_start(__doc__, argv, torch_versions)
    if started is None:
        return 0
    args, torch, copy, peers = started
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001  (CuPy missing, or without a driver)
        print(f"no CuPy with a GPU ({e}): nothing to measure")
        return 0
    rows = []
    for small in (True, False):
        for name in NAMES:
            if name not in peers or (not small and name not in SIZES):
                continue
            rows.append(row(torch, cupy, name, small, args.repeat, peers))
            print(rows[-1], flush=True)
    publish_peer_table(torch, args, copy, "gpu_cupy_bench", "gpu-cupy", "the seed workloads on CuPy arrays",
                       ["workload", "size", "hcompile on CuPy", "hcompile on PyTorch", "CuPy eager", "torch eager"],
                       rows, note="First the small sizes, µs a call (the host's time); then the GPU sizes, ms a call "
                                  "(CUDA events).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
