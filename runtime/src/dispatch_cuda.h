// The dispatcher's CUDA half: guards on PyTorch's CUDA tensors and CuPy's arrays, and running an
// entry whose kernel runs on the GPU, all in C++ (a call through the frontend's Python path cost
// about 27 us).
// Compiled into _C with dispatch.cpp: it needs Python.
#pragma once

#include <Python.h>

#include "hcompile/dispatch.h"

namespace hc {

// 1 when `arg` (of the guard's exact type) is an array the guard (CudaTensor or CupyArray)
// describes: dtype, device, shape, C-contiguous and 16-byte aligned; 0 when not; -1 with a Python
// error set.
int check_cuda_array(const ArgGuard &guard, PyObject *arg);

// Runs `entry` (its guards hold; entry.cuda set) on the arrays in `args`: new outputs from the
// library, its current stream of the device. Returns a new reference, or null with an error set.
PyObject *run_cuda_entry(const Entry &entry, PyObject *const *args);

// The value a call of `entry` returns from its `outputs` (a tuple, reference stolen): the one
// output, the tuple, or what the entry's result builder makes of them. Defined in dispatch.cpp.
PyObject *entry_result(const Entry &entry, PyObject *outputs, PyObject *const *args);

}  // namespace hc
