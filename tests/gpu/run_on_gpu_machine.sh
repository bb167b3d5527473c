#!/usr/bin/env bash
# The GPU tests and the GPU benchmark on the lent GPU machine (the `device` tool), in one go:
#   builds hcompile there (apps/device/build_on_gpu_machine.sh, files carried in .dev/; its header
#   lists them), runs the tests marked `gpu`, apps/gpu_bench.py, apps/gpu_matmul.py, apps/gpu_dynamic_bench.py and
#   apps/gpu_cost_model_ranking.py. From the
#   repository root:
#     device run: bash tests/gpu/run_on_gpu_machine.sh   (carry: .dev)
# Writes $OUT/gpu_tests.log and $OUT/gpu_bench.md (both benchmarks' sections) where $OUT is set.
set -uo pipefail
OUT=${OUT:-/tmp}
bash apps/device/build_on_gpu_machine.sh || exit 1
. /tmp/env.sh
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -m pytest -q -p no:cacheprovider tests/python/test_cuda.py tests/python/test_cuda_dynamic_shapes.py \
  tests/python/test_gpu_cost_model.py tests/python/test_float16.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -40
python3 -m apps.gpu_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -20
python3 -m apps.gpu_matmul --write "$OUT/gpu_bench.md" 2>&1 | tail -15
python3 -m apps.gpu_dynamic_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -10
python3 -m apps.gpu_cost_model_ranking --write "$OUT/gpu_bench.md" 2>&1 | tail -20
