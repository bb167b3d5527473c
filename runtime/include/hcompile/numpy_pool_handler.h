// NumPy's memory-handler hook (PyDataMem_Handler) over the block pool (block_pool.h), so large
// kernel outputs are ordinary NumPy arrays that own their data and give it back to the pool when
// they die. Installed only around the allocation of one kernel output at a time.
#pragma once

#include <Python.h>

namespace hc {

// The handler capsule ("mem_handler") for PyDataMem_SetHandler; created once and never freed
// (arrays keep a reference to it and may outlive the module at interpreter exit). Null, with a
// Python error set, if it could not be created.
PyObject *numpy_pool_handler();

}  // namespace hc
