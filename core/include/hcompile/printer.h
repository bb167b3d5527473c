// Readable text of a graph (what `hc.explain(...).graphs` shows), and of its fusion regions.
#pragma once

#include <string>

#include "hcompile/graph.h"

namespace hc {

std::string format_attr(const AttrValue &value);
std::string format_node(const Graph &graph, const Node &node);
std::string print_graph(const Graph &graph);

}  // namespace hc
