"""Target strings are checked when `hcompile(...)` is called, never at the first call: a feature
the CPU lacks used to die with SIGILL, `host-cuda` was accepted, and a bad string silently ran as
Python. Each now raises a ValueError that names the problem."""
import numpy as np
import pytest

from numpy_oracle import IDENTITY, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="checks the real compiler's options")

if not IDENTITY:
    from hcompile import _C

    HOST = _C.host_target()
    HOST_FEATURES = set(HOST.split("-")[3:])
    X86 = HOST.startswith("x86-64")


def runs(target):
    f = hc.hcompile(lambda x: x * 2 + 1, target=target, fullgraph=True)
    x = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(f(x), x * 2 + 1)
    return f


@pytest.mark.parametrize("target", ["auto", "host", "", "host-no_asserts", "host-strict_float",
                                    "host-large_buffers", "host-tune_znver4"])
def test_host_targets_run(target):
    runs(target)


def test_the_full_host_string_runs():
    runs(HOST)
    if X86 and "avx2" in HOST_FEATURES:
        runs("x86-64-linux-sse41-avx-avx2-fma")  # a subset of the host's features


@pytest.mark.skipif(IDENTITY or not X86, reason="x86 feature names")
@pytest.mark.parametrize("feature", ["avx512_skylake", "avx512_knl", "fma4", "avx10_1", "x86apx",
                                     "avx512_zen5"])
def test_features_the_cpu_lacks_are_refused(feature):
    target = f"x86-64-linux-{feature}"
    if feature in HOST_FEATURES:
        runs(target)  # this machine has it: it must work
        return
    with pytest.raises(ValueError, match=f"lacks: .*{feature}"):
        hc.hcompile(lambda x: x + 1, target=target)


@pytest.mark.parametrize("target", ["host-opencl", "host-metal", "host-vulkan-vk_v13", "host-hvx"])
def test_device_targets_other_than_cuda_are_refused_clearly(target):
    with pytest.raises(ValueError, match="CPU or through CUDA only|not a Halide target"):
        hc.hcompile(lambda x: x + 1, target=target)


@pytest.mark.parametrize("target", ["cuda", "host-cuda", "host-cuda-cuda_capability_80"])
def test_cuda_targets_are_accepted(target):
    assert "cuda" in hc._C.jit_target(target)
    hc.hcompile(lambda x: x + 1, target=target)


@pytest.mark.parametrize("target", ["bogus", "x86-64-linux-nonsense", "host-", "x86-99-linux",
                                    "host-sve2" if not IDENTITY and X86 else "host-avx2"])
def test_bad_target_strings_are_refused(target):
    with pytest.raises(ValueError, match="not a Halide target|not valid"):
        hc.hcompile(lambda x: x + 1, target=target)


@pytest.mark.parametrize("target", ["arm-64-linux", "x86-32-linux", "x86-64-windows", "wasm-32-wasmrt"])
def test_other_platforms_are_refused(target):
    if HOST.startswith(target):
        pytest.skip("this is the host platform")
    with pytest.raises(ValueError, match="kernels run in this process"):
        hc.hcompile(lambda x: x + 1, target=target)


def test_jit_incompatible_features_are_refused():
    for target in ("host-asan", "host-msan", "host-no_runtime"):
        with pytest.raises(ValueError, match="cannot use"):
            hc.hcompile(lambda x: x + 1, target=target)
    with pytest.raises(TypeError):
        hc.hcompile(lambda x: x + 1, target=None)
