#include "hcompile/machine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <vector>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace hc {

namespace {

// A floor for the measured cost of a parallel loop: the probe's loops run back to back, and
// a kernel's loop more often wakes threads that have gone to sleep.
constexpr double kMinParallelLaunchSeconds = 2e-6;

int target_vector_bits(const Halide::Target &t) {
    if (t.has_feature(Halide::Target::AVX512)) return 512;
    if (t.has_feature(Halide::Target::AVX) || t.has_feature(Halide::Target::AVX2)) return 256;
    return 128;
}

// Seconds of the fastest of `runs` calls (the first call, which pages memory in, excluded),
// or their median.
template <typename Run>
double best_seconds(Run &&run, int runs, bool median = false) {
    run();
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
        auto start = std::chrono::steady_clock::now();
        run();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return median ? times[times.size() / 2] : times.front();
}

// Streams `n` floats through x * 2 + 1, vectorized, on one thread or all.
double stream_seconds(const Halide::Target &target, int width, int n, bool parallel) {
    Halide::ImageParam in(Halide::Float(32), 1);
    Halide::Func out("probe_stream");
    Halide::Var x("x"), xo("xo"), xi("xi");
    out(x) = in(x) * 2.0f + 1.0f;
    if (parallel) {
        out.split(x, xo, xi, n / 64).parallel(xo).vectorize(xi, width);
    } else {
        out.vectorize(x, width);
    }
    Halide::Buffer<float> a(n), b(n);
    a.fill(1.0f);
    in.set(a);
    out.compile_jit(target);
    return best_seconds([&] { out.realize(b, target); }, 3);
}

// 64 dependent-free multiply-adds per element of an in-cache array, one thread.
double compute_seconds(const Halide::Target &target, int width, int n, int ops) {
    Halide::ImageParam in(Halide::Float(32), 1);
    Halide::Func out("probe_compute");
    Halide::Var x("x");
    Halide::Expr v = in(x);
    Halide::Expr acc[4] = {v, v + 1.0f, v + 2.0f, v + 3.0f};   // four chains: no latency bound
    for (int i = 0; i < ops / 8; ++i) {
        for (Halide::Expr &a : acc) a = a * 0.999f + 0.001f;
    }
    out(x) = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    out.vectorize(x, width);
    Halide::Buffer<float> a(n), b(n);
    a.fill(1.0f);
    in.set(a);
    out.compile_jit(target);
    return best_seconds([&] { out.realize(b, target); }, 5);
}

// A parallel loop over 2 rows per core of a few microseconds of arithmetic each, against the
// same loop serial: what the parallel loop costs beyond its share of the work.
double launch_seconds(const Halide::Target &target, int cores, int width) {
    const int n = 4096, rows = 2 * cores;
    Halide::Buffer<float> b(n, rows);
    Halide::Var x("x"), y("y");
    Halide::Expr v = Halide::cast<float>(x + y);
    for (int i = 0; i < 32; ++i) v = v * 0.999f + 0.001f;
    Halide::Func serial("probe_serial"), parallel("probe_parallel");
    serial(x, y) = v;
    parallel(x, y) = v;
    serial.vectorize(x, width);
    parallel.vectorize(x, width).parallel(y);
    serial.compile_jit(target);
    parallel.compile_jit(target);
    // Medians: a kernel's parallel loop usually finds the pool asleep, not still spinning.
    double s = best_seconds([&] { serial.realize(b, target); }, 51, true);
    double p = best_seconds([&] { parallel.realize(b, target); }, 51, true);
    return std::max(p - s / std::min(cores, rows), kMinParallelLaunchSeconds);
}

std::string cache_path(const Halide::Target &target) {
    const char *dir = std::getenv("HCOMPILE_CACHE_DIR");
    std::filesystem::path root;
    if (dir && *dir) {
        root = dir;
    } else if (const char *home = std::getenv("HOME")) {
        root = std::filesystem::path(home) / ".cache" / "hcompile";
    } else {
        return "";
    }
    std::string name = target.without_feature(Halide::Target::StrictFloat).to_string();
    std::replace(name.begin(), name.end(), '-', '_');
    return (root / ("machine-" + name + ".txt")).string();
}

}  // namespace

std::string MachineModel::serialize() const {
    std::ostringstream os;
    os.precision(6);
    os << "cores " << cores << "\nvector_bits " << vector_bits << "\nvector_ops_per_second " << vector_ops_per_second
       << "\ncore_bandwidth " << core_bandwidth << "\nmachine_bandwidth " << machine_bandwidth
       << "\nparallel_launch_seconds " << parallel_launch_seconds << "\n";
    return os.str();
}

bool MachineModel::parse(const std::string &text, MachineModel *out) {
    std::istringstream is(text);
    std::string key;
    double value;
    int found = 0;
    MachineModel m;
    while (is >> key >> value) {
        if (key == "cores") m.cores = static_cast<int>(value);
        else if (key == "vector_bits") m.vector_bits = static_cast<int>(value);
        else if (key == "vector_ops_per_second") m.vector_ops_per_second = value;
        else if (key == "core_bandwidth") m.core_bandwidth = value;
        else if (key == "machine_bandwidth") m.machine_bandwidth = value;
        else if (key == "parallel_launch_seconds") m.parallel_launch_seconds = value;
        else continue;
        ++found;
    }
    if (found != 6 || m.cores < 1 || m.vector_ops_per_second <= 0 || m.core_bandwidth <= 0 || m.machine_bandwidth <= 0) {
        return false;
    }
    *out = m;
    return true;
}

std::string MachineModel::print() const {
    std::ostringstream os;
    os.precision(3);
    os << cores << " cores, " << vector_bits << "-bit vectors, " << vector_ops_per_second / 1e9
       << " G vector ops/s per core, memory " << core_bandwidth / 1e9 << " GB/s one core, " << machine_bandwidth / 1e9
       << " GB/s all, parallel loop " << parallel_launch_seconds * 1e6 << " us";
    return os.str();
}

MachineModel reference_machine() { return MachineModel{}; }

MachineModel measure_machine(const Halide::Target &target) {
    MachineModel m;
    m.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    m.vector_bits = target_vector_bits(target);
    const int width = m.vector_bits / 32;
    const int stream_n = 1 << 23;          // 32 MB each way: past the caches
    const int compute_n = 1 << 14, ops = 64;
    m.core_bandwidth = 8.0 * stream_n / stream_seconds(target, width, stream_n, false);
    m.machine_bandwidth = std::max(m.core_bandwidth, 8.0 * stream_n / stream_seconds(target, width, stream_n, true));
    m.vector_ops_per_second = double(compute_n) / width * (ops + 4) / compute_seconds(target, width, compute_n, ops);
    m.parallel_launch_seconds = launch_seconds(target, m.cores, width);
    return m;
}

MachineModel machine_model(const Halide::Target &target) {
    static std::mutex mutex;
    static std::map<std::string, MachineModel> known;
    std::lock_guard<std::mutex> lock(mutex);
    const std::string path = cache_path(target);
    if (auto it = known.find(path); it != known.end()) return it->second;
    MachineModel m;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (path.empty() || !in || !MachineModel::parse(text.str(), &m)) {
        try {
            m = measure_machine(target);
            spdlog::debug("hcompile: measured this machine: {}", m.print());
            if (!path.empty()) {
                // Whole or not at all: processes probing at once each rename a complete file.
                std::filesystem::create_directories(std::filesystem::path(path).parent_path());
                const std::string temporary = path + "." + std::to_string(::getpid());
                std::ofstream(temporary) << m.serialize();
                std::filesystem::rename(temporary, path);
            }
        } catch (const std::exception &e) {
            m = reference_machine();
            m.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
            spdlog::warn("hcompile: machine probe failed ({}); using reference rates", e.what());
        }
    }
    known[path] = m;
    return m;
}

}  // namespace hc
