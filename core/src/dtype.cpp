#include "hcompile/dtype.h"

#include <Halide.h>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace hc {

namespace {
struct DTypeInfo {
    DType dtype;
    const char *name;
    int bits;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", 1},        {DType::Int8, "int8", 8},       {DType::Int16, "int16", 16},
    {DType::Int32, "int32", 32},     {DType::Int64, "int64", 64},    {DType::UInt8, "uint8", 8},
    {DType::UInt16, "uint16", 16},   {DType::UInt32, "uint32", 32},  {DType::UInt64, "uint64", 64},
    {DType::Float32, "float32", 32}, {DType::Float64, "float64", 64}, {DType::Float16, "float16", 16},
    {DType::BFloat16, "bfloat16", 16},
};

// The value of a bfloat16 bit pattern: float32's top half.
double bfloat16_from_bits(uint16_t bits) {
    const uint32_t wide = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &wide, sizeof f);
    return f;
}
}  // namespace

const char *dtype_name(DType t) { return kDTypes[static_cast<int>(t)].name; }

DType parse_dtype(const std::string &name) {
    for (const auto &info : kDTypes) {
        if (name == info.name) return info.dtype;
    }
    throw std::invalid_argument("hcompile does not support dtype '" + name + "'");
}

bool is_bool(DType t) { return t == DType::Bool; }
bool is_float(DType t) { return is_narrow_float(t) || t == DType::Float32 || t == DType::Float64; }
bool is_narrow_float(DType t) { return t == DType::Float16 || t == DType::BFloat16; }
bool is_signed_int(DType t) { return t >= DType::Int8 && t <= DType::Int64; }
bool is_unsigned_int(DType t) { return t >= DType::UInt8 && t <= DType::UInt64; }
int dtype_bits(DType t) { return kDTypes[static_cast<int>(t)].bits; }

DType float_dtype(const Halide::Type &type) {
    if (type.is_bfloat()) return DType::BFloat16;
    return type.bits() == 16 ? DType::Float16 : type.bits() == 32 ? DType::Float32 : DType::Float64;
}

double round_to_float(double value, DType t) {
    if (t == DType::Float32) return static_cast<float>(value);
    if (t == DType::Float16) return static_cast<double>(Halide::float16_t(value));
    if (t == DType::BFloat16) return bfloat16_from_bits(bfloat16_bits(value));
    return value;
}

uint16_t bfloat16_bits(double value) {
    // Through float32, as ml_dtypes and torch convert a double (a value within a hair of a
    // bfloat16 halfway point may round twice, as there).
    const float f = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if (std::isnan(f)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
    const uint32_t odd = (bits >> 16) & 1u;
    return static_cast<uint16_t>((bits + 0x7fffu + odd) >> 16);
}

Halide::Type halide_type(DType t) {
    if (is_bool(t)) return Halide::Bool();
    if (t == DType::BFloat16) return Halide::BFloat(16);
    if (is_float(t)) return Halide::Float(dtype_bits(t));
    if (is_signed_int(t)) return Halide::Int(dtype_bits(t));
    return Halide::UInt(dtype_bits(t));
}

}  // namespace hc
