"""Logging switches: ``hc.set_logs(...)`` or ``HCOMPILE_LOGS="graph_breaks,recompiles,..."``.

Graph breaks and recompiles log at WARNING by default, so they are never silent; the other
channels (guards, schedule, output_code) log at INFO once switched on.
"""
from __future__ import annotations

import logging
import os

CHANNELS = ("graph_breaks", "recompiles", "guards", "schedule", "output_code")
_DEFAULT_ON = {"graph_breaks", "recompiles"}
_enabled = set(_DEFAULT_ON)


def _configure_root():
    logger = logging.getLogger("hcompile")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("[hcompile] %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(logging.INFO)


def set_logs(**channels):
    """Switch log channels on or off, e.g. ``set_logs(schedule=True, graph_breaks=False)``."""
    for name, on in channels.items():
        if name not in CHANNELS:
            raise ValueError(f"unknown log channel {name!r}; known: {', '.join(CHANNELS)}")
        (_enabled.add if on else _enabled.discard)(name)


def enabled(channel):
    return channel in _enabled


def log(channel, message, *args):
    if channel in _enabled:
        level = logging.WARNING if channel in _DEFAULT_ON else logging.INFO
        logging.getLogger(f"hcompile.{channel}").log(level, message, *args)


def warn(message):
    """A warning that is not tied to a channel (an option that does less than its name says)."""
    logging.getLogger("hcompile.options").warning(message)


def _from_environment():
    spec = os.environ.get("HCOMPILE_LOGS")
    if spec is None:
        return
    _enabled.clear()
    for name in filter(None, (s.strip() for s in spec.split(","))):
        if name.startswith("-"):
            _enabled.discard(name[1:])
        elif name == "all":
            _enabled.update(CHANNELS)
        else:
            set_logs(**{name: True})


_configure_root()
_from_environment()
