#include "hcompile/output_pool.h"

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/ndarraytypes.h>  // the handler struct only: no NumPy API calls here

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace hc {

namespace {

// Cache lines, and whole AVX-512 vectors for the kernels that write the block.
constexpr size_t kAlignment = 64;

// Like NumPy's own allocator, ask Linux for transparent huge pages on large blocks: a first touch
// of 38 MiB in 4 KiB pages took 19 ms on the development machine, in 2 MiB pages 4 ms.
void advise_huge_pages(void *block, size_t bytes) {
#ifdef __linux__
    constexpr size_t kHugePageAdviceMinBytes = size_t{4} << 20, kPage = 4096;
    if (bytes < kHugePageAdviceMinBytes) return;
    auto start = reinterpret_cast<uintptr_t>(block), end = start + bytes;
    uintptr_t first_page = (start + kPage - 1) & ~(kPage - 1);
    madvise(reinterpret_cast<void *>(first_page), end - first_page, MADV_HUGEPAGE);  // advice only
#else
    (void)block, (void)bytes;
#endif
}

class OutputPool {
public:
    void *allocate(size_t bytes) {
        if (bytes == 0) bytes = 1;  // a valid, freeable pointer for an empty request
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = free_.find(bytes);
            if (it != free_.end() && !it->second.empty()) {
                void *block = it->second.back();
                it->second.pop_back();
                cached_bytes_ -= bytes;
                live_[block] = bytes;
                ++hits_;
                return block;
            }
            ++misses_;
        }
        void *block = nullptr;
        if (posix_memalign(&block, kAlignment, bytes) != 0) return nullptr;
        advise_huge_pages(block, bytes);
        std::lock_guard<std::mutex> lock(mutex_);
        live_[block] = bytes;
        return block;
    }

    // NumPy passes the array's size to free; the size recorded at allocation is the one trusted.
    void release(void *block) {
        if (!block) return;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = live_.find(block);
            size_t bytes = it == live_.end() ? 0 : it->second;
            if (it != live_.end()) live_.erase(it);
            if (bytes >= kPooledMinBytes && cached_bytes_ + bytes <= limit_) {
                free_[bytes].push_back(block);
                cached_bytes_ += bytes;
                return;
            }
        }
        std::free(block);
    }

    size_t size_of(void *block) {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = live_.find(block);
        return it == live_.end() ? 0 : it->second;
    }

    OutputPoolInfo info() {
        std::lock_guard<std::mutex> lock(mutex_);
        return {hits_, misses_, cached_bytes_, limit_};
    }

    void set_limit(size_t bytes) {
        std::vector<void *> dropped;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            limit_ = bytes;
            for (auto &[size, blocks] : free_) {
                while (cached_bytes_ > limit_ && !blocks.empty()) {
                    dropped.push_back(blocks.back());
                    blocks.pop_back();
                    cached_bytes_ -= size;
                }
            }
        }
        for (void *block : dropped) std::free(block);
    }

private:
    std::mutex mutex_;
    std::unordered_map<size_t, std::vector<void *>> free_;  // exact size -> blocks ready for reuse
    std::unordered_map<void *, size_t> live_;               // blocks arrays hold now -> their size
    size_t cached_bytes_ = 0;
    size_t limit_ = size_t{1} << 30;
    uint64_t hits_ = 0, misses_ = 0;
};

// Never destroyed: arrays freed during interpreter shutdown still call into it.
OutputPool &pool() {
    static OutputPool *the_pool = new OutputPool();
    return *the_pool;
}

void *pool_malloc(void *, size_t bytes) { return pool().allocate(bytes); }

void *pool_calloc(void *, size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) return nullptr;
    void *block = pool().allocate(count * size);
    if (block) std::memset(block, 0, count * size);
    return block;
}

void *pool_realloc(void *, void *block, size_t bytes) {
    if (!block) return pool().allocate(bytes);
    size_t old_bytes = pool().size_of(block);
    void *moved = pool().allocate(bytes);
    if (!moved) return nullptr;  // realloc's contract: the old block stays valid
    std::memcpy(moved, block, old_bytes < bytes ? old_bytes : bytes);
    pool().release(block);
    return moved;
}

void pool_free(void *, void *block, size_t) { pool().release(block); }

PyDataMem_Handler make_handler() {
    PyDataMem_Handler handler{};
    std::strncpy(handler.name, "hcompile_output_pool", sizeof handler.name - 1);
    handler.version = 1;
    handler.allocator = {nullptr, pool_malloc, pool_calloc, pool_realloc, pool_free};
    return handler;
}

}  // namespace

PyObject *output_pool_handler() {
    static PyDataMem_Handler handler = make_handler();
    static PyObject *capsule = PyCapsule_New(&handler, "mem_handler", nullptr);
    return capsule;
}

OutputPoolInfo output_pool_info() { return pool().info(); }

void set_output_pool_limit(size_t bytes) { pool().set_limit(bytes); }

}  // namespace hc
