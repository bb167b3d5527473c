"""The BLAS library large float matrix products call (runtime/blas.h): the OpenBLAS NumPy
itself ships (``numpy.libs/libscipy_openblas64_*.so``), loaded once at import. Without it (a
NumPy built against another BLAS), every product stays a Halide loop nest."""
from __future__ import annotations

import glob
import os

import numpy as np

from . import _C, logs


def numpy_openblas():
    """The path of NumPy's bundled OpenBLAS, or None."""
    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    found = sorted(glob.glob(os.path.join(folder, "libscipy_openblas64_*.so")))
    return found[0] if found else None


def load():
    """Loads NumPy's OpenBLAS for kernels; True when products may call it."""
    path = numpy_openblas()
    if path is None:
        return False
    why = _C.load_blas(path)
    if why:
        logs.log("schedule", "no BLAS for matrix products: %s", why)
    return not why
