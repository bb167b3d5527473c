"""``HCOMPILE_DEBUG_DIR``: one folder per compiled graph with every stage's text."""
from __future__ import annotations

import itertools
import os
import re

_counter = itertools.count()


def enabled():
    return bool(os.environ.get("HCOMPILE_DEBUG_DIR"))


def write(name, report):
    root = os.environ.get("HCOMPILE_DEBUG_DIR")
    if not root:
        return None
    folder = os.path.join(root, f"{next(_counter):03d}_{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}")
    os.makedirs(folder, exist_ok=True)
    files = {
        "captured_graph.txt": report["captured_graph"],
        "optimized_graph.txt": report["optimized_graph"],
        "regions.txt": report["regions"],
        "schedule.txt": report["schedule"],
        "schedule.cpp": report["schedule_source"],
        "analysis.txt": report["analysis"],
        "lowered_stmt.txt": report["lowered_stmt"],
        "compile_steps.txt": "".join(f"{step}: {ms:.2f} ms\n" for step, ms in report["step_ms"])
        + f"target: {report['target']}\n",
    }
    for filename, text in files.items():
        with open(os.path.join(folder, filename), "w") as f:
            f.write(text)
    return folder
