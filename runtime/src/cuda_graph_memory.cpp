#include "hcompile/cuda_graph_memory.h"

#include <Halide.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace hc {

namespace {

// cuda.h's signatures (CUresult an int, CUdeviceptr 64 bits, CUstream a pointer).
using MemAlloc = int (*)(uint64_t *, size_t);
using MemFree = int (*)(uint64_t);
using MemAllocAsync = int (*)(uint64_t *, size_t, void *);
using MemFreeAsync = int (*)(uint64_t, void *);

std::atomic<MemAlloc> driver_alloc{nullptr};
std::atomic<MemFree> driver_free{nullptr};
std::atomic<MemAllocAsync> driver_alloc_async{nullptr};
std::atomic<MemFreeAsync> driver_free_async{nullptr};
std::atomic<bool> alloc_routed{false}, free_routed{false};
std::mutex graph_mutex;
int graphs_open = 0;

// The stream the calling thread's Halide allocations go onto (null: the driver's own calls).
thread_local void *allocation_stream = nullptr;

// CUDA_ERROR_NOT_SUPPORTED: no stream-ordered allocator in this driver.
constexpr int kNotSupported = 801;

int routed_alloc(uint64_t *pointer, size_t bytes) {
    if (allocation_stream) {
        MemAllocAsync alloc = driver_alloc_async.load();
        return alloc ? alloc(pointer, bytes, allocation_stream) : kNotSupported;
    }
    return driver_alloc.load()(pointer, bytes);
}

int routed_free(uint64_t pointer) {
    if (allocation_stream) {
        MemFreeAsync release = driver_free_async.load();
        return release ? release(pointer, allocation_stream) : kNotSupported;
    }
    return driver_free.load()(pointer);
}

// The JIT's library symbol lookup (Halide's default is dlsym): the driver's cuMemAlloc and
// cuMemFree come back as the routed ones; the asynchronous forms are looked up beside them.
void *library_symbol(void *library, const char *name) {
    void *symbol = dlsym(library, name);
    if (!symbol) return nullptr;
    if (std::strcmp(name, "cuMemAlloc_v2") == 0) {
        driver_alloc = reinterpret_cast<MemAlloc>(symbol);
        driver_alloc_async = reinterpret_cast<MemAllocAsync>(dlsym(library, "cuMemAllocAsync"));
        driver_free_async = reinterpret_cast<MemFreeAsync>(dlsym(library, "cuMemFreeAsync"));
        alloc_routed = true;
        return reinterpret_cast<void *>(&routed_alloc);
    }
    if (std::strcmp(name, "cuMemFree_v2") == 0) {
        driver_free = reinterpret_cast<MemFree>(symbol);
        free_routed = true;
        return reinterpret_cast<void *>(&routed_free);
    }
    return symbol;
}

}  // namespace

void route_cuda_allocations() {
    static std::once_flag once;
    std::call_once(once, [] {
        Halide::JITHandlers handlers;   // the others stay Halide's (unset fields are not merged)
        handlers.custom_get_library_symbol = library_symbol;
        Halide::Internal::JITSharedRuntime::set_default_handlers(handlers);
    });
}

// Both: graph memory allocated on the stream must also be freed on it.
bool cuda_allocations_routed() { return alloc_routed.load() && free_routed.load(); }

void begin_graph_allocations() {
    std::lock_guard<std::mutex> lock(graph_mutex);
    if (graphs_open++ == 0) Halide::Internal::JITSharedRuntime::reuse_device_allocations(false);
}

void end_graph_allocations() {
    std::lock_guard<std::mutex> lock(graph_mutex);
    if (graphs_open > 0 && --graphs_open == 0) Halide::Internal::JITSharedRuntime::reuse_device_allocations(true);
}

AllocationsOnStream::AllocationsOnStream(void *stream) : previous_(allocation_stream) { allocation_stream = stream; }

AllocationsOnStream::~AllocationsOnStream() { allocation_stream = previous_; }

}  // namespace hc
