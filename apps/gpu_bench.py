"""hcompile on a CUDA GPU against torch eager, torch.compile (default and max-autotune) and jax.jit,
on the seed workloads of DESIGN.md §6 at its GPU sizes (8192² float32; layernorm 8192×4096), in
one process. The ratio is against the better of torch.compile's two modes (max-autotune without
CUDA graphs, which at these sizes copy every input first).

    python -m apps.gpu_bench [--workloads tinyops,softmax_rows] [--repeat 50] [--write apps/RESULTS.md]

Every hcompile result is checked against torch's first. Times are medians of CUDA-event timed
batches (a sync before and after each batch; jax.jit's, which runs on its own stream, wall-clock
batches ended by block_until_ready); bandwidth counts the bytes of the inputs read once and the
outputs written once, against a device-to-device copy measured the same way. A second table
times each call of the workloads at their small sizes (apps/workloads.py), where the per-call
overhead is the time: hcompile default and reduce-overhead (CUDA graphs), torch eager,
torch.compile default and reduce-overhead (CUDA graphs), jax.jit.
Needs a CUDA GPU with PyTorch (tests/gpu/run_on_gpu_machine.sh runs it on the lent GPU machine).
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np

import hcompile as hc
from apps import workloads as W
from apps.bench import heading, publish

SIZES = {"tinyops": [(8192, 8192)], "softmax_rows": [(8192, 8192)], "layernorm_rows": [(8192, 4096), (4096,), (4096,)],
         "blur3x3": [(8192, 8192)], "sum_all": [(8192, 8192)],
         # DESIGN.md §6's matrix-product seeds at its sizes: their inputs from apps/workloads.py
         # (ln_linear_gelu_res in float16).
         "matmul_softmax_100": None, "gelu_mlp": None, "ln_linear_gelu_res": None, "transformer_layer": None}

# Tolerances against torch's answer: float16 rounds every NumPy step (torch's fused ops round once).
TOLERANCE = {"ln_linear_gelu_res": (2e-2, 2e-2), "transformer_layer": (2e-3, 1e-4)}


def tolerance(name):
    """(rtol, atol) of a workload's answer against torch's."""
    return TOLERANCE.get(name, (1e-4, 1e-5))


def bench_inputs(name, rng):
    """The workload's inputs at its GPU size (float32; ln_linear_gelu_res float16), as NumPy arrays."""
    if SIZES[name] is None:
        return list(getattr(W, "inputs_" + name)("bench"))
    return [rng.standard_normal(s).astype(np.float32) for s in SIZES[name]]


def sum_all(x):
    """A reduction to one value (not a DESIGN.md seed: the GPU's hardest shape for one kernel)."""
    return np.sum(x)


def torch_versions(torch):
    import torch.nn.functional as F

    def tinyops(x):
        y = torch.sigmoid(x * 2 + 1)
        y = torch.tanh(y * y)
        return y / (y.abs() + 1)

    def blur3x3(x):
        h = (x[:, :-2] + x[:, 1:-1] + x[:, 2:]) / 3
        return (h[:-2, :] + h[1:-1, :] + h[2:, :]) / 3
    return {"tinyops": tinyops, "softmax_rows": lambda x: torch.softmax(x, dim=-1),
            "layernorm_rows": lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, 1e-5), "blur3x3": blur3x3,
            "sum_all": lambda x: x.sum(), **{name: W.torch_fn(name) for name in (
                "matmul_softmax_100", "gelu_mlp", "ln_linear_gelu_res", "transformer_layer")}}


def autotuned_cell(torch, fn, args, want, rtol, atol, repeat):
    """hcompile's max-autotune on the device (a fresh tuning database: every run measures): its
    time in ms and the seconds its first call took (tuning included), checked like the default's."""
    tuned = hc.hcompile(fn, mode="max-autotune", fullgraph=True)
    start = time.perf_counter()
    try:
        got = tuned(*args)
    except Exception as e:   # noqa: BLE001 (reported in its cell)
        return f"failed: {type(e).__name__}"
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    if not torch.allclose(got, want, rtol=rtol, atol=atol * max(1.0, want.abs().max().item())):
        return "wrong answer"
    for record in tuned.compile_records:
        if record.get("tuning"):
            print(f"[gpu_bench] max-autotune chose:\n{record['report']['schedule']}", flush=True)
    return f"{cuda_ms(torch, tuned, args, repeat):.3f} ({seconds:.0f})"


def torch_max_autotune_ms(torch, peer, args, want, name, repeat):
    """torch.compile's max-autotune (Triton configurations and matmul templates measured), without
    its CUDA graphs: at these sizes a graph's replay first copies each input that is not a
    parameter into the graph's own memory (mode="max-autotune" measured 0.298 ms for tinyops,
    whose default-mode kernel took 0.135, on an H200). Checked like hcompile's; None where it fails."""
    try:
        tuned = torch.compile(peer, mode="max-autotune-no-cudagraphs")
        got = tuned(*args).clone()
        rtol, atol = tolerance(name)
        if not torch.allclose(got, want, rtol=rtol, atol=atol * max(1.0, want.abs().max().item())):
            print(f"[gpu_bench] torch.compile max-autotune: wrong answer on {name}")
            return None
        return cuda_ms(torch, tuned, args, repeat)
    except Exception as e:   # noqa: BLE001 (a peer that fails is reported, not fatal)
        print(f"[gpu_bench] torch.compile max-autotune failed on {name}: {e}")
        return None


def copy_tb_per_s(torch, repeat):
    """The device's copy bandwidth in TB/s (bytes read and written) on 256 MiB, timed as cuda_ms."""
    big = torch.empty(64 << 20, device="cuda")
    return 2 * big.numel() * 4 / (cuda_ms(torch, lambda x: x.clone(), (big,), repeat) * 1e-3) / 1e12


def gpu_bench_args(description, argv):
    """The GPU benches' common options (--repeat, --write), parsed; None where no GPU is there
    (said on the way out), else (arguments, torch)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    args = ap.parse_args(argv)
    import torch
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to measure")
        return None
    return args, torch


def peer_bench_start(doc, argv, torch_versions):
    """The start of a GPU bench timing hcompile against torch peers: None where no GPU is there,
    else (arguments, torch, the copy bandwidth in TB/s, torch_versions(torch))."""
    parsed = gpu_bench_args(doc.split("\n\n")[0], argv)
    if parsed is None:
        return None
    args, torch = parsed
    # torch.compile keeps 8 kernels a function (its recompile limit), then runs it eagerly: a
    # bench of many shapes of one peer timed torch eager past the eighth.
    config = torch._dynamo.config
    for limit in ("recompile_limit", "cache_size_limit"):
        if hasattr(config, limit):
            setattr(config, limit, max(getattr(config, limit), 64))
    return args, torch, copy_tb_per_s(torch, args.repeat), torch_versions(torch)


def publish_peer_table(torch, args, copy, module, key, title, columns, rows, note=""):
    """Prints (and with --write files, apps/bench.publish) a GPU peer bench's results section
    `key`: its title with the device, the command that made it (`python -m apps.<module>`), the
    copy bandwidth and `note`, then a table of `columns` over `rows` (each a whole table line)."""
    section = (heading(f"{key}: {title} ({torch.cuda.get_device_name()})") +
               f"Command: `python -m apps.{module} --repeat {args.repeat}`. Copy bandwidth {copy:.2f} TB/s."
               f"{' ' + note if note else ''}\n\n| {' | '.join(columns)} |\n|{'---|' * len(columns)}\n" +
               "\n".join(rows) + "\n")
    publish(section, args.write, key)


def kernel_us(torch, fn, args, calls=20, warmup=3):
    """Microseconds the GPU's kernels take a call (CUPTI through torch.profiler: every kernel of the
    process, Halide's and cuBLAS's included), and kernels a call; over `calls` calls after
    `warmup` untimed ones."""
    for _ in range(warmup):
        fn(*args)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.profiler.DeviceType.CUDA]
    return sum(e.device_time for e in events) / calls, len(events) / calls


def cuda_ms(torch, fn, args, repeat, batch=10):
    """Median milliseconds per call over `repeat` CUDA-event timed batches of `batch` calls."""
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    samples = []
    for _ in range(repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            fn(*args)
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) / batch)
    return statistics.median(samples)


def overhead_us(torch, fn, *args, calls=2000, rounds=5):
    """Microseconds per call on small inputs: the median of `rounds` loops of `calls` calls, each
    loop synchronised once at its end (so the time is the host's per-call work where that is
    longer than the kernels)."""
    for _ in range(10):
        fn(*args)
    samples = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def jax_peer(name):
    """(jitted jax.numpy version of workload `name`, to_jax(torch tensor)), or None without JAX."""
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # share the GPU with PyTorch
    try:
        import jax
        import jax.dlpack
        import jax.numpy as jnp
    except ImportError:
        return None
    return jax.jit(W.rebind(getattr(W, name), np=jnp)), lambda t: jax.dlpack.from_dlpack(t.contiguous())


def jax_ms(fn, args, repeat, batch=10):
    """Median wall-clock milliseconds per call of batches ended by block_until_ready."""
    for _ in range(3):
        fn(*args).block_until_ready()
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(batch):
            out = fn(*args)
        out.block_until_ready()
        samples.append((time.perf_counter() - start) / batch * 1e3)
    return statistics.median(samples)


def small_table(torch, peers, names):
    """Per-call microseconds at the workloads' small sizes (apps/workloads.py)."""
    rows = ["| workload (small size) | hcompile µs | hcompile reduce-overhead µs | torch eager µs | torch.compile µs | "
            "torch.compile reduce-overhead µs | jax.jit µs |", "|---|---|---|---|---|---|---|"]
    for name in names:
        if name not in peers or not hasattr(W, "inputs_" + name):
            continue
        args = [torch.from_numpy(a).cuda() for a in getattr(W, "inputs_" + name)("small")]
        graphed = hc.hcompile(getattr(W, name), fullgraph=True, mode="reduce-overhead")
        graphed(*args)
        want, got = peers[name](*args), graphed(*args)   # the second call is captured, then replayed
        rtol, atol = tolerance(name)
        checked = torch.allclose(got, want, rtol=rtol, atol=atol * max(1.0, want.abs().max().item()))
        cells = [overhead_us(torch, hc.hcompile(getattr(W, name), fullgraph=True), *args, calls=500),
                 overhead_us(torch, graphed, *args, calls=500) if checked else None,
                 overhead_us(torch, peers[name], *args, calls=500)]
        if not checked:
            print(f"[gpu_bench] hcompile reduce-overhead: wrong answer on {name}")
        for mode in ("default", "reduce-overhead"):
            try:
                cells.append(overhead_us(torch, torch.compile(peers[name], mode=mode), *args, calls=500))
            except Exception as e:   # noqa: BLE001 (a peer that fails is reported, not fatal)
                print(f"[gpu_bench] torch.compile {mode} failed on {name}: {e}")
                cells.append(None)
        jax = jax_peer(name)
        if jax is not None:
            fn, to_jax = jax
            jargs = [to_jax(a) for a in args]
            cells.append(jax_ms(fn, jargs, 20, batch=100) * 1e3)
        else:
            cells.append(None)
        shape = "×".join(map(str, args[0].shape))
        rows.append(f"| {name} ({shape}) | " + " | ".join("—" if c is None else f"{c:.1f}" for c in cells) + " |")
        print(rows[-1], flush=True)
    return rows


def halide_peer_table(torch, peers, names, autoschedulers, repeat):
    """hcompile's GPU schedule against Halide's GPU autoschedulers, each run by hcompile on the
    same lowered pipeline (autoscheduler=...; halide_peers.h), every answer checked first."""
    rows = ["| workload | hcompile ms | " + " | ".join(f"{n} ms (schedule s)" for n in autoschedulers) + " |",
            "|---|---|" + "---|" * len(autoschedulers)]
    rng = np.random.default_rng(0)
    for name in names:
        fn = sum_all if name == "sum_all" else getattr(W, name)
        args = [torch.from_numpy(a).cuda() for a in bench_inputs(name, rng)]
        want = peers[name](*args)
        rtol, atol = tolerance(name)
        cells = []
        for scheduler in ("hcompile",) + tuple(autoschedulers):
            compiled = hc.hcompile(fn, fullgraph=True, autoscheduler=scheduler)
            start = time.perf_counter()
            try:
                got = compiled(*args)
                torch.cuda.synchronize()
            except Exception as e:   # noqa: BLE001 (a peer that fails is reported, not fatal)
                cells.append(f"failed ({type(e).__name__}: {str(e).splitlines()[0][:80]})")
                continue
            seconds = time.perf_counter() - start
            if not torch.allclose(got, want, rtol=rtol, atol=atol * max(1.0, want.abs().max().item())):
                cells.append(f"wrong answer ({(got - want).abs().max().item():.3g})")
                continue
            ms = cuda_ms(torch, compiled, args, repeat)
            cells.append(f"{ms:.3f}" if scheduler == "hcompile" else f"{ms:.3f} ({seconds:.1f})")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(SIZES))
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--write", help="add or replace this section in a results file (apps/RESULTS.md)")
    ap.add_argument("--halide-peers", default="Anderson2021,Mullapudi2016",
                    help="Halide GPU autoschedulers to compare on the same pipelines ('' for none)")
    ap.add_argument("--halide-peer-workloads", default="tinyops,softmax_rows,layernorm_rows,blur3x3,sum_all",
                    help="the workloads they schedule (their searches take long on the larger graphs)")
    ap.add_argument("--no-small", action="store_true", help="skip the per-call table at the small sizes")
    ap.add_argument("--small-only", action="store_true",
                    help="only the per-call table at the small sizes (its own section, gpu-small)")
    ap.add_argument("--no-max-autotune", dest="max_autotune", action="store_false",
                    help="skip hcompile's max-autotune column (its tuning takes seconds per workload)")
    ap.add_argument("--no-torch-max-autotune", dest="torch_max_autotune", action="store_false",
                    help="skip torch.compile's max-autotune column (its tuning takes minutes per workload)")
    a = ap.parse_args(argv)
    if a.max_autotune and "HCOMPILE_TUNING_DB" not in os.environ:
        import tempfile
        hc.config.tuning_db = os.path.join(tempfile.mkdtemp(prefix="gpu_bench_"), "tuning.sqlite")
    import torch
    if not torch.cuda.is_available():
        print("[gpu_bench] no CUDA GPU: nothing to measure")
        return 0
    device = torch.cuda.get_device_name()
    peers = torch_versions(torch)
    if a.small_only:
        small = small_table(torch, peers, [n for n in a.workloads.split(",") if n != "sum_all"])
        publish(heading(f"gpu-small: per call at the small sizes ({device})") +
                "Command: `python -m apps.gpu_bench --small-only`: host-timed loops of 500 calls, one sync a loop, "
                "µs a call.\n\n" + "\n".join(small) + "\n", a.write, "gpu-small")
        return 0
    copy_tbs = copy_tb_per_s(torch, a.repeat)
    rows = ["| workload | hcompile ms | hcompile max-autotune ms (tuning s) | torch eager ms | torch.compile ms | "
            "torch.compile max-autotune ms | jax.jit ms | vs the better torch.compile | hcompile bandwidth (of copy) | "
            "hcompile compile s |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    ratios = []
    rng = np.random.default_rng(0)
    for name in a.workloads.split(","):
        fn = sum_all if name == "sum_all" else getattr(W, name)
        args = [torch.from_numpy(a).cuda() for a in bench_inputs(name, rng)]
        compiled = hc.hcompile(fn, fullgraph=True)
        start = time.perf_counter()
        try:
            got = compiled(*args)
        except Exception as e:   # noqa: BLE001 (reported in the table, the other workloads still run)
            rows.append(f"| {name} | failed: {type(e).__name__}: {str(e).splitlines()[0][:120]} | | | | | | | | |")
            print(rows[-1], flush=True)
            continue
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - start
        want = peers[name](*args)
        rtol, atol = tolerance(name)
        if not torch.allclose(got, want, rtol=rtol, atol=atol * max(1.0, want.abs().max().item())):
            rows.append(f"| {name} | wrong answer (max error {(got - want).abs().max().item():.3g}) | | | | | | | | |")
            print(rows[-1], flush=True)
            continue
        ours = cuda_ms(torch, compiled, args, a.repeat)
        tuned = autotuned_cell(torch, fn, args, want, rtol, atol, a.repeat) if a.max_autotune else "—"
        eager = cuda_ms(torch, peers[name], args, a.repeat)
        try:
            tc = torch.compile(peers[name])
            tc_ms = cuda_ms(torch, tc, args, a.repeat)
        except Exception as e:   # noqa: BLE001 (a peer that fails is reported, not fatal)
            tc_ms = None
            print(f"[gpu_bench] torch.compile failed on {name}: {e}")
        tc_max = torch_max_autotune_ms(torch, peers[name], args, want, name, a.repeat) if a.torch_max_autotune else None
        best_tc = min([t for t in (tc_ms, tc_max) if t is not None], default=None)
        jax = jax_peer(name) if name != "sum_all" else None
        jax_cell = "—"
        if jax is not None:
            try:
                jax_cell = f"{jax_ms(jax[0], [jax[1](a) for a in args], a.repeat):.3f}"
            except Exception as e:   # noqa: BLE001
                print(f"[gpu_bench] jax.jit failed on {name}: {e}")
        moved = sum(x.numel() * x.element_size() for x in args) + got.numel() * got.element_size()
        bandwidth = moved / ours / 1e9
        ratio = best_tc / ours if best_tc else None
        if ratio:
            ratios.append(ratio)
        cell = lambda t: "failed" if t is None else f"{t:.3f}"  # noqa: E731
        max_cell = cell(tc_max) if a.torch_max_autotune else "—"
        rows.append(f"| {name} | {ours:.3f} | {tuned} | {eager:.3f} | {cell(tc_ms)} | {max_cell} | {jax_cell} | "
                    f"{f'{ratio:.2f}×' if ratio else '—'} | {bandwidth:.2f} TB/s ({bandwidth / copy_tbs:.0%}) | "
                    f"{compile_s:.1f} |")
        print(rows[-1], flush=True)
    if ratios:
        rows.append(f"| geometric mean | | | | | | | {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}× | | |")
    tiny = torch.ones(16, device="cuda")
    add_one = hc.hcompile(W.add_one)
    overhead = (f"Per-call host time on a 16-element tensor: hcompile {overhead_us(torch, add_one, tiny):.1f} µs, "
                f"torch eager {overhead_us(torch, lambda x: x + 1, tiny):.1f} µs.")
    print(overhead)
    small = [] if a.no_small else small_table(torch, peers, [n for n in a.workloads.split(",") if n != "sum_all"])
    autoschedulers = [n for n in a.halide_peers.split(",") if n]
    halide = (halide_peer_table(torch, peers, a.halide_peer_workloads.split(","), autoschedulers, a.repeat)
              if autoschedulers else [])
    section = (heading("hcompile on a CUDA GPU") + f"`python -m apps.gpu_bench` on {device} (CUDA-event medians; "
               f"device-to-device copy {copy_tbs:.2f} TB/s counting reads and writes). The GPU rule's schedule, "
               "checked by the GPU cost model on the device; PyTorch calls dispatched in C++.\n\n" + "\n".join(rows) + "\n\n" + overhead +
               ("\n\nPer call at the small sizes (host-timed loops, one sync per loop):\n\n" + "\n".join(small) if small else "") +
               "\n" +
               ("\nHalide's GPU autoschedulers on the same lowered pipelines (run by hcompile with `autoscheduler=`; "
                "Mullapudi2016 in its GPU mode; the SM count as their parallelism; the seconds are the first call's, "
                "the schedule search and the compile):\n\n" + "\n".join(halide) + "\n" if halide else ""))
    publish(section, a.write, "gpu")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
