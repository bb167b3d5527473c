// Applies Halide scheduling directives and writes each one as a line of Halide C++ schedule
// source, so that what a schedule did can be read (explain, debug dumps) and pasted into a
// Halide program over the same Funcs. apply_schedule() schedules only through this class.
#pragma once

#include <Halide.h>

#include <functional>
#include <string>
#include <vector>

namespace hc {

// A stage of a Func as the source names it: `f` for its pure definition, `f.update(0)` for an
// update, with `.specialize(c)` appended for a specialization of either.
struct StageRef {
    Halide::Stage stage;
    std::string name;
};

class ScheduleWriter {
public:
    static std::string cpp_name(const std::string &halide_name);  // `$` is not C++
    static StageRef pure(const Halide::Func &f);
    static StageRef update(const Halide::Func &f, int index = 0);

    void compute_root(Halide::Func f);
    void compute_inline(Halide::Func f);
    // `loop` of `at`; with no loop, `at`'s outermost loop.
    void compute_at(Halide::Func f, const Halide::Func &at, const Halide::VarOrRVar *loop);
    // Storage at loop `loop` of `at` (with compute_at an inner loop: Halide's sliding window).
    void store_at(Halide::Func f, const Halide::Func &at, const Halide::Var &loop);
    void bound(Halide::Func f, const Halide::Var &v, const Halide::Expr &min, const Halide::Expr &extent);
    // Storage of `extent` along `v`, more than computed (a padded row of a shared-memory tile).
    void bound_storage(Halide::Func f, const Halide::Var &v, const Halide::Expr &extent);
    StageRef specialize(const StageRef &s, const Halide::Expr &condition);
    void vectorize(const StageRef &s, const Halide::VarOrRVar &v, const Halide::Expr &width,
                   Halide::TailStrategy tail);
    void vectorize(const StageRef &s, const Halide::VarOrRVar &v);  // the whole loop
    void parallel(const StageRef &s, const Halide::VarOrRVar &v);
    void unroll(const StageRef &s, const Halide::VarOrRVar &v, const Halide::Expr &factor,
                Halide::TailStrategy tail);
    void unroll(const StageRef &s, const Halide::VarOrRVar &v);
    void split(const StageRef &s, const Halide::VarOrRVar &v, const Halide::VarOrRVar &outer,
               const Halide::VarOrRVar &inner, const Halide::Expr &factor, Halide::TailStrategy tail);
    void tile(const StageRef &s, const Halide::VarOrRVar &x, const Halide::VarOrRVar &y, const Halide::VarOrRVar &xo,
              const Halide::VarOrRVar &yo, const Halide::VarOrRVar &xi, const Halide::VarOrRVar &yi,
              const Halide::Expr &xfactor, const Halide::Expr &yfactor, Halide::TailStrategy tail);
    void reorder(const StageRef &s, const std::vector<Halide::VarOrRVar> &order);
    void fuse(const StageRef &s, const Halide::VarOrRVar &inner, const Halide::VarOrRVar &outer,
              const Halide::VarOrRVar &fused);
    // GPU loops (a CUDA target): a loop over blocks, a loop over the threads of a block, or the
    // whole stage as one thread of one block.
    void gpu_blocks(const StageRef &s, const Halide::VarOrRVar &v);
    void gpu_threads(const StageRef &s, const Halide::VarOrRVar &v);
    // A loop over threads that are lanes of one warp (the block's innermost thread loop, at most
    // 32): Funcs stored outside it and computed inside it lie in the lanes' registers, read
    // across lanes by warp shuffles.
    void gpu_lanes(const StageRef &s, const Halide::VarOrRVar &v);
    void gpu_single_thread(const StageRef &s);
    // Splits the update's reduction variable `r` into `outer` and `inner`, then rfactors
    // `inner` (`rfactor_outer`: `outer`) into the new pure variable `lane`; returns the
    // intermediate Func.
    Halide::Func split_and_rfactor(const StageRef &s, const Halide::RVar &r, const Halide::RVar &outer,
                                   const Halide::RVar &inner, int factor, const Halide::Var &lane,
                                   bool rfactor_outer = false);
    // A wrapper of `f` that `consumer` reads instead of `f` (Func::in): scheduled on its own, it
    // stages f's values, so that f itself can be computed inside the wrapper's loops.
    Halide::Func in_wrapper(const Halide::Func &f, const Halide::Func &consumer);
    // A copy of `f` (the same values) that `consumer` reads instead of `f` at the calls `rerouted`
    // picks (its arguments, Halide order), a wrapper of some calls only: `consumer`'s definitions
    // are rewritten to call it there. (Func::in takes every call.)
    Halide::Func rerouted_copy(const Halide::Func &f, const Halide::Func &consumer,
                               const std::function<bool(const std::vector<Halide::Expr> &)> &rerouted);
    // A stage whose loops stay serial and in their definition's order, said on purpose.
    void unscheduled(const StageRef &s);

    const std::string &source() const { return source_; }

private:
    void line(const StageRef &s, const std::string &call);
    void line(const std::string &name, const std::string &call);
    // Applies a directive to `s` (a copy of the handle: Halide stages share their schedule) and
    // writes `call` as its source.
    template <typename Apply>
    void on_stage(const StageRef &s, const std::string &call, Apply &&apply) {
        Halide::Stage stage = s.stage;
        apply(stage);
        line(s, call);
    }
    void declare(const Halide::VarOrRVar &v);
    // A loop of `at` named before `at` is scheduled (a tile loop its split will make): declared
    // where first named, unless it is one of `at`'s own pure variables.
    void declare_split_loop(const Halide::Func &at, const Halide::VarOrRVar &loop);

    std::string source_;
    std::vector<std::string> declared_;
};

}  // namespace hc
