"""Unsupported variants for the places where NumPy itself would raise.

When the user's code would raise in plain NumPy (``-bool_array``, shapes that do not broadcast,
an axis out of range ...), capture raises an ``Unsupported`` that is *also* an instance of the
exception type NumPy raises there. Callers that catch ``Unsupported`` fall back to plain Python,
which raises NumPy's real error; under ``fullgraph=True`` the user still gets an exception of
NumPy's type (``except TypeError`` keeps working).
"""
from __future__ import annotations

import functools

from ..errors import Unsupported


@functools.lru_cache(maxsize=None)
def _unsupported_like(error_type: type) -> type:
    for candidate in error_type.__mro__:
        if not issubclass(candidate, Exception) or candidate is Exception:
            break
        try:
            cls = type(candidate.__name__, (Unsupported, candidate),
                       {"__module__": "hcompile.errors", "numpy_error_type": candidate})
            cls("probe")                 # constructor must accept Unsupported's arguments
            return cls
        except TypeError:                # layout conflict / needs other constructor args:
            continue                     # try a more general base (UFuncTypeError -> TypeError)
    return Unsupported


def numpy_raises(error, reason: str) -> Unsupported:
    """``Unsupported(reason)`` that is also an instance of ``error`` (an exception type, or an
    exception instance whose type is used)."""
    error_type = error if isinstance(error, type) else type(error)
    return _unsupported_like(error_type)(reason)


def locate(e: Unsupported, filename, lineno) -> Unsupported:
    """Attach the instruction's location to an Unsupported raised without one (in place, so
    that its NumPy error type and traceback are kept)."""
    if e.filename is None:
        e.filename, e.lineno = filename, lineno
        e.args = (f"{filename}:{lineno}: {e.reason}",)
    return e
