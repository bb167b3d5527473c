"""``hc.config``: process-wide settings read at compile time."""
from __future__ import annotations

import os

_SETTINGS = ("recompile_limit", "also_compile_for")


class Config:
    """``recompile_limit``: compiled entries per function (and per resume function or loop
    body); past it, entries already compiled keep serving and new argument types, shapes and
    values run as plain Python, with one warning naming the guard that changed.

    ``also_compile_for``: Halide target strings (a tuple) every kernel is also compiled for, its
    machine code then discarded; a failure to generate code for a CPU this machine lacks (say
    ``x86-64-linux-avx512-avx512_skylake``) then shows up here. For tests and fuzzing; it slows
    every compile. The environment variable ``HCOMPILE_ALSO_COMPILE_FOR`` (comma-separated)
    sets it at import."""

    def __init__(self):
        self.recompile_limit = 8
        spec = os.environ.get("HCOMPILE_ALSO_COMPILE_FOR", "")
        self.also_compile_for = tuple(name.strip() for name in spec.split(",") if name.strip())

    def __setattr__(self, name, value):
        if name not in _SETTINGS:
            raise AttributeError(f"hcompile.config has no setting {name!r}")
        if name == "recompile_limit" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"recompile_limit must be a positive int, got {value!r}")
        if name == "also_compile_for":
            value = _checked_targets(value)
        object.__setattr__(self, name, value)

    def __repr__(self):
        settings = ", ".join(f"{name}={getattr(self, name)!r}" for name in _SETTINGS)
        return f"hcompile.config({settings})"


def _checked_targets(value):
    from . import _C

    if isinstance(value, str):
        raise ValueError(f"also_compile_for must be a sequence of target strings, got {value!r}")
    names = tuple(value)
    if not all(isinstance(name, str) for name in names):
        raise ValueError(f"also_compile_for must be a sequence of target strings, got {value!r}")
    for name in names:
        _C.parse_target(name)  # ValueError naming the problem
    return names


config = Config()
