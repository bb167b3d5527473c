// Matrix products through a BLAS library, called from kernels as a Halide extern stage.
//
// The library is the OpenBLAS that NumPy itself ships (its ILP64 build, `scipy_openblas64_`),
// loaded by path once per process (the frontend finds it beside NumPy); without one, products
// stay Halide loops. NumPy calls the same library for float products, so results agree with
// NumPy's to the last bit on the common path.
#pragma once

#include <HalideRuntime.h>

#include <cstdint>
#include <string>

namespace hc {

// Loads the BLAS library at `path`; returns an empty string, or why it cannot be used.
std::string load_blas(const std::string &path);
bool blas_available();

// The extern stage (its name is lowering.h's kBlasGemmName): out[..., m, n] = a[..., m, k] @ b[..., k, n] over
// the region of `out` asked for, 2-D float32 or float64 (Halide order: dim 0 is n, dim 1 is m).
// Any strides work; a unit stride in either dimension of an operand goes to BLAS as it is.
extern "C" int hc_blas_gemm(halide_buffer_t *a, halide_buffer_t *b, int32_t k, halide_buffer_t *out);

}  // namespace hc
