#include "hcompile/plugin_params.h"

#include <stdexcept>

namespace hc {

namespace {

int count_of(const std::string &key, const std::string &value, int least) {
    size_t used = 0;
    int n = -1;
    try {
        n = std::stoi(value, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (used != value.size() || value.empty() || n < least) {
        throw std::invalid_argument("HCompile autoscheduler: " + key + "=" + value + " is not a whole number of at least " +
                                    std::to_string(least));
    }
    return n;
}

}  // namespace

PluginParams parse_plugin_params(const std::map<std::string, std::string> &extra) {
    PluginParams p;
    for (const auto &[key, value] : extra) {
        if (key == "parallelism") {
            p.parallelism = count_of(key, value, 1);
        } else if (key == "variant") {
            p.variant = count_of(key, value, 0);
        } else if (key == "db") {
            if (value.empty()) throw std::invalid_argument("HCompile autoscheduler: db= names no file");
            p.db = value;
        } else {
            throw std::invalid_argument("HCompile autoscheduler: unknown parameter '" + key +
                                        "' (known: parallelism, variant, db)");
        }
    }
    return p;
}

}  // namespace hc
