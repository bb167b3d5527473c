// Large blocks of memory (kernel outputs, and the intermediates Halide allocates while a kernel
// runs) are kept when freed and handed out again for the next request of the same size.
//
// A fresh block of tens of MiB costs the code that first writes it a page fault and a zeroed page
// for every 4 KiB: on the 2-core development machine, 3 ms for a 38 MiB image, as long as the
// whole unsharp mask, and 46,000 faults per call of the local Laplacian. glibc cannot avoid it: it
// hands blocks over 32 MiB back to the kernel on free, and trims smaller ones. A function called
// again and again on arrays of one size (a pipeline per frame, a layer per batch) reuses its own
// blocks instead.
//
// The blocks kept are bounded in bytes (hc.config.output_cache_bytes); past the bound a freed
// block goes back to the system. Blocks under `kPooledMinBytes` are never kept: glibc reuses
// those without faulting. Thread-safe: Halide's worker threads allocate and free through it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace Halide {
struct JITUserContext;
}

namespace hc {

constexpr size_t kPooledMinBytes = size_t{1} << 20;

// A block of `bytes` (0 allowed), 128-byte aligned, with at least 64 readable bytes before and
// after it (Halide's vector loads may read a little out of bounds). Null when out of memory.
void *pool_allocate(size_t bytes);
// Frees a block from pool_allocate (null is ignored): kept for reuse or given back.
void pool_release(void *block);
// The size a block was allocated with.
size_t pool_block_bytes(const void *block);

// Halide JIT handlers (JITHandlers::custom_malloc / custom_free) over the pool.
void *pool_halide_malloc(Halide::JITUserContext *, size_t bytes);
void pool_halide_free(Halide::JITUserContext *, void *block);

struct BlockPoolInfo {
    uint64_t hits = 0;          // large allocations served from a kept block
    uint64_t misses = 0;        // large allocations that went to the system
    size_t cached_bytes = 0;    // bytes in blocks waiting for reuse
    size_t limit_bytes = 0;     // the most it keeps
};

BlockPoolInfo block_pool_info();
// The bound alone, without the pool's lock (read per call for every large output).
size_t block_pool_limit();

// Sets the bound and frees kept blocks past it (0: keep nothing).
void set_block_pool_limit(size_t bytes);

}  // namespace hc
