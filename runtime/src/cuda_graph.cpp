#include "hcompile/cuda_graph.h"

#include <algorithm>
#include <atomic>

#include "cuda_driver.h"

namespace hc {

namespace {

// cuda.h's signatures (CUresult an int; streams, graphs and contexts pointers; CUdeviceptr a
// 64-bit integer).
using StreamCreate = int (*)(void **stream, unsigned flags);
using StreamDestroy = int (*)(void *stream);
using BeginCapture = int (*)(void *stream, int mode);
using EndCapture = int (*)(void *stream, void **graph);
using GraphInstantiate = int (*)(void **exec, void *graph, unsigned long long flags);
using GraphLaunch = int (*)(void *exec, void *stream);
using GraphDestroy = int (*)(void *graph);
using GraphExecDestroy = int (*)(void *exec);
using MemAlloc = int (*)(uint64_t *pointer, size_t bytes);
using MemFree = int (*)(uint64_t pointer);
using CopyAsync = int (*)(uint64_t to, uint64_t from, size_t bytes, void *stream);

constexpr unsigned kNonBlockingStream = 1;  // CU_STREAM_NON_BLOCKING
// CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: other threads' CUDA work is not disturbed by this capture.
constexpr int kCaptureThisThread = 1;

std::atomic<uint64_t> replays{0};

size_t dense_bytes(const std::vector<int64_t> &shape, DType dtype) {
    size_t n = 1;
    for (int64_t extent : shape) n *= static_cast<size_t>(std::max<int64_t>(extent, 0));
    return n * static_cast<size_t>((dtype_bits(dtype) + 7) / 8);  // a bool is a byte
}

std::string cuda_error(const char *what, int status) {
    return std::string(what) + " failed (CUDA error " + std::to_string(status) + ")";
}

}  // namespace

uint64_t cuda_graph_replays() { return replays.load(); }

std::unique_ptr<CudaGraphReplay> CudaGraphReplay::capture(const Kernel &kernel,
                                                          const std::vector<std::vector<int64_t>> &input_shapes,
                                                          int device, std::string *error) {
    static const auto stream_create = driver_entry<StreamCreate>("cuStreamCreate");
    static const auto stream_destroy = driver_entry<StreamDestroy>("cuStreamDestroy_v2");
    static const auto begin = driver_entry<BeginCapture>("cuStreamBeginCapture_v2");
    static const auto end = driver_entry<EndCapture>("cuStreamEndCapture");
    static const auto instantiate = driver_entry<GraphInstantiate>("cuGraphInstantiateWithFlags");
    static const auto alloc = driver_entry<MemAlloc>("cuMemAlloc_v2");
    if (!stream_create || !stream_destroy || !begin || !end || !instantiate || !alloc) {
        *error = "the CUDA driver has no graph capture (CUDA 11.4 or later)";
        return nullptr;
    }
    if (input_shapes.size() != kernel.inputs.size()) {
        *error = "one shape per kernel input";
        return nullptr;
    }
    std::unique_ptr<CudaGraphReplay> replay(new CudaGraphReplay);
    replay->context_ = primary_context(device, error);
    if (!replay->context_) return nullptr;
    CurrentCudaContext current(replay->context_);
    if (!current.ok()) {
        *error = "cannot make the device's context current";
        return nullptr;
    }
    // The graph's own arrays (at least a byte each: an empty array still has an address).
    std::vector<DeviceArray> ins(kernel.inputs.size()), outs(kernel.outputs.size());
    auto make = [&](std::vector<Buffer> &buffers, DeviceArray &array, const std::vector<int64_t> &shape, DType dtype) {
        Buffer b;
        b.bytes = dense_bytes(shape, dtype);
        const int status = alloc(&b.pointer, std::max<size_t>(b.bytes, 16));
        if (status != 0) return *error = cuda_error("cuMemAlloc", status), false;
        buffers.push_back(b);
        array.pointer = b.pointer;
        array.shape = shape;
        return true;
    };
    for (size_t i = 0; i < ins.size(); ++i) {
        if (!make(replay->inputs_, ins[i], input_shapes[i], kernel.inputs[i].dtype)) return nullptr;
    }
    for (size_t j = 0; j < outs.size(); ++j) {
        if (!make(replay->outputs_, outs[j], kernel.outputs[j].shape, kernel.outputs[j].dtype)) return nullptr;
    }
    // A stream of our own: the legacy default stream (PyTorch's unless the caller picked one)
    // cannot be captured. Capturing records the launches; nothing runs until a replay.
    void *stream = nullptr;
    if (const int status = stream_create(&stream, kNonBlockingStream); status != 0) {
        *error = cuda_error("cuStreamCreate", status);
        return nullptr;
    }
    int status = begin(stream, kCaptureThisThread);
    if (status != 0) {
        stream_destroy(stream);
        *error = cuda_error("cuStreamBeginCapture", status);
        return nullptr;
    }
    std::string run_error;
    const int run_status = run_on_cuda(kernel, ins, outs, device, reinterpret_cast<uint64_t>(stream), &run_error);
    status = end(stream, &replay->graph_);  // always ended, whatever the run did
    stream_destroy(stream);
    if (run_status != 0) {
        *error = "the kernel failed while being captured (Halide error " + std::to_string(run_status) + "): " + run_error;
        return nullptr;
    }
    if (status != 0 || !replay->graph_) {
        *error = cuda_error("cuStreamEndCapture", status);
        return nullptr;
    }
    if ((status = instantiate(&replay->exec_, replay->graph_, 0)) != 0) {
        *error = cuda_error("cuGraphInstantiate", status);
        return nullptr;
    }
    return replay;
}

int CudaGraphReplay::replay(const std::vector<DeviceArray> &inputs, const std::vector<DeviceArray> &outputs,
                            uint64_t stream, std::string *error) const {
    static const auto copy = driver_entry<CopyAsync>("cuMemcpyDtoDAsync_v2");
    static const auto launch = driver_entry<GraphLaunch>("cuGraphLaunch");
    if (inputs.size() != inputs_.size() || outputs.size() != outputs_.size()) {
        *error = "the graph takes " + std::to_string(inputs_.size()) + " inputs and " + std::to_string(outputs_.size()) +
                 " outputs";
        return -1;
    }
    CurrentCudaContext current(context_);
    if (!current.ok()) {
        *error = "cannot make the device's context current";
        return -1;
    }
    void *s = reinterpret_cast<void *>(stream);
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs_[i].bytes == 0) continue;
        if (const int status = copy(inputs_[i].pointer, inputs[i].pointer, inputs_[i].bytes, s); status != 0) {
            return *error = cuda_error("copying an input in", status), status;
        }
    }
    if (const int status = launch(exec_, s); status != 0) return *error = cuda_error("cuGraphLaunch", status), status;
    for (size_t j = 0; j < outputs.size(); ++j) {
        if (outputs_[j].bytes == 0) continue;
        if (const int status = copy(outputs[j].pointer, outputs_[j].pointer, outputs_[j].bytes, s); status != 0) {
            return *error = cuda_error("copying an output out", status), status;
        }
    }
    ++replays;
    return 0;
}

CudaGraphReplay::~CudaGraphReplay() {
    static const auto graph_destroy = driver_entry<GraphDestroy>("cuGraphDestroy");
    static const auto exec_destroy = driver_entry<GraphExecDestroy>("cuGraphExecDestroy");
    static const auto mem_free = driver_entry<MemFree>("cuMemFree_v2");
    if (!context_) return;
    CurrentCudaContext current(context_);
    // (A replay still running keeps its memory: cuMemFree waits for the device.)
    if (exec_) exec_destroy(exec_);
    if (graph_) graph_destroy(graph_);
    for (const Buffer &b : inputs_) mem_free(b.pointer);
    for (const Buffer &b : outputs_) mem_free(b.pointer);
}

}  // namespace hc
