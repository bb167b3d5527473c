// mode="reduce-overhead" on a CUDA device: a kernel's launches (Halide's kernels, cuBLAS's) for
// one set of shapes captured once into a CUDA graph and replayed, so that a call costs one graph
// launch instead of Halide's path per kernel (about 5 us of host time each). The graph reads
// and writes device memory of its own: each replay copies the call's inputs in and its outputs
// out (device-to-device, on the caller's stream), so a result never changes after it is returned.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hcompile/cuda_call.h"
#include "hcompile/kernel.h"

namespace hc {

class CudaGraphReplay {
public:
    // Captures `kernel` run on device `device` with inputs of `input_shapes` (Kernel::inputs
    // order). The kernel must have run for these shapes once already, so that capturing only
    // records launches: its module is loaded, its intermediates' device memory is in Halide's
    // cache (allocating is not allowed while capturing), cuBLAS's handle exists. Null with
    // `error` set where capture fails; the caller then runs the kernel plainly.
    static std::unique_ptr<CudaGraphReplay> capture(const Kernel &kernel,
                                                    const std::vector<std::vector<int64_t>> &input_shapes,
                                                    int device, std::string *error);

    // One call: `inputs` copied in, the graph launched, the outputs copied to `outputs`, all on
    // `stream`. Returns 0, or a CUDA error code with `error` set. Needs no GIL.
    int replay(const std::vector<DeviceArray> &inputs, const std::vector<DeviceArray> &outputs, uint64_t stream,
               std::string *error) const;

    ~CudaGraphReplay();
    CudaGraphReplay(const CudaGraphReplay &) = delete;
    CudaGraphReplay &operator=(const CudaGraphReplay &) = delete;

private:
    CudaGraphReplay() = default;

    struct Buffer {
        uint64_t pointer = 0;
        size_t bytes = 0;
    };
    void *context_ = nullptr;  // CUcontext
    void *graph_ = nullptr;    // CUgraph
    void *exec_ = nullptr;     // CUgraphExec
    std::vector<Buffer> inputs_, outputs_;
};

// Graph replays so far in this process (tests read it).
uint64_t cuda_graph_replays();

}  // namespace hc
