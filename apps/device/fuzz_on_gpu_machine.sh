#!/usr/bin/env bash
# Runs the fuzzer on the lent GPU machine's 16 cores (not part of CI): ~0.01 s/program against
# ~0.055 s with 2 jobs here. Carry devdeps/ (ignored): halide312.tar.xz (the cp312 wheel's
# halide/ folder, as for build_on_gpu_machine.sh), bytecode/ (the pure-Python package), and
# spdlog_prefix/ (only used where the machine lacks libspdlog-dev; real files, since carried
# symlinks are dropped).
# Usage: bash apps/device/fuzz_on_gpu_machine.sh build | fuzz START COUNT [SECONDS] | repro FILE.py...
set -euo pipefail
root=$PWD
[ -d devdeps/halide ] || (cd devdeps && tar -xJf halide312.tar.xz)
export PYTHONPATH=$root/frontend:$root/devdeps:${PYTHONPATH:-}
# spdlog: the machine's own when it has one (mixing ours with its fmt crashed), else ours.
if ! ls /usr/lib/x86_64-linux-gnu/cmake/spdlog >/dev/null 2>&1; then
  export CMAKE_PREFIX_PATH=$root/devdeps/spdlog_prefix
  export LD_LIBRARY_PATH=$root/devdeps/spdlog_prefix/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
# Built by the image's default compiler wrapper, the module crashed (iostreams, then the compile;
# build_on_gpu_machine.sh names the wrapper's GCC 13 headers as the cause) unless the system
# libstdc++ is loaded first.
export LD_PRELOAD=/lib/x86_64-linux-gnu/libstdc++.so.6
if [ "$1" = build ]; then
  python3 -c "import sys, numpy, nanobind; print(sys.version, 'numpy', numpy.__version__, 'nanobind', nanobind.__version__)"
  nproc
  cmake -S . -B build312b -G Ninja -DCMAKE_BUILD_TYPE=Release -DHCOMPILE_BUILD_TESTS=OFF \
    -DPython_EXECUTABLE="$(command -v python3)" > "$OUT/cmake.log" 2>&1 || { tail -40 "$OUT/cmake.log"; exit 1; }
  cmake --build build312b -j "$(nproc)" --target _C > "$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
  cp build312b/_C*.so frontend/hcompile/
  python3 -c "
import numpy as np, hcompile as hc
f = hc.hcompile(lambda x: np.sin(x) * 2 + x.sum(), fullgraph=True)
x = np.linspace(0, 1, 1000)
print('smoke', np.allclose(f(x), np.sin(x) * 2 + x.sum()))"
elif [ "$1" = repro ]; then
  # Runs fuzz repro scripts (the machine has no gdb: HL_DEBUG_CODEGEN=1 in the environment shows
  # the Halide step a crash happens in).
  shift
  for f in "$@"; do echo "== $f"; timeout 120 python3 "$f" 2>&1 | tail -5 || true; done
else
  timeout "${4:-560}" python3 -u -m tests.fuzz --seed 3 --start "$2" --programs "$3" --jobs "$(nproc)" \
    --out "$OUT/fuzz" --timeout 120 --shrink-budget 0 > "$OUT/fuzz_log.txt" 2>&1 || true
  tail -30 "$OUT/fuzz_log.txt"
fi
