"""Long fuzz runs: worker processes, crash and hang detection, deduplicated repros, summary.

The parent never imports hcompile. It hands program indices to `jobs` worker processes (spawned,
one compile at a time each) over pipes; a worker reports "start i" before and "done i" after each
program, so a worker that dies (a crash) or stays on one program past `timeout` seconds (a hang:
Halide compiles cannot be interrupted) is charged to that program, killed and replaced. Each
mismatch is shrunk in the worker that found it (crashes and hangs: by re-running candidates in
fresh subprocesses) and grouped by a signature (kind, the shrunk program's ops, the dtype of the
result); the first repro of each group is written to `out`.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from multiprocessing.connection import wait

from . import gen, runner

RESET_EVERY = 40  # programs between hc.reset() in a worker (frees compiled kernels)
RECYCLE_EVERY = 1000  # programs before a worker is replaced (bounds any leak)
SHRINKS_PER_KEY = 8  # a frequent mismatch (same kind and layouts) is shrunk this often per worker


@dataclass
class Config:
    seed: int = 0
    programs: int = 1000
    start: int = 0
    jobs: int = 1
    out: str = "fuzz-out"
    timeout: float = 120.0
    shrink_budget: int = 30
    max_ops: int = 8
    sets: tuple = runner.SETS
    oracle_check: str = ""  # "identity" | "upcast": run against a stand-in (fake.py)


@dataclass
class Summary:
    programs: int = 0
    ok: int = 0
    mismatches: int = 0
    unsupported: int = 0
    error_programs: int = 0
    calls: int = 0
    seconds: float = 0.0
    groups: dict = field(default_factory=dict)  # signature -> {count, repro, first, message}
    failures: dict = field(default_factory=dict)  # program index -> (signature, message)
    unsupported_reasons: Counter = field(default_factory=Counter)
    skipped_sets: Counter = field(default_factory=Counter)

    def line(self) -> str:
        per = self.seconds / max(self.programs, 1)
        return (f"fuzz: {self.programs} programs, {self.mismatches} mismatches in "
                f"{len(self.groups)} classes, {self.unsupported} skipped (unsupported), "
                f"{self.error_programs} error programs, {self.calls} compiled calls checked, "
                f"{self.seconds:.0f} s ({per:.3f} s/program)")


def signature(prog, outcome) -> str:
    """A mismatch class: its kind and the (shrunk) program's ops, or, where an odd input layout
    is needed to fail (the shrinker tries C order), the kind and the layout."""
    layouts = sorted({lay for _, lay in prog.raw_inputs(max(outcome.input_set, 0)) if lay != "C"})
    if layouts:
        return f"{outcome.kind} | layout {' '.join(layouts)}"
    return f"{outcome.kind} | {' '.join(prog.op_kinds())}"


def _coarse_key(prog, outcome) -> str:
    """Before shrinking: kind and the odd layouts of the failing input set."""
    return f"{outcome.kind} | " + " ".join(
        sorted({lay for _, lay in prog.raw_inputs(outcome.input_set) if lay != "C"}))


# ------------------------------------------------------------------------------------------
# Worker side


def _worker(conn, cfg: Config):
    if cfg.oracle_check:
        from . import fake

        hc = fake.module(cfg.oracle_check)
    else:
        import hcompile as hc

        hc.set_logs(graph_breaks=False, recompiles=False)
    import warnings

    warnings.simplefilter("ignore")
    done = 0
    shrunk = Counter()  # coarse key -> mismatches shrunk by this worker
    conn.send(("ready",))
    while True:
        msg = conn.recv()
        if msg[0] == "stop":
            return
        i = msg[1]
        conn.send(("start", i, time.time()))
        prog = gen.program(cfg.seed, i, cfg.max_ops)
        try:
            o = runner.run(prog, hc, cfg.sets)
        except Exception as e:  # noqa: BLE001  (a harness bug must not stop the run)
            o = runner.Outcome("mismatch", "harness", f"{type(e).__name__}: {e}", 0)
        payload = {"outcome": asdict(o), "expect_error": prog.expect_error}
        if o.status == "mismatch" and o.kind != "harness" and cfg.shrink_budget and \
                shrunk[_coarse_key(prog, o)] < SHRINKS_PER_KEY:
            shrunk[_coarse_key(prog, o)] += 1
            small, so = runner.shrink(prog, o, runner.in_process_fails(hc), cfg.shrink_budget)
            payload["shrunk"] = pickle.dumps(small)
            payload["outcome"] = asdict(so)
        done += 1
        if done % RESET_EVERY == 0:
            hc.reset()
        payload["last"] = done >= RECYCLE_EVERY  # then this worker exits and is replaced
        conn.send(("done", i, payload))
        if payload["last"]:
            return


def replay_main(path: str) -> int:
    """`python -m tests.fuzz --replay FILE`: run one pickled program, print its outcome as JSON
    (the crash/hang shrinker runs candidates this way, each in a fresh process)."""
    import hcompile as hc

    with open(path, "rb") as fh:
        prog, sets = pickle.load(fh)
    o = runner.run(prog, hc, sets)
    print("OUTCOME " + json.dumps(asdict(o)))
    return 0


def subprocess_fails(timeout: float):
    def still_fails(cand, which):
        with tempfile.NamedTemporaryFile("wb", suffix=".pkl", delete=False) as fh:
            pickle.dump((cand, (which,)), fh)
        try:
            r = subprocess.run([sys.executable, "-m", "tests.fuzz", "--replay", fh.name],
                               capture_output=True, text=True, timeout=timeout,
                               cwd=os.path.dirname(os.path.dirname(os.path.dirname(
                                   os.path.abspath(__file__)))))
        except subprocess.TimeoutExpired:
            return runner.Outcome("mismatch", "hang", f"no result in {timeout:.0f} s", which)
        finally:
            os.unlink(fh.name)
        if r.returncode < 0 or r.returncode > 1:
            return runner.Outcome("mismatch", "crash", f"exit status {r.returncode}: "
                                  f"{r.stderr.strip().splitlines()[-1:] }", which)
        return None
    return still_fails


# ------------------------------------------------------------------------------------------
# Parent side


class _Slot:
    def __init__(self, ctx, cfg):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, cfg), daemon=True)
        self.proc.start()
        child.close()
        self.current = None  # (index, started at)
        self.ready = False

    def kill(self):
        self.proc.kill()
        self.proc.join(5)


def run(cfg: Config, log=print) -> Summary:
    ctx = mp.get_context("spawn")
    summary = Summary()
    todo = list(range(cfg.start, cfg.start + cfg.programs))[::-1]
    slots = [_Slot(ctx, cfg) for _ in range(max(1, min(cfg.jobs, cfg.programs)))]
    t0 = last_report = time.time()
    os.makedirs(cfg.out, exist_ok=True)
    try:
        while slots:
            conns = {s.conn: s for s in slots}
            sentinels = {s.proc.sentinel: s for s in slots}
            for r in wait(list(conns) + list(sentinels), timeout=1.0):
                slot = conns.get(r) or sentinels.get(r)
                if r in conns:
                    try:
                        msg = r.recv()
                    except (EOFError, OSError):
                        continue
                    _handle(msg, slot, cfg, summary, log, todo)
            for slot in list(slots):
                dead = not slot.proc.is_alive()
                hung = slot.current and time.time() - slot.current[1] > cfg.timeout
                if dead or hung or (slot.ready and not todo and not slot.current):
                    if slot.current:
                        kind = "hang" if hung else "crash"
                        detail = (f"no result after {cfg.timeout:.0f} s" if hung else
                                  f"worker exit status {slot.proc.exitcode}")
                        _record_failure(slot.current[0], kind, detail, cfg, summary, log)
                    if slot.ready and not todo and not slot.current:
                        slot.conn.send(("stop",))
                    slot.kill()
                    slots.remove(slot)
                    if todo and (dead or hung):
                        slots.append(_Slot(ctx, cfg))

            if time.time() - last_report > 30:
                last_report = time.time()
                summary.seconds = time.time() - t0
                log(f"[fuzz] {summary.line()}", flush=True)
    finally:
        for s in slots:
            s.kill()
    summary.seconds = time.time() - t0
    _write_summary(cfg, summary)
    return summary


def _handle(msg, slot, cfg, summary, log, todo):
    if msg[0] == "ready":
        slot.ready = True
    elif msg[0] == "start":
        slot.current = (msg[1], time.time())
        return
    elif msg[0] == "done":
        slot.current = None
        _record(msg[1], msg[2], cfg, summary, log)
        if msg[2]["last"]:
            slot.ready = False  # the worker exits; the sentinel check replaces it
            return
    if slot.ready and todo and slot.proc.is_alive():
        i = todo.pop()
        slot.current = (i, time.time())
        slot.conn.send(("run", i))


def _record(i, payload, cfg, summary, log):
    o = runner.Outcome(**payload["outcome"])
    summary.programs += 1
    summary.calls += o.calls
    for note in o.notes:
        summary.skipped_sets[note.split(": ", 1)[1][:100]] += 1
    if o.status == "unsupported":
        summary.unsupported += 1
        summary.unsupported_reasons[o.message[:100]] += 1
        return
    if payload["expect_error"]:
        summary.error_programs += 1
    if o.status == "ok":
        summary.ok += 1
        return
    if "shrunk" in payload:
        _add_group(i, pickle.loads(payload["shrunk"]), o, cfg, summary, log)
    else:  # past the shrink cap: grouped by kind and layouts only
        prog = gen.program(cfg.seed, i, cfg.max_ops)
        _add_group(i, prog, o, cfg, summary, log, f"(unshrunk) {_coarse_key(prog, o)}")


def _record_failure(i, kind, detail, cfg, summary, log):
    summary.programs += 1
    prog = gen.program(cfg.seed, i, cfg.max_ops)
    o = runner.Outcome("mismatch", kind, detail, 0)
    if cfg.shrink_budget:
        # which input set: the crash may come from any; try them one by one in subprocesses
        fails = subprocess_fails(min(cfg.timeout, 120))
        for which in cfg.sets:
            so = fails(prog, which)
            if so is not None:
                o.input_set = which
                prog, o = runner.shrink(prog, so, fails, max(5, cfg.shrink_budget // 3))
                break
    _add_group(i, prog, o, cfg, summary, log)


def _add_group(i, prog, o, cfg, summary, log, sig=None):
    summary.mismatches += 1
    sig = sig or signature(prog, o)
    summary.failures[i] = (sig, o.message)
    g = summary.groups.get(sig)
    if g is None:
        name = f"{o.kind}-{len(summary.groups) + 1:03d}"
        header = (f"hcompile fuzz repro: python -m tests.fuzz --seed {cfg.seed} --start {i} "
                  f"--programs 1 (input set {o.input_set})\nclass: {sig}")
        path = runner.write_repro(cfg.out, name, prog, o, header)
        summary.groups[sig] = {"count": 1, "repro": path, "first": i, "message": o.message}
        log(f"[fuzz] new mismatch class {name} (program {i}): {sig}\n    {o.message[:300]}",
            flush=True)
    else:
        g["count"] += 1


def _write_summary(cfg, summary):
    data = {"config": asdict(cfg), "line": summary.line(), "groups": summary.groups,
            "failures": summary.failures,
            "unsupported_reasons": dict(summary.unsupported_reasons.most_common(40)),
            "skipped_sets": dict(summary.skipped_sets.most_common(20))}
    with open(os.path.join(cfg.out, "summary.json"), "w") as fh:
        json.dump(data, fh, indent=1, default=str)
