#include "hcompile/dispatch.h"

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include <cstdlib>
#include <cstring>

#include "dispatch_cuda.h"
#include "hcompile/block_pool.h"
#include "hcompile/numpy_pool_handler.h"
#include "hcompile/small_array.h"

namespace hc {

namespace {

// A new C-contiguous array for a kernel output; large ones take their memory from the block pool
// (block_pool.h) through NumPy's memory-handler hook, set for this one allocation only.
PyObject *new_output_array(int nd, const npy_intp *shape, DType dtype) {
    const int typenum = numpy_typenum(dtype);
    size_t bytes = static_cast<size_t>(dtype_bits(dtype) + 7) / 8;  // NumPy stores a bool in a byte
    for (int d = 0; d < nd; ++d) bytes *= static_cast<size_t>(shape[d]);
    if (bytes < kPooledMinBytes || block_pool_limit() == 0) return PyArray_SimpleNew(nd, shape, typenum);
    PyObject *handler = numpy_pool_handler();
    if (!handler) return nullptr;
    PyObject *previous = PyDataMem_SetHandler(handler);
    if (!previous) return nullptr;
    PyObject *array = PyArray_SimpleNew(nd, shape, typenum);
    PyObject *ours = PyDataMem_SetHandler(previous);
    Py_DECREF(previous);
    if (!ours) {
        Py_XDECREF(array);
        return nullptr;
    }
    Py_DECREF(ours);
    return array;
}

bool same_float_bits(PyObject *a, PyObject *b) {
    double x = PyFloat_AS_DOUBLE(a), y = PyFloat_AS_DOUBLE(b);
    return std::memcmp(&x, &y, sizeof x) == 0;
}

// Value equality for specialised Python scalars: exact type, and floats compared by bits so that
// NaN matches NaN and -0.0 does not match 0.0.
int same_value(PyObject *actual, PyObject *expected) {
    if (actual == expected) return 1;
    if (Py_TYPE(actual) != Py_TYPE(expected)) return 0;
    if (PyFloat_CheckExact(actual)) return same_float_bits(actual, expected);
    return PyObject_RichCompareBool(actual, expected, Py_EQ);
}

// 1: holds, 0: fails, -1: Python error.
int check_arg(const ArgGuard &g, PyObject *arg) {
    if (reinterpret_cast<PyObject *>(Py_TYPE(arg)) != g.type) return 0;
    switch (g.kind) {
    case ArgGuard::Array: {
        auto *a = reinterpret_cast<PyArrayObject *>(arg);
        if (PyArray_DESCR(a)->type_num != g.typenum) return 0;
        int nd = PyArray_NDIM(a);
        if (nd != static_cast<int>(g.shape.size())) return 0;
        const npy_intp *dims = PyArray_DIMS(a);
        for (int i = 0; i < nd; ++i) {
            // Negative: a symbolic extent, any size from -shape[i] up (0 and 1 stay specialised).
            if (dims[i] != g.shape[i] && !(g.shape[i] < 0 && dims[i] >= -g.shape[i])) return 0;
        }
        return classify_layout(arg) == g.layout;
    }
    case ArgGuard::NumpyScalar:
    case ArgGuard::DynamicFloat:
        return 1;  // the exact type fixes the dtype
    case ArgGuard::Int:
    case ArgGuard::Float:
    case ArgGuard::Str:
    case ArgGuard::Equal:
        return same_value(arg, g.value);
    case ArgGuard::Bool:
    case ArgGuard::None:
    case ArgGuard::Identity:
        return arg == g.value;
    case ArgGuard::TypeOnly:
        return 1;
    case ArgGuard::CudaTensor:
    case ArgGuard::CupyArray:
        return check_cuda_array(g, arg);
    }
    return 0;
}

int check_value(const ValueGuard &g) {
    PyObject *actual = nullptr, *owned = nullptr;
    switch (g.source) {
    case ValueGuard::DictItem:
        actual = PyDict_GetItemWithError(g.container, g.key);  // borrowed
        if (!actual && PyErr_Occurred()) return -1;
        break;
    case ValueGuard::CellContents:
        actual = PyCell_GET(g.container);  // borrowed; null when empty
        break;
    case ValueGuard::Attribute:
        actual = owned = PyObject_GetAttr(g.container, g.key);
        if (!actual) {
            if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
            PyErr_Clear();
        }
        break;
    case ValueGuard::FunctionCode:
        actual = PyFunction_GET_CODE(g.container);
        break;
    case ValueGuard::FunctionDefaults:
        actual = PyFunction_GET_DEFAULTS(g.container);
        if (!actual) actual = Py_None;
        break;
    case ValueGuard::FunctionKwDefaults:
        actual = PyFunction_GET_KW_DEFAULTS(g.container);
        if (!actual) actual = Py_None;
        break;
    }
    int r = 0;
    if (!actual) r = g.check == ValueGuard::Absent;
    else if (g.check == ValueGuard::Identical) r = actual == g.expected;
    else if (g.check == ValueGuard::Equal) r = same_value(actual, g.expected);
    Py_XDECREF(owned);
    return r;
}

// The bytes an array's elements span, [first, last) (NumPy's may_share_memory bounds).
std::pair<const char *, const char *> byte_range(PyObject *array) {
    auto *a = reinterpret_cast<PyArrayObject *>(array);
    const char *lo = static_cast<const char *>(PyArray_DATA(a)), *hi = lo;
    for (int d = 0; d < PyArray_NDIM(a); ++d) {
        npy_intp n = PyArray_DIM(a, d), stride = PyArray_STRIDE(a, d);
        if (n == 0) return {lo, lo};
        (stride < 0 ? lo : hi) += (n - 1) * stride;
    }
    return {lo, hi + PyArray_ITEMSIZE(a)};
}

bool arrays_overlap(PyObject *x, PyObject *y) {
    if (!PyArray_Check(x) || !PyArray_Check(y)) return false;
    auto [x_lo, x_hi] = byte_range(x);
    auto [y_lo, y_hi] = byte_range(y);
    return x_lo < x_hi && y_lo < y_hi && x_lo < y_hi && y_lo < x_hi;
}

// Axis `axis`'s size of an array argument: a NumPy array's, or another library's (a PyTorch
// tensor's `shape`, guarded to have that axis); -1 where it cannot be read (the guard then fails).
int64_t argument_extent(PyObject *arg, int axis) {
    if (PyArray_Check(arg)) return PyArray_DIM(reinterpret_cast<PyArrayObject *>(arg), axis);
    PyObject *shape = PyObject_GetAttrString(arg, "shape");
    int64_t extent = -1;
    if (shape && PyTuple_Check(shape) && axis < PyTuple_GET_SIZE(shape)) {
        extent = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, axis));
    }
    Py_XDECREF(shape);
    if (PyErr_Occurred()) PyErr_Clear();
    return extent;
}

bool fits_buffer_limit(const Kernel &k, PyObject *const *args) {
    return k.fits_buffer_limit([&](int arg, int axis) { return argument_extent(args[arg], axis); });
}

bool relations_hold(const std::vector<ArgRelationGuard> &guards, PyObject *const *args) {
    for (const ArgRelationGuard &g : guards) {
        bool actual = false;
        switch (g.kind) {
        case ArgRelationGuard::Same:
            actual = args[g.a] == args[g.b];
            break;
        case ArgRelationGuard::Overlap:
            actual = arrays_overlap(args[g.a], args[g.b]);
            break;
        case ArgRelationGuard::SameExtent:
            actual = argument_extent(args[g.a], g.a_axis) == argument_extent(args[g.b], g.b_axis);
            break;
        case ArgRelationGuard::ExtentBelow:
            actual = argument_extent(args[g.a], g.a_axis) < g.limit;
            break;
        case ArgRelationGuard::Writeable:
            actual = PyArray_Check(args[g.a]) && PyArray_ISWRITEABLE(reinterpret_cast<PyArrayObject *>(args[g.a]));
            break;
        }
        if (actual != g.expected) return false;
    }
    return true;
}

// Fills `buf` to describe an array argument (no copy); `dims` has room for its dimensions.
void describe_array(PyArrayObject *a, DType dtype, halide_buffer_t &buf, halide_dimension_t *dims) {
    int nd = PyArray_NDIM(a);
    const npy_intp *shape = PyArray_DIMS(a);
    const npy_intp *strides = PyArray_STRIDES(a);
    npy_intp itemsize = PyArray_ITEMSIZE(a);
    bool contiguous = PyArray_IS_C_CONTIGUOUS(a);
    int64_t dense = 1;
    for (int d = 0; d < nd; ++d) {
        int axis = nd - 1 - d;  // Halide's dim 0 is NumPy's last axis
        dims[d].min = 0;
        dims[d].extent = static_cast<int32_t>(shape[axis]);
        // A C-contiguous kernel was compiled with dense strides; NumPy may report any stride for
        // a size-1 axis, so hand over the canonical ones.
        dims[d].stride = static_cast<int32_t>(contiguous ? dense : strides[axis] / itemsize);
        dims[d].flags = 0;
        dense *= shape[axis] > 0 ? shape[axis] : 1;
    }
    std::memset(&buf, 0, sizeof buf);
    buf.host = static_cast<uint8_t *>(PyArray_DATA(a));
    buf.type = halide_runtime_type(dtype);
    buf.dimensions = nd;
    buf.dim = dims;
}

void describe_scalar(void *data, DType dtype, halide_buffer_t &buf) {
    std::memset(&buf, 0, sizeof buf);
    buf.host = static_cast<uint8_t *>(data);
    buf.type = halide_runtime_type(dtype);
}

// Arrays of these classes reach the kernel as a native, aligned, C-contiguous copy.
bool copied_at_call(int layout_class) {
    return layout_class == kLayoutCopied || layout_class == kLayoutByteSwapped;
}

// Strong references released when the call ends, on every path out of it.
template <size_t N>
class OwnedRefs {
public:
    explicit OwnedRefs(size_t size) : refs_(size, nullptr) {}
    ~OwnedRefs() {
        for (size_t i = 0; i < refs_.size(); ++i) Py_XDECREF(refs_[i]);
    }
    PyObject *&operator[](size_t i) { return refs_[i]; }
    // Hands the reference at `i` over to the caller.
    PyObject *take(size_t i) {
        PyObject *ref = refs_[i];
        refs_[i] = nullptr;
        return ref;
    }

private:
    SmallArray<PyObject *, N> refs_;
};

}  // namespace

bool init_numpy_api() {
    if (PyArray_API) return true;
    return _import_array() >= 0;
}

// NumPy gives a dtype registered by a library (ml_dtypes' bfloat16) its number when the library
// registers it; a bfloat16 NumPy array can only exist once ml_dtypes is imported, so the number
// is looked up then, once (-1, matching no array, where ml_dtypes is not installed).
static int bfloat16_typenum() {
    static const int typenum = [] {
        PyObject *module = PyImport_ImportModule("ml_dtypes");
        PyObject *type = module ? PyObject_GetAttrString(module, "bfloat16") : nullptr;
        PyArray_Descr *descr = type ? PyArray_DescrFromTypeObject(type) : nullptr;
        const int num = descr ? descr->type_num : -1;
        Py_XDECREF(descr);
        Py_XDECREF(type);
        Py_XDECREF(module);
        if (num < 0) PyErr_Clear();
        return num;
    }();
    return typenum;
}

int numpy_typenum(DType t) {
    switch (t) {
    case DType::Bool: return NPY_BOOL;
    case DType::Int8: return NPY_INT8;
    case DType::Int16: return NPY_INT16;
    case DType::Int32: return NPY_INT32;
    case DType::Int64: return NPY_INT64;
    case DType::UInt8: return NPY_UINT8;
    case DType::UInt16: return NPY_UINT16;
    case DType::UInt32: return NPY_UINT32;
    case DType::UInt64: return NPY_UINT64;
    case DType::Float32: return NPY_FLOAT32;
    case DType::Float64: return NPY_FLOAT64;
    case DType::Float16: return NPY_FLOAT16;
    case DType::BFloat16: return bfloat16_typenum();
    }
    return -1;
}

int classify_layout(PyObject *array) {
    auto *a = reinterpret_cast<PyArrayObject *>(array);
    const int copied = kLayoutCopied;
    if (!PyArray_ISNOTSWAPPED(a)) return kLayoutByteSwapped;
    if (!PyArray_ISALIGNED(a)) return copied;
    if (PyArray_IS_C_CONTIGUOUS(a)) return static_cast<int>(InputLayout::CContiguous);
    int nd = PyArray_NDIM(a);
    npy_intp itemsize = PyArray_ITEMSIZE(a);
    const npy_intp *shape = PyArray_DIMS(a);
    const npy_intp *strides = PyArray_STRIDES(a);
    for (int i = 0; i < nd; ++i) {
        if (strides[i] % itemsize != 0) return copied;
        // Halide buffers index with 32 bits: it checks |extent * stride| (in elements) per
        // dimension against 2^31 - 1, so a view spanning more than that (a stepped view of a big
        // buffer) is handed over as a dense copy of the elements it shows.
        int64_t stride = std::llabs(static_cast<int64_t>(strides[i] / itemsize));
        if (shape[i] > 0 && stride > INT32_MAX / shape[i]) return copied;
    }
    if (nd > 0 && strides[nd - 1] == itemsize) return static_cast<int>(InputLayout::InnerDense);
    return static_cast<int>(InputLayout::Strided);
}

InputLayout kernel_layout(int layout_class) {
    return copied_at_call(layout_class) ? InputLayout::CContiguous : static_cast<InputLayout>(layout_class);
}

Entry::~Entry() {
    for (auto &g : args) {
        Py_XDECREF(g.type);
        Py_XDECREF(g.value);
    }
    for (auto &v : values) {
        Py_XDECREF(v.container);
        Py_XDECREF(v.key);
        Py_XDECREF(v.expected);
    }
    Py_XDECREF(result_builder);
    Py_XDECREF(runner);
}

CudaCall::~CudaCall() {
    Py_XDECREF(empty);
    for (PyObject *o : output_args) Py_XDECREF(o);
    for (PyObject *o : output_options) Py_XDECREF(o);
    Py_XDECREF(current_stream);
    Py_XDECREF(device_index);
}

int Entry::traverse(visitproc visit, void *arg) const {
    for (const ArgGuard &g : args) {
        Py_VISIT(g.type);
        Py_VISIT(g.value);
    }
    for (const ValueGuard &v : values) {
        Py_VISIT(v.container);
        Py_VISIT(v.key);
        Py_VISIT(v.expected);
    }
    Py_VISIT(result_builder);
    Py_VISIT(runner);
    if (cuda) {
        Py_VISIT(cuda->empty);
        for (PyObject *o : cuda->output_args) Py_VISIT(o);
        for (PyObject *o : cuda->output_options) Py_VISIT(o);
        Py_VISIT(cuda->current_stream);
        Py_VISIT(cuda->device_index);
    }
    return 0;
}

PyObject *Dispatcher::miss_sentinel() {
    static PyObject *sentinel = PyObject_CallNoArgs(reinterpret_cast<PyObject *>(&PyBaseObject_Type));
    return sentinel;
}

Dispatcher::Dispatcher(PyObject *function)
    : function_(function), entries_(std::make_shared<const EntryList>()) {
    Py_XINCREF(function_);
}

Dispatcher::~Dispatcher() { Py_XDECREF(function_); }

void Dispatcher::add_entry(EntryPtr entry, bool first) {
    auto next = std::make_shared<EntryList>(*entries_);
    next->insert(first ? next->begin() : next->end(), std::move(entry));
    entries_ = std::move(next);
}

void Dispatcher::clear() {
    // Calls in flight keep their snapshot; its entries go when the last of those calls ends.
    std::shared_ptr<const EntryList> old = std::move(entries_);
    entries_ = std::make_shared<const EntryList>();
    hits_ = misses_ = 0;
    old.reset();  // may run Python finalisers: only once the dispatcher is consistent again
}

int Dispatcher::traverse(visitproc visit, void *arg) const {
    Py_VISIT(function_);
    for (const EntryPtr &entry : *entries_) {
        if (int r = entry->traverse(visit, arg)) return r;
    }
    return 0;
}

void Dispatcher::drop_references() {
    clear();
    Py_CLEAR(function_);
}

Entry *Dispatcher::find(const EntryList &entries, PyObject *const *args, Py_ssize_t nargs, bool *error) {
    *error = false;
    for (const EntryPtr &entry : entries) {
        if (static_cast<Py_ssize_t>(entry->args.size()) != nargs) continue;
        bool ok = true;
        for (Py_ssize_t i = 0; ok && i < nargs; ++i) {
            int r = check_arg(entry->args[i], args[i]);
            if (r < 0) return *error = true, nullptr;
            ok = r == 1;
        }
        for (size_t i = 0; ok && i < entry->values.size(); ++i) {
            int r = check_value(entry->values[i]);
            if (r < 0) return *error = true, nullptr;
            ok = r == 1;
        }
        if (ok && relations_hold(entry->relations, args)) return entry.get();
    }
    return nullptr;
}

int Dispatcher::matches(PyObject *const *args, Py_ssize_t nargs) {
    std::shared_ptr<const EntryList> entries = entries_;  // a guard may run Python code
    bool error;
    Entry *entry = find(*entries, args, nargs, &error);
    return error ? -1 : entry != nullptr;
}

PyObject *Dispatcher::call(PyObject *const *args, Py_ssize_t nargs) {
    // This call's snapshot of the entries: what it finds stays alive until it returns, even when
    // another thread clears or extends the list meanwhile.
    std::shared_ptr<const EntryList> entries = entries_;
    bool error;
    Entry *entry = find(*entries, args, nargs, &error);
    if (error) return nullptr;
    // A kernel for any size may find an array of this call past Halide's buffer limit although
    // its guards hold: the caller then sees a matching entry that did not run, and runs Python.
    if (!entry || (entry->kernel && !fits_buffer_limit(*entry->kernel, args))) {
        ++misses_;
        PyObject *miss = miss_sentinel();
        Py_INCREF(miss);
        return miss;
    }
    ++hits_;
    ++entry->hits;
    if (!entry->kernel) {
        PyObject *run = entry->runner ? entry->runner : function_;
        if (!run) {  // dropped by the garbage collector (drop_references) while this call found the entry
            PyErr_SetString(PyExc_ReferenceError, "hcompile: the compiled function was collected");
            return nullptr;
        }
        return PyObject_Vectorcall(run, args, nargs, nullptr);
    }
    if (entry->cuda) return run_cuda_entry(*entry, args);
    return run_kernel(*entry, args);
}

PyObject *Dispatcher::run_kernel(const Entry &entry, PyObject *const *args) {
    const Kernel &k = *entry.kernel;
    const size_t n_in = k.inputs.size(), n_out = k.outputs.size();
    size_t n_dims = 0;
    for (const KernelInput &in : k.inputs) n_dims += in.ndim;
    for (const KernelOutput &out : k.outputs) n_dims += out.shape.size();
    SmallArray<halide_buffer_t, 16> buffers(n_in + n_out);
    SmallArray<halide_buffer_t *, 16> buffer_ptrs(n_in + n_out);
    SmallArray<halide_dimension_t, 64> dims(n_dims);
    SmallArray<uint64_t, 16> scalar_storage(n_in);
    OwnedRefs<16> copies(n_in);  // the dense native copies of inputs of the copied classes
    OwnedRefs<8> outputs(n_out);
    size_t next_dim = 0;

    for (size_t i = 0; i < n_in; ++i) {
        const KernelInput &in = k.inputs[i];
        PyObject *arg = args[in.arg_index];
        const ArgGuard &guard = entry.args[in.arg_index];
        buffer_ptrs[i] = &buffers[i];
        if (guard.kind == ArgGuard::NumpyScalar) {
            if (in.dtype == DType::BFloat16) {
                // NumPy's scalar conversions do not know a library's dtype; the value does (exact).
                const double value = PyFloat_AsDouble(arg);
                if (value == -1.0 && PyErr_Occurred()) return nullptr;
                const uint16_t bits = bfloat16_bits(value);
                std::memcpy(&scalar_storage[i], &bits, sizeof bits);
            } else {
                PyArray_ScalarAsCtype(arg, &scalar_storage[i]);
            }
            describe_scalar(&scalar_storage[i], in.dtype, buffers[i]);
            continue;
        }
        if (guard.kind == ArgGuard::DynamicFloat) {
            const double value = PyFloat_AS_DOUBLE(arg);
            std::memcpy(&scalar_storage[i], &value, sizeof value);
            describe_scalar(&scalar_storage[i], in.dtype, buffers[i]);
            continue;
        }
        auto *array = reinterpret_cast<PyArrayObject *>(arg);
        if (copied_at_call(guard.layout)) {
            // Native byte order, aligned, C-contiguous: what the kernel was compiled for.
            copies[i] = PyArray_FromArray(array, PyArray_DescrFromType(guard.typenum),
                                          NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
            if (!copies[i]) return nullptr;
            array = reinterpret_cast<PyArrayObject *>(copies[i]);
        }
        describe_array(array, in.dtype, buffers[i], dims.data() + next_dim);
        next_dim += in.ndim;
    }

    for (size_t j = 0; j < n_out; ++j) {
        const KernelOutput &out = k.outputs[j];
        const int nd = static_cast<int>(out.shape.size());
        SmallArray<npy_intp, 8> shape(nd);
        for (int d = 0; d < nd; ++d) {
            if (out.shape[d] >= 0) {
                shape[d] = out.shape[d];
            } else {  // a symbolic extent: the guards checked the argument it is read from
                const auto &[arg, axis] = k.symbol_sources[-1 - out.shape[d]];
                shape[d] = PyArray_DIM(reinterpret_cast<PyArrayObject *>(args[arg]), axis) + out.offsets[d];
            }
        }
        if (out.alias_arg >= 0) {
            // Written in place: the guards hold the argument to this dtype, shape and C layout.
            outputs[j] = args[out.alias_arg];
            Py_INCREF(outputs[j]);
        } else {
            outputs[j] = new_output_array(nd, shape.data(), out.dtype);
        }
        if (!outputs[j]) return nullptr;
        describe_array(reinterpret_cast<PyArrayObject *>(outputs[j]), out.dtype, buffers[n_in + j], dims.data() + next_dim);
        next_dim += nd;
        buffer_ptrs[n_in + j] = &buffers[n_in + j];
    }

    int status;
    std::string error;
    Py_BEGIN_ALLOW_THREADS;
    status = k.run(buffer_ptrs.data(), &error);
    Py_END_ALLOW_THREADS;
    if (status != 0) {
        bool in_place = false;
        for (const KernelOutput &out : k.outputs) in_place = in_place || out.alias_arg >= 0;
        PyErr_Format(PyExc_RuntimeError, "hcompile: compiled kernel failed (Halide error %d): %s%s", status,
                     error.c_str(), in_place ? " (arguments it writes in place may have been partly written)" : "");
        return nullptr;
    }

    for (size_t j = 0; j < n_out; ++j) {
        if (!entry.as_scalar[j]) continue;
        outputs[j] = PyArray_Return(reinterpret_cast<PyArrayObject *>(outputs.take(j)));  // steals
        if (!outputs[j]) return nullptr;
    }
    if (!entry.result_builder && n_out == 1) return outputs.take(0);  // no tuple on the common path
    PyObject *tuple = PyTuple_New(static_cast<Py_ssize_t>(n_out));
    if (!tuple) return nullptr;
    for (size_t j = 0; j < n_out; ++j) PyTuple_SET_ITEM(tuple, j, outputs.take(j));  // steals
    return entry_result(entry, tuple, args);
}

PyObject *entry_result(const Entry &entry, PyObject *outputs, PyObject *const *args) {
    const Py_ssize_t n_out = PyTuple_GET_SIZE(outputs);
    if (!entry.result_builder && n_out == 1) {
        PyObject *only = PyTuple_GET_ITEM(outputs, 0);
        Py_INCREF(only);
        Py_DECREF(outputs);
        return only;
    }
    if (!entry.result_builder) return outputs;
    PyObject *tuple = outputs;
    PyObject *arg_tuple = PyTuple_New(static_cast<Py_ssize_t>(entry.args.size()));
    if (!arg_tuple) {
        Py_DECREF(tuple);
        return nullptr;
    }
    for (size_t i = 0; i < entry.args.size(); ++i) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(arg_tuple, i, args[i]);
    }
    PyObject *result = PyObject_CallFunctionObjArgs(entry.result_builder, tuple, arg_tuple, nullptr);
    Py_DECREF(tuple);
    Py_DECREF(arg_tuple);
    return result;
}

}  // namespace hc
