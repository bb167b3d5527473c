// The graph IR: a typed, static-shape dataflow graph captured from one Python function.
// Nodes are stored in topological order (every input id is smaller than the node's own id).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "hcompile/dtype.h"
#include "hcompile/ops.h"

namespace hc {

using Shape = std::vector<int64_t>;
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;
using Attrs = std::map<std::string, AttrValue>;
using NodeId = int;

// Raised for malformed graphs: bad op use, typing-rule violations, verifier failures.
struct GraphError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Node {
    NodeId id = -1;
    OpKind kind = OpKind::Input;
    DType dtype = DType::Float32;
    Shape shape;
    std::vector<NodeId> inputs;
    Attrs attrs;
    std::string loc;  // "file:line" of the Python source this node came from

    int ndim() const { return static_cast<int>(shape.size()); }
    int64_t size() const;
    bool has_attr(const std::string &name) const { return attrs.count(name) != 0; }
    int64_t int_attr(const std::string &name) const;
    double float_attr(const std::string &name) const;
    const std::vector<int64_t> &ints_attr(const std::string &name) const;
};

class Graph {
public:
    NodeId add_input(int arg_index, DType dtype, Shape shape, std::string loc = "");
    NodeId add_constant(double value, DType dtype, std::string loc = "");
    NodeId add_constant_int(int64_t value, DType dtype, std::string loc = "");
    // Adds an op; its dtype and shape come from the op's typing rule (throws GraphError).
    NodeId add_op(OpKind kind, std::vector<NodeId> inputs, Attrs attrs = {}, std::string loc = "");
    // Appends a node whose type is already known (used by passes that rebuild graphs).
    NodeId append(Node node);

    const Node &node(NodeId id) const;
    const std::vector<Node> &nodes() const { return nodes_; }
    int num_nodes() const { return static_cast<int>(nodes_.size()); }

    void set_outputs(std::vector<NodeId> outputs);
    const std::vector<NodeId> &outputs() const { return outputs_; }

private:
    std::vector<Node> nodes_;
    std::vector<NodeId> outputs_;
};

// The value of a `constant` node as a double (exact for every int up to 2^53).
double constant_value(const Node &node);

// A strict weak order on attribute maps that compares float attributes by their bits, so that
// NaN equals only the same NaN and -0.0 differs from 0.0 (`<` on doubles treats NaN as equal to
// everything and -0.0 as equal to 0.0). Every pass that dedups or matches nodes by their
// attributes (constants above all) keys them with this.
bool attrs_less(const Attrs &a, const Attrs &b);
bool attrs_identical(const Attrs &a, const Attrs &b);

}  // namespace hc
