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
    // Row fusion: when every other region is a reduction that keeps axis 0 (or an elementwise
    // node of the same rank) and reaches the single output only through elementwise ops and
    // same-rank broadcasts, each row of the output needs just the same row of each of them; they
    // are then computed row by row inside the output's loop while the row is in cache, and a
    // shared transcendental is stored per row rather than recomputed (kRowRecomputeBudget).
    NodeId row_root = -1;              // the output region's node, or -1
    std::vector<bool> row_fused;       // per node: a reduction computed per row of row_root
};

// Rules, in order: graph outputs, reductions and matmuls are roots; elementwise producers of a
// matmul are roots (a matmul reads each operand element many times); an elementwise or layout
// node feeding two or more regions is a root when recomputing it in each would cost more than
// `kRecomputeBudget` op units. Everything else is fused into its consumers.
Partition partition_into_regions(const Graph &graph);

// Fills partition.row_root / row_fused when the graph qualifies (see Partition).
void find_row_fusion(const Graph &graph, Partition &partition);

std::string print_partition(const Graph &graph, const Partition &partition);

}  // namespace hc
