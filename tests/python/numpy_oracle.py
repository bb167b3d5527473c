"""Shared helpers of the differential test suite: compiled-vs-NumPy oracle, inputs, tolerances.

The oracle is NumPy itself: every test runs the plain Python function and the same function
compiled with ``hc.hcompile(fn, fullgraph=True)`` on identical (deep-copied, layout-preserving)
inputs and compares results. ``fullgraph=True`` means anything not compiled raises
``hc.Unsupported``, so a passing test proves the compiled path ran.

Switches (environment):
  HCOMPILE_TEST_SEED=N       reproduce a run (the seed is printed in the header and on failure)
  HCOMPILE_TEST_IDENTITY=1   replace ``hc.hcompile`` by the identity (with a fake cache_info and
                             explain); validates the oracle logic and the expected errors without
                             the compiler. Tests that need the real compiler are skipped then.
  HCOMPILE_TEST_TARGET=cuda  compile every function of ``compiled()`` for this target (its
                             inputs stay NumPy arrays: hcompile copies them to the GPU and the
                             results back), so the whole suite checks the GPU's kernels against
                             NumPy (tests/gpu/run_on_gpu_machine.sh runs it there)
  HCOMPILE_TEST_TARGET=cuda-torch  the same, but ``check()`` hands the compiled function PyTorch
                             CUDA tensors (zero-copy: the C++ dispatcher's path for device
                             arrays, results as tensors on the device), and compares their
                             values back on the host; a call with an argument PyTorch cannot
                             hold as it is (negative strides, read-only, an unsigned dtype past
                             uint8), or with two sharing memory, keeps NumPy's arrays
  HCOMPILE_TEST_TARGET=cuda-cupy  the same with CuPy arrays (CuPy holds every dtype NumPy's
                             tests use but float16's neighbours the same way; a read-only
                             argument or a negative stride keeps NumPy's arrays)
"""

from __future__ import annotations

import copy
import itertools
import linecache
import math
import os
import types
import warnings

import numpy as np
import pytest

# --------------------------------------------------------------------------------------------
# The hcompile module under test (real or identity stand-in)

IDENTITY = os.environ.get("HCOMPILE_TEST_IDENTITY", "") not in ("", "0")
# HCOMPILE_TEST_IDENTITY=upcast: the stand-in computes floats in higher precision (float32 ->
# float64, float64 -> longdouble) and casts back to NumPy's result dtype; it differs from NumPy
# by NumPy's own rounding error, so passing this way shows the tolerances are not too tight
# and no test depends on bit-exact float rounding.
UPCAST = os.environ.get("HCOMPILE_TEST_IDENTITY", "") == "upcast"
TARGET = os.environ.get("HCOMPILE_TEST_TARGET", "")
# cuda-torch, cuda-cupy: compiled for "cuda", called with that library's CUDA arrays (check(),
# _to_device).
DEVICE_ARGS = {"cuda-torch": "torch", "cuda-cupy": "cupy"}.get(TARGET)
if DEVICE_ARGS:
    TARGET = "cuda"


def _identity_hc():
    """A stand-in for ``hcompile`` whose compiler is the identity.

    Its cache_info simulates a cache keyed by (type, dtype, shape) of arrays and (type, value) of
    Python scalars, so the cache tests check the bookkeeping the real cache must have.
    """

    class Unsupported(Exception):
        pass

    class CompileError(Exception):
        pass

    class CacheInfo(types.SimpleNamespace):
        pass

    class Identity:
        def __init__(self, fn, **options):
            self.fn = fn
            self.options = options
            self.keys = set()
            self.hits = self.misses = self.recompiles = 0

        def __call__(self, *args, **kwargs):
            key = tuple(
                (type(a), a.dtype.str, a.shape) if isinstance(a, np.ndarray) else (type(a), repr(a))
                for a in args
            )
            if key in self.keys:
                self.hits += 1
            else:
                self.misses += 1
                if self.keys:
                    self.recompiles += 1
                self.keys.add(key)
            if UPCAST:
                return _upcast_call(self.fn, args, kwargs)
            return self.fn(*args, **kwargs)

        def cache_info(self):
            return CacheInfo(entries=len(self.keys), hits=self.hits, misses=self.misses,
                             recompiles=self.recompiles)

    def hcompile(fn=None, **options):
        if fn is None:
            return lambda f: Identity(f, **options)
        return Identity(fn, **options)

    class Explanation(types.SimpleNamespace):
        def __str__(self):
            return f"identity: {self.graph_count} graph(s), {self.graph_break_count} break(s)"

    def explain(fn, *args, **kwargs):
        fn(*args, **kwargs)
        return Explanation(graph_count=1, graph_break_count=0, break_reasons=[],
                           graphs=["<identity>"])

    return types.SimpleNamespace(hcompile=hcompile, explain=explain, reset=lambda: None,
                                 Unsupported=Unsupported, CompileError=CompileError,
                                 __name__="hcompile_identity")


def _upcast_call(fn, args, kwargs):
    ref = fn(*clone(args), **kwargs)
    up = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble}

    def widen(a):
        if isinstance(a, np.ndarray) and a.dtype in up:
            w = a.astype(up[a.dtype])
            if not a.flags.writeable:
                w.flags.writeable = False
            return w
        return a

    def narrow(r, like):
        if isinstance(like, tuple) and isinstance(r, tuple) and len(r) == len(like):
            return tuple(narrow(x, y) for x, y in zip(r, like))
        if isinstance(like, np.ndarray) and isinstance(r, np.ndarray) and \
                r.shape == like.shape and like.dtype.kind == "f":
            return r.astype(like.dtype)
        if isinstance(like, np.generic) and like.dtype.kind == "f" and \
                isinstance(r, (np.generic, np.ndarray)) and np.shape(r) == ():
            return like.dtype.type(r)
        return like

    try:
        with np.errstate(all="ignore"):
            r = fn(*[widen(a) for a in args], **kwargs)
    except Exception:  # noqa: BLE001
        return ref
    return narrow(r, ref)


if IDENTITY:
    hc = _identity_hc()
else:
    import hcompile as hc  # noqa: E402  (the real compiler; an ImportError here is a real failure)

real_only = pytest.mark.skipif(IDENTITY, reason="needs the real compiler (HCOMPILE_TEST_IDENTITY)")


def unclaimed(reason):
    """Mark a case the compiler explicitly does not claim (core/OPS.md or its own Unsupported
    message): strict xfail that only accepts hc.Unsupported -- a wrong answer still fails, and
    so does an unexpected pass (then remove the mark). No-op in identity mode."""
    if IDENTITY:
        return pytest.mark.hcompile_unclaimed
    return pytest.mark.xfail(strict=True, raises=hc.Unsupported, reason=reason)

# --------------------------------------------------------------------------------------------
# Seed bookkeeping (conftest sets these; they are quoted in every assertion message)

BASE_SEED: int | None = None
CURRENT_TEST: str = "?"


def context() -> str:
    return (f"[seed: HCOMPILE_TEST_SEED={BASE_SEED} pytest '{CURRENT_TEST}'"
            f"{' identity' if IDENTITY else ''}]")


# --------------------------------------------------------------------------------------------
# Compiled functions, shared across the calls of one test (each hcompile wrapper keeps its own
# cache). Not shared across tests: a wrapper has a limit of compiled entries (8 today), and a
# test's failure (or crash) should not depend on which tests ran before it.

_COMPILED: dict = {}


def target_options() -> dict:
    """``hc.hcompile``'s target option under HCOMPILE_TEST_TARGET (none otherwise), for the tests
    that compile their functions themselves."""
    return {"target": TARGET} if TARGET else {}


def compiled(fn, **options):
    """hc.hcompile(fn, fullgraph=True, **options), memoised per (test, fn, options)."""
    options.setdefault("fullgraph", True)
    for name, value in target_options().items():
        options.setdefault(name, value)
    key = (CURRENT_TEST, fn, tuple(sorted(options.items())))
    if key not in _COMPILED:
        _COMPILED[key] = hc.hcompile(fn, **options)
    return _COMPILED[key]


_SRC_FNS: dict = {}


def fn_from_src(src: str, name: str = "f", extra_globals: dict | None = None):
    """Build a function from source text with literal constants (memoised by text).

    Parametrised tests use this instead of closures so each captured function holds its axis,
    shape and constants as literals; the text is registered with linecache so tracebacks and
    the compiler's source locations can show it.
    """
    key = (src, name, tuple(sorted((extra_globals or {}).items())) if extra_globals else ())
    if key in _SRC_FNS:
        return _SRC_FNS[key]
    filename = f"<hcompile-test-{len(_SRC_FNS)}>"
    text = src if src.endswith("\n") else src + "\n"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    g = {"np": np, "__name__": "hcompile_generated"}
    if extra_globals:
        g.update(extra_globals)
    exec(compile(text, filename, "exec"), g)
    fn = g[name]
    _SRC_FNS[key] = fn
    return fn


# --------------------------------------------------------------------------------------------
# Tolerances: stated here and only here.
#
# * Integer and boolean outputs: exact.
# * Floats, elementwise: RTOL_PER_OP per operation in the chain (`ops`). float32: 2e-6 ≈ 16 ulp
#   per op. Single IEEE ops (+ - * / sqrt) are correctly rounded in both NumPy and Halide, but
#   transcendentals differ by ≤ 2-4 ulp between NumPy's SIMD kernels and libm/Halide, a fused
#   chain may contract a*b+c into an FMA or reassociate, and later ops amplify an earlier op's
#   relative error (exp(y) turns an absolute error in y into a relative one). float64: 1e-12
#   per op, the same reasoning with generous headroom (still ~1e4 times tighter than float32).
# * Chains with cancellation (x - mean(x), a*b - c*d): a relative tolerance is meaningless near
#   zero, so for ops > 1 the absolute tolerance is rtol times the largest finite |expected|.
# * Reductions over n elements (`reduce=n`): any summation order satisfies
#   |error| <= (n-1) eps sum|x_i|; realistic orders (pairwise in NumPy, lane-wise sequential in
#   a vectorised Halide loop) have errors ~ eps sqrt(n) |x|. We allow rtol + RED_ULPS eps sqrt(n)
#   relative and RED_ULPS eps n `scale` absolute, where `scale` is the typical |element|
#   (tests pass it: max|x| for sum, max|x|/n for mean, ...). Both are far below the size of a
#   dropped/duplicated element or a wrong axis.
# * Single ops get atol = a few times the smallest normal, so flushing denormals to zero is
#   tolerated (Halide may run with FTZ/DAZ) but nothing else.

RTOL_PER_OP = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-6,
               np.dtype(np.float64): 1e-12}
RED_ULPS = 8


def tolerance(dtype, ops=1, reduce=1, scale=None, expected=None):
    """(rtol, atol) for a float result of `dtype` (see the table above)."""
    dtype = np.dtype(dtype)
    eps = float(np.finfo(dtype).eps)
    rtol = RTOL_PER_OP[dtype] * ops
    atol = 4 * float(np.finfo(dtype).tiny)
    if reduce > 1:
        rtol += RED_ULPS * eps * math.sqrt(reduce)
        if scale is not None:
            atol += RED_ULPS * eps * reduce * scale
    if ops > 1 or reduce > 1:
        if scale is None and expected is not None:
            scale = finite_max_abs(expected)
        if scale is not None:
            atol += rtol * scale
    elif scale is not None:
        atol += rtol * scale
    return rtol, atol


def finite_max_abs(x) -> float:
    """Largest finite |value| in x (arrays, scalars, tuples); 0 when none."""
    if isinstance(x, (tuple, list)):
        return max((finite_max_abs(v) for v in x), default=0.0)
    a = np.asarray(x)
    if a.dtype.kind not in "fiub" or a.size == 0:
        return 0.0
    a = a.astype(np.float64)
    a = a[np.isfinite(a)]
    return float(np.max(np.abs(a))) if a.size else 0.0


# --------------------------------------------------------------------------------------------
# Layout-preserving copies (copy.deepcopy makes strided/negative-stride views contiguous)

def clone(x):
    """Deep copy that keeps an array's strides (transposed, stepped, reversed, broadcast views)
    and its writeable flag; recurses into tuples, lists and dicts."""
    if isinstance(x, np.ndarray):
        if x.dtype.hasobject or x.size == 0 or x.ndim == 0:
            out = x.copy()
        else:
            isz = x.itemsize
            lo = sum(s * (n - 1) for s, n in zip(x.strides, x.shape) if s < 0)
            hi = sum(s * (n - 1) for s, n in zip(x.strides, x.shape) if s > 0)
            if any(s % isz for s in x.strides):
                out = x.copy()
            else:
                buf = np.zeros((hi - lo) // isz + 1, dtype=x.dtype)
                out = np.ndarray(x.shape, x.dtype, buffer=buf, offset=-lo, strides=x.strides)
                if x.ndim and 0 in x.strides:
                    # broadcast view: write through a stride-free view of the distinct elements
                    idx = tuple(slice(0, 1) if s == 0 else slice(None) for s in x.strides)
                    out[idx] = x[idx]
                else:
                    out[...] = x
        if not x.flags.writeable:
            out.flags.writeable = False
        return out
    if isinstance(x, tuple):
        return tuple(clone(v) for v in x)
    if isinstance(x, list):
        return [clone(v) for v in x]
    if isinstance(x, dict):
        return {k: clone(v) for k, v in x.items()}
    return copy.deepcopy(x)


def _same_value_exact(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(
            _same_value_exact(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same_value_exact(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return type(a) is type(b) and a == b


# --------------------------------------------------------------------------------------------
# Result comparison


def _leaf_kind(x):
    return "ndarray" if isinstance(x, np.ndarray) else type(x).__name__


def assert_same_result(got, expected, *, rtol=None, atol=None, ops=1, reduce=1, scale=None,
                       path="result"):
    """Same Python type, dtype and shape; exact for ints/bools; allclose (equal_nan) for floats."""
    where = f"{path} {context()}"
    assert type(got) is type(expected), (
        f"{where}: type {type(got).__name__} != NumPy's {type(expected).__name__}")
    if isinstance(expected, (tuple, list)):
        assert len(got) == len(expected), f"{where}: length {len(got)} != {len(expected)}"
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same_result(g, e, rtol=rtol, atol=atol, ops=ops, reduce=reduce, scale=scale,
                               path=f"{path}[{i}]")
        return
    if isinstance(expected, dict):
        assert list(got) == list(expected), f"{where}: keys {list(got)} != NumPy's {list(expected)}"
        for k in expected:
            assert_same_result(got[k], expected[k], rtol=rtol, atol=atol, ops=ops, reduce=reduce,
                               scale=scale, path=f"{path}[{k!r}]")
        return
    if isinstance(expected, (np.ndarray, np.generic)):
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != NumPy's {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} != NumPy's {expected.shape}"
        if isinstance(expected, np.ndarray) and expected.flags.writeable:
            assert got.flags.writeable, f"{where}: result is read-only, NumPy's is writeable"
        kind = expected.dtype.kind
        if kind in "biu":
            if not np.array_equal(got, expected):
                g, e = np.asarray(got), np.asarray(expected)
                bad = np.argwhere(g != e)
                first = tuple(bad[0]) if bad.size else ()
                raise AssertionError(
                    f"{where}: {int((g != e).sum())} of {e.size} elements differ (exact "
                    f"{expected.dtype}); first at {first}: got {g[first]!r}, NumPy {e[first]!r}\n"
                    f"got:\n{g!r}\nNumPy:\n{e!r}")
        elif kind in "fc" and expected.dtype in RTOL_PER_OP:
            r, a = tolerance(expected.dtype, ops=ops, reduce=reduce, scale=scale,
                             expected=expected)
            r = r if rtol is None else rtol
            a = a if atol is None else atol
            np.testing.assert_allclose(got, expected, rtol=r, atol=a, equal_nan=True,
                                       err_msg=f"{where} (rtol={r:g}, atol={a:g})")
        else:
            # Dtypes hcompile does not compute (they run as Python): NumPy's exact answer,
            # with NaN/NaT in the same places.
            nan_aware = kind in "fcmM"
            assert np.array_equal(got, expected, equal_nan=nan_aware), (
                f"{where}: {got!r} != {expected!r}")
        return
    if isinstance(expected, float):
        r, a = tolerance(np.float64, ops=ops, reduce=reduce, scale=scale, expected=expected)
        np.testing.assert_allclose(got, expected, rtol=r if rtol is None else rtol,
                                   atol=a if atol is None else atol, equal_nan=True,
                                   err_msg=where)
        return
    assert got == expected, f"{where}: {got!r} != NumPy's {expected!r}"


def _involves_float16(x) -> bool:
    if isinstance(x, (tuple, list)):
        return any(_involves_float16(v) for v in x)
    return isinstance(x, (np.ndarray, np.generic)) and x.dtype == np.float16


def _public_type(cls):
    """The public exception class NumPy's (possibly private) exception class stands for."""
    from tests.fuzz.compare import public_type

    return public_type(cls)


def run_numpy(fn, args, kwargs=None):
    """(result, exception) of the plain function, warnings silenced (we compare values)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return fn(*args, **(kwargs or {})), None
        except Exception as e:  # noqa: BLE001  (any NumPy error is part of the semantics)
            return None, e


_TORCH_DTYPES = {"bool", "int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"}
_CUPY_DTYPES = _TORCH_DTYPES | {"uint16", "uint32", "uint64", "complex64", "complex128"}


def _device_can_hold(a: np.ndarray) -> bool:
    """Whether the library's CUDA array can stand for NumPy array `a` with the same semantics:
    its dtype, no negative stride (torch has none), writeable (a write into a read-only view
    raises in NumPy, where a device array would take it)."""
    dtypes = _TORCH_DTYPES if DEVICE_ARGS == "torch" else _CUPY_DTYPES
    return a.dtype.name in dtypes and a.flags.writeable and all(st >= 0 for st in a.strides)


def _arrays_in(x):
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (tuple, list)):
        return [a for v in x for a in _arrays_in(v)]
    return []


def _on_device(host: np.ndarray, shape, strides):
    """The library's CUDA array of contiguous `host`'s memory, viewed with `shape` and (byte)
    `strides`."""
    if DEVICE_ARGS == "torch":
        import torch
        whole = torch.from_numpy(host).cuda()
        return whole if strides is None else torch.as_strided(whole, shape, [st // host.itemsize for st in strides])
    import cupy
    whole = cupy.asarray(host)
    return whole if strides is None else cupy.lib.stride_tricks.as_strided(whole, shape, strides)


def _to_device(args):
    """`args` with their NumPy arrays as the library's CUDA arrays of the same strides (a device
    copy of the array's memory, viewed with its strides; recursing into tuples and lists). All
    of them, or none where the library cannot hold one (_device_can_hold) or two share memory
    (each would get its own copy): mixed, the call would be another call than the one NumPy made."""
    arrays = _arrays_in(args)
    if not all(_device_can_hold(a) for a in arrays) or any(
            np.shares_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:]):
        return list(args)

    def one(x):
        if isinstance(x, (tuple, list)):
            return type(x)(one(v) for v in x)
        if not isinstance(x, np.ndarray):
            return x
        if x.size == 0 or x.ndim == 0 or any(st % x.itemsize for st in x.strides):
            return _on_device(np.array(x, copy=True), None, None)
        # The memory from the array's first element to its last, copied to the device and viewed
        # there with the array's own strides (transposed and stepped layouts kept).
        elements = sum((n - 1) * st for n, st in zip(x.shape, x.strides)) // x.itemsize + 1
        span = np.lib.stride_tricks.as_strided(x, shape=(elements,), strides=(x.itemsize,)).copy()
        return _on_device(span, x.shape, x.strides)
    return one(list(args))


def _device_arrays_in(x) -> bool:
    """Whether `x` (recursing into tuples and lists) holds an array of the library's."""
    if isinstance(x, (tuple, list)):
        return any(_device_arrays_in(v) for v in x)
    return type(x).__module__.split(".")[0] == DEVICE_ARGS


def _from_device(got, like):
    """The library's arrays in `got` back as NumPy (a 0-d array where NumPy gave a scalar: that
    scalar)."""
    if isinstance(got, (tuple, list)):
        likes = like if isinstance(like, (tuple, list)) and len(like) == len(got) else [None] * len(got)
        return type(got)(_from_device(g, e) for g, e in zip(got, likes))
    module = type(got).__module__.split(".")[0]
    if module in ("torch", "cupy") and hasattr(got, "shape"):
        host = got.cpu().numpy() if module == "torch" else __import__("cupy").asnumpy(got)
        return host[()] if isinstance(like, np.generic) and host.ndim == 0 else host
    return got


def _raised_in_graph_break(exc) -> bool:
    """Whether `exc` came out of the Python a graph break runs (hcompile's resume.py)."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename.replace(os.sep, "/").endswith("hcompile/resume.py"):
            return True
        tb = tb.tb_next
    return False


def check(fn, *args, rtol=None, atol=None, ops=1, reduce=1, scale=None, cfn=None,
          **compile_options):
    """Run `fn` with NumPy and compiled (fullgraph=True) on identical copies of `args`.

    Asserts the same Python type / dtype / shape of the result, exact equality for integer and
    boolean results, allclose (equal_nan) within `tolerance(...)` for floats, that the compiled
    call left its inputs unmodified (as NumPy did), and that if NumPy raises, the compiled call
    raises the same exception type (or a subclass of it). `cfn` overrides the compiled function
    (default: `compiled(fn, **compile_options)`, shared across calls). Returns NumPy's result.
    """
    cfn = cfn if cfn is not None else compiled(fn, **compile_options)
    snapshot = clone(args)
    np_args = clone(args)
    hc_args = clone(args)
    expected, np_exc = run_numpy(fn, np_args)

    call_args = _to_device(hc_args) if DEVICE_ARGS else hc_args
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            got = cfn(*call_args)
            hc_exc = None
        except Exception as e:  # noqa: BLE001
            got, hc_exc = None, e
    if DEVICE_ARGS:
        got = _from_device(got, expected)
        hc_args = _from_device(call_args, np_args)
        if hc_exc is not None and _raised_in_graph_break(hc_exc) and (np_exc is None or not isinstance(
                hc_exc, _public_type(type(np_exc)))):
            # A graph break runs its instruction as Python on the caller's arrays: on torch tensors,
            # torch's methods and errors (`t.mean(dtype=np.float32)` is a TypeError, an empty
            # `t.max()` a RuntimeError), as the function itself would on them uncompiled; CuPy's
            # on CuPy's arrays.
            pytest.xfail(f"graph break ran as Python on {DEVICE_ARGS} arrays: {type(hc_exc).__name__}: {hc_exc}")

    if np_exc is not None and hc_exc is None and DEVICE_ARGS and _device_arrays_in(call_args):
        # What NumPy refuses, the library may take (CuPy stores an empty selection of a 2-D value
        # where NumPy raises): a graph break ran that instruction as Python on the library's
        # arrays, so the answer must be the function's own on them, uncompiled.
        own, own_exc = run_numpy(fn, _to_device(clone(args)))
        if own_exc is None:
            assert_same_result(got, _from_device(own, expected), rtol=rtol, atol=atol, ops=ops, reduce=reduce,
                               scale=scale)
            pytest.xfail(f"{DEVICE_ARGS}'s arrays take what NumPy refuses ({type(np_exc).__name__}: {np_exc})")
    if np_exc is not None:
        if hc_exc is None:
            raise AssertionError(
                f"NumPy raised {type(np_exc).__name__}: {np_exc}; compiled returned "
                f"{got!r} {context()}")
        if not isinstance(hc_exc, _public_type(type(np_exc))):
            raise AssertionError(
                f"NumPy raised {type(np_exc).__name__}: {np_exc}; compiled raised "
                f"{type(hc_exc).__name__}: {hc_exc} {context()}") from hc_exc
        return None

    if hc_exc is not None:
        if (not IDENTITY and isinstance(hc_exc, hc.Unsupported)
                and _involves_float16(expected)):
            # float16 is not an IR dtype (core/OPS.md); NumPy picks it for bool/int8 inputs
            pytest.xfail(f"float16 result not supported: {hc_exc}")
        hc_exc.add_note(f"compiled call raised; NumPy returned {_leaf_kind(expected)} "
                        f"{getattr(expected, 'dtype', '')} {context()}")
        raise hc_exc

    # inputs: the compiled call must leave them exactly as NumPy's call left its own copy
    for i, (before, after_np, after_hc) in enumerate(zip(snapshot, np_args, hc_args)):
        if _same_value_exact(before, after_np):
            assert _same_value_exact(before, after_hc), (
                f"compiled function modified its input argument {i} {context()}")
        else:
            assert_same_result(after_hc, after_np, rtol=rtol, atol=atol, ops=ops,
                               path=f"argument {i} after the call")

    assert_same_result(got, expected, rtol=rtol, atol=atol, ops=ops, reduce=reduce, scale=scale)
    return expected


def check_raises_same(fn, *args, cfn=None, **compile_options):
    """NumPy must raise on these args, and the compiled function the same exception type."""
    expected, np_exc = run_numpy(fn, clone(args))
    assert np_exc is not None, f"test bug: NumPy did not raise, returned {expected!r}"
    check(fn, *args, cfn=cfn, **compile_options)
    return np_exc


# --------------------------------------------------------------------------------------------
# Inputs

DTYPES = ["float32", "float64", "int32", "int64", "bool"]
FLOAT_DTYPES = ["float32", "float64"]
INT_DTYPES = ["int32", "int64"]


def make(rng, shape, dtype, kind="normal", specials=0.0, layout="C", low=None, high=None):
    """A random array of `shape` and `dtype` (or a NumPy scalar when shape is None).

    kind (floats): normal | pos (0.05..10) | unit (-1..1) | small (-3..3) | halves (k/2, for
    rounding ties) | mixed (normal with halves, zeros and out-of-domain values)
    kind (ints): small (-9..9) | normal (-100..100) | wide (full range) | nonneg (0..9) | nonzero
    specials: fraction of float elements replaced by nan/inf/-inf/0/-0.0
    layout: C | F (transposed view) | step (every other element of a larger array) |
            rev (negative strides) | bcast (stride-0 broadcast view, read-only)
    """
    dtype = np.dtype(dtype)
    scalar = shape is None
    shape = () if scalar else tuple(shape)
    if layout == "F":
        base = make(rng, shape[::-1], dtype, kind, specials, "C", low, high)
        return base.T
    if layout == "step":
        big = make(rng, tuple(2 * n for n in shape), dtype, kind, specials, "C", low, high)
        return big[tuple(slice(None, None, 2) for _ in shape)]
    if layout == "rev":
        base = make(rng, shape, dtype, kind, specials, "C", low, high)
        return base[tuple(slice(None, None, -1) for _ in shape)]
    if layout == "bcast":
        row = make(rng, shape[-1:] if shape else (), dtype, kind, specials, "C", low, high)
        return np.broadcast_to(row, shape)

    if dtype.kind == "b":
        a = rng.random(shape) < 0.5
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = {"small": (-9, 10), "normal": (-100, 101), "nonneg": (0, 10),
                  "nonzero": (-9, 10), "pos": (1, 10),
                  "wide": (int(info.min), int(info.max) + 1)}.get(kind, (-100, 101))
        if low is not None:
            lo = low
        if high is not None:
            hi = high
        a = rng.integers(lo, hi, size=shape, dtype=dtype, endpoint=False)
        if kind == "nonzero":
            a = np.where(a == 0, dtype.type(1), a).astype(dtype)
    else:
        if kind == "pos":
            a = rng.uniform(0.05, 10.0, shape)
        elif kind == "unit":
            a = rng.uniform(-1.0, 1.0, shape)
        elif kind == "small":
            a = rng.uniform(-3.0, 3.0, shape)
        elif kind == "halves":
            a = rng.integers(-12, 13, size=shape) / 2.0
        elif kind == "uniform":
            a = rng.uniform(low if low is not None else 0.0, high if high is not None else 1.0,
                            shape)
        else:
            a = rng.standard_normal(shape) * 2.0
            if kind == "mixed" and a.size:
                m = rng.random(shape)
                a = np.where(m < 0.15, rng.integers(-6, 7, size=shape) / 2.0, a)
                a = np.where((m >= 0.15) & (m < 0.2), 0.0, a)
        a = np.asarray(a, dtype=np.float64).astype(dtype)
        if specials and a.size:
            mask = rng.random(shape) < specials
            vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], dtype=dtype)
            a = np.where(mask, vals[rng.integers(0, len(vals), size=shape)], a).astype(dtype)
    if scalar:
        return dtype.type(a[()])
    return np.ascontiguousarray(a) if shape else np.asarray(a, dtype=dtype)


def shapes_product(*lists):
    return list(itertools.product(*lists))
