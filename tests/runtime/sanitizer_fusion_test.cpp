// The emulation sanitizer on generated kernels: the example schedules of
// configs/schedules (block and grid reductions, Shared caches) run clean and
// still match the reference, and the schedules of issue #11's reproducers
// are either refused by lowering or caught: a kernel whose outputs are wrong
// never runs clean under the sanitizer, and the racy softmax of reproducer 3
// never validates cleanly. (The lowering matrix runs sanitized in
// tests/lower/matrix_test.cpp.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "cpu_test_util.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/model/device.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/executor.h"
#include "test_support.h"

namespace schedlab::runtime::testing {
namespace {

using Kind = SanitizerFinding::Kind;

Backend& backend() {
  static std::unique_ptr<Backend> b =
      make_cpu_backend(model::model_device_properties(),
                       std::string(SCHEDLAB_BINARY_DIR) + "/tests/runtime/kernel-cache");
  return *b;
}

/// What became of a fusion under a schedule.
struct Outcome {
  std::string lowering_error;  ///< a user error from lowering (then nothing ran)
  SanitizedRun run;
  bool matches = true;         ///< the traced run's outputs match the reference
  std::string mismatch;
};

/// Lowers `def` (scheduled) at `sizes` and runs it under the sanitizer,
/// comparing with the reference of `plain`.
Outcome run_scheduled(const frontend::FusionDefinition& plain, const frontend::FusionDefinition& def,
                      const ir::SizeBindings& sizes) {
  Outcome o;
  PreparedKernel p;
  try {
    p = prepare(*def.fusion, sizes);
  } catch (const UserError& e) {
    o.lowering_error = e.what();
    return o;
  }
  auto inputs = ref::make_inputs(*plain.fusion, sizes, 3, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, sizes);
  o.run = execute_sanitized(backend(), p, inputs, sizes, plain.fusion->name());
  for (size_t i = 0; i < want.size(); ++i) {
    auto c = ref::compare(o.run.outputs[i], want[i],
                          ref::Tolerance::error_bound(plain.fusion->outputs()[i]->dtype()));
    if (!c.ok) o.matches = false, o.mismatch += c.first_mismatch + "\n";
  }
  return o;
}

Outcome run(const frontend::FusionDefinition& plain, frontend::FusionDefinition def,
            const std::string& schedule, const ir::SizeBindings& sizes) {
  frontend::apply_schedule_text(schedule, "test.sched", def, {});
  return run_scheduled(plain, def, sizes);
}

Outcome run_config(const std::string& fusion, const std::string& schedule_file,
                   const ir::SizeBindings& sizes) {
  auto def = test_support::load_config_fusion(fusion);
  auto plain = test_support::load_config_fusion(fusion);
  frontend::apply_schedule_file(
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/" + schedule_file, def, {});
  return run_scheduled(plain, def, sizes);
}

TEST(SanitizerFusion, ExampleSchedulesRunClean) {
  struct Case {
    const char* fusion;
    const char* schedule;
    ir::SizeBindings sizes;
  };
  const Case cases[] = {
      {"softmax", "softmax_block.sched", {{"N", 5}, {"K", 300}}},
      {"layernorm", "layernorm_block.sched", {{"N", 3}, {"K", 200}}},
      {"row_sum", "row_sum_grid.sched", {{"N", 3}, {"K", 9000}}},  // a grid reduction
      {"transpose2d", "transpose2d.sched", {{"N", 33}, {"K", 17}}},
      {"pointwise_add_mul", "pointwise_add_mul.sched", {{"N", 7}, {"K", 130}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.fusion) + " x " + c.schedule);
    Outcome o = run_config(c.fusion, c.schedule, c.sizes);
    ASSERT_EQ(o.lowering_error, "");
    EXPECT_EQ(o.run.report, "");
    EXPECT_TRUE(o.matches) << o.mismatch;
  }
}

constexpr const char* kSoftmax = "softmax";

// Issue #11 reproducer 3: every block resets and accumulates the same global
// max and sum. Lowering may refuse the schedule; if it accepts it, the
// sanitizer must report the race between blocks (whatever the outputs).
TEST(SanitizerFusion, SoftmaxRowsMergedOnBlocksIsRefusedOrRacy) {
  auto def = test_support::load_config_fusion(kSoftmax);
  auto plain = test_support::load_config_fusion(kSoftmax);
  Outcome o = run(plain, std::move(def), "merge(y, 0)\nparallelize(y, 0, BIDx)\n",
                  {{"N", 64}, {"K", 64}});
  if (!o.lowering_error.empty()) {
    EXPECT_THAT(o.lowering_error, ::testing::HasSubstr("T"));  // names the tensor
    return;
  }
  ASSERT_FALSE(o.run.findings.empty()) << "the racy softmax validated cleanly";
  bool block_race = false;
  for (const auto& f : o.run.findings) block_race |= f.kind == Kind::BlockRace;
  EXPECT_TRUE(block_race) << o.run.report;
  EXPECT_THAT(o.run.report, ::testing::HasSubstr("global-memory race between blocks in kernel softmax"));
}

// Issue #11 reproducers 1 and 2: a dead statement made accepted schedules
// wrong. Whatever lowering does with them now, a wrong kernel is never clean.
TEST(SanitizerFusion, WrongKernelsOfTheDeadStatementReproducersAreNeverClean) {
  constexpr const char* kBdead2 = R"(
fusion: bdead2
inputs:
  x: {dtype: f32, shape: [N, K]}
  w: {dtype: f32, shape: [1, K]}
sizes: {N: 2, K: 2}
body: |
  a = w * 2
  b = a * a
  dead = abs(a)
  y = x - b
outputs: [y]
)";
  constexpr const char* kDeadSoftmax = R"(
fusion: dead_softmax
inputs:
  x: {dtype: f32, shape: [N, K]}
sizes: {N: 1, K: 2}
body: |
  m = max(x, axis=1, keepdim=true)
  e = exp(x - m)
  s = sum(e, axis=1, keepdim=true)
  dead = e / s
  y = e / (abs(s) + 1)
outputs: [y]
)";
  struct Case {
    const char* text;
    const char* schedule;
    ir::SizeBindings sizes;
  };
  const Case cases[] = {
      {kBdead2,
       "merge(y, 0)\nparallelize(y, 0, BIDx)\npropagate_transformation(y)\n"
       "parallelize_all_like(y)\ninline_most()\n",
       {{"N", 2}, {"K", 2}}},
      {kDeadSoftmax,
       "split(y, 1, 8)\nparallelize(y, 0, BIDx)\nparallelize(y, 2, TIDx)\n"
       "propagate_transformation(y)\nparallelize_all_like(y)\ninline_most()\n",
       {{"N", 1}, {"K", 2}}},
  };
  for (const Case& c : cases) {
    auto plain = frontend::parse_fusion_text(c.text, "repro.yaml");
    auto def = frontend::parse_fusion_text(c.text, "repro.yaml");
    SCOPED_TRACE(plain.fusion->name());
    Outcome o = run(plain, std::move(def), c.schedule, c.sizes);
    if (!o.lowering_error.empty()) continue;  // refused: the lead's fix
    if (!o.matches) {
      EXPECT_FALSE(o.run.findings.empty()) << "wrong outputs, yet no finding:\n" << o.mismatch;
    }
    std::printf("%s: %s\n", plain.fusion->name().c_str(),
                o.run.report.empty() ? "clean" : o.run.report.c_str());
  }
}

// The lowering soundness cases (tests/lower/soundness) that lowering now
// accepts ("# expect: ok": redundant same-value workspace stores, dead
// statements, ...) run clean under the sanitizer at their own sizes.
TEST(SanitizerFusion, AcceptedSoundnessCasesRunClean) {
  const std::string dir = std::string(SCHEDLAB_SOURCE_DIR) + "/tests/lower/soundness";
  int ran = 0;
  for (const std::string& yaml : test_support::files_with_extension(dir, ".yaml")) {
    const std::string sched = yaml.substr(0, yaml.size() - 5) + ".sched";
    std::ifstream in(sched);
    std::string first;
    std::getline(in, first);
    if (first != "# expect: ok") continue;
    SCOPED_TRACE(sched);
    auto plain = frontend::load_fusion_file(yaml);
    auto def = frontend::load_fusion_file(yaml);
    frontend::apply_schedule_file(sched, def, {});
    const ir::SizeBindings sizes = frontend::bind_sizes(plain, {});
    Outcome o = run_scheduled(plain, def, sizes);
    ASSERT_EQ(o.lowering_error, "");
    EXPECT_EQ(o.run.report, "");
    EXPECT_TRUE(o.matches) << o.mismatch;
    ++ran;
  }
  EXPECT_GT(ran, 0) << "no accepted case in " << dir;
}

}  // namespace
}  // namespace schedlab::runtime::testing
