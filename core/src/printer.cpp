#include "hcompile/printer.h"

#include <charconv>
#include <string>

namespace hc {

namespace {

// %.17g through to_chars: independent of the global locale (an iostream prints "1,5" under
// some).
std::string format_double(double v) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 17);
    std::string s(buf, ec == std::errc() ? end : buf);
    // Keep floats visibly floats ("2.0", not "2").
    if (s.find_first_of(".eE") == std::string::npos && s.find_first_of("ni") == std::string::npos) s += ".0";
    return s;
}

std::string format_type(const Node &n) {
    std::string out = std::string(dtype_name(n.dtype)) + "[";
    for (size_t i = 0; i < n.shape.size(); ++i) out += (i ? ", " : "") + std::to_string(n.shape[i]);
    return out + "]";
}

}  // namespace

std::string format_attr(const AttrValue &value) {
    if (auto *i = std::get_if<int64_t>(&value)) return std::to_string(*i);
    if (auto *d = std::get_if<double>(&value)) return format_double(*d);
    if (auto *s = std::get_if<std::string>(&value)) return *s;
    const auto &list = std::get<std::vector<int64_t>>(value);
    std::string out = "[";
    for (size_t i = 0; i < list.size(); ++i) out += (i ? ", " : "") + std::to_string(list[i]);
    return out + "]";
}

std::string format_node(const Graph &graph, const Node &n) {
    (void)graph;
    std::string line = "%" + std::to_string(n.id) + " = " + op_name(n.kind);
    if (!n.attrs.empty()) {
        line += "[";
        bool first = true;
        for (const auto &[name, value] : n.attrs) {
            if (name == "dtype" && n.kind != OpKind::Cast) continue;
            line += (first ? "" : ", ") + name + "=" + format_attr(value);
            first = false;
        }
        line += "]";
    }
    line += "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) line += (i ? ", %" : "%") + std::to_string(n.inputs[i]);
    line += ") : " + format_type(n);
    if (!n.loc.empty()) {
        if (line.size() < 60) line.append(60 - line.size(), ' ');
        line += "  # " + n.loc;
    }
    return line;
}

std::string print_graph(const Graph &graph) {
    std::string out = "graph {\n";
    for (const Node &n : graph.nodes()) out += "  " + format_node(graph, n) + "\n";
    out += "  return (";
    const auto &outs = graph.outputs();
    for (size_t i = 0; i < outs.size(); ++i) out += (i ? ", %" : "%") + std::to_string(outs[i]);
    out += ")\n}\n";
    return out;
}

}  // namespace hc
