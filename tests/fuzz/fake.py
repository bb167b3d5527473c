"""Stand-ins for hcompile that validate the fuzzer itself (`--oracle-check`).

identity: "compiles" to the function itself: every run must report no mismatch (a mismatch is a
  bug in the generator, the model or the comparison).
upcast: computes float32 in float64 and float64 in long double, then casts the results back to
  NumPy's dtypes: a differently rounded but legitimate implementation. Its mismatches must all be
  explainable by intermediate overflow, which float32 code must reproduce (read them, they are
  not counted against hcompile).
"""

import types

import numpy as np


class _Unsupported(Exception):
    pass


class _CompileError(Exception):
    pass


def _widen(a):
    up = {np.dtype(np.float32): np.float64, np.dtype(np.float64): np.longdouble}
    if isinstance(a, (np.ndarray, np.generic)) and a.dtype in up:
        return np.asarray(a).astype(up[a.dtype]) if isinstance(a, np.ndarray) \
            else up[a.dtype](a)
    return a


def _narrow(r, like):
    if isinstance(like, tuple):
        return tuple(_narrow(x, y) for x, y in zip(r, like))
    if isinstance(like, np.ndarray) and like.dtype.kind == "f" and np.shape(r) == like.shape:
        return np.asarray(r).astype(like.dtype)
    if isinstance(like, np.generic) and like.dtype.kind == "f":
        return like.dtype.type(r)
    return like


def module(mode: str):
    def hcompile(fn, **options):
        if mode == "identity":
            return fn

        def upcast(*args):
            ref = fn(*args)
            try:
                r = fn(*[_widen(a) for a in args])
            except Exception:  # noqa: BLE001
                return ref
            return _narrow(r, ref)
        return upcast

    return types.SimpleNamespace(hcompile=hcompile, reset=lambda: None,
                                 Unsupported=_Unsupported, CompileError=_CompileError)
