// Device memory of kernels captured into CUDA graphs (mode="reduce-overhead").
//
// Halide's CUDA runtime allocates a kernel's intermediates with cuMemAlloc and, freed, keeps them
// in a cache that hands them to later calls and frees old ones at any later allocation. A graph
// captured from such a run would keep addresses the cache may free or hand out again. So
// hcompile gives Halide's runtime its own cuMemAlloc and cuMemFree (the JIT's library symbol
// lookup): they pass through to the driver, but while a kernel runs under capture on the calling
// thread they are stream-ordered on the captured stream (cuMemAllocAsync, cuMemFreeAsync), which
// the graph records as memory nodes of its own.
#pragma once

namespace hc {

// Installs the routing, once, before Halide's CUDA runtime first looks up the driver's entry
// points (run_on_cuda calls it before its first kernel).
void route_cuda_allocations();

// Whether Halide's CUDA runtime took hcompile's entry points (false where the runtime looked them
// up before route_cuda_allocations: a Halide CUDA pipeline run outside hcompile first).
bool cuda_allocations_routed();

// Between these two, Halide's runtime caches no device memory (begin empties its cache: call it
// before the capture starts, as it frees memory), so that no graph's memory enters the cache.
// They nest (a count).
void begin_graph_allocations();
void end_graph_allocations();

// This thread's Halide allocations go onto `stream` (a stream being captured) while it lives.
class AllocationsOnStream {
public:
    explicit AllocationsOnStream(void *stream);
    ~AllocationsOnStream();
    AllocationsOnStream(const AllocationsOnStream &) = delete;
    AllocationsOnStream &operator=(const AllocationsOnStream &) = delete;

private:
    void *previous_;
};

}  // namespace hc
