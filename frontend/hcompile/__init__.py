"""hcompile: compile NumPy functions from their bytecode into fused Halide kernels.

    import hcompile as hc

    @hc.hcompile
    def f(x, w, b): ...

See README.md for the whole API.
"""
from . import blas as _blas
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
