#!/usr/bin/env bash
# The GPU tests and the GPU benchmark on the lent GPU machine (the `device` tool), in one go:
#   builds hcompile there (apps/device/build_on_gpu_machine.sh, files carried in .dev/; its header
#   lists them), runs the tests marked `gpu`, the differential suite compiled for the GPU, then the
#   GPU benches listed at the end (apps/README.md says what each measures). From the
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
  tests/python/test_gpu_cost_model.py tests/python/test_float16.py tests/python/test_cuda_point_rows.py \
  tests/python/test_cuda_staged_products.py tests/python/test_cuda_late_loads.py tests/python/test_cuda_fast_math.py \
  tests/python/test_cuda_tanh.py tests/python/test_cuda_stencils.py 2>&1 | tee "$OUT/gpu_tests.log" | tail -40
# The differential suite with every function compiled for the GPU (numpy_oracle's
# HCOMPILE_TEST_TARGET): NumPy arguments copied to the device, results compared with NumPy's.
# In parallel where pytest-xdist is there (its wheels and execnet's in .dev/whl).
PARALLEL=$(python3 -c "import xdist" 2>/dev/null && echo "-n $(nproc)")
DIFFERENTIAL="test_diff_chains.py test_diff_elementwise.py test_diff_layout.py test_diff_matmul.py
  test_diff_reductions.py test_diff_shape.py test_float16.py test_frontend_array_functions.py test_frontend_corpus.py
  test_frontend_in_place.py test_frontend_joins.py test_frontend_masks.py test_frontend_outer_eye.py
  test_frontend_ranges.py test_frontend_structure.py test_frontend_writes.py test_fuzz.py test_hardening_calls.py
  test_hardening_constants.py test_hardening_inputs.py test_hardening_odd_layouts.py test_hardening_reductions_ieee.py
  test_hardening_scalar_kinds.py test_hardening_special_values.py test_hardening_summation.py test_matmul_sums.py
  test_row_fusion.py test_frontend_random_programs.py test_stencil_fusion_random.py test_frontend_breaks.py
  test_frontend_loops.py test_frontend_derived_functions.py"
(cd tests/python && HCOMPILE_TEST_TARGET=cuda python3 -m pytest -q -p no:cacheprovider -p no:benchmark $PARALLEL -rfE \
  $DIFFERENTIAL) 2>&1 | tee "$OUT/gpu_differential.log" | tail -20
# Again with PyTorch CUDA tensors as the arguments (zero-copy, the C++ dispatcher's path), then
# with CuPy arrays.
(cd tests/python && HCOMPILE_TEST_TARGET=cuda-torch python3 -m pytest -q -p no:cacheprovider -p no:benchmark $PARALLEL \
  -rfE $DIFFERENTIAL) 2>&1 | tee "$OUT/gpu_differential_torch.log" | tail -20
(cd tests/python && HCOMPILE_TEST_TARGET=cuda-cupy python3 -m pytest -q -p no:cacheprovider -p no:benchmark $PARALLEL \
  -rfE $DIFFERENTIAL) 2>&1 | tee "$OUT/gpu_differential_cupy.log" | tail -20
python3 -m apps.gpu_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -20
python3 -m apps.gpu_fast_math_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -20
python3 -m apps.gpu_matmul --write "$OUT/gpu_bench.md" 2>&1 | tail -15
python3 -m apps.gpu_dynamic_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -10
python3 -m apps.gpu_cost_model_ranking --write "$OUT/gpu_bench.md" 2>&1 | tail -20
python3 -m apps.gpu_rows_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -20
python3 -m apps.gpu_few_rows_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -15
python3 -m apps.gpu_reductions_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -25
python3 -m apps.gpu_row_chains_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -15
python3 -m apps.gpu_dynamic_rows_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -15
python3 -m apps.gpu_dynamic_batch_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -15
python3 -m apps.gpu_attention_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -10
python3 -m apps.gpu_stencils_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -20
python3 -m apps.gpu_cupy_bench --write "$OUT/gpu_bench.md" 2>&1 | tail -20
