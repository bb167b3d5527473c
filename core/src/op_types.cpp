#include "hcompile/op_types.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace hc {

namespace {

// Which dtypes an op accepts.
enum Accepts : unsigned { kBool = 1, kInt = 2, kFloat = 4, kNumeric = kInt | kFloat, kAny = 7 };

[[noreturn]] void fail(const Node &n, const std::string &why) {
    std::string where = n.loc.empty() ? "" : " (" + n.loc + ")";
    throw GraphError(std::string(op_name(n.kind)) + ": " + why + where);
}

void require_arity(const Node &n, size_t arity) {
    if (n.inputs.size() != arity) {
        fail(n, "expects " + std::to_string(arity) + " inputs, got " + std::to_string(n.inputs.size()));
    }
}

void require_dtype(const Node &n, DType t, unsigned accepts) {
    unsigned cls = is_bool(t) ? kBool : is_float(t) ? kFloat : kInt;
    if (!(cls & accepts)) fail(n, std::string("does not accept dtype ") + dtype_name(t));
}

std::string shape_str(const Shape &s) {
    std::string out = "(";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
}

unsigned elementwise_accepts(OpKind k) {
    switch (k) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Square:
    case OpKind::Sign:
    case OpKind::Sub:
    case OpKind::FloorDiv:
    case OpKind::Mod:
    case OpKind::Pow:
        return kNumeric;
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Rint:
    case OpKind::Trunc:
    case OpKind::Reciprocal:
        return kNumeric;
    case OpKind::LeftShift:
    case OpKind::RightShift:
    case OpKind::Popcount:
        return kInt;
    case OpKind::Invert:
    case OpKind::BitwiseAnd:
    case OpKind::BitwiseOr:
    case OpKind::BitwiseXor:
        return kInt | kBool;
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::Cast:
    case OpKind::Where:
        return kAny;
    default:  // transcendentals, div, arctan2, hypot, copysign, isnan/isfinite/isinf, signbit
        return kFloat;
    }
}

bool returns_bool(OpKind k) {
    switch (k) {
    case OpKind::IsNan:
    case OpKind::IsFinite:
    case OpKind::IsInf:
    case OpKind::Signbit:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
        return true;
    default:
        return false;
    }
}

int arity(OpKind k) {
    switch (k) {
    case OpKind::Where:
        return 3;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::FloorDiv:
    case OpKind::Mod:
    case OpKind::Pow:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Arctan2:
    case OpKind::Hypot:
    case OpKind::Copysign:
    case OpKind::LeftShift:
    case OpKind::RightShift:
    case OpKind::BitwiseAnd:
    case OpKind::BitwiseOr:
    case OpKind::BitwiseXor:
    case OpKind::Eq:
    case OpKind::Ne:
    case OpKind::Lt:
    case OpKind::Le:
    case OpKind::Gt:
    case OpKind::Ge:
    case OpKind::Matmul:
        return 2;
    default:
        return 1;
    }
}

void type_elementwise(const Graph &g, Node &n) {
    require_arity(n, arity(n.kind));
    const Node &first = g.node(n.inputs[0]);
    if (n.kind == OpKind::Cast) {
        n.dtype = parse_dtype(std::get<std::string>(n.attrs.at("dtype")));
        n.shape = first.shape;
        return;
    }
    // `where` takes a bool condition first; its value operands define the type.
    size_t value_start = n.kind == OpKind::Where ? 1 : 0;
    if (n.kind == OpKind::Where && !is_bool(first.dtype)) fail(n, "condition must be bool");
    const Node &ref = g.node(n.inputs[value_start]);
    for (NodeId in : n.inputs) {
        const Node &x = g.node(in);
        if (x.shape != ref.shape) {
            fail(n, "input shapes differ: " + shape_str(x.shape) + " vs " + shape_str(ref.shape) +
                        " (broadcast explicitly)");
        }
    }
    for (size_t i = value_start; i < n.inputs.size(); ++i) {
        if (g.node(n.inputs[i]).dtype != ref.dtype) fail(n, "input dtypes differ (cast explicitly)");
    }
    require_dtype(n, ref.dtype, elementwise_accepts(n.kind));
    n.dtype = returns_bool(n.kind) ? DType::Bool : ref.dtype;
    n.shape = ref.shape;
}

void type_broadcast(const Graph &g, Node &n) {
    require_arity(n, 1);
    const Node &x = g.node(n.inputs[0]);
    const auto &target = n.ints_attr("shape");
    if (target.size() < x.shape.size()) fail(n, "cannot broadcast to fewer dimensions");
    for (int64_t d : target) {
        if (d < 0) fail(n, "negative size in the target shape");
    }
    size_t offset = target.size() - x.shape.size();
    for (size_t i = 0; i < x.shape.size(); ++i) {
        if (x.shape[i] != 1 && x.shape[i] != target[offset + i]) {
            fail(n, "cannot broadcast " + shape_str(x.shape) + " to " + shape_str(Shape(target)));
        }
    }
    n.dtype = x.dtype;
    n.shape = Shape(target.begin(), target.end());
}

void type_reduction(const Graph &g, Node &n) {
    require_arity(n, 1);
    const Node &x = g.node(n.inputs[0]);
    bool keepdims = n.int_attr("keepdims") != 0;
    std::set<int64_t> axes;
    if (n.kind == OpKind::Argmax || n.kind == OpKind::Argmin) {
        axes.insert(n.int_attr("axis"));
        require_dtype(n, x.dtype, kAny);
        n.dtype = DType::Int64;
    } else {
        const auto &list = n.ints_attr("axes");
        axes.insert(list.begin(), list.end());
        if (axes.size() != list.size()) fail(n, "repeated axis");
        if (n.kind == OpKind::Any || n.kind == OpKind::All) {
            require_dtype(n, x.dtype, kBool);
        }
        n.dtype = x.dtype;
    }
    n.shape.clear();
    for (int64_t a : axes) {
        if (a < 0 || a >= x.ndim()) fail(n, "axis " + std::to_string(a) + " out of range");
        if (x.shape[a] == 0 && (n.kind == OpKind::Max || n.kind == OpKind::Min ||
                                n.kind == OpKind::Argmax || n.kind == OpKind::Argmin)) {
            fail(n, "reduction over an empty axis has no identity");
        }
    }
    for (int i = 0; i < x.ndim(); ++i) {
        if (!axes.count(i)) {
            n.shape.push_back(x.shape[i]);
        } else if (keepdims) {
            n.shape.push_back(1);
        }
    }
}

// The shape of a @ b (ndim >= 2, equal batch dims, matching contracted sizes).
Shape product_shape(const Node &n, const Node &a, const Node &b) {
    if (a.ndim() < 2 || a.ndim() != b.ndim()) fail(n, "operands must have equal ndim >= 2");
    int nd = a.ndim();
    for (int i = 0; i < nd - 2; ++i) {
        if (a.shape[i] != b.shape[i]) fail(n, "batch dimensions differ (broadcast explicitly)");
    }
    if (a.shape[nd - 1] != b.shape[nd - 2]) {
        fail(n, "contracted sizes differ: " + shape_str(a.shape) + " @ " + shape_str(b.shape));
    }
    Shape result = a.shape;
    result[nd - 1] = b.shape[nd - 1];
    return result;
}

// matmul_sum(c, a0, b0, a1, b1, ...) = c + a0 @ b0 + a1 @ b1 + ...: every product has c's shape
// and every operand c's float dtype (combine_matmul_sums builds it; nothing is cast inside).
void type_matmul_sum(const Graph &g, Node &n) {
    if (n.inputs.size() < 3 || n.inputs.size() % 2 == 0) fail(n, "expects an addend and pairs of operands");
    const Node &c = g.node(n.inputs[0]);
    require_dtype(n, c.dtype, kFloat);
    for (size_t i = 1; i < n.inputs.size(); i += 2) {
        const Node &a = g.node(n.inputs[i]), &b = g.node(n.inputs[i + 1]);
        if (a.dtype != c.dtype || b.dtype != c.dtype) fail(n, "operand dtypes differ from the addend's");
        const Shape product = product_shape(n, a, b);
        if (product != c.shape) fail(n, "a product's shape " + shape_str(product) + " is not the addend's " + shape_str(c.shape));
    }
    n.dtype = c.dtype;
    n.shape = c.shape;
}

void type_matmul(const Graph &g, Node &n) {
    if (n.kind == OpKind::MatmulSum) return type_matmul_sum(g, n);
    require_arity(n, 2);
    const Node &a = g.node(n.inputs[0]);
    const Node &b = g.node(n.inputs[1]);
    const Shape shape = product_shape(n, a, b);
    if (a.dtype != b.dtype) fail(n, "operand dtypes differ");
    require_dtype(n, a.dtype, kAny);
    n.dtype = a.dtype;
    n.shape = shape;
}

void type_transpose(const Graph &g, Node &n) {
    require_arity(n, 1);
    const Node &x = g.node(n.inputs[0]);
    const auto &perm = n.ints_attr("perm");
    std::vector<int64_t> sorted(perm);
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> iota(x.ndim());
    std::iota(iota.begin(), iota.end(), 0);
    if (sorted != iota) fail(n, "perm is not a permutation of the dimensions");
    n.dtype = x.dtype;
    n.shape.clear();
    for (int64_t p : perm) n.shape.push_back(x.shape[p]);
}

void type_reshape(const Graph &g, Node &n) {
    require_arity(n, 1);
    const Node &x = g.node(n.inputs[0]);
    const auto &shape = n.ints_attr("shape");
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0) fail(n, "negative size (resolve -1 before building the graph)");
        count *= d;
    }
    if (count != x.size()) fail(n, "cannot reshape " + shape_str(x.shape) + " to " + shape_str(Shape(shape)));
    n.dtype = x.dtype;
    n.shape = Shape(shape.begin(), shape.end());
}

void type_slice(const Graph &g, Node &n) {
    require_arity(n, 1);
    const Node &x = g.node(n.inputs[0]);
    const auto &starts = n.ints_attr("starts");
    const auto &stops = n.ints_attr("stops");
    const auto &steps = n.ints_attr("steps");
    if ((int)starts.size() != x.ndim() || (int)stops.size() != x.ndim() || (int)steps.size() != x.ndim()) {
        fail(n, "needs one start, stop and step per dimension");
    }
    n.dtype = x.dtype;
    n.shape.clear();
    for (int i = 0; i < x.ndim(); ++i) {
        int64_t start = starts[i], stop = stops[i], step = steps[i];
        if (step == 0) fail(n, "step 0");
        int64_t len = step > 0 ? (stop - start + step - 1) / step : (start - stop - step - 1) / -step;
        len = std::max<int64_t>(len, 0);
        if (len > 0) {
            int64_t last = start + (len - 1) * step;
            if (start < 0 || start >= x.shape[i] || last < 0 || last >= x.shape[i]) {
                fail(n, "slice out of bounds in dimension " + std::to_string(i));
            }
        }
        n.shape.push_back(len);
    }
}

// slice_update(x, v): x with the elements of a basic slice replaced by v. The slice is given like
// `slice`'s (starts, stops, steps); v has the slice's shape and x's dtype.
void type_slice_update(const Graph &g, Node &n) {
    require_arity(n, 2);
    const Node &x = g.node(n.inputs[0]);
    const Node &v = g.node(n.inputs[1]);
    if (x.ndim() == 0) fail(n, "a 0-d array is replaced whole, not updated");
    if (v.dtype != x.dtype) fail(n, "value dtype differs (cast explicitly)");
    Node as_slice = n;
    as_slice.kind = OpKind::Slice;
    as_slice.inputs = {n.inputs[0]};
    type_slice(g, as_slice);
    if (as_slice.shape != v.shape) {
        fail(n, "value shape " + shape_str(v.shape) + " is not the slice's " + shape_str(as_slice.shape));
    }
    n.dtype = x.dtype;
    n.shape = x.shape;
}

}  // namespace

void infer_type(const Graph &graph, Node &node) {
    if (node.kind == OpKind::SliceUpdate) return type_slice_update(graph, node);
    switch (op_class(node.kind)) {
    case OpClass::Leaf:
        return;  // leaves carry their type from construction
    case OpClass::Elementwise:
        return type_elementwise(graph, node);
    case OpClass::Reduction:
        return type_reduction(graph, node);
    case OpClass::Matmul:
        return type_matmul(graph, node);
    case OpClass::Layout:
        break;
    }
    switch (node.kind) {
    case OpKind::Broadcast:
        return type_broadcast(graph, node);
    case OpKind::Transpose:
        return type_transpose(graph, node);
    case OpKind::Reshape:
        return type_reshape(graph, node);
    case OpKind::Slice:
        return type_slice(graph, node);
    default:
        fail(node, "no typing rule");
    }
}

}  // namespace hc
