#include "hcompile/library_calls.h"

namespace hc {

std::vector<NodeId> choose_library_calls(const Graph &graph, bool available, bool for_gpu) {
    std::vector<NodeId> calls;
    if (!available) return calls;
    for (const Node &n : graph.nodes()) {
        const bool batched = for_gpu && n.ndim() >= 3;
        if (n.kind != OpKind::Matmul || (n.ndim() != 2 && !batched) ||
            (n.dtype != DType::Float32 && n.dtype != DType::Float64)) {
            continue;
        }
        const Node &a = graph.node(n.inputs[0]);
        const int64_t k = a.shape.back();
        int64_t multiply_adds = k;
        for (int64_t extent : n.shape) multiply_adds *= extent;
        bool large = multiply_adds >= kMinLibraryMultiplyAdds;
        if (batched) {
            large = multiply_adds >= kMinCublasMultiplyAdds && k >= kMinCublasBatchedContraction;
        } else if (for_gpu) {
            large = multiply_adds >= kMinCublasMultiplyAdds && k >= kMinCublasContraction;
        }
        if (large) calls.push_back(n.id);
    }
    return calls;
}

}  // namespace hc
