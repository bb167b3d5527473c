"""Run every workload under every peer, side by side, in one process.

    python -m apps.bench [--workloads a,b] [--peers numpy,hcompile,...] [--repeat N]
                         [--size bench|small] [--no-overhead] [--write apps/RESULTS.md]

Peers: NumPy (the reference), hcompile (default mode), torch eager and torch.compile (default
mode, if torch imports), jax.jit (if jax imports), and Halide's own autoschedulers Adams2019,
Mullapudi2016 and Li2018 (``halide:<name>``: hcompile's lowered pipeline, scheduled by the
plugin from the Halide wheel, estimates from the call's shapes). For each (workload, peer):

* the first call is timed alone and reported as *compile* time (for NumPy and torch eager it is
  just a cold call);
* two more warm-up calls; then ``--repeat`` rounds, each taking one sample of every peer in turn
  (round-robin, so outside load hits all peers alike); a sample times a batch of k calls (k
  chosen so a sample lasts >= ~2 ms, so sub-millisecond kernels are not timer noise) and the
  reported time is the median of the per-call means. Each sample starts after 50 ms idle
  (``HCOMPILE_BENCH_SETTLE_S``), so torch's and XLA's spinning worker threads from the previous
  sample have gone quiet, and then 50 ms of untimed calls (``HCOMPILE_BENCH_WARM_S``), which wake
  the peer's own threads and outlast the kernel's work on memory the previous peer freed (NumPy
  and torch eager free hundreds of MB of temporaries per call). With one untimed call instead,
  every multi-threaded peer ran 1.3-2x slower than alone, by an amount that depended on which
  peer ran before it (tinyops: hcompile 7.2 ms against 3.6 alone; with NumPy's huge-page advice
  switched off, 3.6); with 50 ms of calls the samples match the peers timed alone. jax calls ``block_until_ready`` on every
  call; everything else is synchronous on the CPU.
* the result is compared with NumPy's (``np.allclose`` at the workload's float32 tolerance); a
  mismatch is printed loudly, marked in the table, and makes the exit status 1.

The per-call overhead probe (``x + 1`` on a 1-element float32 array) runs first, so one-time
startup costs (torch inductor import, XLA client creation, Halide JIT init) land in its
"first call" column and not in the first workload's compile time.

Threads: nothing here sets a thread variable. On this machine each peer uses its own default:
NumPy's BLAS its own pool (matmul only; elementwise NumPy is single-threaded), torch
``torch.get_num_threads()`` (= cores), XLA's CPU client its Eigen pool (= cores), Halide its
thread pool (``HL_NUM_THREADS``, default = cores). The environment section of the report lists
any of these variables that are set.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import datetime as _dt
import importlib
import importlib.metadata
import os
import platform
import re
import statistics
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from apps import workloads as W

NS = time.perf_counter_ns

# Halide's own CPU autoschedulers, each run by hcompile on exactly the pipeline it lowered.
HALIDE_PEERS = ["Adams2019", "Mullapudi2016", "Li2018"]
# hcompile:max-autotune measures candidate schedules on each workload's first call (into a fresh
# tuning database, so the default peer, prepared before it, never sees its records); not run
# unless named, as tuning adds seconds to minutes per workload.
PEERS = ["numpy", "hcompile", "hcompile:max-autotune", "torch", "torch.compile", "jax.jit"] + \
    [f"halide:{a}" for a in HALIDE_PEERS]
DEFAULT_PEERS = [p for p in PEERS if p != "hcompile:max-autotune"]
PEER_TITLES = {
    "numpy": "NumPy",
    "hcompile": "hcompile",
    "hcompile:max-autotune": "hc max-autotune",
    "torch": "torch eager",
    "torch.compile": "torch.compile",
    "jax.jit": "jax.jit",
    **{f"halide:{a}": a for a in HALIDE_PEERS},
}
THREAD_ENV = [
    "APPS_BENCH_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE", "HL_NUM_THREADS", "HL_JIT_TARGET", "XLA_FLAGS", "JAX_PLATFORMS",
    "HCOMPILE_LOGS", "HCOMPILE_CACHE_DIR",
]
SAMPLE_TARGET_NS = 2_000_000  # a timed sample lasts at least ~2 ms
OVERHEAD_SAMPLE_TARGET_NS = 20_000_000
# Idle time before each sample, then untimed calls (see the module docstring): torch's OpenMP
# workers and XLA's Eigen pool keep spinning for a while after a call returns, and the kernel keeps
# working on the memory NumPy's and torch eager's temporaries freed; on a 2-core machine whoever
# runs next shares the cores with them.
SETTLE_SECONDS = float(os.environ.get("HCOMPILE_BENCH_SETTLE_S", "0.05"))
WARM_SECONDS = float(os.environ.get("HCOMPILE_BENCH_WARM_S", "0.05"))


# --------------------------------------------------------------------------------------------
# Peers: each turns a workload into (call, sync, to_numpy)
# --------------------------------------------------------------------------------------------


class PeerUnavailable(Exception):
    pass


def _try_import(name):
    try:
        return importlib.import_module(name), None
    except Exception as e:  # noqa: BLE001 - any import failure means "peer absent"
        return None, f"{type(e).__name__}: {e}"


@dataclass
class Prepared:
    call: object  # () -> result
    sync: object  # result -> None
    to_numpy: object  # result -> np.ndarray


class Peers:
    """Lazily imports each peer's library once; ``prepare`` binds a workload to a peer."""

    def __init__(self, cold_caches=True):
        if cold_caches and "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
            # Inductor keeps compiled graphs on disk across processes; a fresh directory makes its
            # first-call time a real compile, like hcompile's (in-memory cache only) and jax's
            # (no persistent cache by default). Run time is unaffected.
            import tempfile

            self._tmp = tempfile.TemporaryDirectory(prefix="bench-inductor-")
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = self._tmp.name
        self.cold_caches = cold_caches
        self.hc, self.hc_err = _try_import("hcompile")
        if self.hc is not None and "HCOMPILE_TUNING_DB" not in os.environ:
            # The default peer is the search's schedule: no records from earlier tuning runs.
            import tempfile

            self._tuning = tempfile.TemporaryDirectory(prefix="bench-tuning-")
            self.hc.config.tuning_db = os.path.join(self._tuning.name, "tuning.sqlite")
        self.torch, self.torch_err = _try_import("torch")
        self.jax, self.jax_err = _try_import("jax")
        if self.jax is not None:
            import jax.numpy  # noqa: F401

        self.hc_fns = {}  # workload name -> compiled hcompile function (for explain)
        self.tuned_fns = {}  # workload name -> its max-autotune compiled function (tuning table)

    def available(self, peer) -> str | None:
        """None if usable, else why not."""
        if (peer.startswith("hcompile") or peer.startswith("halide:")) and self.hc is None:
            return self.hc_err
        if peer in ("torch", "torch.compile") and self.torch is None:
            return self.torch_err
        if peer == "jax.jit" and self.jax is None:
            return self.jax_err
        return None

    def prepare(self, peer, wl: W.Workload, args) -> Prepared:
        why = self.available(peer)
        if why:
            raise PeerUnavailable(why)
        if peer in wl.peers_missing:
            raise PeerUnavailable(f"no {peer} version of {wl.name}")
        nop = lambda r: None  # noqa: E731
        if peer == "numpy":
            fn = wl.fn
            return Prepared(lambda: fn(*args), nop, np.asarray)
        if peer == "hcompile":
            fn = self.hc.hcompile(wl.fn)
            self.hc_fns[wl.name] = fn
            return Prepared(lambda: fn(*args), nop, np.asarray)
        if peer == "hcompile:max-autotune":
            fn = self.hc.hcompile(wl.fn, mode="max-autotune")
            self.tuned_fns[wl.name] = fn
            return Prepared(lambda: fn(*args), nop, np.asarray)
        if peer.startswith("halide:"):
            fn = self.hc.hcompile(wl.fn, autoscheduler=peer.split(":", 1)[1])
            return Prepared(lambda: fn(*args), nop, np.asarray)
        if peer in ("torch", "torch.compile"):
            torch = self.torch
            targs = tuple(torch.from_numpy(a) for a in args)
            try:
                fn = W.torch_fn(wl.name)
            except KeyError:
                raise PeerUnavailable(f"no torch version of {wl.name}") from None
            if peer == "torch.compile":
                fn = torch.compile(fn)
            return Prepared(lambda: fn(*targs), nop, lambda r: r.detach().numpy())
        if peer == "jax.jit":
            jax = self.jax
            jargs = tuple(jax.device_put(a) for a in args)
            for a in jargs:
                a.block_until_ready()
            fn = jax.jit(W.jax_fn(wl.name))
            return Prepared(lambda: fn(*jargs), lambda r: r.block_until_ready(), np.asarray)
        raise ValueError(peer)


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------


@dataclass
class Result:
    peer: str
    first_ns: int | None = None  # first call (compile for compiled peers)
    median_ns: float | None = None
    batch: int = 1
    ok: bool | None = None
    max_err: float | None = None
    error: str | None = None  # peer failed or unavailable
    samples_ns: list = field(default_factory=list)


def _first_and_batch(prep: Prepared, target_ns: int) -> tuple[int, int, object]:
    """Time the first (compile) call alone, warm up twice, and size the sample batch."""
    call, sync = prep.call, prep.sync
    t0 = NS()
    out = call()
    sync(out)
    first = NS() - t0
    out = call()
    sync(out)
    t0 = NS()
    out = call()
    sync(out)
    one = max(NS() - t0, 1)
    return first, max(1, min(100_000, target_ns // one)), out


def _sample(prep: Prepared, k: int) -> tuple[float, object]:
    call, sync = prep.call, prep.sync
    time.sleep(SETTLE_SECONDS)
    # Untimed calls for WARM_SECONDS first: they wake this peer's worker threads, warm its caches,
    # and outlast what the previous peer left running.
    end = NS() + int(WARM_SECONDS * 1e9)
    while True:
        sync(call())
        if NS() >= end:
            break
    t0 = NS()
    for _ in range(k):
        out = call()
        sync(out)
    return (NS() - t0) / k, out


def _fail(res: Result, peer: str, wl: W.Workload, e: Exception):
    res.error = f"{type(e).__name__}: {e}"
    print(f"  !! {peer} failed on {wl.name}:\n" + traceback.format_exc(limit=4), file=sys.stderr)


def run_workload(peers: Peers, peer_list: list[str], wl: W.Workload, args, want, repeat,
                 target_ns) -> dict[str, Result]:
    """Measure every peer on one workload.

    Compile/warm-up runs peer by peer; the timed samples are then taken round-robin (one sample
    of each peer per round, starting peer rotating), so every peer is measured over the same
    stretch of wall time: on a shared machine a burst of outside load hits all peers alike
    instead of whichever peer happened to be running.
    """
    results = {p: Result(p) for p in peer_list}
    live = {}  # peer -> (prep, batch, last output)
    for p in peer_list:
        res = results[p]
        try:
            prep = peers.prepare(p, wl, args)
        except PeerUnavailable as e:
            res.error = f"unavailable ({e})"
            continue
        except Exception as e:  # noqa: BLE001
            res.error = f"setup failed: {type(e).__name__}: {e}"
            continue
        try:
            res.first_ns, res.batch, out = _first_and_batch(prep, target_ns)
        except Exception as e:  # noqa: BLE001
            _fail(res, p, wl, e)
            continue
        live[p] = [prep, out]
    order = list(live)
    for r in range(repeat):
        for i in range(len(order)):
            p = order[(r + i) % len(order)]
            if p not in live:
                continue
            try:
                t, live[p][1] = _sample(live[p][0], results[p].batch)
                results[p].samples_ns.append(t)
            except Exception as e:  # noqa: BLE001
                _fail(results[p], p, wl, e)
                del live[p]
    for p, (prep, out) in live.items():
        res = results[p]
        res.median_ns = statistics.median(res.samples_ns) if res.samples_ns else None
        if want is None or p == "numpy":
            continue
        try:
            res.ok, res.max_err = wl.check(prep.to_numpy(out), want)
        except Exception as e:  # noqa: BLE001
            res.ok, res.error = False, f"result not comparable: {e}"
        if not res.ok:
            print(
                f"\n{'!' * 78}\n!! MISMATCH: {p} on {wl.name}: max |err| = {res.max_err} "
                f"(rtol={wl.rtol}, atol={wl.atol})\n{'!' * 78}\n",
                file=sys.stderr,
            )
    return results


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------


def _ms(ns):
    return "—" if ns is None else (f"{ns / 1e6:.3f}" if ns < 1e9 else f"{ns / 1e6:.0f}")


def _us(ns):
    return "—" if ns is None else f"{ns / 1e3:.2f}"


def _s(ns):
    return "—" if ns is None else f"{ns / 1e9:.2f}"


def _x(base, t):
    if base is None or t is None:
        return ""
    return f"{base / t:.2f}×"


def _cell_time(r: Result, base_ns, fmt):
    if r.error:
        short = r.error.split("(")[0].strip() if r.error.startswith("unavailable") else "error"
        return short
    txt = fmt(r.median_ns)
    sp = _x(base_ns, r.median_ns)
    if sp:
        txt += f" ({sp})"
    if r.ok is False:
        txt += " **MISMATCH**"
    return txt


def workload_table(results: dict, peers: list[str]) -> str:
    head = ["workload"] + [f"{PEER_TITLES[p]} ms" + ("" if p == "numpy" else " (vs NumPy)") for p in peers]
    if "hcompile" in peers:
        head += ["hcompile vs best peer"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, row in results.items():
        base = row["numpy"].median_ns if "numpy" in row and not row["numpy"].error else None
        cells = [name] + [_cell_time(row[p], None if p == "numpy" else base, _ms) for p in peers]
        if "hcompile" in peers:
            hc = row["hcompile"]
            others = [
                (row[p].median_ns, p) for p in peers
                if p != "hcompile" and not row[p].error and row[p].ok is not False
            ]
            if hc.error or hc.median_ns is None or not others:
                cells.append("—")
            else:
                best_ns, best_p = min(others)
                cells.append(f"{best_ns / hc.median_ns:.2f}× (best: {PEER_TITLES[best_p]})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _best_of(row, group):
    times = [row[p].median_ns for p in group
             if p in row and not row[p].error and row[p].ok is not False and row[p].median_ns]
    return min(times) if times else None


def summary_table(results: dict, peers: list[str]) -> str | None:
    """hcompile (and its max-autotune mode, when run) against each group of peers: geometric
    mean and worst ratio over the workloads where both ran (ratio > 1: hcompile faster), the
    issues' bars in one place."""
    groups = [("best Halide autoscheduler", [p for p in peers if p.startswith("halide:")]),
              ("best of torch eager / torch.compile", [p for p in peers if p in ("torch", "torch.compile")]),
              ("jax.jit", [p for p in peers if p == "jax.jit"]),
              ("NumPy", ["numpy"])]
    lines = ["| hcompile against | workloads | geometric mean | worst (workload) |", "|---|---|---|---|"]
    for subject in [p for p in ("hcompile", "hcompile:max-autotune") if p in peers]:
        for title, group in groups + ([("hcompile default", ["hcompile"])] if subject != "hcompile" else []):
            ratios = []
            for name, row in results.items():
                hc, best = row[subject], _best_of(row, group)
                if best and not hc.error and hc.ok is not False and hc.median_ns:
                    ratios.append((best / hc.median_ns, name))
            if not group or not ratios:
                continue
            geo = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
            worst = min(ratios)
            who = "" if subject == "hcompile" else f"({PEER_TITLES[subject]}) "
            lines.append(f"| {who}{title} | {len(ratios)} | {geo:.2f}× | {worst[0]:.2f}× ({worst[1]}) |")
    return "\n".join(lines) if len(lines) > 2 else None


def tuning_table(peers) -> str | None:
    """Per workload tuned: schedules measured, tuning seconds, and the tuner's own timings."""
    rows = []
    for name, fn in peers.tuned_fns.items():
        t = fn.compile_records[0].get("tuning") if fn.compile_records else None
        if isinstance(t, dict):
            rows.append(f"| {name} | {t['trials']} | {t['tuning_seconds']:.1f} | {t['default_seconds'] * 1e3:.3f} | "
                        f"{t['best_seconds'] * 1e3:.3f} | {t['default_seconds'] / t['best_seconds']:.2f}× |")
        else:
            rows.append(f"| {name} | — | — | — | — | {t or 'no kernel of its own tuned (Python, or graph breaks)'} |")
    if not rows:
        return None
    return "\n".join(["| workload | schedules measured | tuning s | search's ms | tuned ms | gain |",
                      "|---|---|---|---|---|---|", *rows])


def compile_table(results: dict, peers: list[str], hc_explain: dict) -> str:
    cp = [p for p in peers if p in ("hcompile", "torch.compile", "jax.jit") or p.startswith("halide:")]
    head = ["workload"] + [f"{PEER_TITLES[p]} first call s" for p in cp]
    if "hcompile" in peers:
        head += ["hcompile graphs / breaks", "max abs err vs NumPy (hc)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, row in results.items():
        cells = [name] + [("error" if row[p].error else _s(row[p].first_ns)) for p in cp]
        if "hcompile" in peers:
            cells.append(hc_explain.get(name, "—"))
            e = row["hcompile"].max_err
            cells.append("—" if e is None else f"{e:.2e}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def overhead_table(row: dict, peers: list[str]) -> str:
    head = ["peer", "per call µs", "first call s", "correct"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---|---|"]
    for p in peers:
        r = row[p]
        if r.error:
            lines.append(f"| {PEER_TITLES[p]} | {r.error.split(':')[0]} | — | — |")
        else:
            ok = "reference" if p == "numpy" else {True: "yes", False: "**MISMATCH**", None: "—"}[r.ok]
            lines.append(f"| {PEER_TITLES[p]} | {_us(r.median_ns)} | {_s(r.first_ns)} | {ok} |")
    return "\n".join(lines)


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _git_commit():
    """The checkout's commit (+ '-dirty' with local changes): hcompile changes daily."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return (rev + ("-dirty" if dirty else "")) if rev else None


def machine_info(peers: Peers) -> dict:
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    versions = {"python": platform.python_version(), "numpy": np.__version__}
    for dist in ["hcompile", "halide", "torch", "jax", "jaxlib"]:
        v = _version(dist)
        if v:
            versions[dist] = v
    if peers.hc is not None and "hcompile" not in versions:
        versions["hcompile"] = getattr(peers.hc, "__version__", "in tree")
    commit = _git_commit()
    if commit and "hcompile" in versions:
        versions["hcompile"] += f" (tree {commit})"
    blas = "?"
    try:
        cfg = np.show_config(mode="dicts")
        b = cfg["Build Dependencies"]["blas"]
        blas = f"{b.get('name')} {b.get('version', '')}".strip()
    except Exception:  # noqa: BLE001
        pass
    threads = {"numpy BLAS": blas}
    if peers.torch is not None:
        threads["torch threads"] = peers.torch.get_num_threads()
    if peers.jax is not None:
        try:
            threads["jax devices"] = ", ".join(str(d) for d in peers.jax.devices())
        except Exception:  # noqa: BLE001
            pass
    env = {k: os.environ[k] for k in THREAD_ENV if k in os.environ}
    return {
        "cpu": cpu,
        "cores": f"{os.cpu_count()} logical, {usable} usable",
        "platform": platform.platform(),
        "versions": versions,
        "threads": threads,
        "env": env,
        "load": _loadavg(),
    }


def _loadavg():
    try:
        return "{:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:
        return "?"


def report(info, command, tables: list[tuple[str, str]], notes: list[str]) -> str:
    date = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    out = [
        f"## {date} — {info['cpu']} ({info['cores']})",
        "",
        f"- command: `{command}`",
        "- versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()),
        "- peers' threads: " + ", ".join(f"{k}: {v}" for k, v in info["threads"].items())
        + "; Halide: its own pool (HL_NUM_THREADS or cores)",
        "- thread/env variables set: "
        + (", ".join(f"{k}={v}" for k, v in info["env"].items()) or "none"),
        f"- platform: {info['platform']}",
        f"- load average (1/5/15 min) at start: {info['load']}, at end: {_loadavg()}"
        " (other processes on the machine skew every peer's numbers)",
    ]
    out.append("- compile caches: " + ("cold (torch.compile got a fresh TORCHINDUCTOR_CACHE_DIR; hcompile "
               "and jax.jit keep no on-disk cache here)" if info.get("cold", True) else
               "warm (torch.compile may reuse its on-disk inductor cache)"))
    out += [f"- {n}" for n in notes]
    for title, table in tables:
        out += ["", f"**{title}**", "", table]
    return "\n".join(out) + "\n"


RESULTS_HEADER = """# hcompile benchmark results

Written by `python -m apps.bench --write apps/RESULTS.md`; every number below was measured by
that command on the machine its section names. A section is replaced when the same command runs
again on the same machine on the same day, and appended otherwise. Times are medians of per-call
means (see apps/bench.py); "(1.23×)" is the speedup over NumPy; "first call" is compile time for
compiled peers (for NumPy and torch eager just a cold call).
"""


def heading(title: str) -> str:
    """A results section's first line: the title, today's date and the machine."""
    return f"## {title} ({_dt.date.today()}, {platform.processor() or platform.machine()})\n\n"


def publish(section: str, path, key: str):
    """Print a results section and, given a path, add or replace it there (write_results)."""
    print(section)
    if path:
        write_results(Path(path), key, section)


def write_results(path: Path, key: str, section: str):
    begin, end = f"<!-- bench:{key} -->", f"<!-- /bench:{key} -->"
    block = f"{begin}\n{section}{end}\n"
    text = path.read_text() if path.exists() else RESULTS_HEADER
    pat = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.S)
    if pat.search(text):
        text = pat.sub(lambda m: block, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.write_text(text)


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------


def _reexec_with_threads(n: int, argv):
    """Thread pools read their size when the library loads (NumPy's OpenBLAS is loaded already),
    so pinning every peer to n threads means starting again with the variables set."""
    env = dict(os.environ)
    env.update({
        "APPS_BENCH_THREADS": str(n),
        "OMP_NUM_THREADS": str(n),
        "OPENBLAS_NUM_THREADS": str(n),
        "MKL_NUM_THREADS": str(n),
        "HL_NUM_THREADS": str(n),
    })
    if n == 1:
        xla = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + xla).strip()
    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "apps.bench", *args], env)


def _suites() -> dict[str, list[str]]:
    from .pipelines import APPS, SHARED_WORKLOADS

    apps = list(APPS) + list(SHARED_WORKLOADS)
    return {"workloads": list(W.WORKLOADS), "apps": apps,
            "all": list(W.WORKLOADS) + [n for n in APPS if n not in W.WORKLOADS]}


def plot_speedups(results: dict, peers: list[str], path: str, title: str):
    """A grouped bar chart (log scale) of each peer's speedup over NumPy, one group per workload."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [p for p in peers if p != "numpy"]
    names = list(results)
    fig, ax = plt.subplots(figsize=(max(8.0, 0.8 * len(names)), 5))
    width = 0.8 / max(1, len(shown))
    for i, p in enumerate(shown):
        xs, ys = [], []
        for j, n in enumerate(names):
            base, r = results[n]["numpy"].median_ns, results[n][p]
            if base and r.median_ns and r.ok is not False:
                xs.append(j + (i - (len(shown) - 1) / 2) * width)
                ys.append(base / r.median_ns)
        ax.bar(xs, ys, width, label=PEER_TITLES[p])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)), names, rotation=35, ha="right")
    ax.set_ylabel("speedup over NumPy (log scale)")
    ax.set_title(title)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m apps.bench", description=__doc__.split("\n")[0])
    suites = _suites()
    ap.add_argument("--suite", choices=list(suites), default="workloads",
                    help="which set to run: the seed workloads (default), the apps suite "
                         "(apps/pipelines.py plus the ML blocks of workloads.py), or all")
    ap.add_argument("--workloads", help="comma-separated subset (overrides --suite) of: " + ", ".join(suites["all"]))
    ap.add_argument("--peers", default=",".join(DEFAULT_PEERS), help="comma-separated subset of: " + ", ".join(PEERS))
    ap.add_argument("--repeat", type=int, default=20, help="timed samples per (workload, peer)")
    ap.add_argument("--size", choices=["bench", "small"], default="bench")
    ap.add_argument("--dtype", choices=["float32", "float16", "float64"], default="float32",
                    help="the workloads' float arrays cast to this dtype (float16 checked to 2e-2)")
    ap.add_argument("--no-overhead", action="store_true", help="skip the per-call overhead probe")
    ap.add_argument("--warm-caches", action="store_true",
                    help="let torch.compile reuse its on-disk inductor cache (first call is then not a cold compile)")
    ap.add_argument("--threads", type=int, metavar="N",
                    help="opt-in: pin EVERY peer to N threads (OMP/OPENBLAS/HL_NUM_THREADS, XLA flags, "
                         "torch.set_num_threads); the process re-executes itself with those variables. "
                         "Default: each peer's own default")
    ap.add_argument("--write", metavar="PATH", help="append/update a section of this markdown file")
    ap.add_argument("--plot", metavar="PNG", help="bar chart of each peer's speedup over NumPy (needs matplotlib)")
    a = ap.parse_args(argv)

    if a.plot:
        try:
            import matplotlib  # noqa: F401  (before the run, not after it)
        except ImportError:
            ap.error("--plot needs matplotlib (pip install matplotlib, or the bench extra)")
    if a.threads is not None and os.environ.get("APPS_BENCH_THREADS") != str(a.threads):
        _reexec_with_threads(a.threads, argv)

    names = [n for n in a.workloads.split(",") if n] if a.workloads else suites[a.suite]
    bad = [n for n in names if n not in suites["all"]]
    peer_list = [p for p in a.peers.split(",") if p]
    bad += [p for p in peer_list if p not in PEERS]
    if bad:
        ap.error(f"unknown workload/peer: {', '.join(bad)}")
    if "numpy" not in peer_list:
        peer_list.insert(0, "numpy")  # the reference every result is checked against
    command = "python -m apps.bench " + " ".join(argv if argv is not None else sys.argv[1:])

    peers = Peers(cold_caches=not a.warm_caches)
    if peers.torch is not None:
        peers.torch.set_grad_enabled(False)
        if a.threads is not None:
            peers.torch.set_num_threads(a.threads)
    info = machine_info(peers)
    info["cold"] = peers.cold_caches
    print(f"machine: {info['cpu']} ({info['cores']}); versions: {info['versions']}")
    print(f"threads: {info['threads']}; env: {info['env'] or 'no thread variables set'}")
    for p in peer_list:
        why = peers.available(p)
        if why:
            print(f"peer {PEER_TITLES[p]}: not available ({why})")

    any_mismatch = False
    tables = []
    notes = []

    if not a.no_overhead:
        print("\n== per-call overhead (x + 1, 1-element float32) ==")
        wl = W.OVERHEAD
        args = wl.make_inputs()
        want = wl.fn(*args)
        row = run_workload(peers, peer_list, wl, args, want, max(a.repeat, 5), OVERHEAD_SAMPLE_TARGET_NS)
        for p in peer_list:
            any_mismatch |= row[p].ok is False
            r = row[p]
            print(f"  {PEER_TITLES[p]:14s} " + (r.error or f"{_us(r.median_ns)} µs/call (first call {_s(r.first_ns)} s)"))
        tables.append(("Per-call overhead, `x + 1` on a 1-element float32 array (µs; first call "
                       "includes each library's one-time startup)", overhead_table(row, peer_list)))

    results = {}
    for name in names:
        wl = W.get(name)
        args = wl.make_inputs(a.size)
        if a.dtype != "float32":
            args = tuple(x.astype(a.dtype) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x for x in args)
            if a.dtype == "float16":     # NumPy rounds every float16 step; peers may round once
                wl = dataclasses.replace(wl, rtol=2e-2, atol=2e-2)
        want = wl.fn(*args)
        print(f"\n== {name}: {wl.description} ({a.dtype}) ==")
        row = run_workload(peers, peer_list, wl, args, want, a.repeat, SAMPLE_TARGET_NS)
        for p in peer_list:
            r = row[p]
            any_mismatch |= r.ok is False
            if r.error:
                print(f"  {PEER_TITLES[p]:14s} {r.error}")
            else:
                flag = "" if r.ok is not False else f"   <<< MISMATCH max|err|={r.max_err:.3g}"
                print(f"  {PEER_TITLES[p]:14s} {_ms(r.median_ns):>9s} ms  first call {_s(r.first_ns):>6s} s"
                      f"  (batch {r.batch}){flag}")
        results[name] = row

    hc_explain = {}
    if "hcompile" in peer_list and peers.hc is not None:
        for name in names:
            fn = peers.hc_fns.get(name)
            if fn is None:
                continue
            try:
                ex = peers.hc.explain(W.get(name).fn, *W.get(name).make_inputs("small"))
                hc_explain[name] = f"{ex.graph_count} / {ex.graph_break_count}"
            except Exception as e:  # noqa: BLE001
                hc_explain[name] = f"explain failed: {type(e).__name__}"
            try:
                ci = fn.cache_info()
                hc_explain[name] += f" (cache: {ci.entries} entries, {ci.recompiles} recompiles)"
            except Exception:  # noqa: BLE001
                pass

    tables.insert(0, (f"Median ms per call (speedup vs NumPy), size={a.size}, repeat={a.repeat}"
                      + (f", {a.dtype} arrays" if a.dtype != "float32" else ""),
                      workload_table(results, peer_list)))
    tables.insert(1, ("First call (compile) seconds, hcompile capture summary",
                      compile_table(results, peer_list, hc_explain)))
    tuned = tuning_table(peers)
    if tuned:
        tables.insert(1, (f"max-autotune (budget: {peers.hc.config.tuning_trials} schedules, "
                          f"{peers.hc.config.tuning_seconds:g} s per pipeline; the tuner's own timings)", tuned))
    summary = summary_table(results, peer_list)
    if summary:
        tables.insert(1, ("hcompile against its peers (ratio of times; > 1: hcompile is faster)", summary))
    load1 = float(info["load"].split()[0]) if info["load"] != "?" else 0.0
    if load1 > 0.5 * (os.cpu_count() or 1):
        notes.append(f"**WARNING: the machine was busy (1-min load {load1:.2f} on {os.cpu_count()} cores).** "
                     "A multi-threaded peer (hcompile/Halide, torch, OpenBLAS, XLA) then waits whole "
                     "scheduler ticks (~4 ms) for a descheduled worker at each parallel region; "
                     "single-threaded NumPy barely notices. Treat these numbers as noisy; prefer an "
                     "idle machine, or compare all peers at `--threads 1`.")
    if any_mismatch:
        notes.append("**A RESULT DID NOT MATCH NUMPY: see cells marked MISMATCH.**")
    errs = [f"{PEER_TITLES[p]} on {n}: {row[p].error}" for n, row in results.items()
            for p in peer_list if row[p].error and not row[p].error.startswith("unavailable")]
    notes += [f"error: {e}" for e in errs]

    text = report(info, command, tables, notes)
    print("\n" + text)
    if a.plot:
        plot_speedups(results, peer_list, a.plot, f"{a.suite if not a.workloads else 'selected'} "
                      f"({info['cpu']}, {info['cores']}), size={a.size}")
        print(f"wrote {a.plot}")
    if a.write:
        key = "|".join([_dt.date.today().isoformat(), info["cpu"], info["cores"], a.size, a.dtype,
                        f"threads={a.threads or 'default'}",
                        ",".join(names), ",".join(peer_list)])
        write_results(Path(a.write), re.sub(r"[^A-Za-z0-9|,._-]+", "_", key), text)
        print(f"wrote {a.write}")
    if any_mismatch:
        print("MISMATCH: at least one peer disagreed with NumPy (see above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
