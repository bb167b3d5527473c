#include "hcompile/ops.h"

#include <stdexcept>

namespace hc {

const char *op_name(OpKind kind) {
    switch (kind) {
#define HC_OP_NAME(name, str) \
    case OpKind::name:        \
        return str;
        HC_FOR_EACH_OP(HC_OP_NAME)
#undef HC_OP_NAME
    }
    return "?";
}

OpKind parse_op(const std::string &name) {
#define HC_OP_PARSE(op, str) \
    if (name == str) return OpKind::op;
    HC_FOR_EACH_OP(HC_OP_PARSE)
#undef HC_OP_PARSE
    throw std::invalid_argument("unknown op '" + name + "'");
}

OpClass op_class(OpKind kind) {
    switch (kind) {
    case OpKind::Input:
    case OpKind::Constant:
    case OpKind::Extent:
        return OpClass::Leaf;
    case OpKind::Broadcast:
    case OpKind::Transpose:
    case OpKind::Reshape:
    case OpKind::Slice:
        return OpClass::Layout;
    case OpKind::Sum:
    case OpKind::Prod:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Any:
    case OpKind::All:
    case OpKind::Argmax:
    case OpKind::Argmin:
        return OpClass::Reduction;
    case OpKind::Matmul:
    case OpKind::MatmulSum:
        return OpClass::Matmul;
    default:
        return OpClass::Elementwise;
    }
}

}  // namespace hc
