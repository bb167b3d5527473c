"""hcompile: compile NumPy functions from their bytecode into fused Halide kernels.

    import hcompile as hc

    @hc.hcompile
    def f(x, w, b): ...

See README.md for the whole API.
"""
import os as _os
import sys as _sys

# Before Halide's LLVM starts (its first compile reads HL_LLVM_ARGS once): CUDA code rounds each
# float multiply and add on its own (PTX's .rn forms, which ptxas does not fuse), as NumPy does;
# core/src/lowering/gpu_rounding.cpp keeps LLVM itself from fusing them. Halide's Python module
# imported first may have compiled already: cuda.py then warns once, at its first GPU compile.
HALIDE_IMPORTED_FIRST = "halide" in _sys.modules
if "-nvptx-fma-level" not in _os.environ.get("HL_LLVM_ARGS", ""):
    _os.environ["HL_LLVM_ARGS"] = (_os.environ.get("HL_LLVM_ARGS", "") + " -nvptx-fma-level=0").strip()

from . import blas as _blas  # noqa: E402
from .api import CacheInfo, CompiledFunction, hcompile, reset
from .config import config
from .errors import CompileError, Unsupported
from .explain import Explanation, explain
from .logs import set_logs
from .plugin import plugin_path

_blas.load()

__version__ = "0.1.0"
__all__ = ["hcompile", "explain", "reset", "set_logs", "Unsupported", "CompileError", "Explanation",
           "CompiledFunction", "CacheInfo", "config", "plugin_path"]
