#include "hcompile/library_calls.h"

namespace hc {

std::vector<NodeId> choose_library_calls(const Graph &graph, bool available, bool for_gpu) {
    std::vector<NodeId> calls;
    if (!available) return calls;
    for (const Node &n : graph.nodes()) {
        if (n.kind != OpKind::Matmul || n.ndim() != 2 || (n.dtype != DType::Float32 && n.dtype != DType::Float64)) {
            continue;
        }
        const int64_t k = graph.node(n.inputs[0]).shape[1];
        const int64_t multiply_adds = n.shape[0] * n.shape[1] * k;
        const bool large = for_gpu ? multiply_adds >= kMinCublasMultiplyAdds &&
                                         (k >= kMinCublasContraction || n.shape[0] * n.shape[1] >= kMinCublasOutputs)
                                   : multiply_adds >= kMinLibraryMultiplyAdds;
        if (large) calls.push_back(n.id);
    }
    return calls;
}

}  // namespace hc
