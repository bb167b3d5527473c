#include "hcompile/fusion.h"

#include <algorithm>
#include <set>

#include "hcompile/printer.h"

namespace hc {

namespace {

// Recomputing an inlined node costs this many op units before we prefer to store it. On CPU a
// pass over memory costs about as much as ~20 cheap vector ops per element.
constexpr int kRecomputeBudget = 24;
// Inside a row-fused group a stored row stays in cache, so storing beats recomputing sooner:
// any shared transcendental is worth keeping.
constexpr int kRowRecomputeBudget = 8;

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

Partition partition_with_budget(const Graph &graph, int budget) {
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
        if (!p.materialized[id] && used_by[id].size() >= 2 && inline_cost[id] > budget) {
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

// Whether node `r` (a reduction) keeps axis 0 with the same extent as `root` and every path from
// it to another region passes only through elementwise ops and same-rank broadcasts, ending at
// `root` or at other reductions; those keep axis 0 aligned with root's axis 0.
bool row_aligned(const Graph &g, const Partition &p, const std::vector<std::vector<NodeId>> &users,
                 const Node &r, const Node &root) {
    bool storable = op_class(r.kind) == OpClass::Reduction || op_class(r.kind) == OpClass::Elementwise;
    if (!storable || r.ndim() != root.ndim() || r.shape[0] != root.shape[0]) return false;
    if (op_class(r.kind) == OpClass::Elementwise) {
        // keeps every axis; only its consumers' paths matter
    } else if (r.kind == OpKind::Argmax || r.kind == OpKind::Argmin) {
        if (r.int_attr("axis") == 0) return false;
    } else {
        for (int64_t a : r.ints_attr("axes")) {
            if (a == 0) return false;
        }
    }
    std::vector<NodeId> stack(users[r.id].begin(), users[r.id].end());
    while (!stack.empty()) {
        const Node &u = g.node(stack.back());
        stack.pop_back();
        if (p.materialized[u.id]) {
            bool in_group = op_class(u.kind) == OpClass::Reduction || op_class(u.kind) == OpClass::Elementwise;
            if (u.id != root.id && !in_group) return false;
            continue;
        }
        bool same_rank_broadcast = u.kind == OpKind::Broadcast && g.node(u.inputs[0]).ndim() == u.ndim();
        if (op_class(u.kind) != OpClass::Elementwise && !same_rank_broadcast) return false;
        stack.insert(stack.end(), users[u.id].begin(), users[u.id].end());
    }
    return true;
}

}  // namespace

void find_row_fusion(const Graph &graph, Partition &partition) {
    partition.row_root = -1;
    partition.row_fused.assign(graph.num_nodes(), false);
    if (graph.outputs().size() != 1) return;
    const Node &root = graph.node(graph.outputs()[0]);
    if (op_class(root.kind) != OpClass::Elementwise || root.ndim() < 2 || root.shape[0] < 2) return;
    std::vector<std::vector<NodeId>> users(graph.num_nodes());
    for (const Node &n : graph.nodes()) {
        for (NodeId in : n.inputs) users[in].push_back(n.id);
    }
    std::vector<NodeId> fused;
    for (const Region &region : partition.regions) {
        if (region.root == root.id) continue;
        if (!row_aligned(graph, partition, users, graph.node(region.root), root)) return;
        fused.push_back(region.root);
    }
    if (fused.empty()) return;
    partition.row_root = root.id;
    for (NodeId id : fused) partition.row_fused[id] = true;
}

Partition partition_into_regions(const Graph &graph) {
    Partition p = partition_with_budget(graph, kRecomputeBudget);
    find_row_fusion(graph, p);
    if (p.row_root < 0) return p;
    Partition stored = partition_with_budget(graph, kRowRecomputeBudget);
    find_row_fusion(graph, stored);
    return stored.row_root >= 0 ? stored : p;
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
        if (!partition.row_fused.empty() && partition.row_fused[r.root]) {
            out += " [computed per row of %" + std::to_string(partition.row_root) + "]";
        }
        out += "\n";
    }
    return out;
}

}  // namespace hc
