#include "hcompile/cuda_call.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include "hcompile/cublas.h"
#include "hcompile/cuda_graph_memory.h"
#include "hcompile/small_array.h"

#include "cuda_call_context.h"
#include "cuda_register_cap.h"

namespace hc {

namespace {

// The CUDA driver entry points needed to find a device's primary context and make it current
// (cuda.h's signatures; CUresult is an int, CUdevice an int, CUcontext a pointer).
using CuInit = int (*)(unsigned);
using CuDeviceGet = int (*)(int *, int);
using CuPrimaryCtxRetain = int (*)(void **, int);
using CuCtxPushCurrent = int (*)(void *);
using CuCtxPopCurrent = int (*)(void **);

}  // namespace

void *cuda_driver() {
    static void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    return driver;
}

void *primary_context(int ordinal, std::string *error) {
    static std::mutex mutex;
    static std::unordered_map<int, void *> contexts;
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = contexts.find(ordinal); it != contexts.end()) return it->second;
    void *driver = cuda_driver();
    if (!driver) {
        *error = "the CUDA driver (libcuda.so.1) is not installed";
        return nullptr;
    }
    auto init = driver_entry<CuInit>("cuInit");
    auto device_get = driver_entry<CuDeviceGet>("cuDeviceGet");
    auto retain = driver_entry<CuPrimaryCtxRetain>("cuDevicePrimaryCtxRetain");
    int device = 0;
    void *context = nullptr;
    int status = init && device_get && retain ? init(0) : -1;
    if (status == 0) status = device_get(&device, ordinal);
    if (status == 0) status = retain(&context, device);
    if (status != 0 || !context) {
        *error = "no primary context for CUDA device " + std::to_string(ordinal) + " (CUDA error " + std::to_string(status) + ")";
        return nullptr;
    }
    contexts[ordinal] = context;
    return context;
}

namespace {

int32_t acquire_context(Halide::JITUserContext *user_context, void **cuda_context, bool) {
    *cuda_context = static_cast<CudaCallContext *>(user_context)->context;
    return 0;
}

int32_t release_context(Halide::JITUserContext *) { return 0; }

int32_t get_stream(Halide::JITUserContext *user_context, void *, void **stream) {
    *stream = static_cast<CudaCallContext *>(user_context)->stream;
    return 0;
}

// Describes `a` (C-contiguous) as a Halide buffer whose data lives on the device (no host copy):
// Halide's dim 0 is NumPy's last axis; dense strides counting an empty axis as 1, as the kernel's
// buffer constraints say (lower.cpp's describe_buffer), whatever the array library reports for
// its size-1 and empty axes.
void describe(const DeviceArray &a, uint64_t pointer, DType dtype, const halide_device_interface_t *interface,
              halide_buffer_t &buf, halide_dimension_t *dims) {
    const int nd = static_cast<int>(a.shape.size());
    int64_t dense = 1;
    for (int d = 0; d < nd; ++d) {
        const int axis = nd - 1 - d;
        dims[d].min = 0;
        dims[d].extent = static_cast<int32_t>(a.shape[axis]);
        dims[d].stride = static_cast<int32_t>(dense);
        dims[d].flags = 0;
        dense *= std::max<int64_t>(a.shape[axis], 1);
    }
    std::memset(&buf, 0, sizeof buf);
    buf.device = pointer;
    buf.device_interface = interface;
    buf.type = halide_runtime_type(dtype);
    buf.dimensions = nd;
    buf.dim = dims;
}

}  // namespace

int64_t input_extent(const Kernel &kernel, const std::vector<DeviceArray> &inputs, int arg, int axis) {
    for (size_t i = 0; i < inputs.size() && i < kernel.inputs.size(); ++i) {
        if (kernel.inputs[i].arg_index == arg && axis >= 0 && axis < static_cast<int>(inputs[i].shape.size())) {
            return inputs[i].shape[axis];
        }
    }
    return -1;
}

CurrentCudaContext::CurrentCudaContext(void *context) {
    static const auto push = driver_entry<CuCtxPushCurrent>("cuCtxPushCurrent_v2");
    ok_ = push && push(context) == 0;
}

CurrentCudaContext::~CurrentCudaContext() {
    static const auto pop = driver_entry<CuCtxPopCurrent>("cuCtxPopCurrent_v2");
    void *popped = nullptr;
    if (ok_) pop(&popped);
}

int run_on_cuda(const Kernel &kernel, const std::vector<DeviceArray> &inputs, const std::vector<DeviceArray> &outputs,
                int device, uint64_t stream, std::string *error, bool captured) {
    if (!kernel.device_interface) {
        *error = "the kernel was not compiled for CUDA";
        return -1;
    }
    if (inputs.size() != kernel.inputs.size() || outputs.size() != kernel.outputs.size()) {
        *error = "the kernel takes " + std::to_string(kernel.inputs.size()) + " inputs and " +
                 std::to_string(kernel.outputs.size()) + " outputs";
        return -1;
    }
    // A kernel compiled for any size (dynamic shapes) checks this call's arrays against Halide's
    // 2 GiB buffer limit; a symbol is read from the input it is an axis of.
    // A symbol no input has (only empty arrays have it) counts no bytes.
    const bool fits = kernel.fits_buffer_limit([&](int arg, int axis) {
        return std::max<int64_t>(input_extent(kernel, inputs, arg, axis), 0);
    });
    if (!fits) {
        *error = "an array of this call is 2 GiB or more, past Halide's buffer limit";
        return -1;
    }
    // Halide keeps the device memory of a kernel's intermediates for the next call instead of
    // freeing it (cuMemFree waits for the device); set here, where Halide's CUDA runtime exists.
    // Halide's allocations are routed (cuda_graph_memory.h) before its runtime first looks up the
    // driver's entry points, at its first kernel.
    static std::once_flag reuse;
    std::call_once(reuse, [] {
        route_cuda_allocations();
        Halide::Internal::JITSharedRuntime::reuse_device_allocations(true);
    });
    if (captured && !cuda_allocations_routed()) {
        *error = "Halide's CUDA runtime found the driver before hcompile routed its allocations (a Halide CUDA "
                 "pipeline ran first): its device memory cannot be captured in a CUDA graph";
        return -1;
    }
    CudaCallContext context;
    context.context = primary_context(device, error);
    if (!context.context) return -1;
    context.stream = reinterpret_cast<void *>(stream);
    context.handlers.custom_cuda_acquire_context = acquire_context;
    context.handlers.custom_cuda_release_context = release_context;
    context.handlers.custom_cuda_get_stream = get_stream;

    const size_t n = inputs.size() + outputs.size();
    size_t n_dims = 0;
    for (const DeviceArray &a : inputs) n_dims += a.shape.size();
    for (const DeviceArray &a : outputs) n_dims += a.shape.size();
    SmallArray<halide_buffer_t, 16> buffers(n);
    SmallArray<halide_buffer_t *, 16> pointers(n);
    SmallArray<halide_dimension_t, 64> dims(n_dims);
    // An empty array may have no device memory (PyTorch's data_ptr() is then 0), and Halide reads
    // a null device field as "not on the device yet": it allocates 0 bytes for it, which CUDA
    // refuses, and the call fails (a function returning an empty piece beside others: np.split).
    // Such an array is described at another array's address: with no elements, nothing reads or
    // writes through it.
    uint64_t stand_in = 0;
    for (size_t i = 0; i < n && stand_in == 0; ++i) stand_in = (i < inputs.size() ? inputs[i] : outputs[i - inputs.size()]).pointer;
    size_t next_dim = 0;
    for (size_t i = 0; i < n; ++i) {
        const bool is_input = i < inputs.size();
        const DeviceArray &a = is_input ? inputs[i] : outputs[i - inputs.size()];
        const DType dtype = is_input ? kernel.inputs[i].dtype : kernel.outputs[i - inputs.size()].dtype;
        if (a.pointer % kDeviceAlignment != 0) {
            *error = "a device array is not aligned to 16 bytes (the kernel's vector loads need it)";
            return -1;
        }
        const bool no_memory = a.pointer == 0 && std::find(a.shape.begin(), a.shape.end(), 0) != a.shape.end();
        describe(a, no_memory ? stand_in : a.pointer, dtype, kernel.device_interface, buffers[i], dims.data() + next_dim);
        next_dim += a.shape.size();
        pointers[i] = &buffers[i];
    }
    int status;
    {
        // Under capture, intermediates are the graph's own (stream-ordered on the captured stream).
        AllocationsOnStream on_stream(captured ? context.stream : nullptr);
        FirstRunRegisterCap cap(kernel, device);
        status = kernel.run(pointers.data(), error, &context);
    }
    if (status != 0) {
        if (std::string why = take_cublas_error(); !why.empty()) *error += (error->empty() ? "" : ": ") + why;
    }
    return status;
}

}  // namespace hc
