"""Where the HCompile Halide plugin lives, for Halide's own tools and bindings.

    import halide as hl, hcompile as hc
    hl.load_plugin(hc.plugin_path())
    pipeline.apply_autoscheduler(target, hl.AutoschedulerParams("HCompile", {"parallelism": "2"}))

A generator takes it as `-p <plugin_path()> autoscheduler=HCompile`.
"""
from pathlib import Path

from . import _C

PLUGIN_NAME = "libautoschedule_hcompile.so"


def plugin_path() -> str:
    """The path of libautoschedule_hcompile.so, installed beside hcompile's extension module."""
    path = Path(_C.__file__).with_name(PLUGIN_NAME)
    if not path.is_file():
        raise FileNotFoundError(f"the HCompile plugin is not installed: {path} is missing (rebuild hcompile)")
    return str(path)
