// Bindings for compiling graphs and for the per-function dispatcher.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "hcompile/blas.h"
#include "hcompile/cublas.h"
#include "hcompile/compile.h"
#include "hcompile/cuda_call.h"
#include "hcompile/cuda_graph_memory.h"
#include "hcompile/dispatch.h"
#include "hcompile/block_pool.h"
#include "hcompile/target.h"
#include "hcompile/tuning_records.h"

namespace nb = nanobind;

namespace hc::bindings {

namespace {

// A decision as Python sees it: (region, choice name, axis, value, value2).
nb::list decision_tuples(const Schedule &schedule) {
    nb::list out;
    for (const Decision &d : schedule) out.append(nb::make_tuple(d.region, choice_name(d.choice), d.axis, d.value, d.value2));
    return out;
}

nb::dict report_to_dict(const CompileReport &r) {
    nb::dict d;
    d["captured_graph"] = r.captured_graph;
    d["optimized_graph"] = r.optimized_graph;
    d["regions"] = r.regions;
    d["schedule"] = r.schedule;
    d["schedule_source"] = r.schedule_source;
    d["analysis"] = r.analysis;
    d["lowered_stmt"] = r.lowered_stmt;
    d["target"] = r.target;
    d["in_place_outputs"] = r.in_place_outputs;
    d["symbol_least"] = r.symbol_least;
    d["symbol_below"] = r.symbol_below;
    d["gpu_registers"] = r.gpu_registers;
    auto with_seconds = [](const std::vector<std::pair<Schedule, double>> &lists) {
        nb::list out;
        for (const auto &[schedule, seconds] : lists) out.append(nb::make_tuple(decision_tuples(schedule), seconds));
        return out;
    };
    d["variants"] = with_seconds(r.variants);
    d["candidates"] = with_seconds(r.candidates);
    d["predicted_seconds"] = r.predicted_seconds;
    d["decisions"] = decision_tuples(r.decisions);
    nb::list steps;
    for (const auto &[name, ms] : r.step_ms) steps.append(nb::make_tuple(name, ms));
    d["step_ms"] = steps;
    return d;
}

std::pair<std::shared_ptr<const Kernel>, nb::dict> compile(const Graph &graph, const std::string &target,
                                                           const std::vector<int> &layouts, bool want_stmt,
                                                           const std::vector<std::pair<int, int>> &writebacks,
                                                           const std::vector<std::string> &also_compile_for,
                                                           const std::vector<std::tuple<int64_t, int, int>> &symbols,
                                                           const std::vector<std::tuple<int, int, int64_t, int64_t>> &extent_values,
                                                           const std::string &autoscheduler,
                                                           const std::optional<std::vector<std::tuple<int, std::string, int, int64_t, int64_t>>> &schedule,
                                                           int tuning_candidates,
                                                           const std::vector<std::pair<std::string, double>> &choice_weights,
                                                           const std::vector<std::pair<std::string, std::string>> &autoscheduler_params,
                                                           int cuda_device, bool fast_math,
                                                           const std::vector<int64_t> &symbol_sizes) {
    CompileOptions options;
    options.symbol_sizes = symbol_sizes;
    options.fast_math = fast_math;
    options.cuda_device = cuda_device;
    options.autoscheduler = autoscheduler;
    options.autoscheduler_params = autoscheduler_params;
    options.tuning_candidates = tuning_candidates;
    options.choice_weights = choice_weights;
    if (schedule) {
        options.schedule = Schedule{};
        for (const auto &[region, choice, axis, value, value2] : *schedule) {
            options.schedule->push_back(Decision{region, choice_from_name(choice), axis, value, value2});
        }
    }
    for (const auto &[node, symbol, scale, offset] : extent_values) options.extent_values.push_back({node, symbol, scale, offset});
    for (const auto &[value, arg, axis] : symbols) {
        options.symbol_values.push_back(value);
        options.symbol_sources.push_back({arg, axis});
    }
    options.writebacks = writebacks;
    options.also_compile_for = also_compile_for;
    options.target = target;
    for (int l : layouts) options.layouts.push_back(static_cast<InputLayout>(l));
    options.want_lowered_stmt = want_stmt;
    CompileReport report;
    KernelPtr kernel;
    try {
        nb::gil_scoped_release release;
        kernel = compile_graph(graph, options, &report);
    } catch (const Halide::Error &e) {
        throw std::runtime_error(std::string("Halide: ") + e.what());
    }
    return {kernel, report_to_dict(report)};
}

PyObject *new_ref(nb::handle h) { return h.inc_ref().ptr(); }

// Fills `g` (already owned by an Entry, so that references taken before an error are released).
void fill_arg_guard(ArgGuard &g, nb::handle spec) {
    nb::tuple t = nb::borrow<nb::tuple>(spec);
    std::string kind = nb::cast<std::string>(t[0]);
    g.type = new_ref(t[1]);
    if (kind == "array") {
        g.kind = ArgGuard::Array;
        g.typenum = nb::cast<int>(t[2]);
        for (nb::handle d : t[3]) g.shape.push_back(nb::cast<int64_t>(d));
        g.layout = nb::cast<int>(t[4]);
    } else if (kind == "npscalar") {
        g.kind = ArgGuard::NumpyScalar;
    } else if (kind == "dynamic_float") {
        g.kind = ArgGuard::DynamicFloat;
    } else if (kind == "int" || kind == "float" || kind == "str" || kind == "bool" || kind == "none" ||
               kind == "equal" || kind == "identity") {
        g.kind = kind == "int"     ? ArgGuard::Int
                 : kind == "float" ? ArgGuard::Float
                 : kind == "str"   ? ArgGuard::Str
                 : kind == "bool"  ? ArgGuard::Bool
                 : kind == "equal" ? ArgGuard::Equal
                 : kind == "identity" ? ArgGuard::Identity
                                   : ArgGuard::None;
        g.value = new_ref(t[2]);
    } else if (kind == "type") {
        g.kind = ArgGuard::TypeOnly;
    } else if (kind == "cuda_tensor" || kind == "cupy_array") {  // (kind, type, dtype, shape, device)
        g.kind = kind == "cuda_tensor" ? ArgGuard::CudaTensor : ArgGuard::CupyArray;
        g.value = new_ref(t[2]);
        for (nb::handle d : t[3]) g.shape.push_back(nb::cast<int64_t>(d));
        g.typenum = nb::cast<int>(t[4]);
    } else {
        throw std::invalid_argument("unknown guard kind '" + kind + "'");
    }
}

// (source, check, container, key, expected): see guards.py. Fills `g` (already owned by an Entry).
void fill_value_guard(ValueGuard &g, nb::handle spec) {
    nb::tuple t = nb::borrow<nb::tuple>(spec);
    std::string source = nb::cast<std::string>(t[0]), check = nb::cast<std::string>(t[1]);
    if (source == "item") g.source = ValueGuard::DictItem;
    else if (source == "cell") g.source = ValueGuard::CellContents;
    else if (source == "attr") g.source = ValueGuard::Attribute;
    else throw std::invalid_argument("unknown guard source '" + source + "'");
    if (check == "equal") g.check = ValueGuard::Equal;
    else if (check == "identical") g.check = ValueGuard::Identical;
    else if (check == "absent") g.check = ValueGuard::Absent;
    else throw std::invalid_argument("unknown guard check '" + check + "'");
    bool dict_ok = g.source != ValueGuard::DictItem || PyDict_Check(t[2].ptr());
    bool cell_ok = g.source != ValueGuard::CellContents || PyCell_Check(t[2].ptr());
    bool attr_ok = g.source != ValueGuard::Attribute || PyUnicode_Check(t[3].ptr());
    if (!dict_ok || !cell_ok || !attr_ok) throw std::invalid_argument("guard container does not fit its source");
    if (g.source == ValueGuard::Attribute && PyFunction_Check(t[2].ptr())) {
        std::string name = nb::cast<std::string>(t[3]);
        if (name == "__code__") g.source = ValueGuard::FunctionCode;
        if (name == "__defaults__") g.source = ValueGuard::FunctionDefaults;
        if (name == "__kwdefaults__") g.source = ValueGuard::FunctionKwDefaults;
    }
    g.container = new_ref(t[2]);
    g.key = t[3].is_none() ? nullptr : new_ref(t[3]);
    g.expected = g.check == ValueGuard::Absent ? nullptr : new_ref(t[4]);
}

// (kind, arg a, arg b, expected): see capture.Capture.relations.
ArgRelationGuard relation_guard(nb::handle spec, size_t num_args) {
    nb::tuple t = nb::borrow<nb::tuple>(spec);
    std::string kind = nb::cast<std::string>(t[0]);
    ArgRelationGuard g;
    if (kind == "same") g.kind = ArgRelationGuard::Same;
    else if (kind == "overlap") g.kind = ArgRelationGuard::Overlap;
    else if (kind == "writeable") g.kind = ArgRelationGuard::Writeable;
    else if (kind == "same_extent") g.kind = ArgRelationGuard::SameExtent;
    else if (kind == "extent_below") g.kind = ArgRelationGuard::ExtentBelow;
    else throw std::invalid_argument("unknown relation guard '" + kind + "'");
    size_t a = nb::cast<size_t>(t[1]), b = nb::cast<size_t>(t[2]);
    if (a >= num_args || b >= num_args) throw std::invalid_argument("relation guard names an argument past the last");
    g.a = static_cast<int32_t>(a);
    g.b = static_cast<int32_t>(b);
    g.expected = nb::cast<bool>(t[3]);
    if (g.kind == ArgRelationGuard::SameExtent) {  // (..., axis of a, axis of b)
        if (t.size() != 6) throw std::invalid_argument("a same_extent guard names two axes");
        g.a_axis = nb::cast<int32_t>(t[4]);
        g.b_axis = nb::cast<int32_t>(t[5]);
    } else if (g.kind == ArgRelationGuard::ExtentBelow) {  // (..., axis of a, the size it is below)
        if (t.size() != 6) throw std::invalid_argument("an extent_below guard names an axis and a size");
        g.a_axis = nb::cast<int32_t>(t[4]);
        g.limit = nb::cast<int64_t>(t[5]);
    }
    return g;
}

}  // namespace

// A dispatcher entry with these guard specs (guards.py's tuples) and result builder, for
// add_entry and add_cuda_entry to complete.
std::shared_ptr<Entry> guarded_entry(nb::list arg_guards, nb::list value_guards, nb::list relations,
                                     nb::object result_builder) {
    auto e = std::make_shared<Entry>();
    for (nb::handle spec : arg_guards) fill_arg_guard(e->args.emplace_back(), spec);
    for (nb::handle spec : value_guards) fill_value_guard(e->values.emplace_back(), spec);
    for (nb::handle spec : relations) e->relations.push_back(relation_guard(spec, e->args.size()));
    e->result_builder = result_builder.is_none() ? nullptr : new_ref(result_builder);
    return e;
}

namespace {

// The garbage collector's view of a Dispatcher: the function and the entries' Python objects
// (Dispatcher::traverse), which a compiled function's own code may refer back to.
int dispatcher_traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));
    return nb::inst_ready(self) ? nb::inst_ptr<Dispatcher>(self)->traverse(visit, arg) : 0;
}

int dispatcher_clear(PyObject *self) {
    if (nb::inst_ready(self)) nb::inst_ptr<Dispatcher>(self)->drop_references();
    return 0;
}

PyType_Slot dispatcher_slots[] = {{Py_tp_traverse, reinterpret_cast<void *>(dispatcher_traverse)},
                                  {Py_tp_clear, reinterpret_cast<void *>(dispatcher_clear)},
                                  {0, nullptr}};

}  // namespace

void bind_runtime(nb::module_ &m) {
    nb::class_<Kernel>(m, "Kernel", "A JIT-compiled Halide pipeline for one guard set.")
        .def_prop_ro("input_args",
                     [](const Kernel &k) {
                         std::vector<int> v;
                         for (const auto &in : k.inputs) v.push_back(in.arg_index);
                         return v;
                     })
        .def_prop_ro("output_shapes",
                     [](const Kernel &k) {
                         std::vector<std::vector<int64_t>> v;
                         for (const auto &out : k.outputs) v.push_back(out.shape);
                         return v;
                     },
                     "Per output, its extents: static, or -1 - k for symbol k (plus output_offsets).")
        .def_prop_ro("output_offsets",
                     [](const Kernel &k) {
                         std::vector<std::vector<int64_t>> v;
                         for (const auto &out : k.outputs) v.push_back(out.offsets);
                         return v;
                     })
        .def_prop_ro("symbol_sources", [](const Kernel &k) { return k.symbol_sources; },
                     "(argument, axis) whose size each symbol is.");

    m.def(
        "run_cuda",
        [](const Kernel &kernel, const std::vector<std::tuple<uint64_t, std::vector<int64_t>>> &inputs,
           const std::vector<std::tuple<uint64_t, std::vector<int64_t>>> &outputs, int device, uint64_t stream,
           bool captured) {
            auto arrays = [](const auto &described) {
                std::vector<DeviceArray> v;
                for (const auto &[pointer, shape] : described) v.push_back({pointer, shape});
                return v;
            };
            std::vector<DeviceArray> in = arrays(inputs), out = arrays(outputs);
            std::string error;
            int status;
            {
                nb::gil_scoped_release release;
                status = run_on_cuda(kernel, in, out, device, stream, &error, captured);
            }
            if (status != 0) {
                throw std::runtime_error("hcompile: CUDA kernel failed (Halide error " + std::to_string(status) + "): " + error);
            }
        },
        nb::arg("kernel"), nb::arg("inputs"), nb::arg("outputs"), nb::arg("device"), nb::arg("stream"),
        nb::arg("captured") = false,
        "Runs a kernel compiled for CUDA: C-contiguous arrays as (device pointer, shape), in the kernel's\n"
        "input and output order, on the device's primary context and the given stream. captured: the stream\n"
        "is being captured into a CUDA graph (between cuda_graph_allocations_begin and _end): the kernel's\n"
        "intermediates are the graph's own memory.");
    m.def("cuda_graph_allocations_begin", &begin_graph_allocations,
          "Halide's runtime caches no device memory until the matching _end (emptying its cache now: call it\n"
          "before a CUDA graph capture starts).");
    m.def("cuda_graph_allocations_end", &end_graph_allocations);
    m.def("compile_graph", &compile, nb::arg("graph"), nb::arg("target") = "host",
          nb::arg("layouts") = std::vector<int>{}, nb::arg("want_lowered_stmt") = false,
          nb::arg("writebacks") = std::vector<std::pair<int, int>>{},
          nb::arg("also_compile_for") = std::vector<std::string>{},
          nb::arg("symbols") = std::vector<std::tuple<int64_t, int, int>>{},
          nb::arg("extent_values") = std::vector<std::tuple<int, int, int64_t, int64_t>>{},
          nb::arg("autoscheduler") = "hcompile", nb::arg("schedule") = nb::none(), nb::arg("tuning_candidates") = 0,
          nb::arg("choice_weights") = std::vector<std::pair<std::string, double>>{},
          nb::arg("autoscheduler_params") = std::vector<std::pair<std::string, std::string>>{},
          nb::arg("cuda_device") = -1, nb::arg("fast_math") = false, nb::arg("symbol_sizes") = std::vector<int64_t>{},
          "Compile a graph; returns (kernel, report dict). Raises RuntimeError if Halide refuses it.\n"
          "writebacks: (output, argument) pairs; report['in_place_outputs'] lists those written in place.\n"
          "also_compile_for: targets to also generate machine code for and discard (codegen checks).\n"
          "symbols: (placeholder extent, argument, axis) per symbolic extent (core symbols.h); ValueError when the graph\n"
          "is not the same function for every size of them. extent_values: (constant node, symbol, scale,\n"
          "offset): constants that are scale * size + offset of a symbol, read at run time. symbol_sizes: the\n"
          "call's size of each symbol. report['symbol_least'] and ['symbol_below']: per symbol, the least size the\n"
          "schedule serves and the size it serves only calls below (0: none), which the entry's guard must ask for.\n"
          "tuning_candidates: how many alternatives to the search's list report['candidates'] lists for max-autotune.\n"
          "choice_weights: (choice, log-weight) pairs, the learned correction the search ranks with (hcompile db fit).\n"
          "cuda_device: the CUDA device ordinal whose measured parameters the GPU cost model predicts for (-1: a\n"
          "reference H100).\n"
          "fast_math: GPU kernels compute float32 exp, tanh and division on the GPU's approximate instructions.");
    m.def("load_blas", &load_blas, nb::arg("path"),
          "Load the BLAS library matrix products may call; returns '' or why it cannot be used.");
    m.def("blas_available", &blas_available, "Whether a BLAS library is loaded.");
    m.def("load_cublas", &load_cublas, nb::arg("path"),
          "Load the cuBLAS library GPU matrix products may call; returns '' or why it cannot be used.");
    m.def("cublas_available", &cublas_available, "Whether cuBLAS is loaded.");
    m.def("machine_fingerprint", &machine_fingerprint,
          "'model | cores | host target': the machine tuning records are keyed on (the HCompile plugin's too).");
    m.def("tuning_versions", [] { return std::make_pair(hcompile_version(), halide_version()); },
          "(hcompile, Halide) versions as the C++ code reads them (the plugin keys records on them).");
    m.def("host_target", [] { return jit_target("host").to_string(); },
          "The Halide target kernels are compiled for on this machine.");
    m.def("jit_target", [](const std::string &name) { return jit_target(name).to_string(); }, nb::arg("name"),
          "The full Halide target string for a target name; ValueError when its code cannot run here.");
    m.def("parse_target", [](const std::string &name) { return parse_target(name).to_string(); }, nb::arg("name"),
          "The full Halide target string for a target name, for any CPU; ValueError when it is not one.");
    m.def("classify_layout", [](nb::handle array) { return classify_layout(array.ptr()); },
          "Layout class of an ndarray: 0 C-contiguous, 1 inner-dense, 2 strided; copied at call time: 3\n"
          "(misaligned, odd strides, past 32-bit indexing), 4 (byte-swapped).");
    m.def("kernel_layout", [](int layout_class) { return static_cast<int>(kernel_layout(layout_class)); },
          "The layout a kernel is compiled for, given its argument's layout class.");
    m.def("numpy_typenum", [](const std::string &dtype) { return numpy_typenum(parse_dtype(dtype)); });
    m.def("block_pool_info", [] {
              BlockPoolInfo i = block_pool_info();
              nb::dict d;
              d["hits"] = i.hits;
              d["misses"] = i.misses;
              d["cached_bytes"] = i.cached_bytes;
              d["limit_bytes"] = i.limit_bytes;
              d["min_bytes"] = kPooledMinBytes;
              return d;
          },
          "The block pool's counters: large allocations served from kept blocks, and sent to the system.");
    m.def("set_block_pool_limit", &set_block_pool_limit, nb::arg("bytes"),
          "The most bytes of freed blocks (outputs, Halide's intermediates) kept for reuse; kept blocks past it are freed.");
    m.attr("MISS") = nb::handle(Dispatcher::miss_sentinel());

    nb::class_<Dispatcher>(m, "Dispatcher", nb::type_slots(dispatcher_slots),
                           "Guards and cached kernels of one compiled function.")
        .def("__init__", [](Dispatcher *d, nb::handle fn) { new (d) Dispatcher(fn.ptr()); }, nb::arg("function"))
        .def("__call__",
             [](Dispatcher &d, nb::args args) {
                 PyObject *r = d.call(&PyTuple_GET_ITEM(args.ptr(), 0), PyTuple_GET_SIZE(args.ptr()));
                 if (!r) throw nb::python_error();
                 return nb::steal(r);
             })
        .def(
            "add_entry",
            [](Dispatcher &d, nb::list arg_guards, nb::list value_guards, std::shared_ptr<const Kernel> kernel,
               std::vector<bool> as_scalar, nb::object result_builder, nb::object runner, nb::list relations) {
                auto e = guarded_entry(arg_guards, value_guards, relations, result_builder);
                e->kernel = std::move(kernel);
                e->as_scalar = std::move(as_scalar);
                if (e->kernel && e->as_scalar.size() != e->kernel->outputs.size()) {
                    throw std::invalid_argument("as_scalar needs one flag per kernel output");
                }
                e->runner = runner.is_none() ? nullptr : new_ref(runner);
                d.add_entry(std::move(e));
            },
            nb::arg("arg_guards"), nb::arg("value_guards"), nb::arg("kernel").none(), nb::arg("as_scalar"),
            nb::arg("result_builder").none(), nb::arg("runner").none() = nb::none(),
            nb::arg("relations") = nb::list(),
            "value_guards: (source 'item'|'cell'|'attr', check 'equal'|'identical'|'absent', container, "
            "key, expected) tuples; relations: (kind 'same'|'overlap'|'writeable', arg a, arg b, expected) "
            "tuples.")
        .def(
            "add_cuda_entry",
            [](Dispatcher &d, nb::list arg_guards, nb::list value_guards, std::shared_ptr<const Kernel> kernel,
               nb::object result_builder, nb::list relations, int device, nb::object empty, nb::list output_args,
               nb::list output_options, nb::object current_stream, const std::string &library) {
                if (!kernel->device_interface) throw std::invalid_argument("the kernel was not compiled for CUDA");
                if (library != "torch" && library != "cupy") throw std::invalid_argument("library: 'torch' or 'cupy'");
                const ArgGuard::Kind arrays = library == "torch" ? ArgGuard::CudaTensor : ArgGuard::CupyArray;
                if (output_args.size() != kernel->outputs.size() || output_options.size() != kernel->outputs.size()) {
                    throw std::invalid_argument("one shape tuple and one options dict per kernel output");
                }
                auto e = guarded_entry(arg_guards, value_guards, relations, result_builder);
                // Checked once here, not per call: every array the kernel reads is a guarded CUDA
                // array of the library's.
                for (const KernelInput &in : kernel->inputs) {
                    if (in.arg_index < 0 || in.arg_index >= static_cast<int>(e->args.size()) ||
                        e->args[in.arg_index].kind != arrays) {
                        throw std::invalid_argument("a CUDA kernel reads an argument not guarded as the library's "
                                                    "CUDA array");
                    }
                }
                e->kernel = std::move(kernel);
                e->as_scalar.assign(e->kernel->outputs.size(), false);  // 0-d results stay device arrays
                e->cuda = std::make_unique<CudaCall>();
                CudaCall &c = *e->cuda;
                c.device = device;
                c.arrays = arrays;
                c.empty = new_ref(empty);
                for (nb::handle a : output_args) {
                    if (!PyTuple_Check(a.ptr())) throw std::invalid_argument("output_args holds tuples");
                    c.output_args.push_back(new_ref(a));
                }
                for (nb::handle o : output_options) {
                    if (!PyDict_Check(o.ptr())) throw std::invalid_argument("output_options holds dicts");
                    c.output_options.push_back(new_ref(o));
                }
                c.current_stream = new_ref(current_stream);
                c.device_index = new_ref(nb::int_(device));
                d.add_entry(std::move(e), /*first=*/true);
            },
            nb::arg("arg_guards"), nb::arg("value_guards"), nb::arg("kernel"), nb::arg("result_builder").none(),
            nb::arg("relations"), nb::arg("device"), nb::arg("empty"), nb::arg("output_args"),
            nb::arg("output_options"), nb::arg("current_stream"), nb::arg("library") = "torch",
            "An entry whose kernel runs on CUDA device `device`: arguments guarded as ('cuda_tensor', type, dtype,\n"
            "shape, device) for library 'torch', ('cupy_array', ...) for 'cupy', an extent -m any size from m (a\n"
            "kernel for any size); each output made by\n"
            "empty(*output_args[j], **output_options[j]) (an output of symbolic extents: its shape and strides\n"
            "computed per call); the stream is current_stream(device). Goes ahead of the entries already there.")
        .def(
            "matches",
            [](Dispatcher &d, nb::args args) {
                int r = d.matches(&PyTuple_GET_ITEM(args.ptr(), 0), PyTuple_GET_SIZE(args.ptr()));
                if (r < 0) throw nb::python_error();
                return r == 1;
            },
            "Whether some entry applies to these arguments (runs nothing).")
        .def("clear", &Dispatcher::clear)
        .def_prop_ro("num_entries", &Dispatcher::num_entries)
        .def_prop_ro("hits", &Dispatcher::hits)
        .def_prop_ro("misses", &Dispatcher::misses);
}

}  // namespace hc::bindings
