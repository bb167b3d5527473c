// Element types of the graph IR, named as NumPy names them.
#pragma once

#include <cstdint>
#include <string>

namespace Halide {
struct Type;
}

namespace hc {

enum class DType : uint8_t {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float32,
    Float64,
    // Last so that the other values keep their numbers. Kernels compute on float16 only through
    // casts: every float16 operation is widened to float32 and its result rounded back
    // (widen_float16 in passes.h), as NumPy's float16 loops do.
    Float16,
    // bfloat16 (ml_dtypes' NumPy dtype, torch.bfloat16): computed as float16 is, widened to
    // float32 and rounded back after every operation.
    BFloat16,
};

const char *dtype_name(DType t);
// Throws std::invalid_argument for names hcompile does not support (complex, object, ...).
DType parse_dtype(const std::string &name);

bool is_bool(DType t);
bool is_float(DType t);
// float16 or bfloat16: the dtypes kernels compute on only through float32 (widen_float16).
bool is_narrow_float(DType t);
bool is_signed_int(DType t);
bool is_unsigned_int(DType t);
inline bool is_int(DType t) { return is_signed_int(t) || is_unsigned_int(t); }
int dtype_bits(DType t);
// The float dtype of a Halide float type (float16, bfloat16, float32 or float64).
DType float_dtype(const Halide::Type &type);
// `value` rounded to nearest (ties to even) in float dtype `t`, as np.float32(value) or
// np.float16(value) give it (bfloat16 through float32, as ml_dtypes gives it); float64 and
// non-float dtypes pass it through.
double round_to_float(double value, DType t);

// bfloat16's bit pattern for `value` (rounded to float32, then to nearest even; NaN stays NaN).
uint16_t bfloat16_bits(double value);

Halide::Type halide_type(DType t);

}  // namespace hc
