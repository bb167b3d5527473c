#include "hcompile/graph.h"

#include <cstring>
#include <tuple>

#include "hcompile/op_types.h"

namespace hc {

int64_t Node::size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

int64_t Node::int_attr(const std::string &name) const {
    auto it = attrs.find(name);
    if (it == attrs.end()) throw GraphError(std::string(op_name(kind)) + ": missing attribute '" + name + "'");
    if (auto *v = std::get_if<int64_t>(&it->second)) return *v;
    if (auto *d = std::get_if<double>(&it->second)) return static_cast<int64_t>(*d);
    throw GraphError(std::string(op_name(kind)) + ": attribute '" + name + "' is not an int");
}

double Node::float_attr(const std::string &name) const {
    auto it = attrs.find(name);
    if (it == attrs.end()) throw GraphError(std::string(op_name(kind)) + ": missing attribute '" + name + "'");
    if (auto *d = std::get_if<double>(&it->second)) return *d;
    if (auto *v = std::get_if<int64_t>(&it->second)) return static_cast<double>(*v);
    throw GraphError(std::string(op_name(kind)) + ": attribute '" + name + "' is not a number");
}

const std::vector<int64_t> &Node::ints_attr(const std::string &name) const {
    auto it = attrs.find(name);
    if (it == attrs.end()) throw GraphError(std::string(op_name(kind)) + ": missing attribute '" + name + "'");
    if (auto *v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
    throw GraphError(std::string(op_name(kind)) + ": attribute '" + name + "' is not a list of ints");
}

NodeId Graph::add_input(int arg_index, DType dtype, Shape shape, std::string loc) {
    for (int64_t d : shape) {
        if (d < 0) throw GraphError("input: negative size");
    }
    Node n;
    n.kind = OpKind::Input;
    n.dtype = dtype;
    n.shape = std::move(shape);
    n.attrs["arg"] = int64_t{arg_index};
    n.loc = std::move(loc);
    return append(std::move(n));
}

namespace {
Node constant_node(AttrValue value, DType dtype, std::string loc) {
    Node n;
    n.kind = OpKind::Constant;
    n.dtype = dtype;
    n.attrs["value"] = std::move(value);
    n.loc = std::move(loc);
    return n;
}
}  // namespace

NodeId Graph::add_constant(double value, DType dtype, std::string loc) {
    // A float32 (float16) constant holds NumPy's float32 (float16) value of `value` (one round
    // to nearest, as np.float32(value) does; NaN payloads keep their top bits), so equal values
    // have equal bits for CSE and folding starts from the value the kernel sees.
    value = round_to_float(value, dtype);
    return append(constant_node(value, dtype, std::move(loc)));
}

NodeId Graph::add_constant_int(int64_t value, DType dtype, std::string loc) {
    // Integers keep their exact value; floats are stored as doubles.
    AttrValue v = is_float(dtype) ? AttrValue(static_cast<double>(value)) : AttrValue(value);
    return append(constant_node(std::move(v), dtype, std::move(loc)));
}

NodeId Graph::add_op(OpKind kind, std::vector<NodeId> inputs, Attrs attrs, std::string loc) {
    if (op_class(kind) == OpClass::Leaf) throw GraphError("use add_input/add_constant for leaves");
    Node n;
    n.kind = kind;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.loc = std::move(loc);
    for (NodeId in : n.inputs) {
        if (in < 0 || in >= num_nodes()) throw GraphError(std::string(op_name(kind)) + ": bad input id");
    }
    infer_type(*this, n);
    return append(std::move(n));
}

NodeId Graph::append(Node node) {
    node.id = num_nodes();
    nodes_.push_back(std::move(node));
    return nodes_.back().id;
}

const Node &Graph::node(NodeId id) const {
    if (id < 0 || id >= num_nodes()) throw GraphError("no node with id " + std::to_string(id));
    return nodes_[id];
}

void Graph::set_outputs(std::vector<NodeId> outputs) {
    for (NodeId id : outputs) node(id);
    outputs_ = std::move(outputs);
}

double constant_value(const Node &node) { return node.float_attr("value"); }

namespace {

// One attribute value with its double (if any) replaced by its bit pattern.
std::variant<int64_t, uint64_t, std::string, std::vector<int64_t>> bitwise(const AttrValue &v) {
    if (auto *d = std::get_if<double>(&v)) {
        uint64_t bits;
        std::memcpy(&bits, d, sizeof bits);
        return bits;
    }
    if (auto *i = std::get_if<int64_t>(&v)) return *i;
    if (auto *s = std::get_if<std::string>(&v)) return *s;
    return std::get<std::vector<int64_t>>(v);
}

}  // namespace

bool attrs_less(const Attrs &a, const Attrs &b) {
    auto ia = a.begin(), ib = b.begin();
    for (; ia != a.end() && ib != b.end(); ++ia, ++ib) {
        if (ia->first != ib->first) return ia->first < ib->first;
        auto va = bitwise(ia->second), vb = bitwise(ib->second);
        if (va != vb) return va < vb;
    }
    return ia == a.end() && ib != b.end();
}

bool attrs_identical(const Attrs &a, const Attrs &b) { return !attrs_less(a, b) && !attrs_less(b, a); }

}  // namespace hc
