#include "hcompile/cublas.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "cuda_call_context.h"
#include "gemm_operands.h"

namespace hc {

namespace {

// cuBLAS's v2 entry points (cublas_api.h's signatures: cublasStatus_t and cublasOperation_t are
// ints; a handle and a stream are pointers).
using Create = int (*)(void **handle);
using SetStream = int (*)(void *handle, void *stream);
using Sgemm = int (*)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
                      const float *, float *, int);
using Dgemm = int (*)(void *, int, int, int, int, int, const double *, const double *, int, const double *, int,
                      const double *, double *, int);
using GemmEx = int (*)(void *, int, int, int, int, int, const void *, const void *, int, int, const void *, int,
                       int, const void *, void *, int, int, int, int);
// The strided batched forms: each operand's matrices a fixed number of elements apart.
using SgemmBatched = int (*)(void *, int, int, int, int, int, const float *, const float *, int, long long,
                             const float *, int, long long, const float *, float *, int, long long, int);
using DgemmBatched = int (*)(void *, int, int, int, int, int, const double *, const double *, int, long long,
                             const double *, int, long long, const double *, double *, int, long long, int);
using GemmBatchedEx = int (*)(void *, int, int, int, int, int, const void *, const void *, int, int, long long,
                              const void *, int, int, long long, const void *, void *, int, int, long long, int, int,
                              int);
constexpr int kOpN = 0, kOpT = 1;
// library_types.h's cudaDataType and cublas_api.h's cublasComputeType_t / cublasGemmAlgo_t.
constexpr int kCudaR16F = 2, kCudaR16BF = 14, kCudaR32F = 0, kComputeF32 = 68, kGemmDefault = -1;

struct Library {
    Create create = nullptr;
    SetStream set_stream = nullptr;
    Sgemm sgemm = nullptr;
    Dgemm dgemm = nullptr;
    GemmEx gemm_ex = nullptr;
    SgemmBatched sgemm_batched = nullptr;
    DgemmBatched dgemm_batched = nullptr;
    GemmBatchedEx gemm_batched_ex = nullptr;
};

std::atomic<const Library *> library{nullptr};

thread_local std::string last_error;

int fail(const std::string &why) {
    last_error = "cuBLAS matrix product: " + why;
    return -1;
}

// The calling thread's handle for a CUDA context (a handle carries the stream each call sets, so
// two threads never share one). Kept for the life of the process, as the contexts are: destroying
// one at thread exit could run after the driver has gone.
void *handle_for(const Library &lib, void *context) {
    thread_local std::unordered_map<void *, void *> handles;
    if (auto it = handles.find(context); it != handles.end()) return it->second;
    void *handle = nullptr;
    if (lib.create(&handle) != 0) return nullptr;
    handles[context] = handle;
    return handle;
}

}  // namespace

std::string load_cublas(const std::string &path) {
    static std::mutex mutex;
    std::lock_guard<std::mutex> lock(mutex);
    if (cublas_available()) return "";
    // RTLD_LOCAL: where PyTorch or CuPy has it open already, this only takes another reference.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return std::string("cannot load ") + path + ": " + dlerror();
    auto *lib = new Library;  // never freed: kernels may call it until the process ends
    lib->create = reinterpret_cast<Create>(dlsym(handle, "cublasCreate_v2"));
    lib->set_stream = reinterpret_cast<SetStream>(dlsym(handle, "cublasSetStream_v2"));
    lib->sgemm = reinterpret_cast<Sgemm>(dlsym(handle, "cublasSgemm_v2"));
    lib->dgemm = reinterpret_cast<Dgemm>(dlsym(handle, "cublasDgemm_v2"));
    lib->gemm_ex = reinterpret_cast<GemmEx>(dlsym(handle, "cublasGemmEx"));
    lib->sgemm_batched = reinterpret_cast<SgemmBatched>(dlsym(handle, "cublasSgemmStridedBatched"));
    lib->dgemm_batched = reinterpret_cast<DgemmBatched>(dlsym(handle, "cublasDgemmStridedBatched"));
    lib->gemm_batched_ex = reinterpret_cast<GemmBatchedEx>(dlsym(handle, "cublasGemmStridedBatchedEx"));
    if (!lib->create || !lib->set_stream || !lib->sgemm || !lib->dgemm || !lib->gemm_ex || !lib->sgemm_batched ||
        !lib->dgemm_batched || !lib->gemm_batched_ex) {
        delete lib;
        return path + " lacks one of cublasCreate_v2, cublasSetStream_v2, cublas{S,D}gemm_v2, cublasGemmEx and their "
                      "StridedBatched forms";
    }
    library = lib;
    return "";
}

bool cublas_available() { return library.load() != nullptr; }

std::string take_cublas_error() { return std::exchange(last_error, std::string()); }

extern "C" int hc_cublas_gemm(void *user_context, halide_buffer_t *a_arg, halide_buffer_t *b_arg, int32_t k,
                              halide_buffer_t *out) {
    if (gemm::answer_bounds_query(a_arg, b_arg, k, out)) return 0;
    const halide_dimension_t &n = out->dim[0], &m = out->dim[1];
    if (m.extent == 0 || n.extent == 0) return 0;
    halide_buffer_t a_view, b_view;
    halide_dimension_t a_dims[2], b_dims[2];
    const halide_buffer_t *a = gemm::as_matrix(a_arg, out, k, &a_view, a_dims);
    const halide_buffer_t *b = gemm::as_matrix(b_arg, out, gemm::columns_of(b_arg, k), &b_view, b_dims);
    if (!a || !b) return fail("an operand's memory is not the matrix the product reads");
    if (!gemm::operands_cover(a, b, k, out)) return fail("an operand has fewer rows than the product reads");
    const Library *lib = library.load();
    if (!lib) return fail("cuBLAS is not loaded");
    // Halide allocates the output on the device; the operands are the caller's device arrays or
    // GPU kernels' results (the extern stage itself moves nothing between host and device).
    if (!a->device || !b->device || !out->device || a->host_dirty() || b->host_dirty()) {
        return fail("an operand is not in device memory");
    }
    const gemm::Operand oa = gemm::operand(a, 0, m.min), ob = gemm::operand(b, n.min, 0);
    const int64_t ldc = gemm::output_lead(out);
    // (Leads are a buffer's extent or stride, both 32-bit: they fit cuBLAS's ints.)
    if (k <= 0 || oa.lead == 0 || ob.lead == 0 || ldc == 0) return fail("operands without a unit stride");
    auto *call = static_cast<CudaCallContext *>(static_cast<Halide::JITUserContext *>(user_context));
    CurrentCudaContext current(call->context);
    if (!current.ok()) return fail("cannot make the call's CUDA context current");
    void *handle = handle_for(*lib, call->context);
    if (!handle) return fail("cublasCreate failed");
    if (const int status = lib->set_stream(handle, call->stream); status != 0) {
        return fail("cublasSetStream returned " + std::to_string(status));
    }
    // cuBLAS is column-major: the row-major out (m x n) = a @ b is the column-major
    // out^T (n x m) = b^T @ a^T, so b comes first, each operand as row-major BLAS would take it.
    // A batch (out's dims past 2) is one strided batched call.
    const gemm::Batch batch = gemm::batch_of(a, b, out);
    if (!batch.ok) return fail("a batch whose matrices are not a fixed stride apart");
    if (batch.count == 0) return 0;
    const bool batched = out->dimensions > 2;
    const int op_a = oa.transpose ? kOpT : kOpN, op_b = ob.transpose ? kOpT : kOpN;
    const int rows = static_cast<int>(n.extent), columns = static_cast<int>(m.extent);
    const int lead_a = static_cast<int>(oa.lead), lead_b = static_cast<int>(ob.lead), lead_c = static_cast<int>(ldc);
    const int count = static_cast<int>(batch.count);
    auto at = [](const halide_buffer_t *buf, int64_t offset) {
        return reinterpret_cast<const char *>(buf->device) + offset * buf->type.bytes();
    };
    const char *pa = at(a, oa.offset + batch.a_offset), *pb = at(b, ob.offset + batch.b_offset);
    char *c = reinterpret_cast<char *>(out->device);
    int status;
    if (a->type.bits == 16 && a->type == b->type && out->type.bits == 32) {
        // float16 or bfloat16 operands (the lowering passes a product of widened 16-bit arrays
        // so): the tensor cores multiply them exactly and accumulate in float32, as NumPy's
        // float16 product accumulates in float32.
        const int half = a->type.code == halide_type_bfloat ? kCudaR16BF : kCudaR16F;
        const float one = 1, zero = 0;
        status = batched ? lib->gemm_batched_ex(handle, op_b, op_a, rows, columns, k, &one, pb, half, lead_b,
                                                batch.b_stride, pa, half, lead_a, batch.a_stride, &zero, c,
                                                kCudaR32F, lead_c, batch.out_stride, count, kComputeF32, kGemmDefault)
                         : lib->gemm_ex(handle, op_b, op_a, rows, columns, k, &one, pb, half, lead_b, pa,
                                        half, lead_a, &zero, c, kCudaR32F, lead_c, kComputeF32, kGemmDefault);
    } else if (a->type != out->type || b->type != out->type) {
        return fail("operands of another type than the product");
    } else if (out->type.bits == 32) {
        const float one = 1, zero = 0;
        const auto *fa = reinterpret_cast<const float *>(pa), *fb = reinterpret_cast<const float *>(pb);
        auto *fc = reinterpret_cast<float *>(c);
        status = batched ? lib->sgemm_batched(handle, op_b, op_a, rows, columns, k, &one, fb, lead_b, batch.b_stride, fa,
                                              lead_a, batch.a_stride, &zero, fc, lead_c, batch.out_stride, count)
                         : lib->sgemm(handle, op_b, op_a, rows, columns, k, &one, fb, lead_b, fa, lead_a, &zero, fc, lead_c);
    } else {
        const double one = 1, zero = 0;
        const auto *da = reinterpret_cast<const double *>(pa), *db = reinterpret_cast<const double *>(pb);
        auto *dc = reinterpret_cast<double *>(c);
        status = batched ? lib->dgemm_batched(handle, op_b, op_a, rows, columns, k, &one, db, lead_b, batch.b_stride, da,
                                              lead_a, batch.a_stride, &zero, dc, lead_c, batch.out_stride, count)
                         : lib->dgemm(handle, op_b, op_a, rows, columns, k, &one, db, lead_b, da, lead_a, &zero, dc, lead_c);
    }
    return status == 0 ? 0 : fail("cublas gemm returned " + std::to_string(status));
}

}  // namespace hc
