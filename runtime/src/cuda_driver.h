// The CUDA driver as the runtime's CUDA files use it (cuda_call.cpp, cuda_graph.cpp, cublas.cpp):
// opened by name when first needed, so nothing needs the CUDA Toolkit to build. Its entry points
// are declared where they are used, with cuda.h's signatures (CUresult an int; handles pointers).
#pragma once

#include <Halide.h>

#include <string>

namespace hc {

// An entry point of the CUDA driver (libcuda.so.1), or null where no driver is installed.
void *cuda_driver_symbol(const char *name);

template <typename Function>
Function driver_entry(const char *name) {
    return reinterpret_cast<Function>(cuda_driver_symbol(name));
}

// The primary context of CUDA device `ordinal` (the one PyTorch, CuPy and JAX use), retained once
// for the life of the process, or null with `error` set (no driver, no such device).
void *primary_context(int ordinal, std::string *error);

// The user context of one kernel call on a CUDA device (run_on_cuda): the JIT's CUDA handlers
// read the caller's context and stream from it, and so do extern stages that launch work of
// their own (cublas.cpp), which receive it as their first argument.
struct CudaCallContext : Halide::JITUserContext {
    void *context = nullptr;  // a CUcontext: the device's primary context
    void *stream = nullptr;   // a CUstream: the caller's current stream
};

// Makes `context` the calling thread's current CUDA context for the scope (CUDA runtime
// libraries such as cuBLAS launch into the current one); restores the previous one after.
class CurrentCudaContext {
public:
    explicit CurrentCudaContext(void *context);
    ~CurrentCudaContext();
    CurrentCudaContext(const CurrentCudaContext &) = delete;
    CurrentCudaContext &operator=(const CurrentCudaContext &) = delete;
    bool ok() const { return ok_; }

private:
    bool ok_ = false;
};

}  // namespace hc
