// The user context of one kernel call on a CUDA device (cuda_call.cpp): the JIT's CUDA handlers
// read the caller's context and stream from it, and so do extern stages that launch work of
// their own (cublas.cpp), which receive it as their first argument.
#pragma once

#include <Halide.h>

#include <dlfcn.h>

#include <string>

namespace hc {

// The CUDA driver library, opened once (null where it is not installed).
void *cuda_driver();

// One of its entry points, or null without a driver.
template <typename Function>
Function driver_entry(const char *name) {
    void *driver = cuda_driver();
    return driver ? reinterpret_cast<Function>(dlsym(driver, name)) : nullptr;
}

// The primary context of CUDA device `ordinal`, retained once for the life of the process, or
// null with `error` set (no driver, no such device).
void *primary_context(int ordinal, std::string *error);

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
