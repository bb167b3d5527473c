// mathbench: speed and accuracy of hc::math vs Halide's builtins.
//
// For each function and dtype: ms to evaluate 2048x2048 elements
// (vectorize(x, natural width).parallel(y), best of several runs) and the max
// ulp error against a long double <cmath> oracle over a mix of inputs (random
// bit patterns, the function's main domain, log-uniform magnitudes incl.
// denormals, and a table of special values). "bad" counts special-value
// mismatches (nan/inf/signed-zero disagreements with the oracle).
//
// Usage: mathbench [--cuda] [name ...]   (no names: all functions; --cuda: on the GPU, run with
// HL_LLVM_ARGS=-nvptx-fma-level=0 as hcompile sets it)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hcompile/lowering.h"
#include "lowering/numpy_math.h"

using namespace Halide;
using LD = long double;

namespace {

struct Fn {
    const char *name;
    int arity;
    Expr (*ours)(Expr, Expr);
    Expr (*builtin)(Expr, Expr);
    LD (*ref)(LD, LD);
    double lo, hi;  // main domain for the uniform part of the inputs
};

#define U1(f) [](Expr a, Expr) { return f(a); }
#define U2(f) [](Expr a, Expr b) { return f(a, b); }
#define R1(f) [](LD a, LD) -> LD { return f(a); }
#define R2(f) [](LD a, LD b) -> LD { return f(a, b); }

const Fn kFns[] = {
    {"exp", 1, U1(hc::math::exp), U1(Halide::exp), R1(expl), -100, 100},
    {"cbrt", 1, U1(hc::math::cbrt), [](Expr a, Expr) { return Halide::pow(a, Halide::Internal::make_const(a.type(), 1.0 / 3.0)); }, R1(cbrtl), -100, 100},
    {"exp2", 1, U1(hc::math::exp2), [](Expr a, Expr) { return Halide::pow(Halide::Internal::make_const(a.type(), 2.0), a); }, R1(exp2l), -100, 100},
    {"expm1", 1, U1(hc::math::expm1), [](Expr a, Expr) { return Halide::exp(a) - 1; }, R1(expm1l), -5, 5},
    {"log", 1, U1(hc::math::log), U1(Halide::log), R1(logl), 0, 10},
    {"log1p", 1, U1(hc::math::log1p), [](Expr a, Expr) { return Halide::log(a + 1); }, R1(log1pl), -1, 2},
    {"log2", 1, U1(hc::math::log2), [](Expr a, Expr) { return Halide::log(a) * Halide::Internal::make_const(a.type(), 1.4426950408889634); }, R1(log2l), 0, 10},
    {"log10", 1, U1(hc::math::log10), [](Expr a, Expr) { return Halide::log(a) * Halide::Internal::make_const(a.type(), 0.4342944819032518); }, R1(log10l), 0, 10},
    {"sqrt", 1, U1(hc::math::sqrt), U1(Halide::sqrt), R1(sqrtl), 0, 100},
    {"sin", 1, U1(hc::math::sin), U1(Halide::sin), R1(sinl), -10, 10},
    {"cos", 1, U1(hc::math::cos), U1(Halide::cos), R1(cosl), -10, 10},
    {"tan", 1, U1(hc::math::tan), U1(Halide::tan), R1(tanl), -10, 10},
    {"tanh", 1, U1(hc::math::tanh), U1(Halide::tanh), R1(tanhl), -10, 10},
    {"sinh", 1, U1(hc::math::sinh), U1(Halide::sinh), R1(sinhl), -10, 10},
    {"cosh", 1, U1(hc::math::cosh), U1(Halide::cosh), R1(coshl), -10, 10},
    {"arcsin", 1, U1(hc::math::arcsin), U1(Halide::asin), R1(asinl), -1, 1},
    {"arccos", 1, U1(hc::math::arccos), U1(Halide::acos), R1(acosl), -1, 1},
    {"arctan", 1, U1(hc::math::arctan), U1(Halide::atan), R1(atanl), -10, 10},
    {"arcsinh", 1, U1(hc::math::arcsinh), U1(Halide::asinh), R1(asinhl), -10, 10},
    {"arccosh", 1, U1(hc::math::arccosh), U1(Halide::acosh), R1(acoshl), 1, 10},
    {"arctanh", 1, U1(hc::math::arctanh), U1(Halide::atanh), R1(atanhl), -1, 1},
    {"arctan2", 2, U2(hc::math::arctan2), U2(Halide::atan2), R2(atan2l), -10, 10},
    {"pow", 2, U2(hc::math::pow), U2(Halide::pow), R2(powl), 0, 10},
    {"hypot", 2, U2(hc::math::hypot), [](Expr a, Expr b) { return Halide::sqrt(a * a + b * b); }, R2(hypotl), -10, 10},
    {"floor", 1, U1(hc::math::floor), U1(Halide::floor), R1(floorl), -10, 10},
    {"ceil", 1, U1(hc::math::ceil), U1(Halide::ceil), R1(ceill), -10, 10},
    {"rint", 1, U1(hc::math::rint), U1(Halide::round), R1(nearbyintl), -10, 10},
    {"trunc", 1, U1(hc::math::trunc), U1(Halide::trunc), R1(truncl), -10, 10},
};

// Error of `got` in ulps of T at the oracle value; 1e30 marks a special-value mismatch.
template <typename T>
double ulp_err(T got, LD ref) {
    const double kBad = 1e30;
    T r = (T)ref;
    if (std::isnan(ref)) return std::isnan(got) ? 0 : kBad;
    if (std::isnan(got)) return kBad;
    if (std::isinf(r)) return got == r ? 0 : kBad;
    if (std::isinf(got)) return kBad;
    if (ref == 0 && got == 0) return std::signbit((double)ref) == std::signbit(got) ? 0 : kBad;
    LD a = fabsl(ref);
    LD ulp = a < (LD)std::numeric_limits<T>::min()
                 ? (LD)std::numeric_limits<T>::denorm_min()
                 : ldexpl(1.0L, ilogbl(a) - (std::numeric_limits<T>::digits - 1));
    if (ref != 0 && got != 0 && std::signbit((double)ref) != std::signbit(got) && a >= ulp) return kBad;
    return (double)(fabsl((LD)got - ref) / ulp);
}

template <typename T>
std::vector<T> specials() {
    using L = std::numeric_limits<T>;
    std::vector<T> s = {0, 1, 2, 3, 0.5, 1.5, 2.5, 10, 100, 1e-3, 1e-8, (T)1e-20, (T)1e20,
                        (T)M_PI, (T)M_PI_2, (T)M_PI_4, (T)0.7, (T)0.9999, (T)1.0001, (T)88.72, (T)89.5,
                        (T)709.78, (T)710.5, (T)-103.9, (T)-745.2, (T)1e5, (T)1e10, (T)1e30,
                        L::min(), L::denorm_min(), L::max(), L::epsilon(), L::infinity(), L::quiet_NaN(),
                        std::nextafter(T(1), T(2)), std::nextafter(T(1), T(0)), (T)(1.0 / 3), T(0.25), T(4), T(-0.0)};
    size_t n = s.size();
    for (size_t i = 0; i < n; i++) s.push_back(-s[i]);
    return s;
}

// Fills n inputs of one argument; `which` picks a different stream per argument.
template <typename T>
void make_inputs(const Fn &fn, int which, T *v, size_t n) {
    std::mt19937_64 rng(1234 + which);
    std::vector<T> sp = specials<T>();
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    int emin = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
    int emax = std::numeric_limits<T>::max_exponent;
    for (size_t i = 0; i < n; i++) {
        double u = std::uniform_real_distribution<double>(0, 1)(rng);
        T x;
        switch (i % 4) {
        case 0: {
            Bits b = (Bits)rng();
            std::memcpy(&x, &b, sizeof(T));
            break;
        }
        case 1: x = (T)(fn.lo + (fn.hi - fn.lo) * u); break;
        case 2: {
            x = (T)std::ldexp(1.0 + u, (int)(rng() % (emax - emin)) + emin);
            if (rng() & 1) x = -x;
            break;
        }
        default: {
            // All pairs of specials for binary functions; arg 0 cycles fastest.
            size_t k = i / 4;
            x = fn.arity == 1 || which == 0 ? sp[k % sp.size()] : sp[(k / sp.size()) % sp.size()];
            if (k >= sp.size() * sp.size()) x = (T)(fn.lo + (fn.hi - fn.lo) * u);
            break;
        }
        }
        v[i] = x;
    }
}

struct Result {
    double max_ulp = 0;
    long bad = 0;
    double worst_a = 0, worst_b = 0;
};

// --cuda: run on the GPU (blocks of 32x8 threads, CUDA capability 8.6; Halide copies the inputs
// there once and times the kernels with a device sync), the accuracy then that of the device.
bool on_cuda = false;

Target bench_target() {
    Target t = get_jit_target_from_environment();
    return on_cuda ? t.with_feature(Target::CUDA).with_feature(Target::CUDACapability86) : t;
}

// One compiled variant (ours or builtin) of a function.
template <typename T>
struct Variant {
    ImageParam pa{type_of<T>(), 2}, pb{type_of<T>(), 2};
    Func f{"f"};
    Pipeline pipeline;
    Variant(const Fn &fn, bool ours) {
        Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
        Expr ea = pa(x, y), eb = pb(x, y);
        f(x, y) = ours ? fn.ours(ea, eb) : fn.builtin(ea, eb);
        if (on_cuda) {
            f.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        } else {
            f.vectorize(x, bench_target().natural_vector_size<T>()).parallel(y);
        }
        pipeline = Pipeline(f);
        // As hcompile compiles for the GPU: each float product rounded on its own (with the
        // HL_LLVM_ARGS=-nvptx-fma-level=0 the frontend sets, given on the command line here).
        if (on_cuda) hc::add_gpu_rounding_pass(pipeline);
        pipeline.compile_jit(bench_target());
    }
    double time_ms(const Buffer<T> &a, const Buffer<T> &b, Buffer<T> &out) {
        pa.set(a);
        pb.set(b);
        auto t0 = std::chrono::steady_clock::now();
        pipeline.realize(out);
        if (on_cuda) out.device_sync();
        auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double, std::milli>(t1 - t0).count();
    }
};

template <typename T>
Result accuracy(const Fn &fn, bool ours, Variant<T> &v, const Buffer<T> &a, const Buffer<T> &b,
                const std::vector<LD> &ref) {
    Buffer<T> out(a.width(), a.height());
    v.time_ms(a, b, out);
    if (on_cuda) out.copy_to_host();
    Result r;
    const T *o = out.data();
    for (size_t i = 0; i < ref.size(); i++) {
        double e = ulp_err<T>(o[i], ref[i]);
        if (e >= 1e29) {
            if (r.bad++ < 3)
                std::printf("    %s %s(%.9g, %.9g) = %.9g, want %.9Lg\n", ours ? "ours" : "builtin", fn.name,
                            (double)a.data()[i], (double)b.data()[i], (double)o[i], ref[i]);
        } else if (e > r.max_ulp) {
            r.max_ulp = e;
            r.worst_a = a.data()[i];
            r.worst_b = b.data()[i];
        }
    }
    return r;
}

template <typename T>
void bench(const Fn &fn, int w, int h) {
    Buffer<T> a(w, h), b(w, h);
    make_inputs<T>(fn, 0, a.data(), a.number_of_elements());
    make_inputs<T>(fn, 1, b.data(), b.number_of_elements());
    // Timing inputs: uniform over the function's main domain.
    Buffer<T> ta(w, h), tb(w, h), out(w, h);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> dist(fn.lo, fn.hi);
    for (size_t i = 0; i < ta.number_of_elements(); i++) {
        ta.data()[i] = (T)dist(rng);
        tb.data()[i] = (T)dist(rng);
    }
    // Written through data(): Halide copies them to the GPU only when told the host copy is new.
    for (Buffer<T> *input : {&a, &b, &ta, &tb}) input->set_host_dirty();
    std::vector<LD> ref(a.number_of_elements());
    for (size_t i = 0; i < ref.size(); i++) ref[i] = fn.ref((LD)a.data()[i], (LD)b.data()[i]);
    Variant<T> vb(fn, false), vo(fn, true);
    // Interleaved runs, best of 15 each: the machine is shared, so the minimum is the
    // most reproducible statistic.
    double mb = 1e9, mo = 1e9;
    for (int it = 0; it < 15; it++) {
        mb = std::min(mb, vb.time_ms(ta, tb, out));
        mo = std::min(mo, vo.time_ms(ta, tb, out));
    }
    Result rb = accuracy<T>(fn, false, vb, a, b, ref);
    Result ro = accuracy<T>(fn, true, vo, a, b, ref);
    std::printf("| %-8s | %s | %8.2f | %8.2f | %10.3g | %5ld | %10.3g | %5ld |   worst ours at (%.17g, %.17g)\n", fn.name,
                sizeof(T) == 4 ? "f32" : "f64", mb, mo, rb.max_ulp, rb.bad, ro.max_ulp, ro.bad, ro.worst_a,
                ro.worst_b);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char **argv) {
    int w = 2048, h = 2048;
    for (int i = 1; i < argc; i++) on_cuda |= std::strcmp(argv[i], "--cuda") == 0;
    if (on_cuda) std::printf("On the GPU (Halide's CUDA target, capability 8.6): kernel ms with a device sync.\n\n");
    std::printf("| function | dtype | builtin ms | ours ms | builtin max ulp | builtin bad | ours max ulp | ours bad |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const Fn &fn : kFns) {
        bool want = argc == 1 + on_cuda;
        for (int i = 1; i < argc; i++) want |= std::strcmp(argv[i], fn.name) == 0;
        if (!want) continue;
        bench<float>(fn, w, h);
        bench<double>(fn, w, h);
    }
    return 0;
}
