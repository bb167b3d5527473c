#include "hcompile/library_calls.h"

#include "hcompile/passes.h"

namespace hc {

std::vector<NodeId> choose_library_calls(const Graph &graph, bool available, bool for_gpu,
                                         const SymbolicExtents *symbols) {
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
            const bool any_size = symbols && (symbols->any_symbolic(n.shape) || symbols->any_symbolic(a.shape));
            // (float16 operands widened for the product keep cuBLAS: its tensor cores.)
            const bool half = widened_float16_source(graph, n.inputs[0]) >= 0 || widened_float16_source(graph, n.inputs[1]) >= 0;
            const bool staged = n.dtype == DType::Float32 && k <= kMaxStagedContraction && !any_size && !half;
            large = multiply_adds >= kMinCublasMultiplyAdds && k >= kMinCublasBatchedContraction && !staged;
        } else if (for_gpu) {
            large = multiply_adds >= kMinCublasMultiplyAdds && k >= kMinCublasContraction;
        }
        if (large) calls.push_back(n.id);
    }
    return calls;
}

}  // namespace hc
