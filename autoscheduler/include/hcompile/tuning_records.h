// The tuning database (frontend/hcompile/tuning/database.py writes it) as the HCompile plugin reads
// it: a Halide pipeline's workload key, this machine's fingerprint, and the best record's
// decisions. The plugin only reads; hcompile.tuning.tune_halide writes the records.
#pragma once

#include <optional>
#include <string>

#include "hcompile/decisions.h"
#include "hcompile/lowering.h"

namespace hc {

// "model | cores | host target": records measured on another machine are kept apart. The
// frontend's tuning records use the same function.
std::string machine_fingerprint();

// The versions records are keyed on: a record of another hcompile or Halide is never reused.
std::string hcompile_version();
std::string halide_version();

// A Halide pipeline's workload: its Funcs' definitions as Halide prints them, in realization
// order, with their estimated extents and the target, hashed ("halide-" and 16 hex digits).
std::string halide_workload_key(const LoweredPipeline &lowered, const Halide::Target &target);

// A decision list as the database stores it: [[region, "choice", axis, value, value2], ...].
std::string decisions_to_json(const Schedule &schedule);
// nullopt for text that is not such a list (or names an unknown choice).
std::optional<Schedule> decisions_from_json(const std::string &text);

// The decisions of the fastest correct record of `key` in the SQLite database at `path` measured
// with these versions on this machine; nullopt when there is none. Throws std::runtime_error when
// the file cannot be opened as a tuning database.
std::optional<Schedule> best_recorded_schedule(const std::string &path, const std::string &key);

}  // namespace hc
