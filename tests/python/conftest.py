"""pytest setup of the differential suite (tests/python/test_diff_*.py).

* Seeds: every run draws a fresh base seed (or takes HCOMPILE_TEST_SEED=N). Each test's `rng`
  fixture is seeded from (base seed, test id), so one failing test reproduces on its own with
  `HCOMPILE_TEST_SEED=N pytest 'tests/python/...::test_x[...]'`. The seed is printed in the header,
  in every assertion message (numpy_oracle.context()) and in a report section of each failure.
* HCOMPILE_TEST_IDENTITY=1 replaces the compiler by the identity (see numpy_oracle._identity_hc):
  the whole suite must pass that way; it proves the oracle logic and the expected errors are
  right before (and independently of) the compiler. Tests needing the real compiler are skipped.
"""

import os
import sys
import tempfile
import zlib

# The suite never reads or writes the user's tuning database (hc.config reads this at import).
os.environ["HCOMPILE_TUNING_DB"] = os.path.join(tempfile.mkdtemp(prefix="hcompile-tests-"), "tuning.sqlite")

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy_oracle  # noqa: E402

if os.environ.get("HCOMPILE_TEST_SEED"):
    _BASE_SEED = int(os.environ["HCOMPILE_TEST_SEED"])
else:
    _BASE_SEED = int.from_bytes(os.urandom(4), "little")
numpy_oracle.BASE_SEED = _BASE_SEED


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skips without one; tests/gpu/run_on_gpu_machine.sh)")
    config.addinivalue_line("markers", "hcompile_unclaimed: a case the compiler does not claim "
                            "(strict xfail on hc.Unsupported against the real compiler)")


def pytest_report_header(config):
    mode = "IDENTITY (compiler replaced by identity)" if numpy_oracle.IDENTITY else "real hcompile"
    return [f"hcompile differential tests: HCOMPILE_TEST_SEED={_BASE_SEED}  mode: {mode}"]


@pytest.fixture(autouse=True)
def _current_test(request):
    numpy_oracle.CURRENT_TEST = request.node.nodeid
    yield
    numpy_oracle.CURRENT_TEST = "?"


@pytest.fixture
def torch_cuda():
    """PyTorch, where it sees a CUDA GPU; else the test skips (the GPU tests' arrays)."""
    try:
        import torch
    except ImportError:
        pytest.skip("no PyTorch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU with PyTorch")
    return torch


@pytest.fixture
def rng(request):
    """np.random.Generator seeded from (HCOMPILE_TEST_SEED, test id)."""
    return np.random.default_rng([_BASE_SEED, zlib.crc32(request.node.nodeid.encode())])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        report.sections.append(
            ("hcompile seed",
             f"reproduce: HCOMPILE_TEST_SEED={_BASE_SEED} pytest '{item.nodeid}'"))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    n = len(numpy_oracle._COMPILED)
    misses = 0
    for f in numpy_oracle._COMPILED.values():
        try:
            misses += f.cache_info().misses
        except Exception:  # noqa: BLE001
            pass
    terminalreporter.write_line(
        f"hcompile differential: seed {_BASE_SEED}; {n} compiled wrappers, {misses} cache misses "
        f"(compiles) through numpy_oracle.compiled")
