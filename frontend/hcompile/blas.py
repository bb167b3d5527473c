"""The BLAS libraries large float matrix products call. On the host (runtime/blas.h): the
OpenBLAS NumPy itself ships (``numpy.libs/libscipy_openblas64_*.so``), loaded once at import;
without it (a NumPy built against another BLAS), every product stays a Halide loop nest. On a
CUDA device (runtime/cublas.h): cuBLAS, the one the process already has (PyTorch and CuPy load
it) or NVIDIA's wheel's, loaded at the first GPU compile; without it, GPU products are Halide
kernels."""
from __future__ import annotations

import ctypes.util
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


def loaded_cublas():
    """The path of the cuBLAS this process has mapped already (PyTorch's, CuPy's), or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:   # address, perms, offset, device, inode[, path]
                path = line.split()[-1]
                if os.path.basename(path).startswith("libcublas.so"):
                    return path
    except OSError:
        pass
    return None


def cublas_path():
    """Where cuBLAS is: loaded already, NVIDIA's ``nvidia-cublas`` wheel, or the system's; None."""
    path = loaded_cublas()
    if path:
        return path
    try:
        import nvidia.cublas
        for folder in nvidia.cublas.__path__:
            found = sorted(glob.glob(os.path.join(folder, "lib", "libcublas.so.*")))
            if found:
                return found[0]
    except ImportError:
        pass
    return ctypes.util.find_library("cublas")


_cublas_tried = False


def disable_cublas():
    """GPU products stay Halide kernels in this process (apps/gpu_matmul.py compares the two);
    before the first GPU compile only: a loaded cuBLAS stays loaded."""
    global _cublas_tried
    _cublas_tried = True


def load_cublas():
    """Loads cuBLAS for GPU kernels (tried once); True when GPU products may call it."""
    global _cublas_tried
    if not _cublas_tried:
        _cublas_tried = True
        path = cublas_path()
        why = _C.load_cublas(path) if path else "not found (install PyTorch, CuPy or nvidia-cublas)"
        if why:
            logs.log("schedule", "no cuBLAS for GPU matrix products: %s", why)
    return _C.cublas_available()
