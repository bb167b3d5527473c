// Op kinds of the graph IR and their static properties. core/OPS.md documents each op.
#pragma once

#include <string>
#include <vector>

#include "hcompile/dtype.h"

namespace hc {

#define HC_FOR_EACH_OP(X)                                                                   \
    X(Input, "input") X(Constant, "constant") X(Cast, "cast") X(Broadcast, "broadcast")     \
    X(Neg, "neg") X(Abs, "abs") X(Square, "square") X(Sign, "sign") X(Exp, "exp")            \
    X(Log, "log") X(Log1p, "log1p") X(Expm1, "expm1") X(Sqrt, "sqrt") X(Sin, "sin")          \
    X(Log2, "log2") X(Log10, "log10") X(Arcsinh, "arcsinh") X(Arccosh, "arccosh")            \
    X(Arctanh, "arctanh") X(Exp2, "exp2") X(Cbrt, "cbrt")                                     \
    X(Cos, "cos") X(Tan, "tan") X(Tanh, "tanh") X(Sinh, "sinh") X(Cosh, "cosh")              \
    X(Arcsin, "arcsin") X(Arccos, "arccos") X(Arctan, "arctan") X(Reciprocal, "reciprocal")  \
    X(Floor, "floor") X(Ceil, "ceil") X(Rint, "rint") X(Trunc, "trunc") X(IsNan, "isnan")    \
    X(IsFinite, "isfinite") X(IsInf, "isinf") X(Invert, "invert") X(Add, "add")              \
    X(Sub, "sub") X(Mul, "mul") X(Div, "div") X(FloorDiv, "floordiv") X(Mod, "mod")          \
    X(Pow, "pow") X(Maximum, "maximum") X(Minimum, "minimum") X(Arctan2, "arctan2")          \
    X(Hypot, "hypot") X(Copysign, "copysign") X(Signbit, "signbit")                         \
    X(LeftShift, "left_shift") X(RightShift, "right_shift") X(Popcount, "popcount")         \
    X(BitwiseAnd, "bitwise_and") X(BitwiseOr, "bitwise_or") X(BitwiseXor, "bitwise_xor")     \
    X(Eq, "eq") X(Ne, "ne") X(Lt, "lt") X(Le, "le") X(Gt, "gt") X(Ge, "ge")                  \
    X(Where, "where") X(Sum, "sum") X(Prod, "prod") X(Max, "max") X(Min, "min")              \
    X(Any, "any") X(All, "all") X(Argmax, "argmax") X(Argmin, "argmin")                       \
    X(Matmul, "matmul") X(MatmulSum, "matmul_sum") X(Transpose, "transpose")                \
    X(Reshape, "reshape") X(Slice, "slice") X(SliceUpdate, "slice_update") X(Extent, "extent")

enum class OpKind {
#define HC_OP_ENUM(name, str) name,
    HC_FOR_EACH_OP(HC_OP_ENUM)
#undef HC_OP_ENUM
};

// How an op relates to fusion and lowering.
enum class OpClass {
    Leaf,         // input, constant, extent
    Elementwise,  // one output element from the same-index input elements (slice_update: its
                  // value operand is read at the slice's index instead)
    Layout,       // broadcast, transpose, reshape, slice: pure index remapping
    Reduction,    // sum/prod/max/min/any/all/argmax/argmin
    Matmul,       // matmul, matmul_sum
};

const char *op_name(OpKind kind);
OpKind parse_op(const std::string &name);  // throws std::invalid_argument
OpClass op_class(OpKind kind);

}  // namespace hc
