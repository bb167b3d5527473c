"""Stencils on the GPU: four rows a thread where a region reads a window of rows, of a region or
straight from an input (autoscheduler/src/gpu_schedule.cpp's `stencil_rows`), and register caps
(Choice::GpuRegisters: the pipeline's cap gpu_register_cap, set while its module loads by
runtime/src/cuda_register_cap.cpp), which max-autotune tries on such kernels.

Without a GPU the kernels are compiled for CUDA and their decisions checked; with one (the `gpu`
marker) the results are compared with NumPy's, and the variable Halide reads the cap from is
checked to be gone after the first run, or left as the caller set it."""
import ctypes

import numpy as np
import pytest

import hcompile as hc
from apps import workloads as W
from apps.gpu_stencils_bench import STENCILS as NAMED_STENCILS, capped, laplace5, unsharp
from tests.python.test_cuda import CUDA_TARGET, gpu

_LIBC = ctypes.CDLL(None)
_LIBC.getenv.restype = ctypes.c_char_p
_CAP_VARIABLE = b"HL_CUDA_JIT_MAX_REGISTERS"


def _blur_and_softmax(x):
    """A stencil and a row group in one pipeline: two kernels of one module."""
    return W.blur3x3(x), np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True)


STENCILS = list(NAMED_STENCILS.values())


def _report(fn, *shapes, schedule=None):
    f = hc.hcompile(fn, target=CUDA_TARGET, fullgraph=True, schedule=schedule)
    f.compile_only(*[np.zeros(s, np.float32) for s in shapes])
    return f.compile_records[-1]["report"]


@pytest.mark.parametrize("fn,nargs", STENCILS, ids=lambda c: getattr(c, "__name__", ""))
def test_stencils_run_four_rows_a_thread(fn, nargs):
    report = _report(fn, *[(1024, 1000)] * nargs)
    assert [d[3:] for d in report["decisions"] if d[1] == "gpu_vector"] == [(4, 4)]
    assert report["gpu_registers"] == 0   # Halide's cap: the rule asks for none
    # max-autotune's alternatives: the same kernel under 40 and 48 registers.
    caps = sorted(d[3] for decisions, _ in report["variants"] for d in decisions if d[1] == "gpu_registers")
    assert caps == [40, 48]


@pytest.mark.parametrize("fn,shapes", [(W.tinyops, [(1024, 1000)]), (lambda x: x[:, 1:] - x[:, :-1], [(1024, 1000)]),
                                       (lambda x: x[::2] + x[1::2], [(1024, 1000)])], ids=["tinyops", "columns", "strided"])
def test_other_elementwise_kernels_run_a_row_a_thread(fn, shapes):
    report = _report(fn, *shapes)
    assert [d[3:] for d in report["decisions"] if d[1] == "gpu_vector"] == [(4, 0)]


@pytest.mark.parametrize("fn", [W.blur3x3, unsharp, laplace5], ids=lambda f: f.__name__)
def test_a_cap_given_is_the_pipelines(fn):
    decisions = capped(_report(fn, (512, 500))["decisions"], 40)
    report = _report(fn, (512, 500), schedule=decisions)
    assert report["gpu_registers"] == 40
    assert "at most 40 registers a thread" in report["schedule"]


def test_a_kernel_without_a_cap_keeps_halides_for_the_pipeline():
    decisions = capped(_report(_blur_and_softmax, (512, 500))["decisions"], 40)
    assert any(d[1] == "gpu_registers" for d in decisions)
    assert _report(_blur_and_softmax, (512, 500), schedule=decisions)["gpu_registers"] == 0


def test_a_cap_out_of_range_is_refused():
    decisions = _report(W.blur3x3, (256, 256))["decisions"]
    for cap in (8, 300):
        with pytest.raises(hc.CompileError, match="24 to 255"):
            _report(W.blur3x3, (256, 256), schedule=capped(decisions, cap))


@gpu
@pytest.mark.parametrize("shape", [(1024, 1000), (67, 131), (18, 6)])
@pytest.mark.parametrize("fn,nargs", STENCILS, ids=lambda c: getattr(c, "__name__", ""))
def test_stencils_match_numpy(fn, nargs, shape, torch_cuda):
    torch = torch_cuda
    rng = np.random.default_rng(0)
    xs = [rng.random(shape, dtype=np.float32) for _ in range(nargs)]
    got = hc.hcompile(fn, fullgraph=True)(*[torch.from_numpy(x).cuda() for x in xs]).cpu().numpy()
    np.testing.assert_allclose(got, fn(*xs), rtol=1e-6, atol=1e-7)


@gpu
@pytest.mark.parametrize("fn,nargs", STENCILS[:4], ids=lambda c: getattr(c, "__name__", ""))
def test_capped_kernels_match_numpy(fn, nargs, torch_cuda):
    torch = torch_cuda
    assert _LIBC.getenv(_CAP_VARIABLE) is None
    rng = np.random.default_rng(1)
    xs = [rng.random((300, 200), dtype=np.float32) for _ in range(nargs)]
    f = hc.hcompile(fn, fullgraph=True, schedule=capped(_report(fn, *[(300, 200)] * nargs)["decisions"], 40))
    got = f(*[torch.from_numpy(x).cuda() for x in xs]).cpu().numpy()
    assert f.compile_records[-1]["report"]["gpu_registers"] == 40
    np.testing.assert_allclose(got, fn(*xs), rtol=1e-6, atol=1e-7)
    assert _LIBC.getenv(_CAP_VARIABLE) is None   # set for the module's load only


@gpu
def test_the_callers_cap_wins(torch_cuda):
    torch = torch_cuda
    _LIBC.setenv(_CAP_VARIABLE, b"64", 1)
    try:
        x = np.random.default_rng(2).random((300, 200), dtype=np.float32)
        f = hc.hcompile(unsharp, fullgraph=True, schedule=capped(_report(unsharp, (300, 200))["decisions"], 40))
        np.testing.assert_allclose(f(torch.from_numpy(x).cuda()).cpu().numpy(), unsharp(x), rtol=1e-6, atol=1e-7)
        assert _LIBC.getenv(_CAP_VARIABLE) == b"64"
    finally:
        _LIBC.unsetenv(_CAP_VARIABLE)
