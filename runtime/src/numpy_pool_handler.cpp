#include "hcompile/numpy_pool_handler.h"

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/ndarraytypes.h>  // the handler struct only: no NumPy API calls here

#include <cstdint>
#include <cstring>

#include "hcompile/block_pool.h"

namespace hc {

namespace {

void *handler_malloc(void *, size_t bytes) { return pool_allocate(bytes); }

void *handler_calloc(void *, size_t count, size_t size) {
    if (size != 0 && count > SIZE_MAX / size) return nullptr;
    void *block = pool_allocate(count * size);
    if (block) std::memset(block, 0, count * size);
    return block;
}

// ndarray.resize: a new block, the bytes both hold copied over, the old block released.
void *handler_realloc(void *, void *block, size_t bytes) {
    if (!block) return pool_allocate(bytes);
    void *moved = pool_allocate(bytes);
    if (!moved) return nullptr;  // realloc's contract: the old block stays valid
    size_t old_bytes = pool_block_bytes(block);
    std::memcpy(moved, block, old_bytes < bytes ? old_bytes : bytes);
    pool_release(block);
    return moved;
}

// NumPy passes the array's size; the size the block recorded is the one trusted.
void handler_free(void *, void *block, size_t) { pool_release(block); }

PyDataMem_Handler make_handler() {
    PyDataMem_Handler handler{};
    std::strncpy(handler.name, "hcompile_block_pool", sizeof handler.name - 1);
    handler.version = 1;
    handler.allocator = {nullptr, handler_malloc, handler_calloc, handler_realloc, handler_free};
    return handler;
}

}  // namespace

PyObject *numpy_pool_handler() {
    static PyDataMem_Handler handler = make_handler();
    static PyObject *capsule = PyCapsule_New(&handler, "mem_handler", nullptr);
    return capsule;
}

}  // namespace hc
