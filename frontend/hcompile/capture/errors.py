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


def _init(self, reason, filename=None, lineno=None):
    # NumPy's exception classes have their own constructors (UFuncTypeError(ufunc, dtypes),
    # AxisError(axis, ndim)); bypass them and keep Unsupported's fields and message.
    self.reason, self.filename, self.lineno = reason, filename, lineno
    where = f"{filename}:{lineno}: " if filename is not None else ""
    Exception.__init__(self, f"{where}{reason}")


def _str(self):
    return str(self.args[0]) if self.args else self.reason


@functools.lru_cache(maxsize=None)
def _unsupported_like(error_type: type) -> type:
    for candidate in error_type.__mro__:
        if not issubclass(candidate, Exception) or candidate is Exception:
            break
        try:
            cls = type(candidate.__name__, (Unsupported, candidate),
                       {"__module__": "hcompile.errors", "__init__": _init, "__str__": _str,
                        "numpy_error_type": candidate})
            str(cls("probe"))
            return cls
        except TypeError:                # layout conflict: try a more general base
            continue
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
