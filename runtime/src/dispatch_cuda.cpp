#include "dispatch_cuda.h"

#include <algorithm>
#include <string>
#include <vector>

#include "hcompile/cuda_call.h"

namespace hc {

namespace {

// Interned attribute and method names of PyTorch's tensors and CuPy's arrays (made on first use,
// kept for the life of the process).
struct Names {
    PyObject *dtype = PyUnicode_InternFromString("dtype");
    PyObject *shape = PyUnicode_InternFromString("shape");
    PyObject *get_device = PyUnicode_InternFromString("get_device");
    PyObject *is_contiguous = PyUnicode_InternFromString("is_contiguous");
    PyObject *data_ptr = PyUnicode_InternFromString("data_ptr");
    PyObject *data = PyUnicode_InternFromString("data");      // CuPy: a MemoryPointer (ptr, device)
    PyObject *ptr = PyUnicode_InternFromString("ptr");
    PyObject *device = PyUnicode_InternFromString("device");
    PyObject *id = PyUnicode_InternFromString("id");
    PyObject *flags = PyUnicode_InternFromString("flags");
    PyObject *c_contiguous = PyUnicode_InternFromString("c_contiguous");
};

const Names &names() {
    static const Names n;
    return n;
}

// `method()` of `object` as an integer; -1 with `*failed` set on a Python error.
int64_t call_for_int(PyObject *object, PyObject *method, bool *failed) {
    PyObject *r = PyObject_CallMethodNoArgs(object, method);
    if (!r) return *failed = true, -1;
    const int64_t v = PyLong_AsLongLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) *failed = true;
    return v;
}

// `object.first.second` as an integer (CuPy's `a.data.ptr`, `a.flags.c_contiguous`); -1 with
// `*failed` set on a Python error.
int64_t attribute_int(PyObject *object, PyObject *first, PyObject *second, bool *failed) {
    PyObject *outer = PyObject_GetAttr(object, first);
    PyObject *inner = outer ? PyObject_GetAttr(outer, second) : nullptr;
    Py_XDECREF(outer);
    if (!inner) return *failed = true, -1;
    const int64_t v = PyLong_AsLongLong(inner);  // a bool is an int
    Py_DECREF(inner);
    if (v == -1 && PyErr_Occurred()) *failed = true;
    return v;
}

// A CUDA array's device address: PyTorch's `data_ptr()`, CuPy's `data.ptr`.
uint64_t device_pointer(ArgGuard::Kind arrays, PyObject *a, bool *failed) {
    const Names &n = names();
    return static_cast<uint64_t>(arrays == ArgGuard::CupyArray ? attribute_int(a, n.data, n.ptr, failed)
                                                               : call_for_int(a, n.data_ptr, failed));
}

// A CUDA array's device ordinal: PyTorch's `get_device()`, CuPy's `data.device.id` (the
// memory's device, which CuPy's `a.device` returns too).
int64_t device_ordinal(ArgGuard::Kind arrays, PyObject *a, bool *failed) {
    const Names &n = names();
    if (arrays != ArgGuard::CupyArray) return call_for_int(a, n.get_device, failed);
    PyObject *data = PyObject_GetAttr(a, n.data);
    const int64_t ordinal = data ? attribute_int(data, n.device, n.id, failed) : (*failed = true, -1);
    Py_XDECREF(data);
    return ordinal;
}

// 1 when a CUDA array is C-contiguous (PyTorch's `is_contiguous()`, CuPy's
// `flags.c_contiguous`), 0 when not; -1 with `*failed` set.
int64_t c_contiguous(ArgGuard::Kind arrays, PyObject *a, bool *failed) {
    const Names &n = names();
    return arrays == ArgGuard::CupyArray ? attribute_int(a, n.flags, n.c_contiguous, failed)
                                         : call_for_int(a, n.is_contiguous, failed);
}

// The shape of tensor `t` (a torch.Size: a tuple) into `shape`; false with a Python error set.
bool read_shape(PyObject *t, std::vector<int64_t> &shape) {
    PyObject *s = PyObject_GetAttr(t, names().shape);
    if (!s) return false;
    const bool tuple = PyTuple_Check(s);
    shape.resize(tuple ? PyTuple_GET_SIZE(s) : 0);
    for (size_t i = 0; i < shape.size(); ++i) shape[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(s, i));
    Py_DECREF(s);
    if (!tuple && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a tensor's shape is not a tuple");
    return !PyErr_Occurred();
}

bool symbolic(const std::vector<int64_t> &shape) {
    for (int64_t extent : shape) {
        if (extent < 0) return true;
    }
    return false;
}

// The shape of an output of symbolic extents in this call: each symbol's size read from the
// input it is an axis of. False with a Python error set where none is.
bool symbolic_output_shape(const Kernel &k, const KernelOutput &out, const std::vector<DeviceArray> &inputs,
                           std::vector<int64_t> &shape) {
    shape = out.shape;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (out.shape[d] >= 0) continue;
        const auto &[arg, axis] = k.symbol_sources[-1 - out.shape[d]];
        const int64_t extent = input_extent(k, inputs, arg, axis);
        shape[d] = extent < 0 ? -1 : extent + out.offsets[d];
        if (shape[d] < 0) {
            PyErr_SetString(PyExc_RuntimeError, "hcompile: a symbolic output extent is read from no input");
            return false;
        }
    }
    return true;
}

// The positional arguments of the library's `empty` for a new C-contiguous array: (shape,
// strides), as torch.empty_strided takes them, or (shape,) without `strides_too` (CuPy's arrays are
// made C-contiguous). A new reference or null.
PyObject *empty_arguments(const std::vector<int64_t> &shape, bool strides_too) {
    const Py_ssize_t nd = static_cast<Py_ssize_t>(shape.size());
    PyObject *extents = PyTuple_New(nd), *strides = PyTuple_New(nd);
    if (!extents || !strides) {
        Py_XDECREF(extents);
        Py_XDECREF(strides);
        return nullptr;
    }
    int64_t step = 1;
    for (Py_ssize_t d = nd; d-- > 0;) {
        PyTuple_SET_ITEM(extents, d, PyLong_FromLongLong(shape[d]));
        PyTuple_SET_ITEM(strides, d, PyLong_FromLongLong(step));
        step *= std::max<int64_t>(shape[d], 1);
    }
    PyObject *both = PyErr_Occurred() ? nullptr
                     : strides_too    ? PyTuple_Pack(2, extents, strides)
                                      : PyTuple_Pack(1, extents);
    Py_DECREF(extents);
    Py_DECREF(strides);
    return both;
}

}  // namespace

int check_cuda_array(const ArgGuard &g, PyObject *arg) {
    const Names &n = names();
    PyObject *dtype = PyObject_GetAttr(arg, n.dtype);
    if (!dtype) return -1;
    // torch.dtype objects are one per dtype; NumPy's dtypes (CuPy's) are where native, else equal.
    const int same_dtype = dtype == g.value                ? 1
                           : g.kind == ArgGuard::CupyArray ? PyObject_RichCompareBool(dtype, g.value, Py_EQ)
                                                           : 0;
    Py_DECREF(dtype);
    if (same_dtype != 1) return same_dtype;
    PyObject *shape = PyObject_GetAttr(arg, n.shape);  // a tuple (torch.Size is one)
    if (!shape) return -1;
    bool same_shape = PyTuple_Check(shape) && PyTuple_GET_SIZE(shape) == static_cast<Py_ssize_t>(g.shape.size());
    for (size_t i = 0; same_shape && i < g.shape.size(); ++i) {
        const int64_t extent = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        same_shape = g.shape[i] >= 0 ? extent == g.shape[i] : extent >= -g.shape[i];  // -m: any size from m
    }
    Py_DECREF(shape);
    if (PyErr_Occurred()) return -1;
    if (!same_shape) return 0;
    const ArgGuard::Kind arrays = g.kind;
    bool failed = false;
    if (device_ordinal(arrays, arg, &failed) != g.typenum) return failed ? -1 : 0;
    if (c_contiguous(arrays, arg, &failed) != 1) return failed ? -1 : 0;
    const uint64_t pointer = device_pointer(arrays, arg, &failed);
    if (failed) return -1;
    return pointer % kDeviceAlignment == 0;
}

PyObject *run_cuda_entry(const Entry &entry, PyObject *const *args) {
    const Kernel &k = *entry.kernel;
    const CudaCall &c = *entry.cuda;
    bool failed = false;
    std::vector<DeviceArray> inputs(k.inputs.size()), outputs(k.outputs.size());
    for (size_t i = 0; i < k.inputs.size(); ++i) {
        const ArgGuard &g = entry.args[k.inputs[i].arg_index];  // of c.arrays' kind (add_cuda_entry checks)
        inputs[i].pointer = device_pointer(c.arrays, args[k.inputs[i].arg_index], &failed);
        if (!symbolic(g.shape)) {
            inputs[i].shape = g.shape;
        } else if (!failed && !read_shape(args[k.inputs[i].arg_index], inputs[i].shape)) {  // any size: this call's
            return nullptr;
        }
    }
    if (failed) return nullptr;
    PyObject *made = PyTuple_New(static_cast<Py_ssize_t>(k.outputs.size()));
    if (!made) return nullptr;
    for (size_t j = 0; j < k.outputs.size(); ++j) {
        PyObject *o = nullptr;
        if (!symbolic(k.outputs[j].shape)) {
            outputs[j].shape = k.outputs[j].shape;
            o = PyObject_Call(c.empty, c.output_args[j], c.output_options[j]);
        } else if (symbolic_output_shape(k, k.outputs[j], inputs, outputs[j].shape)) {
            PyObject *shape = empty_arguments(outputs[j].shape, c.arrays == ArgGuard::CudaTensor);
            o = shape ? PyObject_Call(c.empty, shape, c.output_options[j]) : nullptr;
            Py_XDECREF(shape);
        }
        if (!o) {
            Py_DECREF(made);
            return nullptr;
        }
        PyTuple_SET_ITEM(made, j, o);  // steals
        outputs[j].pointer = device_pointer(c.arrays, o, &failed);
    }
    PyObject *stream_object = failed ? nullptr : PyObject_CallOneArg(c.current_stream, c.device_index);
    const uint64_t stream = stream_object ? PyLong_AsUnsignedLongLong(stream_object) : 0;
    Py_XDECREF(stream_object);
    if (failed || !stream_object || PyErr_Occurred()) {
        Py_DECREF(made);
        return nullptr;
    }
    std::string error;
    int status;
    Py_BEGIN_ALLOW_THREADS;
    status = run_on_cuda(k, inputs, outputs, c.device, stream, &error);
    Py_END_ALLOW_THREADS;
    if (status != 0) {
        Py_DECREF(made);
        PyErr_Format(PyExc_RuntimeError, "hcompile: CUDA kernel failed (Halide error %d): %s", status, error.c_str());
        return nullptr;
    }
    return entry_result(entry, made, args);
}

}  // namespace hc
