// The fusion partitioner: which nodes become materialized region roots, and which are inlined
// (fused) into the regions that consume them.
#pragma once

#include <string>
#include <vector>

#include "hcompile/graph.h"

namespace hc {

struct Region {
    NodeId root = -1;              // the node this region materializes
    std::vector<NodeId> fused;     // non-leaf nodes computed inline inside it, topological order
};

struct Partition {
    std::vector<Region> regions;       // topological order of roots
    std::vector<bool> materialized;    // per node: true for region roots
};

// Rules, in order: graph outputs, reductions and matmuls are roots; elementwise producers of a
// matmul are roots (a matmul reads each operand element many times); an elementwise or layout
// node feeding two or more regions is a root when recomputing it in each would cost more than
// `kRecomputeBudget` op units. Everything else is fused into its consumers.
Partition partition_into_regions(const Graph &graph);

std::string print_partition(const Graph &graph, const Partition &partition);

}  // namespace hc
