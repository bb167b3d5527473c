#include "hcompile/blas.h"

#include "gemm_operands.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

namespace hc {

namespace {

// CBLAS with 64-bit integers (ILP64), as `scipy_openblas64_` exports it.
enum CblasOrder : int { kRowMajor = 101 };
enum CblasTranspose : int { kNoTrans = 111, kTrans = 112 };
using Sgemm = void (*)(int, int, int, int64_t, int64_t, int64_t, float, const float *, int64_t, const float *,
                       int64_t, float, float *, int64_t);
using Dgemm = void (*)(int, int, int, int64_t, int64_t, int64_t, double, const double *, int64_t, const double *,
                       int64_t, double, double *, int64_t);

using SetLocalThreads = int (*)(int);  // returns the calling thread's previous count

std::atomic<Sgemm> sgemm{nullptr};
std::atomic<Dgemm> dgemm{nullptr};
std::atomic<SetLocalThreads> set_local_threads{nullptr};

// BLAS's own threads stay out of a kernel: the schedule runs calls in Halide's parallel loops
// (one per tile of the product), and two thread pools spinning on the same cores slowed a
// product 40-fold on the 2-core machine under load. The count is per calling thread (the
// caller's own NumPy calls keep theirs) and restored afterwards.
class OneBlasThread {
public:
    OneBlasThread() : set_(set_local_threads.load()), prior_(set_(1)) {}
    ~OneBlasThread() { set_(prior_); }

private:
    SetLocalThreads set_;
    int prior_;
};

// out = a @ b the plain way, for strides BLAS cannot take.
template <typename T>
void gemm_loops(const halide_buffer_t *a, const halide_buffer_t *b, int32_t k, halide_buffer_t *out) {
    auto at = [](const halide_buffer_t *buf, int64_t x, int64_t y) -> T & {
        return reinterpret_cast<T *>(buf->host)[(x - buf->dim[0].min) * buf->dim[0].stride +
                                                (y - buf->dim[1].min) * buf->dim[1].stride];
    };
    for (int64_t i = out->dim[1].min; i < out->dim[1].min + out->dim[1].extent; ++i) {
        for (int64_t j = out->dim[0].min; j < out->dim[0].min + out->dim[0].extent; ++j) {
            T sum = 0;
            for (int64_t p = 0; p < k; ++p) sum += at(a, p, i) * at(b, j, p);
            at(out, j, i) = sum;
        }
    }
}

}  // namespace

std::string load_blas(const std::string &path) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    if (blas_available()) return "";
    // RTLD_LOCAL: NumPy has the library open already; this only takes another reference.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return std::string("cannot load ") + path + ": " + dlerror();
    auto s = reinterpret_cast<Sgemm>(dlsym(handle, "scipy_cblas_sgemm64_"));
    auto d = reinterpret_cast<Dgemm>(dlsym(handle, "scipy_cblas_dgemm64_"));
    if (!s || !d) return path + " has no scipy_cblas_sgemm64_/scipy_cblas_dgemm64_";
    auto local = reinterpret_cast<SetLocalThreads>(dlsym(handle, "openblas_set_num_threads_local"));
    if (!local) return path + " cannot set its threads per calling thread (OpenBLAS older than 0.3.27)";
    set_local_threads = local;
    dgemm = d;
    sgemm = s;
    return "";
}

bool blas_available() { return sgemm.load() != nullptr; }

extern "C" int hc_blas_gemm(halide_buffer_t *a_arg, halide_buffer_t *b_arg, int32_t k, halide_buffer_t *out) {
    if (gemm::answer_bounds_query(a_arg, b_arg, k, out)) return 0;
    const halide_dimension_t &n = out->dim[0], &m = out->dim[1];
    if (m.extent == 0 || n.extent == 0) return 0;
    halide_buffer_t a_view, b_view;
    halide_dimension_t a_dims[2], b_dims[2];
    const halide_buffer_t *a = gemm::as_matrix(a_arg, out, k, &a_view, a_dims);
    const halide_buffer_t *b = gemm::as_matrix(b_arg, out, gemm::columns_of(b_arg, k), &b_view, b_dims);
    // (The lowering passes only arrays laid out as their matrix; Halide's pipeline has no error
    // for an extern to report but its return value.)
    if (!a || !b || !gemm::operands_cover(a, b, k, out)) return -1;
    const bool f32 = out->type.bits == 32;
    const gemm::Operand oa = gemm::operand(a, 0, m.min), ob = gemm::operand(b, n.min, 0);
    const int64_t ldc = gemm::output_lead(out);
    if (k == 0 || oa.lead == 0 || ob.lead == 0 || ldc == 0 || !blas_available()) {
        if (f32) {
            gemm_loops<float>(a, b, k, out);
        } else {
            gemm_loops<double>(a, b, k, out);
        }
        return 0;
    }
    OneBlasThread one_thread;
    const int ta = oa.transpose ? kTrans : kNoTrans, tb = ob.transpose ? kTrans : kNoTrans;
    auto at = [](const halide_buffer_t *buf, const gemm::Operand &o) {
        return reinterpret_cast<const char *>(buf->host) + o.offset * buf->type.bytes();
    };
    char *c = reinterpret_cast<char *>(out->host);
    if (f32) {
        sgemm.load()(kRowMajor, ta, tb, m.extent, n.extent, k, 1.0f,
                     reinterpret_cast<const float *>(at(a, oa)), oa.lead, reinterpret_cast<const float *>(at(b, ob)),
                     ob.lead, 0.0f, reinterpret_cast<float *>(c), ldc);
    } else {
        dgemm.load()(kRowMajor, ta, tb, m.extent, n.extent, k, 1.0,
                     reinterpret_cast<const double *>(at(a, oa)), oa.lead, reinterpret_cast<const double *>(at(b, ob)),
                     ob.lead, 0.0, reinterpret_cast<double *>(c), ldc);
    }
    return 0;
}

}  // namespace hc
