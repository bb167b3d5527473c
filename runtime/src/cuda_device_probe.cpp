#include "hcompile/cuda_device_probe.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "cuda_call_context.h"

namespace hc {

namespace {

// cuda.h's CUdevice_attribute values read here.
constexpr int kClockRateKhz = 13, kMultiprocessors = 16, kL2Bytes = 38, kThreadsPerMultiprocessor = 39,
              kSharedPerMultiprocessor = 81, kSingleToDoubleRatio = 87, kBlocksPerMultiprocessor = 106;

// Bytes each copy of the bandwidth probe moves one way: large against the L2 (50 MiB on an H100).
constexpr size_t kCopyBytes = size_t{256} << 20;
constexpr int kCopies = 5;

using CuDeviceGet = int (*)(int *, int);
using CuDeviceGetAttribute = int (*)(int *, int, int);
using CuDeviceGetName = int (*)(char *, int, int);
using CuMemAlloc = int (*)(unsigned long long *, size_t);
using CuMemFree = int (*)(unsigned long long);
using CuMemcpyAsync = int (*)(unsigned long long, unsigned long long, size_t, void *);
using CuEventCreate = int (*)(void **, unsigned);
using CuEventRecord = int (*)(void *, void *);
using CuEventSynchronize = int (*)(void *);
using CuEventElapsed = int (*)(float *, void *, void *);
using CuEventDestroy = int (*)(void *);
using CuStreamCreate = int (*)(void **, unsigned);
using CuStreamDestroy = int (*)(void *);
constexpr unsigned kNonBlockingStream = 1;   // CU_STREAM_NON_BLOCKING

// Bytes per second (read + write) of the fastest of kCopies device-to-device copies on a stream
// of its own (non-blocking: it neither waits for the caller's work on the legacy default stream
// nor touches that stream, which a CUDA graph capture elsewhere would forbid); 0 where a step
// fails (too little free memory, say).
double copy_bandwidth() {
    auto alloc = driver_entry<CuMemAlloc>("cuMemAlloc_v2");
    auto free_ = driver_entry<CuMemFree>("cuMemFree_v2");
    auto copy = driver_entry<CuMemcpyAsync>("cuMemcpyDtoDAsync_v2");
    auto create = driver_entry<CuEventCreate>("cuEventCreate");
    auto record = driver_entry<CuEventRecord>("cuEventRecord");
    auto sync = driver_entry<CuEventSynchronize>("cuEventSynchronize");
    auto elapsed = driver_entry<CuEventElapsed>("cuEventElapsedTime");
    auto destroy = driver_entry<CuEventDestroy>("cuEventDestroy_v2");
    auto stream_create = driver_entry<CuStreamCreate>("cuStreamCreate");
    auto stream_destroy = driver_entry<CuStreamDestroy>("cuStreamDestroy_v2");
    if (!alloc || !free_ || !copy || !create || !record || !sync || !elapsed || !destroy || !stream_create ||
        !stream_destroy) {
        return 0;
    }
    unsigned long long a = 0, b = 0;
    void *start = nullptr, *stop = nullptr, *stream = nullptr;
    double best = 0;
    if (stream_create(&stream, kNonBlockingStream) == 0 && alloc(&a, kCopyBytes) == 0 && alloc(&b, kCopyBytes) == 0 &&
        create(&start, 0) == 0 && create(&stop, 0) == 0) {
        copy(b, a, kCopyBytes, stream);   // the first copy maps the pages
        for (int i = 0; i < kCopies; ++i) {
            float ms = 0;
            if (record(start, stream) != 0 || copy(b, a, kCopyBytes, stream) != 0 || record(stop, stream) != 0 ||
                sync(stop) != 0 || elapsed(&ms, start, stop) != 0 || ms <= 0) {
                best = 0;
                break;
            }
            best = std::max(best, 2.0 * kCopyBytes / (ms * 1e-3));
        }
    }
    if (start) destroy(start);
    if (stop) destroy(stop);
    if (stream) stream_destroy(stream);
    if (a) free_(a);
    if (b) free_(b);
    return best;
}

GpuDevice measure(int ordinal, std::string *why) {
    GpuDevice device;
    void *context = primary_context(ordinal, why);
    if (!context) return device;
    CurrentCudaContext current(context);
    auto device_get = driver_entry<CuDeviceGet>("cuDeviceGet");
    auto attribute = driver_entry<CuDeviceGetAttribute>("cuDeviceGetAttribute");
    auto get_name = driver_entry<CuDeviceGetName>("cuDeviceGetName");
    int handle = 0;
    if (!current.ok() || !device_get || !attribute || !get_name || device_get(&handle, ordinal) != 0) {
        *why = "the CUDA driver does not describe device " + std::to_string(ordinal);
        return device;
    }
    auto read = [&](int which, auto &field) {
        int value = 0;
        if (attribute(&value, which, handle) == 0 && value > 0) field = value;
    };
    GpuDevice measured = device;
    char name[256] = {};
    if (get_name(name, sizeof name - 1, handle) == 0) measured.name = name;
    read(kMultiprocessors, measured.multiprocessors);
    read(kThreadsPerMultiprocessor, measured.max_threads_per_multiprocessor);
    read(kBlocksPerMultiprocessor, measured.max_blocks_per_multiprocessor);
    read(kSharedPerMultiprocessor, measured.shared_bytes_per_multiprocessor);
    read(kL2Bytes, measured.l2_bytes);
    read(kSingleToDoubleRatio, measured.single_to_double_ratio);
    int khz = 0;
    read(kClockRateKhz, khz);
    if (khz > 0) measured.clock_hz = khz * 1e3;
    const double bandwidth = copy_bandwidth();
    if (bandwidth <= 0) {
        *why = "the copy-bandwidth probe failed on device " + std::to_string(ordinal);
        return device;
    }
    measured.copy_bandwidth = bandwidth;
    measured.measured = true;
    return measured;
}

}  // namespace

GpuDevice cuda_device_model(int ordinal, std::string *why) {
    std::string ignored;
    if (!why) why = &ignored;
    if (ordinal < 0) return GpuDevice{};
    static std::mutex mutex;
    static std::map<int, std::pair<GpuDevice, std::string>> devices;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = devices.find(ordinal);
    if (it == devices.end()) {
        std::string failure;
        GpuDevice device = measure(ordinal, &failure);
        it = devices.emplace(ordinal, std::make_pair(device, failure)).first;
    }
    *why = it->second.second;
    return it->second.first;
}

}  // namespace hc
