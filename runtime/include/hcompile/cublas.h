// Matrix products on a CUDA device through cuBLAS, called from GPU kernels as a Halide extern
// stage whose buffers live in device memory.
//
// The library is the one the caller's array library already loaded (PyTorch's, CuPy's) or
// NVIDIA's wheel, found by the frontend and loaded by path when the first GPU kernel is compiled;
// without it, GPU products stay Halide loops. Nothing here needs the CUDA Toolkit to build: the
// few entry points are looked up by name.
#pragma once

#include <HalideRuntime.h>

#include <cstdint>
#include <string>

namespace hc {

// Loads cuBLAS from `path`; returns an empty string, or why it cannot be used.
std::string load_cublas(const std::string &path);
bool cublas_available();

// Why the calling thread's last hc_cublas_gemm failed (empty: it did not), cleared on reading;
// run_on_cuda adds it to the kernel's error.
std::string take_cublas_error();

// The extern stage (its name is lowering.h's kCublasGemmName): out[..., m, n] = a[..., m, k] @
// b[..., k, n] over the region of `out` asked for, float32 or float64 (Halide order: dim 0 is n,
// dim 1 is m, the batch past them; a 2-D operand is one matrix for the whole batch), a batch in
// one strided batched call,
// on the device, context and stream of the call (`user_context` is run_on_cuda's
// CudaCallContext). The operands must already be in device memory with a unit stride in one
// dimension (the GPU's inputs are C-contiguous; Halide's own buffers are dense). Accumulates in
// the operands' precision: the handle's default math mode, never TF32.
extern "C" int hc_cublas_gemm(void *user_context, halide_buffer_t *a, halide_buffer_t *b, int32_t k,
                              halide_buffer_t *out);

}  // namespace hc
