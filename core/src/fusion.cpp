#include "hcompile/fusion.h"

#include <algorithm>
#include <set>

#include "hcompile/printer.h"

namespace hc {

namespace {

// Recomputing an inlined node costs this many op units before we prefer to store it. On CPU a
// pass over memory costs about as much as ~20 cheap vector ops per element.
constexpr int kRecomputeBudget = 24;

int own_cost(const Node &n) {
    switch (n.kind) {
    case OpKind::Exp: case OpKind::Log: case OpKind::Log1p: case OpKind::Expm1: case OpKind::Sin:
    case OpKind::Cos: case OpKind::Tan: case OpKind::Tanh: case OpKind::Sinh: case OpKind::Cosh:
    case OpKind::Arcsin: case OpKind::Arccos: case OpKind::Arctan: case OpKind::Arctan2: case OpKind::Pow:
        return 10;
    case OpKind::Div: case OpKind::FloorDiv: case OpKind::Mod: case OpKind::Sqrt: case OpKind::Reciprocal:
        return 3;
    default:
        return op_class(n.kind) == OpClass::Layout ? 0 : 1;
    }
}

}  // namespace

Partition partition_into_regions(const Graph &graph) {
    const int n = graph.num_nodes();
    Partition p;
    p.materialized.assign(n, false);

    std::vector<int> inline_cost(n, 0);
    for (const Node &node : graph.nodes()) {
        if (op_class(node.kind) == OpClass::Leaf) continue;
        int cost = own_cost(node);
        for (NodeId in : node.inputs) cost += inline_cost[in];
        inline_cost[node.id] = std::min(cost, 1 << 20);
    }

    for (NodeId out : graph.outputs()) p.materialized[out] = true;
    for (const Node &node : graph.nodes()) {
        OpClass cls = op_class(node.kind);
        if (cls == OpClass::Reduction || cls == OpClass::Matmul) p.materialized[node.id] = true;
        if (cls == OpClass::Matmul) {
            for (NodeId in : node.inputs) {
                if (op_class(graph.node(in).kind) == OpClass::Elementwise) p.materialized[in] = true;
            }
        }
    }

    // Backwards: the set of regions each node is computed in, given the roots chosen so far.
    std::vector<std::set<NodeId>> used_by(n);
    for (int id = n - 1; id >= 0; --id) {
        const Node &node = graph.node(id);
        if (op_class(node.kind) == OpClass::Leaf) continue;
        if (!p.materialized[id] && used_by[id].size() >= 2 && inline_cost[id] > kRecomputeBudget) {
            p.materialized[id] = true;
        }
        for (NodeId in : node.inputs) {
            if (p.materialized[id]) {
                used_by[in].insert(id);
            } else {
                used_by[in].insert(used_by[id].begin(), used_by[id].end());
            }
        }
    }

    for (const Node &node : graph.nodes()) {
        if (!p.materialized[node.id] || op_class(node.kind) == OpClass::Leaf) continue;
        Region region;
        region.root = node.id;
        std::set<NodeId> fused;
        std::vector<NodeId> stack(node.inputs.begin(), node.inputs.end());
        while (!stack.empty()) {
            NodeId id = stack.back();
            stack.pop_back();
            const Node &x = graph.node(id);
            if (p.materialized[id] || op_class(x.kind) == OpClass::Leaf || !fused.insert(id).second) continue;
            stack.insert(stack.end(), x.inputs.begin(), x.inputs.end());
        }
        region.fused.assign(fused.begin(), fused.end());
        p.regions.push_back(std::move(region));
    }
    return p;
}

std::string print_partition(const Graph &graph, const Partition &partition) {
    std::string out;
    int index = 0;
    for (const Region &r : partition.regions) {
        out += "region " + std::to_string(index++) + " -> %" + std::to_string(r.root) + " (" +
               op_name(graph.node(r.root).kind) + ")";
        if (!r.fused.empty()) {
            out += " fuses";
            for (NodeId id : r.fused) out += " %" + std::to_string(id) + ":" + op_name(graph.node(id).kind);
        }
        out += "\n";
    }
    return out;
}

}  // namespace hc
