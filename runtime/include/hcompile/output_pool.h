// Large kernel outputs come from a cache of blocks NumPy has freed before.
//
// A fresh block of tens of MiB costs the kernel a page fault and a zeroed page for every 4 KiB it
// writes: on the 2-core development machine, 3 ms for a 38 MiB image, as long as the whole unsharp
// mask. Calls that return arrays of one size over and over (a pipeline run per frame, a layer per
// batch) then reuse the blocks the previous results held once the caller dropped them. NumPy's own
// allocator cannot: glibc hands blocks over 32 MiB back to the kernel on free.
//
// The arrays own their data like any other (`flags.owndata`): the pool is a NumPy memory handler
// (PyDataMem_Handler) installed only around the allocation of a kernel's output of at least
// `kPooledMinBytes`, and NumPy frees through it when the array dies. The blocks it keeps are
// bounded by a limit in bytes (hc.config.output_cache_bytes); past it freed blocks go back to the
// system.
#pragma once

#include <Python.h>

#include <cstddef>
#include <cstdint>

namespace hc {

// Smaller outputs stay with NumPy's allocator: glibc reuses them without faulting.
constexpr size_t kPooledMinBytes = size_t{1} << 20;

// The handler capsule ("mem_handler") to pass to PyDataMem_SetHandler; created once, never freed
// (arrays keep a reference to it, and may outlive the module at interpreter exit).
PyObject *output_pool_handler();

struct OutputPoolInfo {
    uint64_t hits = 0;          // allocations served from a cached block
    uint64_t misses = 0;        // allocations that went to the system
    size_t cached_bytes = 0;    // bytes in blocks waiting for reuse
    size_t limit_bytes = 0;     // the most it keeps
};

OutputPoolInfo output_pool_info();

// Sets the limit and frees cached blocks past it (0: keep nothing, every output is fresh).
void set_output_pool_limit(size_t bytes);

}  // namespace hc
