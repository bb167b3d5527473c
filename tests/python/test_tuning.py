"""max-autotune, the SQLite tuning database and `hcompile tune` / `hcompile db`
(frontend/hcompile/tuning/, tune_cli.py): tuned results are NumPy's, every measurement is
recorded, records are reused in the stated precedence and only by the same versions and
machine, bad rows are skipped, two writers lose nothing, a wrong candidate never wins."""

import math
import multiprocessing
import os
import sqlite3
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import hcompile as hc
from hcompile import tuning
from hcompile.tuning import autotune, workload


@pytest.fixture
def db_path(tmp_path, monkeypatch):
    path = str(tmp_path / "tuning.sqlite")
    monkeypatch.setattr(hc.config, "tuning_db", path)
    monkeypatch.setattr(hc.config, "tuning_trials", 6)
    return path


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def fresh(fn, name):
    """The same code as a new function object: a new compiled function, the same workload."""
    return types.FunctionType(fn.__code__.replace(co_name=name), fn.__globals__)


def count_records(path):
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]


def test_max_autotune_records_and_default_mode_reuses(db_path, rng):
    x = rng.standard_normal((67, 300)).astype(np.float32)
    tuned = hc.hcompile(fresh(softmax, "s1"), mode="max-autotune")
    np.testing.assert_allclose(tuned(x), softmax(x), rtol=1e-5, atol=1e-7)
    summary = tuned.compile_records[0]["tuning"]
    assert summary["trials"] >= 2 and summary["best_seconds"] <= summary["default_seconds"]
    assert count_records(db_path) >= summary["trials"]
    plain = hc.hcompile(fresh(softmax, "s2"))
    np.testing.assert_allclose(plain(x), softmax(x), rtol=1e-5, atol=1e-7)
    assert plain.compile_records[0]["schedule_origin"] == "tuning record"
    best = tuning.tuned_record(plain.compile_records[0]["tuning_key"])
    assert [tuple(d) for d in plain.compile_records[0]["report"]["decisions"]] == best[0]
    # Other shapes are another workload: the search decides.
    other = hc.hcompile(fresh(softmax, "s3"))
    other(x[:, :299])
    assert other.compile_records[0]["schedule_origin"] == "search"


def test_a_second_max_autotune_run_reuses_the_record(db_path, rng):
    x = rng.standard_normal((40, 128)).astype(np.float32)
    hc.hcompile(fresh(softmax, "r1"), mode="max-autotune")(x)
    before = count_records(db_path)
    again = hc.hcompile(fresh(softmax, "r2"), mode="max-autotune")
    np.testing.assert_allclose(again(x), softmax(x), rtol=1e-5, atol=1e-7)
    assert again.compile_records[0]["schedule_origin"] == "tuning record"
    assert "tuning" not in again.compile_records[0]
    assert count_records(db_path) == before


def test_explicit_schedule_beats_the_record(db_path, rng):
    x = rng.standard_normal((40, 128)).astype(np.float32)
    hc.hcompile(fresh(softmax, "e1"), mode="max-autotune")(x)
    baseline = hc.hcompile(fresh(softmax, "e2"), autoscheduler="baseline")
    baseline(x)
    listed = [tuple(d) for d in baseline.compile_records[0]["report"]["decisions"]]
    chosen = hc.hcompile(fresh(softmax, "e3"), schedule=listed)
    np.testing.assert_allclose(chosen(x), softmax(x), rtol=1e-5, atol=1e-7)
    assert chosen.compile_records[0]["schedule_origin"] == "explicit"
    assert [tuple(d) for d in chosen.compile_records[0]["report"]["decisions"]] == listed


def test_other_versions_and_machines_never_reuse(db_path, rng, monkeypatch):
    x = rng.standard_normal((40, 128)).astype(np.float32)
    hc.hcompile(fresh(softmax, "v1"), mode="max-autotune")(x)
    monkeypatch.setattr(workload, "versions", lambda: ("0.0.0-other", "21.0.0"))
    bumped = hc.hcompile(fresh(softmax, "v2"))
    bumped(x)
    assert bumped.compile_records[0]["schedule_origin"] == "search"
    monkeypatch.undo()
    monkeypatch.setattr(hc.config, "tuning_db", db_path)
    monkeypatch.setattr(workload, "machine_fingerprint", lambda: "another machine")
    moved = hc.hcompile(fresh(softmax, "v3"))
    moved(x)
    assert moved.compile_records[0]["schedule_origin"] == "search"


def test_unparsable_rows_are_skipped_with_one_warning(db_path, rng):
    x = rng.standard_normal((40, 128)).astype(np.float32)
    first = hc.hcompile(fresh(softmax, "c1"), mode="max-autotune")
    first(x)
    key = first.compile_records[0]["tuning_key"]
    with sqlite3.connect(db_path) as conn:
        for _ in range(2):
            conn.execute("INSERT INTO records (workload, source, decisions, seconds, runs, predicted, ok, error, "
                         "hcompile_version, halide_version, machine, load, created) "
                         "VALUES (?, 'candidate', '[[not json', 1e-9, '[]', NULL, 1, '', ?, ?, ?, NULL, 0)",
                         (key, *workload.versions(), workload.machine_fingerprint()))
    with pytest.warns(RuntimeWarning, match="does not parse") as caught:
        plain = hc.hcompile(fresh(softmax, "c2"))
        np.testing.assert_allclose(plain(x), softmax(x), rtol=1e-5, atol=1e-7)
    assert len([w for w in caught if "does not parse" in str(w.message)]) == 1
    assert plain.compile_records[0]["schedule_origin"] == "tuning record"


def _write_records(path, worker, count):
    with tuning.TuningDatabase(path) as db:
        db.add_workload(f"w{worker}", "f", "graph", "{}", [], "host")
        for i in range(count):
            db.add_record(f"w{worker}", "candidate", [(0, "compute_root", -1, 0, 0)], 1e-3 + i * 1e-6, [1e-3], None,
                          True, "", ("v", "h"), "m")


@pytest.mark.parametrize("writers", [2, 4])
def test_writers_lose_nothing(tmp_path, writers):
    """Processes creating and writing one new database at once (CI once saw the second one's
    switch to WAL refused as locked)."""
    path = str(tmp_path / "shared.sqlite")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_records, args=(path, w, 60)) for w in range(writers)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
        assert p.exitcode == 0
    assert count_records(path) == 60 * writers


class _FakeKernel:
    def __init__(self, seconds, answer):
        self.seconds, self.answer = seconds, answer


def _spin(k):
    """Runs a fake kernel: busy for its seconds, then its answer."""
    end = autotune.time.perf_counter() + k.seconds
    while autotune.time.perf_counter() < end:
        pass
    return k.answer


def _fake_runner(k):
    return lambda: _spin(k)


def test_a_wrong_or_failing_candidate_never_wins():
    """Candidates: one fast but wrong, one failing to compile, one slower; the search's stays."""
    right = np.arange(6.0)
    search = _FakeKernel(2e-4, right)
    kernels = {0: _FakeKernel(1e-5, right + 1), 1: None, 2: _FakeKernel(5e-4, right)}

    def compile_with(schedule):
        k = kernels[schedule[-1][3]]
        if k is None:
            raise RuntimeError("refused")
        return k, {"decisions": schedule, "candidates": [], "predicted_seconds": 0}

    runner = _fake_runner

    report = {"decisions": [(0, "compute_root", -1, 0, 0), (1, "vectorize", 0, 8, 0)], "predicted_seconds": 1e-4,
              "candidates": [([(0, "compute_root", -1, 0, 0), (1, "vectorize", 0, v, 0)], 1e-4) for v in (0, 1, 2)]}
    tuner = autotune.Autotuner("f", compile_with, runner, None, "k", trials=10, seconds=30)
    kernel, _, summary = tuner.run(search, report)
    assert kernel is search and not summary["tuned"] and summary["trials"] == 4


@pytest.mark.parametrize("workers", [1, 3])
def test_workers_compile_lists_at_once_and_time_them_alone(workers):
    """Each batch of `workers` lists compiles concurrently (the compiles overlap); no kernel is
    timed while a compile runs; every list is measured and the fastest right one wins."""
    import threading
    right = np.arange(4.0)
    search = _FakeKernel(3e-4, right)
    speeds = {v: 1e-4 * (v + 1) for v in range(6)}   # v = 0 is the fastest list
    state = {"compiling": 0, "overlapped": False, "timed_while_compiling": False}
    lock = threading.Lock()

    def compile_with(schedule):
        with lock:
            state["compiling"] += 1
            state["overlapped"] |= state["compiling"] > 1
        autotune.time.sleep(0.05)
        with lock:
            state["compiling"] -= 1
        return _FakeKernel(speeds[schedule[-1][3]], right), {"decisions": schedule, "candidates": [],
                                                             "predicted_seconds": 0}

    def runner(k):
        def call():
            state["timed_while_compiling"] |= state["compiling"] > 0
            return _spin(k)
        return call

    report = {"decisions": [(0, "compute_root", -1, 0, 0), (1, "vectorize", 0, 8, 0)], "predicted_seconds": 1e-4,
              "candidates": [([(0, "compute_root", -1, 0, 0), (1, "vectorize", 0, v, 0)], 1e-4) for v in range(6)]}
    tuner = autotune.Autotuner("f", compile_with, runner, None, "k", trials=10, seconds=30, workers=workers)
    _, report_, summary = tuner.run(search, report)
    assert summary["trials"] == 7 and summary["tuned"]
    assert report_["decisions"][-1][3] == 0
    assert state["overlapped"] == (workers > 1)
    assert not state["timed_while_compiling"]


def test_same_answer():
    a = np.array([1.0, np.nan, np.inf, -0.0], np.float32)
    assert autotune.same_answer(a, a.copy())
    assert autotune.same_answer((a, np.int64(3)), (a + 1e-6, np.int64(3)))
    assert not autotune.same_answer(a, a.astype(np.float64))
    assert not autotune.same_answer(np.array([1.0, 2.0, -np.inf]), np.array([1.0, 2.0, np.inf]))
    assert not autotune.same_answer(np.array([1.0, 2.0]), np.array([1.0, 2.1]))
    assert not autotune.same_answer(np.array([1, 2]), np.array([1, 3]))
    assert not autotune.same_answer((a,), (a, a))


def test_functions_writing_their_arguments_are_not_tuned(db_path, rng):
    def scale_in_place(x):
        x *= 2.0
        return x.sum()
    x = rng.standard_normal((64, 64))
    want = x * 2.0
    f = hc.hcompile(scale_in_place, mode="max-autotune")
    total = f(x)
    np.testing.assert_allclose(x, want)
    np.testing.assert_allclose(total, want.sum())
    assert f.compile_records[0]["tuning"] == "not tuned: it writes into its arguments"


SCRIPT = textwrap.dedent('''
    import numpy as np
    import hcompile as hc

    @hc.hcompile
    def rms(x):
        return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6)

    x = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
    y = rms(x)
    assert np.allclose(y, x / np.sqrt((x * x).mean(axis=1, keepdims=True) + 1e-6), rtol=1e-5, atol=1e-6)
    print("script ran", rms.compile_records[0]["schedule_origin"])
''')


def _hcompile(*args, cwd):
    return subprocess.run([sys.executable, "-m", "hcompile.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=600)


def test_tune_and_db_commands(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    db = str(tmp_path / "cli.sqlite")
    first = _hcompile("tune", "--trials", "4", "--db", db, "--plot", str(tmp_path / "p.png"), str(script), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "script ran search" in first.stdout and "1 pipeline(s) tuned" in first.stdout
    assert (tmp_path / "p.png").stat().st_size > 0
    second = _hcompile("tune", "--trials", "4", "--db", db, str(script), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert "script ran tuning record" in second.stdout and "1 record(s) reused" in second.stdout
    env = dict(os.environ, HCOMPILE_TUNING_DB=db)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert "script ran tuning record" in plain.stdout, plain.stderr
    show = _hcompile("db", "show", "--db", db, cwd=tmp_path)
    assert "rms" in show.stdout and "1 workload(s)" in show.stdout
    verify = _hcompile("db", "verify", "--db", db, cwd=tmp_path)
    assert verify.returncode == 0 and "rms" in verify.stdout, verify.stderr
    _hcompile("db", "clear", "--db", db, cwd=tmp_path)
    assert count_records(db) == 0


def test_interrupted_tune_keeps_its_measurements(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT + "\nraise KeyboardInterrupt\n")
    db = str(tmp_path / "cli.sqlite")
    run = _hcompile("tune", "--trials", "3", "--db", db, "--plot", str(tmp_path / "p.png"), str(script), cwd=tmp_path)
    assert run.returncode == 130 and "interrupted" in run.stderr
    assert count_records(db) >= 1


def test_shapes_that_keep_changing_compile_once_for_any_size(db_path, rng):
    """A loop body called on shrinking arrays (a stencil chain) must not recompile per shape."""
    f = hc.hcompile(fresh(softmax, "d1"), mode="max-autotune")
    for n in (40, 41, 42, 43):
        x = rng.standard_normal((n, 64)).astype(np.float32)
        np.testing.assert_allclose(f(x), softmax(x), rtol=1e-5, atol=1e-7)
    assert len(f.compile_records) == 2
    assert isinstance(f.compile_records[0]["tuning"], dict)
    assert f.compile_records[1]["tuning"].startswith("not tuned: compiled for any size")


def test_tune_for_another_target_keeps_its_records_apart(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    db = str(tmp_path / "target.sqlite")
    avx2 = "x86-64-linux-sse41-avx-avx2-fma-f16c"   # runs on any AVX2 host, the AVX-512 one too
    run = _hcompile("tune", "--trials", "3", "--target", avx2, "--db", db, "--plot", str(tmp_path / "p.png"),
                    str(script), cwd=tmp_path)
    assert run.returncode == 0 and "1 pipeline(s) tuned" in run.stdout, run.stderr
    assert "avx2" in _hcompile("db", "show", "--db", db, cwd=tmp_path).stdout
    env = dict(os.environ, HCOMPILE_TUNING_DB=db)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert "script ran search" in plain.stdout, plain.stderr       # the host's workload has no record
    env["HCOMPILE_TARGET"] = avx2
    same = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert "script ran tuning record" in same.stdout, same.stderr


def test_fit_learns_a_correction_that_ranks_held_out_workloads_better(tmp_path):
    """Synthetic records where `parallel` decisions cost 2x what the model predicts: the fit
    finds log 2 for them and the held-out ranking improves from its uncorrected value."""
    from hcompile.tuning import fit

    rng = np.random.default_rng(0)
    path = str(tmp_path / "fit.sqlite")
    with tuning.TuningDatabase(path) as db:
        for w in range(6):
            db.add_workload(f"w{w}", "f", "graph", "{}", [], "host")
            for _ in range(8):
                parallel, vector = int(rng.integers(0, 4)), int(rng.integers(0, 4))
                decisions = [(0, "parallel", 1, 0, 0)] * parallel + [(0, "vectorize", 0, 8, 0)] * vector
                predicted = float(rng.uniform(1e-3, 2e-3))
                seconds = predicted * 2.0 ** parallel * float(rng.uniform(0.97, 1.03))
                db.add_record(f"w{w}", "candidate", decisions, seconds, [seconds], predicted, True, "", ("v", "h"), "m")
        weights, report = fit.fit(db, ("v", "h"), "m")
    assert abs(weights["parallel"] - math.log(2)) < 0.1 and abs(weights["vectorize"]) < 0.1
    assert report["rank_correlation_after"] > report["rank_correlation_before"] + 0.2
    with tuning.TuningDatabase(path) as db, pytest.raises(ValueError, match="tune more pipelines"):
        fit.fit(db, ("other", "h"), "m")


def test_the_search_ranks_with_the_learned_correction_only_when_asked(db_path, monkeypatch):
    """A correction that makes parallel loops look 150x slower: with cost_correction the search
    drops them; without it, or with weights fitted on another version, it keeps them."""
    import json

    def blur(x):
        return (x[:-2] + x[1:-1] + x[2:]) * np.float32(1 / 3)
    x = np.random.default_rng(0).random((2048, 512), np.float32)

    def decisions(name):
        f = hc.hcompile(fresh(blur, name))
        np.testing.assert_allclose(f(x), blur(x), rtol=1e-6)
        return {d[1] for d in f.compile_records[0]["report"]["decisions"]}, f.compile_records[0]["report"]["analysis"]

    def write(versions):
        with open(tuning.correction_path(), "w") as fh:
            json.dump({"weights": {"parallel": 5.0, "parallel_chunks": 5.0, "tile_rows": 5.0},
                       "versions": list(versions), "machine": workload.machine_fingerprint()}, fh)
    write(workload.versions())
    plain, _ = decisions("plain")
    assert plain & {"parallel", "parallel_chunks", "tile_rows"}
    monkeypatch.setattr(hc.config, "cost_correction", True)
    corrected, analysis = decisions("corrected")
    assert not corrected & {"parallel", "parallel_chunks", "tile_rows"}
    assert "learned correction (3 choice weights" in analysis
    write(("0.0.0", "0.0.0"))
    stale, _ = decisions("stale")
    assert stale == plain


class _FakeRemote:
    """Trials 'run elsewhere': each list's claimed result by its last decision's value."""
    parallel = 2

    def __init__(self, results):
        self.results, self.batches = results, []

    def run(self, schedules):
        self.batches.append(len(schedules))
        return [dict(self.results[s[-1][3]], versions=list(workload.versions()), load=0.0, runs=[]) for s in schedules]


def test_remote_trials_from_other_machines_are_kept_apart(db_path):
    """A list another machine measured as fastest is recorded under that machine and never
    picked; a list this machine's kind measured faster is compiled here and confirmed here."""
    right = np.arange(4.0)
    here = workload.machine_fingerprint()
    remote = _FakeRemote({0: dict(seconds=1e-9, ok=True, error="", machine="another machine"),
                          1: dict(seconds=1e-5, ok=True, error="", machine=here),
                          2: dict(seconds=None, ok=False, error="refused", machine=here)})
    local = {1: _FakeKernel(1e-4, right)}
    compiled = []

    def compile_with(schedule):
        compiled.append(schedule[-1][3])
        return local[schedule[-1][3]], {"decisions": schedule, "candidates": [], "predicted_seconds": 0}

    runner = _fake_runner

    report = {"decisions": [(0, "compute_root", -1, 0, 0), (1, "vectorize", 0, 8, 0)], "predicted_seconds": 1e-4,
              "candidates": [([(0, "compute_root", -1, 0, 0), (1, "vectorize", 0, v, 0)], 1e-4) for v in (0, 1, 2)]}
    with tuning.open_database() as db:
        tuner = autotune.Autotuner("f", compile_with, runner, db, "k", trials=10, seconds=30, remote=remote)
        _, chosen, summary = tuner.run(_FakeKernel(3e-4, right), report)
        rows = db.records("k")
    assert summary["distributed"] and summary["tuned"] and chosen["decisions"][-1][3] == 1
    assert compiled == [1]             # only the winner is compiled here
    assert remote.batches == [2, 1]    # two trials in flight at once
    by_machine = {(r["source"], r["machine"]) for r in rows}
    assert ("remote", "another machine") in by_machine and ("remote", here) in by_machine
    with tuning.open_database() as db:
        best = db.best("k", workload.versions(), here)
    assert best[0][-1][3] == 1         # the other machine's faster claim is not this machine's best


def test_max_autotune_trials_as_ray_tasks(db_path, monkeypatch):
    """A local Ray instance started by the test: each trial compiled and timed in a Ray worker."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        monkeypatch.setattr(hc.config, "tuning_ray", "auto")   # uses the instance already running
        monkeypatch.setattr(hc.config, "tuning_trials", 4)
        x = np.random.default_rng(3).standard_normal((512, 256)).astype(np.float32)
        f = hc.hcompile(fresh(softmax, "softmax_on_ray"), mode="max-autotune")
        np.testing.assert_allclose(f(x), softmax(x), rtol=1e-5, atol=1e-7)
        summary = f.compile_records[0]["tuning"]
        assert summary["distributed"] and summary["trials"] >= 2
        with tuning.open_database() as db:
            rows = db.records(summary["key"])
        remote = [r for r in rows if r["source"] == "remote"]
        assert remote and all(r["machine"] == workload.machine_fingerprint() for r in remote)
        assert all(r["ok"] for r in remote)
    finally:
        ray.shutdown()
