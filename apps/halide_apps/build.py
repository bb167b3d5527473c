"""Builds the Halide apps (this folder's generators, CMakeLists.txt) once per autoscheduler plugin
into one Python extension module, with the Halide wheel's CMake package, and imports it."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import halide

import hcompile as hc

HERE = Path(__file__).resolve().parent
APPS = ["blur", "unsharp", "harris", "bilateral_grid", "conv_layer", "matmul", "hist_equalize"]
AUTOSCHEDULERS = ["HCompile", "Adams2019", "Mullapudi2016", "Li2018"]


def build_halide_apps(build_dir, apps=APPS, autoschedulers=AUTOSCHEDULERS, parallelism=None, quiet=False):
    """Configures and builds the apps in `build_dir` (incremental), returns the imported module.

    Each app is compiled ahead of time by the generator once per autoscheduler, which schedules
    it on the estimates the generator sets; the functions are `<app>_<autoscheduler>(inputs...,
    output)` on NumPy arrays (NumPy's axis order is the reverse of Halide's)."""
    build_dir = Path(build_dir)
    root = Path(halide.install_dir())
    cmake = shutil.which("cmake", path=os.path.dirname(sys.executable)) or shutil.which("cmake")
    ninja = shutil.which("ninja", path=os.path.dirname(sys.executable)) or shutil.which("ninja")
    if not cmake:
        raise RuntimeError("cmake is not installed (pip install cmake)")
    configure = [cmake, "-S", str(HERE), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                 f"-DHalide_DIR={root / 'lib64' / 'cmake' / 'Halide'}",
                 f"-DHalideHelpers_DIR={root / 'lib64' / 'cmake' / 'HalideHelpers'}",
                 f"-DHCOMPILE_PLUGIN={hc.plugin_path()}", f"-DPython_EXECUTABLE={sys.executable}",
                 f"-DHALIDE_APPS={';'.join(apps)}", f"-DAUTOSCHEDULERS={';'.join(autoschedulers)}",
                 f"-DPARALLELISM={parallelism or os.cpu_count() or 1}"]
    if ninja:
        configure += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={ninja}"]
    out = subprocess.DEVNULL if quiet else None
    subprocess.run(configure, check=True, stdout=out)
    subprocess.run([cmake, "--build", str(build_dir), "--parallel", str(os.cpu_count() or 1)], check=True, stdout=out)
    path = next(build_dir.glob("halide_apps*.so"))
    spec = importlib.util.spec_from_file_location("halide_apps", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
