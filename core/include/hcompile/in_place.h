// Writing arguments in place: which outputs of a lowered pipeline can be given the buffer of the
// argument whose final contents they hold (see core/src/lowering/in_place.cpp for the rules).
#pragma once

#include <utility>
#include <vector>

#include "hcompile/graph.h"
#include "hcompile/lowering.h"

namespace hc {

// `writebacks`: (output index, argument index) pairs, an output holding a written argument's
// final contents. Returns, per output, the argument it may be written into, or -1. Call it once
// the pipeline is compiled (its schedule is then final).
std::vector<int> outputs_written_in_place(const Graph &graph, LoweredPipeline &lowered,
                                          const std::vector<std::pair<int, int>> &writebacks,
                                          const std::vector<InputLayout> &layouts);

}  // namespace hc
