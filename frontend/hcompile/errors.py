"""Exception types of the public API."""


class Unsupported(Exception):
    """A construct hcompile cannot capture. Carries where it was met.

    Raised to the user only under ``fullgraph=True``; otherwise the function runs as plain Python
    and the reason is logged and reported by ``hc.explain``.
    """

    def __init__(self, reason, filename=None, lineno=None):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        where = f"{filename}:{lineno}: " if filename is not None else ""
        super().__init__(f"{where}{reason}")


class CompileError(Exception):
    """The captured graph could not be lowered or compiled by Halide."""
