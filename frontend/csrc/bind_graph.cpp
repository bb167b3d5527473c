// Bindings for the graph IR: the builder the bytecode frontend drives.
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "hcompile/graph.h"
#include "hcompile/passes.h"
#include "hcompile/printer.h"
#include "hcompile/symbols.h"
#include "hcompile/verify.h"

namespace nb = nanobind;

namespace hc::bindings {

namespace {

AttrValue to_attr(const nb::handle &value) {
    if (nb::isinstance<nb::bool_>(value)) return int64_t{nb::cast<bool>(value)};
    if (nb::isinstance<nb::int_>(value)) return nb::cast<int64_t>(value);
    if (nb::isinstance<nb::float_>(value)) return nb::cast<double>(value);
    if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
    std::vector<int64_t> list;
    for (nb::handle item : value) list.push_back(nb::cast<int64_t>(item));
    return list;
}

nb::object from_attr(const AttrValue &value) {
    return std::visit([](const auto &v) -> nb::object { return nb::cast(v); }, value);
}

NodeId add_constant(Graph &g, nb::handle value, const std::string &dtype_name, const std::string &loc) {
    DType dtype = parse_dtype(dtype_name);
    if (is_float(dtype)) return g.add_constant(nb::cast<double>(value), dtype, loc);
    if (nb::isinstance<nb::float_>(value)) {
        throw std::invalid_argument("constant: a float value for integer dtype " + dtype_name);
    }
    nb::int_ as_int(value);
    // Values past int64 (uint64) are stored as their two's complement bit pattern.
    int64_t v;
    if (!nb::try_cast<int64_t>(as_int, v)) v = static_cast<int64_t>(nb::cast<uint64_t>(as_int));
    return g.add_constant_int(v, dtype, loc);
}

}  // namespace

void bind_graph(nb::module_ &m) {
    nb::register_exception_translator([](const std::exception_ptr &p, void *) {
        try {
            std::rethrow_exception(p);
        } catch (const GraphError &e) {
            PyErr_SetString(PyExc_ValueError, e.what());
        }
    });

    nb::class_<Graph>(m, "Graph", "A captured, typed dataflow graph (see core/OPS.md).")
        .def(nb::init<>())
        .def(
            "add_input",
            [](Graph &g, int arg, const std::string &dtype, const std::vector<int64_t> &shape, const std::string &loc) {
                return g.add_input(arg, parse_dtype(dtype), shape, loc);
            },
            nb::arg("arg_index"), nb::arg("dtype"), nb::arg("shape"), nb::arg("loc") = "")
        .def("add_constant", &add_constant, nb::arg("value"), nb::arg("dtype"), nb::arg("loc") = "")
        .def(
            "add_op",
            [](Graph &g, const std::string &kind, const std::vector<int> &inputs, nb::dict attrs, const std::string &loc) {
                Attrs converted;
                for (auto [key, value] : attrs) converted[nb::cast<std::string>(key)] = to_attr(value);
                return g.add_op(parse_op(kind), inputs, std::move(converted), loc);
            },
            nb::arg("kind"), nb::arg("inputs"), nb::arg("attrs") = nb::dict(), nb::arg("loc") = "")
        .def("dtype", [](const Graph &g, int id) { return std::string(dtype_name(g.node(id).dtype)); })
        .def("shape", [](const Graph &g, int id) { return g.node(id).shape; })
        .def("kind", [](const Graph &g, int id) { return std::string(op_name(g.node(id).kind)); })
        .def("inputs", [](const Graph &g, int id) { return g.node(id).inputs; })
        .def("loc", [](const Graph &g, int id) { return g.node(id).loc; })
        .def("attrs",
             [](const Graph &g, int id) {
                 nb::dict d;
                 for (const auto &[k, v] : g.node(id).attrs) d[k.c_str()] = from_attr(v);
                 return d;
             })
        .def("set_outputs", &Graph::set_outputs)
        .def_prop_ro("outputs", &Graph::outputs)
        .def_prop_ro("num_nodes", &Graph::num_nodes)
        .def("verify", [](const Graph &g) { verify(g); })
        .def("__str__", [](const Graph &g) { return print_graph(g); });

    m.def("split_reductions_for_gpu", &split_reductions_for_gpu, nb::arg("graph"),
          nb::arg("symbol_values") = std::vector<int64_t>{},
          "The graph with its reductions rewritten for a GPU's threads (core/include/hcompile/passes.h).");
    m.def(
        "check_symbolic_extents",
        [](const Graph &g, const std::vector<std::tuple<int64_t, int, int>> &symbols) {
            std::vector<int64_t> values;
            std::vector<SymbolSource> sources;
            for (const auto &[value, arg, axis] : symbols) {
                values.push_back(value);
                sources.push_back({arg, axis});
            }
            resolve_symbolic_extents(g, values, sources);
        },
        nb::arg("graph"), nb::arg("symbols"),
        "Checks symbolic extents ((placeholder extent, argument, axis) each; core symbols.h): ValueError\n"
        "naming the node when the graph is not the same function for every size of them.");
}

}  // namespace hc::bindings
