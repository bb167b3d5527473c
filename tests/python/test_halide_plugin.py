"""The HCompile Halide plugin (libautoschedule_hcompile.so): driven from Halide's own Python
bindings on pipelines written there, and from a generator built with the wheel's CMake package;
every result against NumPy."""
import numpy as np
import pytest

import hcompile as hc

hl = pytest.importorskip("halide")

TARGET = hl.get_jit_target_from_environment()
x, y, c = hl.Var("x"), hl.Var("y"), hl.Var("c")


@pytest.fixture(scope="module", autouse=True)
def plugin():
    hl.load_plugin(hc.plugin_path())


def autoschedule(outputs, **extra):
    p = hl.Pipeline(outputs)
    params = {"parallelism": "2", **{k: str(v) for k, v in extra.items()}}
    result = p.apply_autoscheduler(TARGET, hl.AutoschedulerParams("HCompile", params))
    return p, result.schedule_source


def realize(p, buffers, bindings):
    for param, array in bindings:
        param.set(hl.Buffer(array))
    p.compile_jit(TARGET)
    p.realize(buffers)
    return [np.asarray(b) for b in buffers]


def image(name, dims, shape, dtype=hl.Float(32)):
    """An ImageParam with estimates for a NumPy array of `shape` (Halide's axes reversed)."""
    im = hl.ImageParam(dtype, dims, name)
    for d, extent in enumerate(reversed(shape)):
        im.dim(d).set_estimate(0, extent)
    return im


def test_plugin_path_names_the_installed_library():
    assert hc.plugin_path().endswith("libautoschedule_hcompile.so")


def separable_blur(shape, name="blur"):
    """(input, output Func): a 3x3 box blur as two passes, edges repeated, estimated at `shape`."""
    inp = image(f"{name}_in", 2, shape)
    clamped = hl.BoundaryConditions.repeat_edge(inp)
    bx, by = hl.Func(f"{name}_x"), hl.Func(f"{name}_y")
    bx[x, y] = (clamped[x - 1, y] + clamped[x, y] + clamped[x + 1, y]) / 3
    by[x, y] = (bx[x, y - 1] + bx[x, y] + bx[x, y + 1]) / 3
    by.set_estimate(x, 0, shape[1]).set_estimate(y, 0, shape[0])
    return inp, by


@pytest.mark.parametrize("h,w", [(384, 512), (37, 1), (1, 300), (129, 67)])
def test_separable_blur_with_repeated_edges(h, w):
    a = np.random.default_rng(h * w).random((h, w), np.float32)
    inp, by = separable_blur(a.shape)
    p, source = autoschedule(by)
    assert source.startswith("// HCompile autoscheduler:")
    [got] = realize(p, [hl.Buffer(hl.Float(32), [w, h])], [(inp, a)])
    pad = np.pad(a, 1, mode="edge")
    bxn = (pad[:, :-2] + pad[:, 1:-1] + pad[:, 2:]) / 3
    np.testing.assert_allclose(got, (bxn[:-2] + bxn[1:-1] + bxn[2:]) / 3, rtol=1e-6, atol=1e-6)


def test_a_schedule_made_for_the_estimates_runs_at_other_sizes():
    a = np.random.default_rng(1).random((203, 301), np.float32)
    inp = image("inp", 2, (1000, 1000))   # estimates far from the size it runs at
    out = hl.Func("out")
    out[x, y] = inp[x, y] * 2 + 1
    out.set_estimate(x, 0, 1000).set_estimate(y, 0, 1000)
    p, _ = autoschedule(out)
    [got] = realize(p, [hl.Buffer(hl.Float(32), [301, 203])], [(inp, a)])
    np.testing.assert_allclose(got, a * 2 + 1, rtol=1e-6)


def test_reductions_histogram_scan_and_lookup():
    a = np.random.default_rng(2).integers(0, 256, (96, 128)).astype(np.uint8)
    im = image("im", 2, a.shape, hl.UInt(8))
    hist, cdf, eq = hl.Func("hist"), hl.Func("cdf"), hl.Func("eq")
    pixels = hl.RDom([(0, 128), (0, 96)])
    hist[x] = 0
    hist[hl.cast(hl.Int(32), im[pixels.x, pixels.y])] += 1
    cdf[x] = hist[0]
    bins = hl.RDom([(1, 255)])
    cdf[bins.x] = cdf[bins.x - 1] + hist[bins.x]
    eq[x, y] = hl.cast(hl.UInt(8), cdf[hl.cast(hl.Int(32), im[x, y])] * 255 // a.size)
    eq.set_estimate(x, 0, 128).set_estimate(y, 0, 96)
    p, source = autoschedule(eq)
    assert "parallel_update" not in source.split("hist)")[0]   # its bins come from the data: serial
    [got] = realize(p, [hl.Buffer(hl.UInt(8), [128, 96])], [(im, a)])
    cum = np.cumsum(np.bincount(a.ravel(), minlength=256))
    np.testing.assert_array_equal(got, (cum[a] * 255 // a.size).astype(np.uint8))


@pytest.mark.parametrize("n,k,m", [(64, 64, 64), (33, 70, 5)])
def test_matrix_product_as_an_rdom_sum(n, k, m):
    rng = np.random.default_rng(n + k + m)
    an, bn = rng.standard_normal((n, k), np.float32), rng.standard_normal((k, m), np.float32)
    A, B = image("A", 2, an.shape), image("B", 2, bn.shape)
    r = hl.RDom([(0, k)])
    C = hl.Func("C")
    C[x, y] = 0.0
    C[x, y] += A[r.x, y] * B[x, r.x]
    C.set_estimate(x, 0, m).set_estimate(y, 0, n)
    p, _ = autoschedule(C)
    [got] = realize(p, [hl.Buffer(hl.Float(32), [m, n])], [(A, an), (B, bn)])
    np.testing.assert_allclose(got, an.astype(np.float64) @ bn, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("axis", [0, 1])
def test_scans_stay_serial_along_their_axis(axis):
    a = np.random.default_rng(3).random((120, 90), np.float32)
    I = image("I", 2, a.shape)
    S = hl.Func("scan")
    S[x, y] = I[x, y]
    if axis == 1:   # along NumPy's last axis: Halide's x
        r = hl.RDom([(1, 89)])
        S[r.x, y] = S[r.x - 1, y] + I[r.x, y]
    else:
        r = hl.RDom([(1, 119)])
        S[x, r.x] = S[x, r.x - 1] + I[x, r.x]
    S.set_estimate(x, 0, 90).set_estimate(y, 0, 120)
    p, _ = autoschedule(S)
    [got] = realize(p, [hl.Buffer(hl.Float(32), [90, 120])], [(I, a)])
    np.testing.assert_allclose(got, np.cumsum(a, axis=axis), rtol=1e-5)


def test_tuple_valued_argmax_and_two_outputs():
    a = np.random.default_rng(4).random((3, 60, 80), np.float32)
    im = image("im", 3, a.shape)
    best = hl.Func("best")
    r = hl.RDom([(0, 80)])
    best[y, c] = (hl.f32(-1.0), 0)
    larger = im[r.x, y, c] > best[y, c][0]
    best[y, c] = (hl.select(larger, im[r.x, y, c], best[y, c][0]), hl.select(larger, r.x, best[y, c][1]))
    where, total = hl.Func("where"), hl.Func("total")
    where[y, c] = best[y, c][1]
    total[y, c] = best[y, c][0] + im[0, y, c]
    for f in (where, total):
        f.set_estimate(y, 0, 60).set_estimate(c, 0, 3)
    p, _ = autoschedule([where, total])
    got_where, got_total = realize(p, [hl.Buffer(hl.Int(32), [60, 3]), hl.Buffer(hl.Float(32), [60, 3])], [(im, a)])
    np.testing.assert_array_equal(got_where, np.argmax(a, axis=2))
    np.testing.assert_allclose(got_total, a.max(axis=2) + a[:, :, 0], rtol=1e-6)


def test_colour_gradients_fused_per_tile():
    a = np.random.default_rng(5).random((3, 480, 640), np.float32)
    im = image("cim", 3, a.shape)
    mirrored = hl.BoundaryConditions.mirror_interior(im)
    gx, gy, mag, lum = hl.Func("gx"), hl.Func("gy"), hl.Func("mag"), hl.Func("lum")
    gx[x, y, c] = mirrored[x + 1, y, c] - mirrored[x - 1, y, c]
    gy[x, y, c] = mirrored[x, y + 1, c] - mirrored[x, y - 1, c]
    mag[x, y, c] = gx[x, y, c] * gx[x, y, c] + gy[x, y, c] * gy[x, y, c]
    lum[x, y] = mag[x, y, 0] + mag[x, y, 1] + mag[x, y, 2]
    lum.set_estimate(x, 0, 640).set_estimate(y, 0, 480)
    p, source = autoschedule(lum)
    assert "compute_at_tile" in source
    [got] = realize(p, [hl.Buffer(hl.Float(32), [640, 480])], [(im, a)])
    pad = np.pad(a, ((0, 0), (1, 1), (1, 1)), mode="reflect")
    gxn, gyn = pad[:, 1:-1, 2:] - pad[:, 1:-1, :-2], pad[:, 2:, 1:-1] - pad[:, :-2, 1:-1]
    np.testing.assert_allclose(got, (gxn * gxn + gyn * gyn).sum(0), rtol=1e-5, atol=1e-6)


def test_parameters_parallelism_and_variants():
    def blur():
        im = image("im", 2, (512, 512))
        out = hl.Func("out")
        out[x, y] = im[x, y] + im[x, hl.max(y - 1, 0)]
        out.set_estimate(x, 0, 512).set_estimate(y, 0, 512)
        return out
    _, two = autoschedule(blur(), parallelism=2)
    _, sixteen = autoschedule(blur(), parallelism=16)
    assert "2 cores" in two and "16 cores" in sixteen
    _, first = autoschedule(blur(), variant=1)
    assert first.splitlines()[1:] != two.splitlines()[1:]   # one region's decisions differ
    with pytest.raises(Exception, match="variant 999 of"):
        autoschedule(blur(), variant=999)
    with pytest.raises(Exception, match="unknown parameter 'beam_size'"):
        autoschedule(blur(), beam_size=4)


def test_refusals_name_the_reason():
    im = image("im", 2, (64, 64))
    no_estimate = hl.Func("no_estimate")
    no_estimate[x, y] = im[x, y]
    with pytest.raises(Exception, match="has no estimate"):
        autoschedule(no_estimate)
    with pytest.raises(Exception, match="GPU target"):
        blur = hl.Func("gpu_blur")
        blur[x, y] = im[x, y] * 2
        blur.set_estimate(x, 0, 64).set_estimate(y, 0, 64)
        hl.Pipeline(blur).apply_autoscheduler(hl.Target("host-cuda"),
                                              hl.AutoschedulerParams("HCompile", {"parallelism": "2"}))
    doubled, gather = hl.Func("doubled"), hl.Func("gather")
    doubled[x, y] = im[x, y] * 2
    gather[x] = doubled[hl.cast(hl.Int(32), im[x, 0] * 1000), 0]
    gather.set_estimate(x, 0, 8)
    with pytest.raises(Exception, match="not bounded"):
        autoschedule(gather)


def test_generators_built_with_the_wheels_cmake_package(tmp_path):
    """add_halide_generator + add_halide_library(AUTOSCHEDULER HCompile), through the apps'
    CMake project, into a Python extension; its outputs against NumPy."""
    from apps.halide_apps.build import build_halide_apps
    from apps.halide_apps.workloads import APPS, check
    module = build_halide_apps(tmp_path / "build", ["blur", "hist_equalize"], ["HCompile"], quiet=True)
    schedule = (tmp_path / "build" / "blur_HCompile.schedule.h").read_text()
    assert "HCompile autoscheduler" in schedule and "compute_at(" in schedule
    rng = np.random.default_rng(6)
    for name in ("blur", "hist_equalize"):
        app = APPS[name]
        inputs = app.make_inputs(rng)
        out = np.empty(*app.output)
        getattr(module, f"{name}_HCompile")(*inputs, out)
        check(app, out, inputs)


def _blur_pipeline(size):
    """(build, run, expected): a two-pass blur written in Halide, for tuning."""
    img = np.random.default_rng(7).random((size, size), np.float32)
    state = {}

    def build():
        state["input"], by = separable_blur(img.shape, "tuned")
        return hl.Pipeline(by)

    def run(pipeline):
        state["input"].set(hl.Buffer(img))
        out = hl.Buffer(hl.Float(32), [size, size])
        pipeline.realize(out)
        return np.asarray(out).copy()
    pad = np.pad(img, 1, mode="edge")
    rows = (pad[:, :-2] + pad[:, 1:-1] + pad[:, 2:]) / 3
    return build, run, (rows[:-2] + rows[1:-1] + rows[2:]) / 3


def test_tune_halide_records_every_trial_and_the_plugin_reads_the_best(tmp_path):
    from hcompile.tuning import TuningDatabase, tune_halide, workload
    from hcompile.tuning.halide_pipelines import autoschedule
    db = str(tmp_path / "tuning.sqlite")
    build, run, expected = _blur_pipeline(256)
    seen = []
    report = tune_halide(build, run, name="blur", db=db, trials=4, seconds=60,
                         progress=lambda *a: seen.append(a))
    assert report["workload"].startswith("halide-") and report["trials"] == len(seen) >= 2
    assert report["best_seconds"] <= report["default_seconds"]
    with TuningDatabase(db) as records:
        best = records.best(report["workload"], workload.versions(), workload.machine_fingerprint())
        rows = records.records(report["workload"])
    assert best is not None and len(rows) == report["trials"]
    # The plugin, given the database, applies the best record's decisions.
    pipeline = build()
    fields = autoschedule(pipeline, TARGET, db=db, parallelism=2)
    assert fields["workload"] == report["workload"]
    assert fields["schedule"] == "record"
    assert fields["decisions"] == [tuple(d) for d in best[0]]
    pipeline.compile_jit(TARGET)
    np.testing.assert_allclose(run(pipeline), expected, rtol=1e-6, atol=1e-6)
    # Without the database, or for another size (another workload), the search decides.
    assert autoschedule(build(), TARGET, parallelism=2)["schedule"] == "search"
    other_build, _, _ = _blur_pipeline(128)
    assert autoschedule(other_build(), TARGET, db=db, parallelism=2)["schedule"] == "search"


def test_the_plugin_skips_records_of_other_machines_and_lists_that_no_longer_fit(tmp_path):
    from hcompile.tuning import TuningDatabase, workload
    from hcompile.tuning.halide_pipelines import autoschedule
    db = str(tmp_path / "tuning.sqlite")
    build, run, expected = _blur_pipeline(64)
    key = autoschedule(build(), TARGET)["workload"]
    versions = workload.versions()
    with TuningDatabase(db) as records:
        records.add_workload(key, "blur", "", "{}", [], str(TARGET))
        # Faster, but measured elsewhere: ignored.
        records.add_record(key, "x", [(0, "compute_root", -1, 0, 0)], 1e-9, [], None, True, "", versions, "another machine")
        # Fastest here, but its regions do not fit this pipeline: the search decides.
        records.add_record(key, "x", [(99, "compute_root", -1, 0, 0)], 1e-8, [], None, True, "", versions,
                           workload.machine_fingerprint())
        records._conn.execute("UPDATE records SET decisions = 'not json' WHERE machine = 'another machine'")
    pipeline = build()
    fields = autoschedule(pipeline, TARGET, db=db)
    assert fields["schedule"].startswith("search (the record no longer fits")
    pipeline.compile_jit(TARGET)
    np.testing.assert_allclose(run(pipeline), expected, rtol=1e-6, atol=1e-6)
    with pytest.raises(Exception, match="cannot open the tuning database"):
        autoschedule(build(), TARGET, db=str(tmp_path / "missing" / "no.sqlite"))
