#include "hcompile/tuning_records.h"

#include "region_plan.h"

#include <sqlite3.h>

#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <vector>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#ifndef HCOMPILE_VERSION
#error "HCOMPILE_VERSION is defined by CMake (the project's version)"
#endif

namespace hc {

namespace {

// FNV-1a, 64 bits: stable across processes and builds, unlike std::hash.
uint64_t fnv1a(const std::string &text) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : text) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

// A small reader for the one JSON shape the database stores decisions in.
class JsonDecisions {
public:
    explicit JsonDecisions(const std::string &text) : s_(text) {}

    std::optional<Schedule> parse() {
        Schedule out;
        if (!eat('[')) return std::nullopt;
        if (eat(']')) return end() ? std::optional<Schedule>(out) : std::nullopt;
        do {
            Decision d;
            std::string choice;
            int64_t region = 0, axis = 0;
            if (!eat('[') || !number(&region) || !eat(',') || !string(&choice) || !eat(',') || !number(&axis) ||
                !eat(',') || !number(&d.value) || !eat(',') || !number(&d.value2) || !eat(']')) {
                return std::nullopt;
            }
            try {
                d.choice = choice_from_name(choice);
            } catch (const std::invalid_argument &) {
                return std::nullopt;
            }
            d.region = static_cast<int>(region);
            d.axis = static_cast<int>(axis);
            out.push_back(d);
        } while (eat(','));
        if (!eat(']') || !end()) return std::nullopt;
        return out;
    }

private:
    void space() {
        while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
    }
    bool eat(char c) {
        space();
        if (at_ < s_.size() && s_[at_] == c) {
            ++at_;
            return true;
        }
        return false;
    }
    bool end() {
        space();
        return at_ == s_.size();
    }
    bool number(int64_t *out) {
        space();
        size_t used = 0;
        try {
            *out = std::stoll(s_.substr(at_, 24), &used);
        } catch (const std::exception &) {
            return false;
        }
        at_ += used;
        return true;
    }
    bool string(std::string *out) {
        if (!eat('"')) return false;
        size_t close = s_.find('"', at_);
        if (close == std::string::npos) return false;
        *out = s_.substr(at_, close - at_);
        at_ = close + 1;
        return true;
    }

    const std::string &s_;
    size_t at_ = 0;
};

// A pipeline's Exprs with the names Halide makes unique per process (lambda_3, repeat_edge$2, an
// RDom's r12$x, an unnamed Var's v7) replaced by their order of first appearance, so that the same pipeline built
// again, or in another process, prints the same. (Only for printing: the Exprs are not run.)
class CanonicalNames : public Halide::Internal::IRMutator {
public:
    std::string name(const std::string &n, const char *prefix) {
        auto it = names_.find(n);
        if (it != names_.end()) return it->second;
        return names_[n] = prefix + std::to_string(names_.size());
    }

protected:
    using IRMutator::visit;
    Halide::Expr visit(const Halide::Internal::Call *op) override {
        if (op->call_type != Halide::Internal::Call::Halide) return IRMutator::visit(op);
        std::vector<Halide::Expr> args;
        for (const Halide::Expr &a : op->args) args.push_back(mutate(a));
        return Halide::Internal::Call::make(op->type, name(op->name, "f"), args, Halide::Internal::Call::PureExtern);
    }
    Halide::Expr visit(const Halide::Internal::Let *op) override {   // (common subexpressions' t12)
        const std::string renamed = name(op->name, "v");
        return Halide::Internal::Let::make(renamed, mutate(op->value), mutate(op->body));
    }
    Halide::Expr visit(const Halide::Internal::Variable *op) override {
        if (op->param.defined()) return op;   // a parameter: its name is the user's
        return Halide::Internal::Variable::make(op->type, name(op->name, op->reduction_domain.defined() ? "r" : "v"));
    }

private:
    std::map<std::string, std::string> names_;
};

struct CloseDatabase {
    void operator()(sqlite3 *db) const { sqlite3_close(db); }
};
struct FinalizeStatement {
    void operator()(sqlite3_stmt *s) const { sqlite3_finalize(s); }
};

}  // namespace

std::string machine_fingerprint() {
    std::string model;
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; model.empty() && std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            size_t colon = line.find(':');
            if (colon != std::string::npos) {
                model = line.substr(colon + 1);
                model.erase(0, model.find_first_not_of(" \t"));
                model.erase(model.find_last_not_of(" \t\r") + 1);
            }
        }
    }
    if (model.empty()) model = Halide::get_host_target().arch == Halide::Target::X86 ? "x86_64" : "unknown";
    return model + " | " + std::to_string(std::thread::hardware_concurrency()) + " cores | " +
           Halide::get_host_target().to_string();
}

std::string hcompile_version() { return HCOMPILE_VERSION; }

std::string halide_version() {
    return std::to_string(HALIDE_VERSION_MAJOR) + "." + std::to_string(HALIDE_VERSION_MINOR) + "." +
           std::to_string(HALIDE_VERSION_PATCH);
}

std::string halide_workload_key(const LoweredPipeline &lowered, const Halide::Target &target) {
    std::ostringstream text;
    CanonicalNames canonical;
    auto print = [&](const Halide::Internal::Function &fn) {
        text << canonical.name(fn.name(), "f") << "(";
        for (const std::string &a : fn.args()) text << canonical.name(a, "v") << ",";
        text << ")";
        for (const Halide::Expr &v : fn.values()) text << "=" << canonical.mutate(v);
        for (const Halide::Internal::Definition &u : fn.updates()) {
            text << ";update(";
            for (const Halide::Expr &a : u.args()) text << canonical.mutate(a) << ",";
            text << ")";
            for (const Halide::Expr &v : u.values()) text << "=" << canonical.mutate(v);
        }
    };
    for (const RegionFunc &r : lowered.regions) {
        print(r.func.function());
        if (r.accumulator.defined() && !own_accumulator(r)) print(r.accumulator.function());
        text << "[";
        for (int64_t e : r.extents) text << e << ",";
        text << "]\n";
    }
    for (const Halide::Internal::Function &fn : lowered.see_through) {   // inlined, so part of the key too
        print(fn);
        text << "\n";
    }
    text << target.to_string();
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text.str())));
    return std::string("halide-") + hex;
}

std::string decisions_to_json(const Schedule &schedule) {
    std::string out = "[";
    for (const Decision &d : schedule) {
        if (out.size() > 1) out += ", ";
        out += "[" + std::to_string(d.region) + ", \"" + choice_name(d.choice) + "\", " + std::to_string(d.axis) + ", " +
               std::to_string(d.value) + ", " + std::to_string(d.value2) + "]";
    }
    return out + "]";
}

std::optional<Schedule> decisions_from_json(const std::string &text) { return JsonDecisions(text).parse(); }

std::optional<Schedule> best_recorded_schedule(const std::string &path, const std::string &key) {
    sqlite3 *raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        std::string why = raw ? sqlite3_errmsg(raw) : "out of memory";
        sqlite3_close(raw);
        throw std::runtime_error("cannot open the tuning database " + path + ": " + why);
    }
    std::unique_ptr<sqlite3, CloseDatabase> db(raw);
    sqlite3_busy_timeout(db.get(), 10000);   // a writer in WAL mode holds no read lock for long
    const char *sql =
        "SELECT decisions FROM records WHERE workload = ? AND ok = 1 AND seconds IS NOT NULL AND "
        "hcompile_version = ? AND halide_version = ? AND machine = ? ORDER BY seconds ASC";
    sqlite3_stmt *raw_statement = nullptr;
    if (sqlite3_prepare_v2(db.get(), sql, -1, &raw_statement, nullptr) != SQLITE_OK) {
        throw std::runtime_error("the file " + path + " is not a tuning database: " + sqlite3_errmsg(db.get()));
    }
    std::unique_ptr<sqlite3_stmt, FinalizeStatement> statement(raw_statement);
    const std::string values[] = {key, hcompile_version(), halide_version(), machine_fingerprint()};
    for (int i = 0; i < 4; ++i) sqlite3_bind_text(statement.get(), i + 1, values[i].c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(statement.get()) == SQLITE_ROW) {
        const unsigned char *text = sqlite3_column_text(statement.get(), 0);
        if (!text) continue;
        if (auto schedule = decisions_from_json(reinterpret_cast<const char *>(text))) return schedule;   // else skip the row
    }
    return std::nullopt;
}

}  // namespace hc
