"""``hc.config``: process-wide settings read at compile time."""
from __future__ import annotations


class Config:
    """``recompile_limit``: compiled entries per function (and per resume function or loop
    body); past it, entries already compiled keep serving and new argument types, shapes and
    values run as plain Python, with one warning naming the guard that changed."""

    def __init__(self):
        self.recompile_limit = 8

    def __setattr__(self, name, value):
        if name == "recompile_limit" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ValueError(f"recompile_limit must be a positive int, got {value!r}")
        if name not in ("recompile_limit",):
            raise AttributeError(f"hcompile.config has no setting {name!r}")
        object.__setattr__(self, name, value)

    def __repr__(self):
        return f"hcompile.config(recompile_limit={self.recompile_limit})"


config = Config()
