"""Code generation for CPUs this machine lacks (`hc.config.also_compile_for`).

The fuzzer on an AVX-512 machine found LLVM aborting (an assertion in its x86 back end) on
uint8 powers with an array exponent: the byte-lane bit tests that its SLP vectorizer formed
from a scalar loop (device fuzz, seed 3, programs 907270, 920629, 1026763). An AVX2 machine never
generates that code, so these tests compile every kernel for AVX-512 targets too and discard the
machine code. An abort kills the process, so the programs run in a child process.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from numpy_oracle import IDENTITY, hc

pytestmark = pytest.mark.skipif(IDENTITY, reason="checks the real compiler's code generation")

if not IDENTITY:
    from hcompile import _C

    X86 = _C.host_target().startswith("x86-64")

# Intel's and AMD's AVX-512 machines, with every feature Halide knows for them.
AVX512_TARGETS = [
    "x86-64-linux-sse41-avx-avx2-avxvnni-fma-f16c-avx512-avx512_skylake-avx512_cannonlake-avx512_sapphirerapids",
    "x86-64-linux-sse41-avx-avx2-fma-f16c-avx512-avx512_skylake-avx512_cannonlake-avx512_zen4",
]

# Each aborted LLVM for AVX-512 before the exponent's bits were tested in 16 bits.
PROGRAMS = [
    ("c ** (np.sign(c) ^ c)", "np.array([7, 1, 0], np.uint8)"),
    ("np.reciprocal(a.squeeze()).astype(np.uint8) ** np.reciprocal(a.squeeze()).astype(np.uint8)",
     "np.array([[-9, 0, 916608842, 2, 8]], np.int32)"),
    ("(True | c) ** (True | c)", "np.array([[3, 0], [255, 1]], np.uint8)"),
    ("c ** (c | 1)", "np.arange(0, 256, 37, dtype=np.uint8)"),
    ("c ** np.where(c > 3, c, 7).astype(np.uint8)", "np.arange(0, 256, 51, dtype=np.uint8)"),
    ("np.uint8(3) ** (c & 5)", "np.arange(0, 16, dtype=np.uint8)"),
    ("c.astype(np.uint16) ** (c | 1).astype(np.uint16)", "np.arange(0, 256, 37, dtype=np.uint8)"),
]


def test_also_compile_for_is_checked_when_set():
    saved = hc.config.also_compile_for
    try:
        with pytest.raises(ValueError, match="not a Halide target"):
            hc.config.also_compile_for = ("x86-64-linux-avx9000",)
        with pytest.raises(ValueError, match="sequence of target strings"):
            hc.config.also_compile_for = "x86-64-linux-avx2"
        hc.config.also_compile_for = ["arm-64-linux"]  # any architecture: nothing runs there
        assert hc.config.also_compile_for == ("arm-64-linux",)
    finally:
        hc.config.also_compile_for = saved


def test_also_compile_for_runs_a_step_per_target():
    import numpy as np

    saved = hc.config.also_compile_for
    try:
        hc.config.also_compile_for = ("arm-64-linux",)
        f = hc.hcompile(lambda x: x * 2 + 1, fullgraph=True)
        x = np.arange(5, dtype=np.float32)
        np.testing.assert_array_equal(f(x), x * 2 + 1)
        steps = [name for name, _ in f.compile_records[-1]["report"]["step_ms"]]
        assert "also_compile_for arm-64-linux" in steps, steps
    finally:
        hc.config.also_compile_for = saved


@pytest.mark.skipif(IDENTITY or not X86, reason="AVX-512 targets are x86")
def test_uint8_powers_generate_avx512_code():
    checks = "\n".join(
        f"check({body!r}, {arg})" for body, arg in PROGRAMS)
    script = textwrap.dedent("""
        import numpy as np
        import hcompile as hc

        def check(body, arg):
            ns = {"np": np}
            exec(f"def f(a, c):\\n    return {body}\\n", ns)
            args = (arg, arg)
            with np.errstate(all="ignore"):
                want = ns["f"](*args)
            got = hc.hcompile(ns["f"], fullgraph=True)(*args)
            assert got.dtype == want.dtype and np.array_equal(got, want), (body, got, want)
            print("ok", body)
        """) + checks + "\n"
    env = dict(os.environ, HCOMPILE_ALSO_COMPILE_FOR=",".join(AVX512_TARGETS))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}"
    assert done.stdout.count("ok ") == len(PROGRAMS), done.stdout
