#include "hcompile/dtype.h"

#include <Halide.h>
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
};
}  // namespace

const char *dtype_name(DType t) { return kDTypes[static_cast<int>(t)].name; }

DType parse_dtype(const std::string &name) {
    for (const auto &info : kDTypes) {
        if (name == info.name) return info.dtype;
    }
    throw std::invalid_argument("hcompile does not support dtype '" + name + "'");
}

bool is_bool(DType t) { return t == DType::Bool; }
bool is_float(DType t) { return t == DType::Float16 || t == DType::Float32 || t == DType::Float64; }
bool is_signed_int(DType t) { return t >= DType::Int8 && t <= DType::Int64; }
bool is_unsigned_int(DType t) { return t >= DType::UInt8 && t <= DType::UInt64; }
int dtype_bits(DType t) { return kDTypes[static_cast<int>(t)].bits; }

DType float_dtype(int bits) { return bits == 16 ? DType::Float16 : bits == 32 ? DType::Float32 : DType::Float64; }

double round_to_float(double value, DType t) {
    if (t == DType::Float32) return static_cast<float>(value);
    if (t == DType::Float16) return static_cast<double>(Halide::float16_t(value));
    return value;
}

Halide::Type halide_type(DType t) {
    if (is_bool(t)) return Halide::Bool();
    if (is_float(t)) return Halide::Float(dtype_bits(t));
    if (is_signed_int(t)) return Halide::Int(dtype_bits(t));
    return Halide::UInt(dtype_bits(t));
}

}  // namespace hc
