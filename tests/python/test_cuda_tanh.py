"""The exact float32 tanh inside GPU kernels (core/src/lowering/gpu_tanh.cpp): its reciprocal
from rcp.approx and a Newton step instead of an IEEE division, NumPy's accuracy kept.

Without a GPU (CI) the kernels are compiled for CUDA and their PTX read; with one (the `gpu`
marker) results are compared with NumPy in float64."""
import numpy as np
import pytest

import hcompile as hc
from test_cuda import CUDA_TARGET
from test_cuda_fast_math import _ptx, _ulps


def test_a_float32_tanh_kernel_refines_the_reciprocal_estimate_and_has_no_ieee_reciprocal(monkeypatch, tmp_path):
    ptx = _ptx(monkeypatch, tmp_path, lambda x: np.tanh(x), [(64, 64)], fast_math=False)
    assert "rcp.approx.ftz.f32" in ptx
    assert "rcp.rn" not in ptx and "div.rn" not in ptx
    # The Newton step: two fused multiply-adds a reciprocal, beside the exp reduction's own.
    assert ptx.count("fma.rn.f32") >= 2 * ptx.count("rcp.approx.ftz.f32")


def test_a_float64_tanh_keeps_its_ieee_reciprocal(monkeypatch, tmp_path):
    ptx = _ptx(monkeypatch, tmp_path, lambda x: np.tanh(x), [(64, 64)], dtype=np.float64, fast_math=False)
    assert "rcp.approx" not in ptx
    assert "rcp.rn.f64" in ptx or "div.rn.f64" in ptx


def test_the_host_keeps_the_cpu_tanh():
    """A CPU pipeline never sees the GPU's mark: the same bits as before, NumPy-close."""
    x = np.linspace(-30, 30, 4099, dtype=np.float32)
    got = hc.hcompile(lambda a: np.tanh(a), fullgraph=True)(x)
    np.testing.assert_allclose(got, np.tanh(x.astype(np.float64)), rtol=3e-7, atol=0)


# -- on a GPU ---------------------------------------------------------------------------------

gpu = pytest.mark.gpu


@gpu
def test_the_gpu_tanh_is_within_two_ulps_everywhere(torch_cuda):
    rng = np.random.default_rng(11)
    n = 1 << 21
    x = np.concatenate([rng.uniform(-10, 10, n), rng.uniform(-0.6, 0.6, n), rng.uniform(0.55, 0.6, n),
                        np.exp2(rng.uniform(-30, 4, n)) * rng.choice([-1, 1], n)]).astype(np.float32)
    got = hc.hcompile(lambda a: np.tanh(a), fullgraph=True)(torch_cuda.from_numpy(x).cuda()).cpu().numpy()
    assert got.dtype == np.float32
    assert _ulps(got, np.tanh(x.astype(np.float64))).max() <= 2.0


@gpu
def test_the_gpu_tanh_special_values_are_numpys(torch_cuda):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5625, -0.5625, 9.0, 22.0, 23.0, 88.0, -88.0, 3e38,
                  -3e38, 1e-30, -1e-30, 1e-45], np.float32)
    got = hc.hcompile(lambda a: np.tanh(a), fullgraph=True)(torch_cuda.from_numpy(x).cuda()).cpu().numpy()
    want = np.tanh(x)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    numbers = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))
    np.testing.assert_allclose(got[numbers], want[numbers], rtol=3e-7, atol=0)


@gpu
def test_the_gpu_tanh_of_a_float32_expression_in_a_larger_kernel(torch_cuda):
    """GELU's tanh inside a fused kernel, a vector of points a thread, against NumPy."""
    def gelu(x):
        return 0.5 * x * (1 + np.tanh(np.float32(0.7978845608) * (x + np.float32(0.044715) * x ** 3)))
    x = np.random.default_rng(2).standard_normal((257, 515)).astype(np.float32) * 3
    got = hc.hcompile(gelu, fullgraph=True)(torch_cuda.from_numpy(x).cuda()).cpu().numpy()
    np.testing.assert_allclose(got, gelu(x.astype(np.float64)), rtol=2e-6, atol=1e-6)
