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
};

const char *dtype_name(DType t);
// Throws std::invalid_argument for names hcompile does not support (float16, complex, object, ...).
DType parse_dtype(const std::string &name);

bool is_bool(DType t);
bool is_float(DType t);
bool is_signed_int(DType t);
bool is_unsigned_int(DType t);
inline bool is_int(DType t) { return is_signed_int(t) || is_unsigned_int(t); }
int dtype_bits(DType t);

Halide::Type halide_type(DType t);

}  // namespace hc
