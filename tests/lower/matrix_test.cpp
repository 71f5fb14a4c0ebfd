// The lowering correctness matrix: every fusion of configs/fusions (and four
// defined here for dtypes and shapes the library lacks) crossed with
// hand-written schedules (nvFuser-style user schedules written as C++:
// unscheduled; 1D tiling by 128 and by 7; rows by 4 with the reduction split
// by 8; serial rfactor; 2D tiling; inlining only at block loops or not at
// all; Local and Shared caches; unroll; an uneven outer split; unswitch;
// vectorized copies), lowered once per (fusion, schedule), run on the CPU
// backend (or, built as lower_matrix_gpu_test, the CUDA backend: see
// lower_test_util.h) at several size bindings (size 1, odd, and uneven against every
// split factor) and checked against the reference evaluator. Every generated
// unit is also compiled by NVRTC for sm_90.
//
// A schedule that a primitive legitimately refuses for a fusion (a
// user_error at the scheduling call, or a schedule shape the fusion lacks)
// is skipped and counted; MatrixCoverage asserts that most combinations
// run. A user_error from *lowering* a schedule the primitives accepted is a
// failure: lower() must handle it or the limitation is a bug.
//
// Kernels are size-generic, so each combination is lowered and compiled once
// and launched for every size binding (vectorized ones at sizes rounded up to
// the vector width, after checking the launch refuses the others).
// SCHEDLAB_DUMP_KERNELS=1 prints every scheduled fusion and kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedlab/lower/lower.h"

namespace schedlab::lower::testing {
namespace {

using ir::Fusion;
using ir::LoopTransform;
using ir::ParallelType;
using ir::TensorView;

// ---------------------------------------------------------------------------
// Fusions and sizes.

struct FusionCase {
  std::string name;
  std::vector<ir::SizeBindings> sizes;
  /// Whether schedules may bind loops to threads and blocks; false for a
  /// fusion one kernel can only run serially.
  bool bind = true;
  /// The fusion text, for the few fusions defined here; empty: the file
  /// configs/fusions/<name>.yaml.
  std::string text;
};
void PrintTo(const FusionCase& c, std::ostream* os) {
  *os << c.name;
}

frontend::FusionDefinition load_case(const FusionCase& c) {
  return c.text.empty() ? load(c.name) : frontend::parse_fusion_text(c.text, c.name + ".yaml");
}

// Dtypes and shapes the standard library lacks: a kept [N, 1] operand and a
// [1, K] one bound by the same tiling, an output that is also read,
// reductions of f16 and i64 values, bf16 and f64 storage. The last two each
// end in an output that reads both inputs (w, t): the schedules below propagate
// from one reference, and without it the reductions of the other input stay
// unscheduled, so every thread of the launch would accumulate into the same
// output elements, which lowering refuses (docs/lowering-rules.md, rule 3).
constexpr const char* kKeepdimOperands = R"(
fusion: keepdim_operands
inputs:
  x: {dtype: f32, shape: [N, K]}
  v: {dtype: f32, shape: [N, 1]}
  w: {dtype: f32, shape: [1, K]}
body: |
  y = x * v + w
outputs: [y]
)";
constexpr const char* kOutputReused = R"(
fusion: output_reused
inputs:
  x: {dtype: f32, shape: [N, K]}
body: |
  t = exp(x)
  y = t * 2 + x
outputs: [t, y]
)";
constexpr const char* kHalfRowSum = R"(
fusion: half_row_sum
inputs:
  x: {dtype: f16, shape: [N, K], range: [-2, 2]}
  z: {dtype: bf16, shape: [N, K]}
body: |
  s = sum(x, axis=1)
  m = max(z, axis=1)
  y = cast(s, f16)
  u = cast(m * 2, bf16)
  w = cast(x * z, bf16)
outputs: [y, u, w]
)";
constexpr const char* kWideTypes = R"(
fusion: wide_types
inputs:
  a: {dtype: i64, shape: [N, K]}
  b: {dtype: f64, shape: [K]}
  c: {dtype: i32, shape: [N, K], range: [-9, -1]}
body: |
  y = a * b
  s = sum(a, axis=1)
  p = max(a, axis=1)
  q = max(c, axis=1)
  r = min(c, axis=1)
  t = a - c
outputs: [y, s, p, q, r, t]
)";

const std::vector<FusionCase>& fusion_cases() {
  static const std::vector<FusionCase> cases = [] {
    const std::vector<ir::SizeBindings> nk = {
        {{"N", 1}, {"K", 1}}, {{"N", 3}, {"K", 5}}, {{"N", 33}, {"K", 130}}};
    std::vector<FusionCase> r;
    for (const char* name :
         {"pointwise_add_mul", "gelu", "gelu_backward", "bias_relu", "silu_mul", "pointwise_f16",
          "int_affine", "transpose2d", "row_sum", "row_max", "col_sum", "softmax", "log_softmax",
          "layernorm", "rmsnorm", "sum_all", "masked_row_sum", "broadcast_reduce", "softmax_bf16",
          "layernorm_bf16", "rmsnorm_bf16", "gelu_bf16"})
      r.push_back({name, nk, true, ""});
    // Its two reductions reduce different axes of p: binding either axis
    // makes the other reduction read p across threads and blocks, which
    // lowering rejects (nvFuser segments it into two kernels). Its
    // schedules split and inline, serially.
    for (FusionCase& c : r)
      if (c.name == "broadcast_reduce") c.bind = false;
    r.push_back({"batched_transpose",
                 {{{"B", 1}, {"M", 1}, {"N", 1}},
                  {{"B", 2}, {"M", 3}, {"N", 5}},
                  {{"B", 3}, {"M", 33}, {"N", 130}}},
                 true,
                 ""});
    for (auto [name, text] : {std::pair{"keepdim_operands", kKeepdimOperands},
                              {"output_reused", kOutputReused},
                              {"half_row_sum", kHalfRowSum},
                              {"wide_types", kWideTypes}})
      r.push_back({name, nk, true, text});
    return r;
  }();
  return cases;
}

// ---------------------------------------------------------------------------
// Schedules. Each takes the fusion definition and schedules it in place; a
// schedule shape the fusion lacks throws NotApplicable.

struct NotApplicable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Reorders t's loop domain so its non-reduction axes come first (in order),
/// as nvFuser's reduction schedulers do; returns how many there are.
int iteration_axes_first(TensorView* t) {
  std::vector<std::pair<int, int>> old2new;
  int n = 0;
  for (int k = 0; k < t->nloop(); ++k)
    if (!t->axis(k)->is_reduction()) old2new.emplace_back(k, n++);
  int r = n;
  for (int k = 0; k < t->nloop(); ++k)
    if (t->axis(k)->is_reduction()) old2new.emplace_back(k, r++);
  t->reorder(old2new);
  return n;
}

/// Merges t's first n loop axes into one.
void merge_leading(TensorView* t, int n) {
  for (int i = 1; i < n; ++i) t->merge(0);
}

/// Reduction axes stay serial (block and grid reductions have their own
/// tests): undo any binding parallelize_all_like copied onto one.
void serial_reductions(Fusion& f) {
  for (TensorView* t : f.tensors())
    for (int k = 0; k < t->nloop(); ++k)
      if (t->axis(k)->is_reduction() && t->axis(k)->parallel_type() != ParallelType::Serial)
        t->parallelize(k, ParallelType::Serial);
}

/// Binds axis of t to p, unless the fusion is run serially.
void bind(TensorView* t, int axis, ParallelType p, bool enabled) {
  if (enabled) t->parallelize(axis, p);
}

void propagate_and_bind(Fusion& f, TensorView* ref) {
  sched::propagate_transformation(ref);
  sched::parallelize_all_like(ref);
  serial_reductions(f);
}

/// The 1D pointwise schedule on the reference's iteration space: merge all
/// iteration axes, (optionally split off an unrolled inner axis of 4), split
/// by `factor`, bind BIDx/TIDx. A full reduction has no iteration axis: its
/// reduction axes are merged and split serially instead.
void tile_1d(Fusion& f, bool threads, int64_t factor, bool do_inline, bool unroll) {
  TensorView* ref = sched::find_reference_for(f);
  int n = iteration_axes_first(ref);
  if (n == 0) {
    merge_leading(ref, ref->nloop());
    ref->split(0, factor);
    if (unroll) ref->parallelize(1, LoopTransform::Unroll);
  } else {
    merge_leading(ref, n);
    if (unroll) ref->split(0, 4);
    ref->split(0, factor);
    bind(ref, 0, ParallelType::BIDx, threads);
    bind(ref, 1, ParallelType::TIDx, threads);
    if (unroll) ref->parallelize(2, LoopTransform::Unroll);
  }
  propagate_and_bind(f, ref);
  if (do_inline) sched::inline_most(f);
}

/// 2D tiling of the two innermost iteration axes by 4 (rows) and 8
/// (columns): [.., r/4, c/8, 4, 8] bound BIDy, BIDx, TIDy, TIDx; a third
/// leading axis goes to BIDz. With one iteration axis: [i/32, 4, 8] bound
/// BIDx, TIDy, TIDx.
int tile_2d(Fusion& f, bool threads, bool do_inline = true) {
  TensorView* ref = sched::find_reference_for(f);
  int n = iteration_axes_first(ref);
  if (n == 0) throw NotApplicable("no iteration axis to tile");
  if (n == 1) {
    ref->split(0, 8)->split(0, 4);
    bind(ref, 0, ParallelType::BIDx, threads);
    bind(ref, 1, ParallelType::TIDy, threads);
    bind(ref, 2, ParallelType::TIDx, threads);
  } else {
    if (n > 3) merge_leading(ref, n - 2);
    int r = n > 3 ? 1 : n - 2;
    ref->split(r + 1, 8);
    ref->split(r, 4);
    ref->reorder({{r + 1, r + 2}, {r + 2, r + 1}});
    bind(ref, r, ParallelType::BIDy, threads);
    bind(ref, r + 1, ParallelType::BIDx, threads);
    bind(ref, r + 2, ParallelType::TIDy, threads);
    bind(ref, r + 3, ParallelType::TIDx, threads);
    if (r == 1) bind(ref, 0, ParallelType::BIDz, threads);
  }
  propagate_and_bind(f, ref);
  if (do_inline) sched::inline_most(f);
  return n == 1 ? 1 : (n > 3 ? 1 : n - 2) + 2;
}

/// Rows split by 4 over BIDx/TIDx; the reduction axes (merged) are split by
/// 8, serially: the accumulation runs over an uneven split.
void rows(Fusion& f, bool threads) {
  TensorView* ref = sched::find_reference_for(f);
  int n = iteration_axes_first(ref);
  if (n > 0) {
    merge_leading(ref, n);
    ref->split(0, 4);
    bind(ref, 0, ParallelType::BIDx, threads);
    bind(ref, 1, ParallelType::TIDx, threads);
  }
  int first_reduction = n > 0 ? 2 : 0;
  if (ref->nloop() > first_reduction) {
    while (ref->nloop() > first_reduction + 1) ref->merge(first_reduction);
    ref->split(first_reduction, 8);
  }
  propagate_and_bind(f, ref);
  sched::inline_most(f);
}

/// Serial rfactor: the reference reduction's axes are merged and split by 8;
/// a producer accumulates 8 partials over the outer part (rfactor), the
/// reduction then sums the partials. Rows are split by 4 over BIDx/TIDx.
void rfactor_rows(Fusion& f, bool threads) {
  if (sched::get_reduction_tvs(f).empty()) throw NotApplicable("no reduction to rfactor");
  TensorView* ref = sched::find_reference_for(f);
  int n = iteration_axes_first(ref);
  while (ref->nloop() > n + 1) ref->merge(n);
  ref->split(n, 8);
  TensorView* partials = sched::rfactor(ref, {n});
  if (n > 0) {
    merge_leading(partials, n);
    partials->split(0, 4);
    bind(partials, 0, ParallelType::BIDx, threads);
    bind(partials, 1, ParallelType::TIDx, threads);
  }
  propagate_and_bind(f, partials);
  sched::inline_most(f);
}

/// An outer split on top of the 1D tiling: [I/128, 128] -> [3, ceilDiv(I/128,
/// 3), 128] bound BIDy, BIDx, TIDx; the outer split divides unevenly.
void outer_split(Fusion& f, bool threads) {
  TensorView* ref = sched::find_reference_for(f);
  int n = iteration_axes_first(ref);
  if (n == 0) throw NotApplicable("no iteration axis to tile");
  merge_leading(ref, n);
  ref->split(0, 128);
  ref->split(0, 3, /*inner_split=*/false);
  bind(ref, 0, ParallelType::BIDy, threads);
  bind(ref, 1, ParallelType::BIDx, threads);
  bind(ref, 2, ParallelType::TIDx, threads);
  propagate_and_bind(f, ref);
  sched::inline_most(f);
}

/// nvFuser's unswitched pointwise tiling: [I/128, 1, 32, 4] bound BIDx,
/// Unswitch, TIDx, Unroll; a full tile runs without predicates. A reduction
/// keeps its (serial) reduction axes inside the unswitched nest.
void unswitch(Fusion& f, bool threads) {
  TensorView* ref = sched::find_reference_for(f);
  int n = iteration_axes_first(ref);
  if (n == 0) {
    merge_leading(ref, ref->nloop());
    ref->split(0, 4)->split(0, 1);
    ref->parallelize(1, LoopTransform::Unswitch);
    ref->parallelize(2, LoopTransform::Unroll);
  } else {
    merge_leading(ref, n);
    ref->split(0, 4)->split(0, 32)->split(0, 1);
    bind(ref, 0, ParallelType::BIDx, threads);
    ref->parallelize(1, LoopTransform::Unswitch);
    bind(ref, 2, ParallelType::TIDx, threads);
    ref->parallelize(3, LoopTransform::Unroll);
  }
  propagate_and_bind(f, ref);
  sched::inline_most(f);
}

/// Inputs read by the fusion, the ones of largest rank first (the ones a
/// shared cache is for; a broadcast operand has a smaller rank).
std::vector<TensorView*> full_rank_inputs(const Fusion& f) {
  size_t rank = 0;
  for (TensorView* in : f.inputs()) rank = std::max(rank, in->logical_no_reductions().size());
  std::vector<TensorView*> r;
  for (TensorView* in : f.inputs())
    if (!in->uses().empty() && in->logical_no_reductions().size() == rank) r.push_back(in);
  return r;
}

bool has_broadcast(const TensorView* t) {
  auto dom = t->logical_no_reductions();
  return std::any_of(dom.begin(), dom.end(), [](auto* id) { return id->is_broadcast(); });
}

/// The named sizes that are the innermost extent of a vectorized tensor, and
/// the vector width.
std::map<std::string, int64_t> vectorized_sizes(const Fusion& f) {
  std::map<std::string, int64_t> r;
  for (const TensorView* t : f.tensors()) {
    if (t->nloop() == 0 || t->loop().back()->loop_transform() != LoopTransform::Vectorize) continue;
    const ir::SizeExpr& inner = t->logical_no_reductions().back()->extent();
    if (inner.is_symbol()) r[inner.symbol_name()] = t->loop().back()->extent().const_value();
  }
  return r;
}

/// Shared caches of the full-rank inputs. Not of an input with a broadcast
/// axis ([N, 1]): inlined into loops its broadcast widens, its own loops do
/// not lay out what a block reads (lowering rejects it;
/// Lowerable.SharedCacheOfABroadcastInput).
std::vector<TensorView*> shared_caches(Fusion& f) {
  std::vector<TensorView*> caches;
  for (TensorView* in : full_rank_inputs(f)) {
    if (has_broadcast(in)) continue;
    caches.push_back(sched::cache_after(in));
    sched::set_memory_type(caches.back(), ir::MemoryType::Shared);
  }
  return caches;
}

/// Schedules a fusion in place; `threads` says whether it may bind loops.
using ScheduleFn = void (*)(Fusion&, bool threads);

struct ScheduleCase {
  std::string name;
  ScheduleFn apply;
};
void PrintTo(const ScheduleCase& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<ScheduleCase>& schedule_cases() {
  static const std::vector<ScheduleCase> cases = {
      {"unscheduled", [](Fusion&, bool) {}},
      {"tile1d_128", [](Fusion& f, bool t) { tile_1d(f, t, 128, true, false); }},
      {"tile1d_7", [](Fusion& f, bool t) { tile_1d(f, t, 7, true, false); }},
      {"rows_4", [](Fusion& f, bool t) { rows(f, t); }},
      {"rfactor", [](Fusion& f, bool t) { rfactor_rows(f, t); }},
      {"tile2d", [](Fusion& f, bool t) { tile_2d(f, t); }},
      {"inline_blocks",
       [](Fusion& f, bool t) {
         // The 2D tiling, inlined only at its block loops: every tensor runs
         // its own thread loops (bound: one element per thread) in the block.
         TensorView* ref = sched::find_reference_for(f);
         int pos = tile_2d(f, t, /*do_inline=*/false);
         std::vector<TensorView*> all, broadcasts;
         for (TensorView* tv : f.tensors()) {
           if (f.is_input(tv)) continue;
           all.push_back(tv);
           if (tv->definition()->is<ir::BroadcastOp>()) broadcasts.push_back(tv);
         }
         sched::inline_selected_at(all, ref, pos);
         if (!broadcasts.empty()) sched::inline_most(f, broadcasts);
       }},
      {"no_inline",
       [](Fusion& f, bool t) {
         // Every tensor gets its own loop nest, except broadcasts: a merged
         // broadcast axis is shorter than its consumer's, so a broadcast kept
         // in registers must be computed where it is read (lowering rejects
         // it otherwise; Lowerable.NotInlinedBroadcastInRegistersIsAnError).
         tile_1d(f, t, 128, false, false);
         std::vector<TensorView*> broadcasts;
         for (TensorView* tv : f.tensors())
           if (tv->definition() && tv->definition()->is<ir::BroadcastOp>())
             broadcasts.push_back(tv);
         if (!broadcasts.empty()) sched::inline_most(f, broadcasts);
       }},
      {"local_cache",
       [](Fusion& f, bool t) {
         for (TensorView* in : f.inputs())
           if (!in->uses().empty()) sched::cache_after(in);
         for (TensorView* out : f.outputs()) sched::cache_before(out);
         tile_1d(f, t, 128, true, false);
       }},
      {"shared_cache",
       [](Fusion& f, bool t) {
         auto caches = shared_caches(f);
         tile_1d(f, t, 128, true, false);
       }},
      {"shared_2d",
       [](Fusion& f, bool t) {
         // Shared buffers over two thread axes (TIDy x TIDx).
         auto caches = shared_caches(f);
         tile_2d(f, t);
       }},
      {"unroll", [](Fusion& f, bool t) { tile_1d(f, t, 32, true, true); }},
      {"outer_split", [](Fusion& f, bool t) { outer_split(f, t); }},
      {"unswitch", [](Fusion& f, bool t) { unswitch(f, t); }},
      {"vectorize",
       [](Fusion& f, bool t) {
         // nvFuser's vectorized pointwise schedule: the inputs and outputs
         // whose innermost axis is the reference output's (the transpose
         // scheduler's grouping) are loaded and stored 4 elements at a time,
         // through caches. An input with a broadcast axis ([N, 1]) is not:
         // merged, its vector axis is not its consumer's. A reduction's
         // output cannot be stored from a vector of partial accumulators.
         if (!sched::get_reduction_tvs(f).empty())
           throw NotApplicable(
               "the vectorized pointwise schedule is for fusions without reductions");
         const auto groups = sched::group_inputs_outputs_by_inner_dim(f);
         auto in_group = [&](const TensorView* x) {
           for (const auto& g : groups)
             if (std::find(g.begin(), g.end(), f.outputs().front()) != g.end())
               return std::find(g.begin(), g.end(), x) != g.end();
           return false;
         };
         std::vector<TensorView*> vectors;
         for (TensorView* in : full_rank_inputs(f))
           if (in_group(in) && !has_broadcast(in)) vectors.push_back(sched::cache_after(in));
         for (TensorView* out : f.outputs()) {
           if (!in_group(out)) continue;
           sched::cache_before(out);
           vectors.push_back(out);
         }
         TensorView* ref = sched::find_reference_for(f);
         int n = iteration_axes_first(ref);
         if (n == 0) throw NotApplicable("no iteration axis to vectorize");
         merge_leading(ref, n);
         ref->split(0, 4)->split(0, 128);
         bind(ref, 0, ParallelType::BIDx, t);
         bind(ref, 1, ParallelType::TIDx, t);
         propagate_and_bind(f, ref);
         for (TensorView* v : vectors) v->parallelize(-1, LoopTransform::Vectorize);
         sched::inline_most(f);
       }},
  };
  return cases;
}

// ---------------------------------------------------------------------------
// Results of this process, printed as a table when more than one ran (e.g.
// the binary run by hand rather than one test per process by ctest).

std::map<std::pair<std::string, std::string>, std::string>& results() {
  static std::map<std::pair<std::string, std::string>, std::string> r;
  return r;
}

void print_table(const std::map<std::pair<std::string, std::string>, std::string>& r) {
  std::printf("%-20s", "fusion");
  for (const ScheduleCase& s : schedule_cases()) std::printf(" %-12s", s.name.c_str());
  std::printf("\n");
  for (const FusionCase& fc : fusion_cases()) {
    std::printf("%-20s", fc.name.c_str());
    for (const ScheduleCase& s : schedule_cases()) {
      auto it = r.find({fc.name, s.name});
      std::printf(" %-12s", it == r.end() ? "-" : it->second.c_str());
    }
    std::printf("\n");
  }
}

class SummaryEnvironment : public ::testing::Environment {
 public:
  void TearDown() override {
    if (results().size() > 1) print_table(results());
  }
};

[[maybe_unused]] ::testing::Environment* const kSummary =
    ::testing::AddGlobalTestEnvironment(new SummaryEnvironment);

/// Applies a schedule; returns why it was skipped, or "" if it applied.
std::string apply_schedule(const ScheduleCase& s, const FusionCase& fc,
                           frontend::FusionDefinition& def) {
  try {
    s.apply(*def.fusion, fc.bind);
  } catch (const UserError& e) {
    return "schedule primitive refused: " + e.message();
  } catch (const NotApplicable& e) {
    return std::string("not applicable: ") + e.what();
  }
  return "";
}

// ---------------------------------------------------------------------------

using MatrixParam = std::tuple<FusionCase, ScheduleCase>;

class LowerMatrix : public BackendTestWithParam<MatrixParam> {};

TEST_P(LowerMatrix, MatchesReference) {
  const auto& [fc, sc] = GetParam();
  auto def = load_case(fc);
  auto plain = load_case(fc);
  std::string skip = apply_schedule(sc, fc, def);
  if (!skip.empty()) {
    results()[{fc.name, sc.name}] = "skip";
    GTEST_SKIP() << fc.name << " x " << sc.name << ": " << skip;
  }
  const Fusion& f = *def.fusion;
  runtime::PreparedKernel p;
  try {
    // Size-generic (no divisibility assumed), run at every binding below;
    // the same schedule with the sizes compiled in is checked at the first
    // binding, and with divisibility specialization at every binding that
    // has a multiple of 16, too.
    p = runtime::prepare(f, fc.sizes.front(), {}, runtime::KernelOptions{true, false, false});
  } catch (const std::exception& e) {
    results()[{fc.name, sc.name}] = "LOWER-FAIL";
    FAIL() << "lowering failed on a schedule the primitives accepted: " << e.what()
           << "\n--- scheduled fusion ---\n"
           << sched::print_scheduled_fusion(f);
  }
  if (std::getenv("SCHEDLAB_DUMP_KERNELS"))
    std::printf("--- %s x %s ---\n%s%s", fc.name.c_str(), sc.name.c_str(),
                sched::print_scheduled_fusion(f).c_str(), codegen::print_kernel(p.kernel).c_str());
  expect_nvrtc_accepts(p.source);
  std::shared_ptr<runtime::CompiledKernel> compiled;
  try {
    compiled = test_backend().compile(p.source);
  } catch (const std::exception& e) {
    results()[{fc.name, sc.name}] = "COMPILE-FAIL";
    FAIL() << e.what() << "\n--- kernel ---\n" << codegen::print_kernel(p.kernel);
  }
  // Vector accesses need the innermost extent of each vectorized tensor to be
  // a multiple of the width, which the launch checks: rounded up here, after
  // one launch at sizes that break it has been refused with that message.
  std::vector<ir::SizeBindings> all_sizes = fc.sizes;
  auto vec = vectorized_sizes(f);
  if (!vec.empty()) {
    std::string err;
    try {
      run_and_compare(plain, p, *compiled, fc.sizes[1]);
    } catch (const UserError& e) {
      err = e.message();
    }
    EXPECT_THAT(err, ::testing::HasSubstr("-wide vector loads/stores but its innermost extent"))
        << "at " << sizes_str(fc.sizes[1]);
    for (ir::SizeBindings& sizes : all_sizes)
      for (auto [name, width] : vec) sizes[name] = (sizes[name] + width - 1) / width * width;
  }
  bool ok = true;
  for (const ir::SizeBindings& sizes : all_sizes) {
    // The kernel is size-generic; prepare at these sizes would print the same unit.
    std::string why;
    try {
      why = run_and_compare(plain, p, *compiled, sizes);
    } catch (const std::exception& e) {
      why = std::string("error: ") + e.what();
    }
    if (!why.empty()) {
      ok = false;
      ADD_FAILURE() << fc.name << " x " << sc.name << " at " << sizes_str(sizes) << ": " << why;
    }
    // Divisibility specialization: a dynamic kernel that assumes the sizes
    // which are multiples of 16 here stay so; compiled when its source
    // differs from the size-generic one.
    runtime::PreparedKernel pd;
    try {
      pd = runtime::prepare(f, sizes, {}, runtime::KernelOptions{true});
      why = pd.kernel.divisible.empty() || pd.source.source == p.source.source
                ? ""
                : run_and_compare(plain, pd, *test_backend().compile(pd.source), sizes);
    } catch (const std::exception& e) {
      why = std::string("error: ") + e.what();
    }
    if (!why.empty()) {
      ok = false;
      ADD_FAILURE() << fc.name << " x " << sc.name << " with divisibility, at "
                    << sizes_str(sizes) << ": " << why << "\n--- kernel ---\n"
                    << codegen::print_kernel(pd.kernel);
    }
  }
  // The specialized kernel (the default one) at the first binding.
  if (ok) {
    std::string why;
    runtime::PreparedKernel ps;
    try {
      ps = runtime::prepare(f, all_sizes.front());
      why = run_and_compare(plain, ps, *test_backend().compile(ps.source), all_sizes.front());
    } catch (const std::exception& e) {
      why = std::string("error: ") + e.what();
    }
    if (!why.empty()) {
      ok = false;
      ADD_FAILURE() << fc.name << " x " << sc.name << " with the sizes compiled in, at "
                    << sizes_str(all_sizes.front()) << ": " << why << "\n--- kernel ---\n"
                    << codegen::print_kernel(ps.kernel);
    }
  }
  // The sanitizer finds nothing on these kernels (issue #11's "no false
  // positives" acceptance): one traced run per size binding, CPU only.
  for (const ir::SizeBindings& sizes : all_sizes) {
    if (kCudaTestBackend || !ok) break;
    auto inputs = ref::make_inputs(*plain.fusion, sizes, 7, plain.input_ranges);
    runtime::SanitizedRun run = runtime::execute_sanitized(test_backend(), p, inputs, sizes,
                                                           fc.name + " x " + sc.name);
    if (!run.report.empty()) {
      ok = false;
      ADD_FAILURE() << fc.name << " x " << sc.name << " at " << sizes_str(sizes)
                    << ": the sanitizer reports\n" << run.report;
    }
  }
  results()[{fc.name, sc.name}] = ok ? "ok" : "WRONG";
  if (!ok)
    std::printf("--- scheduled fusion ---\n%s\n--- kernel ---\n%s\n",
                sched::print_scheduled_fusion(f).c_str(), codegen::print_kernel(p.kernel).c_str());
}

std::string param_name(const ::testing::TestParamInfo<MatrixParam>& info) {
  return std::get<0>(info.param).name + "__" + std::get<1>(info.param).name;
}

INSTANTIATE_TEST_SUITE_P(All, LowerMatrix,
                         ::testing::Combine(::testing::ValuesIn(fusion_cases()),
                                            ::testing::ValuesIn(schedule_cases())),
                         param_name);

// The coverage of the matrix, without compiling anything: every combination
// is scheduled and lowered; the table says which run (ok) and which a
// scheduling primitive refuses (skip). At least 80% must run.
using MatrixCoverage = BackendTest;  // skips on the CUDA backend without a device

TEST_F(MatrixCoverage, MostCombinationsRun) {
  std::map<std::pair<std::string, std::string>, std::string> table;
  int total = 0, ran = 0;
  for (const FusionCase& fc : fusion_cases()) {
    for (const ScheduleCase& sc : schedule_cases()) {
      ++total;
      auto def = load_case(fc);
      std::string skip = apply_schedule(sc, fc, def);
      if (!skip.empty()) {
        table[{fc.name, sc.name}] = "skip";
        std::printf("skip %s x %s: %s\n", fc.name.c_str(), sc.name.c_str(), skip.c_str());
        continue;
      }
      try {
        lower::lower(*def.fusion);
        table[{fc.name, sc.name}] = "ok";
        ++ran;
      } catch (const std::exception& e) {
        table[{fc.name, sc.name}] = "LOWER-FAIL";
        ADD_FAILURE() << fc.name << " x " << sc.name << ": " << e.what();
      }
    }
  }
  print_table(table);
  std::printf("%d of %d combinations run\n", ran, total);
  EXPECT_GE(ran * 10, total * 8) << ran << " of " << total << " combinations run";
}

}  // namespace
}  // namespace schedlab::lower::testing
