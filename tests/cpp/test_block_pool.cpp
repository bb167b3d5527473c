// The block pool (block_pool.h): large freed blocks come back for the next request of their size,
// live blocks never share memory, the bound is kept, and small blocks are never kept.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "hcompile/block_pool.h"

using namespace hc;

namespace {

// Restores the process-wide bound whatever a case sets.
struct PoolLimit {
    size_t saved = block_pool_info().limit_bytes;
    explicit PoolLimit(size_t bytes) { set_block_pool_limit(bytes); }
    ~PoolLimit() { set_block_pool_limit(saved); }
};

constexpr size_t kBig = kPooledMinBytes + 4096;

}  // namespace

TEST_CASE("block pool: a freed large block is handed out again, aligned, with its size") {
    PoolLimit limit(size_t{1} << 30);
    void *a = pool_allocate(kBig);
    REQUIRE(a != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(a) % 128 == 0);
    CHECK(pool_block_bytes(a) == kBig);
    std::memset(a, 7, kBig);
    pool_release(a);
    BlockPoolInfo before = block_pool_info();
    void *b = pool_allocate(kBig);
    CHECK(b == a);
    CHECK(block_pool_info().hits == before.hits + 1);
    void *c = pool_allocate(kBig);  // the only kept block is live: a fresh one
    CHECK(c != b);
    CHECK(block_pool_info().misses == before.misses + 1);
    pool_release(b);
    pool_release(c);
}

TEST_CASE("block pool: the bound limits what is kept; zero keeps nothing; small blocks are never kept") {
    PoolLimit limit(kBig + kBig / 2);  // room for one block, not two
    void *a = pool_allocate(kBig), *b = pool_allocate(kBig);
    pool_release(a);
    pool_release(b);
    CHECK(block_pool_info().cached_bytes <= kBig + kBig / 2);
    set_block_pool_limit(0);
    CHECK(block_pool_info().cached_bytes == 0);

    set_block_pool_limit(size_t{1} << 30);
    size_t cached = block_pool_info().cached_bytes;
    void *small = pool_allocate(1000);
    REQUIRE(small != nullptr);
    CHECK(pool_block_bytes(small) == 1000);
    pool_release(small);
    CHECK(block_pool_info().cached_bytes == cached);
    void *empty = pool_allocate(0);  // a valid pointer for an empty request
    CHECK(empty != nullptr);
    pool_release(empty);
    pool_release(nullptr);
}

TEST_CASE("block pool: threads allocating and freeing at once never share a live block") {
    PoolLimit limit(size_t{1} << 30);
    constexpr int kThreads = 4, kRounds = 200;
    std::vector<std::thread> threads;
    std::vector<int> failures(kThreads, 0);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([t, &failures] {
            for (int r = 0; r < kRounds; ++r) {
                auto *block = static_cast<unsigned char *>(pool_allocate(kBig));
                std::memset(block, t + 1, kBig);
                std::this_thread::yield();
                for (size_t i = 0; i < kBig; i += 4096) failures[t] += block[i] != t + 1;
                pool_release(block);
            }
        });
    }
    for (auto &thread : threads) thread.join();
    for (int t = 0; t < kThreads; ++t) CHECK(failures[t] == 0);
}
