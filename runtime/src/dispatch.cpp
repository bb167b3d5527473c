#include "hcompile/dispatch.h"

#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>

#include <cstring>

#include "hcompile/lowering.h"

namespace hc {

namespace {

// NumPy allows 64 dimensions; a kernel argument list this deep is not worth a special case.
constexpr int kMaxDims = 32;
constexpr int kMaxBuffers = 48;

halide_type_t halide_runtime_type(DType t) {
    if (is_bool(t)) return halide_type_t(halide_type_uint, 1);
    if (is_float(t)) return halide_type_t(halide_type_float, dtype_bits(t));
    return halide_type_t(is_signed_int(t) ? halide_type_int : halide_type_uint, dtype_bits(t));
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
            if (dims[i] != g.shape[i]) return 0;
        }
        return classify_layout(arg) == g.layout;
    }
    case ArgGuard::NumpyScalar:
        return 1;  // the exact type fixes the dtype
    case ArgGuard::Int:
    case ArgGuard::Float:
    case ArgGuard::Str:
        return same_value(arg, g.value);
    case ArgGuard::Bool:
    case ArgGuard::None:
        return arg == g.value;
    case ArgGuard::TypeOnly:
        return 1;
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

bool same_identities(const std::vector<IdentityGuard> &guards, PyObject *const *args) {
    for (const IdentityGuard &g : guards) {
        if ((args[g.a] == args[g.b]) != g.same) return false;
    }
    return true;
}

// Fills `buf` to describe an array argument (no copy).
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

}  // namespace

bool init_numpy_api() {
    if (PyArray_API) return true;
    return _import_array() >= 0;
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
    }
    return -1;
}

int classify_layout(PyObject *array) {
    auto *a = reinterpret_cast<PyArrayObject *>(array);
    if (!PyArray_ISALIGNED(a) || !PyArray_ISNOTSWAPPED(a)) return -1;
    if (PyArray_IS_C_CONTIGUOUS(a)) return static_cast<int>(InputLayout::CContiguous);
    int nd = PyArray_NDIM(a);
    npy_intp itemsize = PyArray_ITEMSIZE(a);
    const npy_intp *strides = PyArray_STRIDES(a);
    for (int i = 0; i < nd; ++i) {
        if (strides[i] % itemsize != 0) return -1;
        if (strides[i] / itemsize > INT32_MAX || strides[i] / itemsize < INT32_MIN) return -1;
    }
    if (nd > 0 && strides[nd - 1] == itemsize) return static_cast<int>(InputLayout::InnerDense);
    return static_cast<int>(InputLayout::Strided);
}

PyObject *Dispatcher::miss_sentinel() {
    static PyObject *sentinel = PyObject_CallNoArgs(reinterpret_cast<PyObject *>(&PyBaseObject_Type));
    return sentinel;
}

Dispatcher::Dispatcher(PyObject *function) : function_(function) { Py_XINCREF(function_); }

Dispatcher::~Dispatcher() {
    clear();
    Py_XDECREF(function_);
}

void Dispatcher::clear() {
    for (auto &e : entries_) {
        for (auto &g : e->args) {
            Py_XDECREF(g.type);
            Py_XDECREF(g.value);
        }
        for (auto &v : e->values) {
            Py_XDECREF(v.container);
            Py_XDECREF(v.key);
            Py_XDECREF(v.expected);
        }
        Py_XDECREF(e->result_builder);
        Py_XDECREF(e->runner);
    }
    entries_.clear();
    hits_ = misses_ = 0;
}

PyObject *Dispatcher::call(PyObject *const *args, Py_ssize_t nargs) {
    for (auto &entry_ptr : entries_) {
        Entry &entry = *entry_ptr;
        if (static_cast<Py_ssize_t>(entry.args.size()) != nargs) continue;
        bool ok = true;
        for (Py_ssize_t i = 0; ok && i < nargs; ++i) {
            int r = check_arg(entry.args[i], args[i]);
            if (r < 0) return nullptr;
            ok = r == 1;
        }
        for (size_t i = 0; ok && i < entry.values.size(); ++i) {
            int r = check_value(entry.values[i]);
            if (r < 0) return nullptr;
            ok = r == 1;
        }
        if (!ok || !same_identities(entry.identities, args)) continue;
        ++hits_;
        ++entry.hits;
        if (!entry.kernel) return PyObject_Vectorcall(entry.runner ? entry.runner : function_, args, nargs, nullptr);
        return run_kernel(entry, args);
    }
    ++misses_;
    PyObject *miss = miss_sentinel();
    Py_INCREF(miss);
    return miss;
}

PyObject *Dispatcher::run_kernel(const Entry &entry, PyObject *const *args) {
    const Kernel &k = *entry.kernel;
    const size_t n_in = k.inputs.size(), n_out = k.outputs.size();
    if (n_in + n_out > kMaxBuffers) {
        PyErr_SetString(PyExc_RuntimeError, "hcompile: too many kernel arguments");
        return nullptr;
    }
    halide_buffer_t buffers[kMaxBuffers];
    halide_buffer_t *buffer_ptrs[kMaxBuffers];
    halide_dimension_t dims[kMaxBuffers][kMaxDims];
    uint64_t scalar_storage[kMaxBuffers];

    for (size_t i = 0; i < n_in; ++i) {
        const KernelInput &in = k.inputs[i];
        PyObject *arg = args[in.arg_index];
        if (entry.args[in.arg_index].kind == ArgGuard::NumpyScalar) {
            PyArray_ScalarAsCtype(arg, &scalar_storage[i]);
            describe_scalar(&scalar_storage[i], in.dtype, buffers[i]);
        } else {
            describe_array(reinterpret_cast<PyArrayObject *>(arg), in.dtype, buffers[i], dims[i]);
        }
        buffer_ptrs[i] = &buffers[i];
    }

    PyObject *outputs[kMaxBuffers] = {nullptr};
    auto release_outputs = [&] {
        for (size_t j = 0; j < n_out; ++j) Py_XDECREF(outputs[j]);
    };
    for (size_t j = 0; j < n_out; ++j) {
        const KernelOutput &out = k.outputs[j];
        npy_intp shape[kMaxDims];
        for (size_t d = 0; d < out.shape.size(); ++d) shape[d] = out.shape[d];
        outputs[j] = PyArray_SimpleNew(static_cast<int>(out.shape.size()), shape, numpy_typenum(out.dtype));
        if (!outputs[j]) {
            release_outputs();
            return nullptr;
        }
        describe_array(reinterpret_cast<PyArrayObject *>(outputs[j]), out.dtype, buffers[n_in + j], dims[n_in + j]);
        buffer_ptrs[n_in + j] = &buffers[n_in + j];
    }

    int status;
    std::string error;
    Py_BEGIN_ALLOW_THREADS status = k.run(buffer_ptrs, &error);
    Py_END_ALLOW_THREADS if (status != 0) {
        release_outputs();
        PyErr_Format(PyExc_RuntimeError, "hcompile: compiled kernel failed (Halide error %d): %s", status,
                     error.c_str());
        return nullptr;
    }

    for (size_t j = 0; j < n_out; ++j) {
        if (entry.as_scalar[j]) {
            outputs[j] = PyArray_Return(reinterpret_cast<PyArrayObject *>(outputs[j]));  // steals
        }
    }
    if (!entry.result_builder && n_out == 1) return outputs[0];
    PyObject *tuple = PyTuple_New(static_cast<Py_ssize_t>(n_out));
    if (!tuple) {
        release_outputs();
        return nullptr;
    }
    for (size_t j = 0; j < n_out; ++j) PyTuple_SET_ITEM(tuple, j, outputs[j]);  // steals
    if (!entry.result_builder) return tuple;
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
