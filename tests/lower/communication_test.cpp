// The communication pass (lower/communication.h, docs/multi-device.md):
// each propagation row, each rule's error, local sizes, print_plan, the
// local steps' extractions verify, and every standard fusion without a
// declared sharding plans as one step with no communication.
#include "schedlab/lower/communication.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/verifier.h"

namespace {

namespace fs = std::filesystem;
using namespace schedlab;
using lower::CollectiveKind;
using lower::Communication;
using lower::LocalStep;
using lower::PlanValue;
using lower::ShardedPlan;
using testing::HasSubstr;

const ir::DeviceMesh kTwo = ir::DeviceMesh::of_size(2);

/// A fusion from text with a two-device mesh and the given shard map.
frontend::FusionDefinition fusion(const std::string& inputs, const std::string& shard,
                                  const std::string& body, const std::string& outputs = "[y]",
                                  const std::string& sizes = "{N: 4, K: 8}") {
  std::string text = "fusion: t\ninputs:\n" + inputs + "mesh: [0, 1]\n" +
                     (shard.empty() ? "" : "shard: " + shard + "\n") + "sizes: " + sizes +
                     "\nbody: |\n" + body + "outputs: " + outputs + "\n";
  return frontend::parse_fusion_text(text, "t.yaml");
}

ShardedPlan plan(const frontend::FusionDefinition& d, const ir::DeviceMesh& mesh = kTwo) {
  return lower::plan_communication(*d.fusion, d.default_sizes, mesh);
}

std::vector<const LocalStep*> locals(const ShardedPlan& p) {
  std::vector<const LocalStep*> out;
  for (const auto& s : p.steps)
    if (const auto* l = std::get_if<LocalStep>(&s)) out.push_back(l);
  return out;
}

/// "allreduce(sum) T1 -> T1" for each communication, in order.
std::vector<std::string> comms(const ShardedPlan& p) {
  std::vector<std::string> out;
  for (const auto& s : p.steps)
    if (const auto* c = std::get_if<Communication>(&s)) out.push_back(c->str(p.values));
  return out;
}

const PlanValue& output(const ShardedPlan& p, size_t i = 0) {
  return p.values.at(static_cast<size_t>(p.outputs.at(i)));
}

/// Every local step's extraction verifies and its inputs/outputs map to values.
void expect_steps_verify(const ShardedPlan& p) {
  for (const LocalStep* l : locals(p)) {
    EXPECT_NO_THROW(ir::verify(*l->fusion.fusion));
    ASSERT_EQ(l->inputs.size(), l->fusion.fusion->inputs().size());
    ASSERT_EQ(l->outputs.size(), l->fusion.fusion->outputs().size());
    auto orig_in = l->fusion.original_inputs();
    for (size_t i = 0; i < orig_in.size(); ++i)
      EXPECT_EQ(p.values.at(static_cast<size_t>(l->inputs[i])).tensor, orig_in[i]);
    auto orig_out = l->fusion.original_outputs();
    for (size_t i = 0; i < orig_out.size(); ++i)
      EXPECT_EQ(p.values.at(static_cast<size_t>(l->outputs[i])).tensor, orig_out[i]);
  }
}

std::string plan_error(const frontend::FusionDefinition& d) {
  try {
    plan(d);
  } catch (const UserError& e) {
    return e.message();
  }
  return "(no error)";
}

const std::string kX = "  x: {dtype: f32, shape: [N, K]}\n";

// ---- propagation rows ------------------------------------------------------

TEST(CommunicationPlan, PointwiseKeepsTheShardedAxis) {
  auto d = fusion(kX, "{x: K}", "  y = exp(x) * 2\n");
  auto p = plan(d);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(output(p).layout, PlanValue::Layout::Sharded);
  EXPECT_EQ(output(p).axis, 1);
  EXPECT_EQ(output(p).local_shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(locals(p)[0]->sizes.at("K"), 4);
  EXPECT_EQ(locals(p)[0]->sizes.at("N"), 4);
  expect_steps_verify(p);
}

TEST(CommunicationPlan, ReductionOverAnotherAxisKeepsTheShardedAxis) {
  auto d = fusion(kX, "{x: N}", "  y = sum(x, axis=1)\n");
  auto p = plan(d);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(output(p).str(), "T1 (y) sharded on axis 0 [2]");
  EXPECT_EQ(locals(p)[0]->sizes.at("N"), 2);
  EXPECT_EQ(locals(p)[0]->sizes.at("K"), 8);
}

TEST(CommunicationPlan, BroadcastMapsTheShardedAxis) {
  auto d = fusion("  x: {dtype: f32, shape: [K]}\n  z: {dtype: f32, shape: [N, K]}\n", "{x: K}",
                  "  b = broadcast(x, [true, false])\n  y = b + z\n");
  auto p = plan(d);
  // z is replicated and read with the sharded b: sliced (no bytes), one kernel.
  EXPECT_THAT(comms(p), testing::ElementsAre("slice(axis 1) T1 -> T1"));
  ASSERT_EQ(locals(p).size(), 1u);
  EXPECT_EQ(output(p).str(), "T3 (y) sharded on axis 1 [4, 4]");
  expect_steps_verify(p);
}

TEST(CommunicationPlan, ReductionsOverTheShardedAxisAreAllreduced) {
  for (std::string op : {"sum", "max", "min", "prod"}) {
    auto d = fusion(kX, "{x: K}", "  y = " + op + "(x, axis=1)\n");
    auto p = plan(d);
    EXPECT_THAT(comms(p), testing::ElementsAre("allreduce(" + op + ") T1 -> T1")) << op;
    EXPECT_EQ(output(p).layout, PlanValue::Layout::Replicated);
    const auto& c = std::get<Communication>(p.steps.at(1));
    EXPECT_EQ(c.kind, CollectiveKind::Allreduce);
    EXPECT_EQ(c.bytes_per_rank, 4 * 4);
    EXPECT_EQ(p.values.at(static_cast<size_t>(c.input)).layout, PlanValue::Layout::Partial);
  }
}

TEST(CommunicationPlan, MatmulOverAShardedKIsAllreduced) {
  auto d = fusion("  a: {dtype: f32, shape: [N, K]}\n  b: {dtype: f32, shape: [K, N]}\n",
                  "{a: K, b: K}", "  y = matmul(a, b)\n");
  auto p = plan(d);
  ASSERT_EQ(comms(p).size(), 1u);
  EXPECT_THAT(comms(p)[0], HasSubstr("allreduce(sum)"));
  EXPECT_EQ(output(p).local_shape, (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(locals(p)[0]->sizes.at("K"), 4);
  expect_steps_verify(p);
}

TEST(CommunicationPlan, PartialDeclaredShardedIsReduceScattered) {
  auto d = fusion(kX, "{x: K, y: N}", "  y = sum(x, axis=1)\n");
  auto p = plan(d);
  EXPECT_THAT(comms(p), testing::ElementsAre("reduce_scatter(sum, axis 0) T1 -> T1"));
  EXPECT_EQ(output(p).str(), "T1 (y) sharded on axis 0 [2]");
  EXPECT_EQ(std::get<Communication>(p.steps.at(1)).bytes_per_rank, 16);
}

TEST(CommunicationPlan, ShardedDeclaredReplicatedIsAllgathered) {
  auto d = fusion(kX, "{x: K, y: replicated}", "  y = exp(x)\n");
  auto p = plan(d);
  EXPECT_THAT(comms(p), testing::ElementsAre("allgather(axis 1) T1 -> T1"));
  EXPECT_EQ(output(p).str(), "T1 (y) replicated [4, 8]");
  EXPECT_EQ(std::get<Communication>(p.steps.at(1)).bytes_per_rank, 4 * 4 * 4);
}

TEST(CommunicationPlan, ReplicatedDeclaredShardedIsSliced) {
  auto d = fusion(kX, "{y: K}", "  y = exp(x)\n");
  auto p = plan(d);
  EXPECT_THAT(comms(p), testing::ElementsAre("slice(axis 1) T1 -> T1"));
  EXPECT_EQ(std::get<Communication>(p.steps.at(1)).bytes_per_rank, 0);
  EXPECT_EQ(output(p).str(), "T1 (y) sharded on axis 1 [4, 4]");
}

TEST(CommunicationPlan, ReplicatedInputReadWithAShardedOneIsSliced) {
  auto d = fusion(kX + "  z: {dtype: f32, shape: [N, K]}\n", "{x: K}", "  y = x + z\n");
  auto p = plan(d);
  EXPECT_THAT(comms(p), testing::ElementsAre("slice(axis 1) T1 -> T1"));
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<Communication>(p.steps[0]));  // before the kernel
  expect_steps_verify(p);
}

TEST(CommunicationPlan, ABodyTensorReadWithAShardedOneIsSlicedAtItsInputs) {
  // bias_relu with K sharded: b's broadcast is made sharded from a slice of
  // the input b, so the broadcast and the add stay in one kernel.
  auto d = fusion(kX + "  b: {dtype: f32, shape: [K]}\n", "{x: K}", "  y = relu(x + b)\n");
  auto p = plan(d);
  EXPECT_THAT(comms(p), testing::ElementsAre("slice(axis 0) T1 -> T1"));
  ASSERT_EQ(locals(p).size(), 1u);
  EXPECT_EQ(locals(p)[0]->sizes.at("K"), 4);
  EXPECT_EQ(output(p).str(), "T4 (y) sharded on axis 1 [4, 4]");
  expect_steps_verify(p);
  // Read whole elsewhere too, the broadcast stays replicated: sliced after it.
  auto d2 = fusion(kX + "  b: {dtype: f32, shape: [K]}\n", "{x: K}",
                   "  c = broadcast(b, [true, false])\n  y = x + c\n  z = c * 2\n", "[y, z]");
  auto p2 = plan(d2);
  EXPECT_THAT(comms(p2), testing::ElementsAre("slice(axis 1) T2 -> T2"));
  EXPECT_EQ(locals(p2).size(), 2u);
}

TEST(CommunicationPlan, ShardedOnADeclaredOnBIsAllgatheredThenSliced) {
  auto d = fusion(kX, "{x: K, y: N}", "  y = exp(x)\n");
  auto p = plan(d);
  EXPECT_THAT(comms(p),
              testing::ElementsAre("allgather(axis 1) T1 -> T1", "slice(axis 0) T1 -> T1"));
  EXPECT_EQ(output(p).str(), "T1 (y) sharded on axis 0 [2, 8]");
}

TEST(CommunicationPlan, PartialConsumersRunAfterTheAllreduce) {
  auto d = fusion(kX, "{x: K}", "  s = sum(x, axis=1)\n  y = s * 2\n");
  auto p = plan(d);
  ASSERT_EQ(p.steps.size(), 3u);
  auto l = locals(p);
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(l[0]->sizes.at("K"), 4);
  EXPECT_EQ(l[1]->sizes.at("K"), 8);  // K appears nowhere sharded in step 1
  EXPECT_EQ(l[1]->fusion.fusion->name(), "t_l1");
  expect_steps_verify(p);
}

TEST(CommunicationPlan, OneDeviceMeshIgnoresDeclarations) {
  auto d = fusion(kX, "{x: K, y: replicated}", "  s = sum(x, axis=1)\n  y = s * 2\n");
  auto p = plan(d, ir::DeviceMesh::of_size(1));
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(locals(p)[0]->sizes, d.default_sizes);
}

// ---- rules -----------------------------------------------------------------

TEST(CommunicationRules, ExtentNotAMultipleOfTheMesh) {
  auto d = fusion(kX, "{x: K}", "  y = exp(x)\n", "[y]", "{N: 4, K: 7}");
  EXPECT_THAT(plan_error(d), HasSubstr("T0 (x) axis 1 is sharded over 2 devices; expected its "
                                       "extent K to be a multiple of 2, found K = 7"));
}

TEST(CommunicationRules, ExtentNotANamedSize) {
  auto d =
      fusion("  x: {dtype: f32, shape: [N, 8]}\n", "{x: 1}", "  y = exp(x)\n", "[y]", "{N: 4}");
  EXPECT_THAT(plan_error(d), HasSubstr("T0 (x) axis 1 is sharded over 2 devices; expected a "
                                       "sharded extent that is a named size, found 8"));
}

TEST(CommunicationRules, SizeUsedAsAValue) {
  auto d = fusion(kX, "{x: K}", "  y = x / K\n");
  EXPECT_THAT(plan_error(d), HasSubstr("uses the size K as a value, and K is sharded (axis 1 of "
                                       "T0 (x)) in local step 0; expected a size used as a value "
                                       "to be whole, found it sharded over 2 devices"));
}

TEST(CommunicationRules, PermuteMovesAShardedAxis) {
  auto d = fusion(kX, "{x: K}", "  y = transpose(x, 0, 1)\n");
  EXPECT_THAT(plan_error(d), HasSubstr("permute moves sharded axis 1 of T0 (x) (shape [N, K]) to "
                                       "axis 0 of T1 (y); expected a sharded axis to stay in "
                                       "place"));
}

TEST(CommunicationRules, ReshapeMergesAShardedAxis) {
  auto d = fusion(kX, "{x: K}", "  y = flatten(x)\n");
  EXPECT_THAT(plan_error(d), HasSubstr("flatten splits or merges sharded axis 1 of T0 (x) (shape "
                                       "[N, K]) into T1 (y)"));
}

TEST(CommunicationRules, MixedShardedAndWholeSizeInOneStep) {
  auto d = fusion(kX + "  w: {dtype: f32, shape: [K]}\n", "{x: K}",
                  "  y = x * 2\n  z = sum(w, axis=0)\n", "[y, z]");
  EXPECT_THAT(plan_error(d), HasSubstr("in local step 0, size K is sharded on axis 1 of T0 (x) and "
                                       "whole on axis 0 of T1 (w); expected a named size sharded "
                                       "on every axis that has it or on none within one step"));
}

TEST(CommunicationRules, ProducersDisagree) {
  auto d = fusion("  x: {dtype: f32, shape: [N, N]}\n  z: {dtype: f32, shape: [N, N]}\n",
                  "{x: 0, z: 1}", "  y = x + z\n", "[y]", "{N: 4}");
  EXPECT_THAT(plan_error(d), HasSubstr("add into T2 (y) reads T0 (x) sharded on axis 0 and T1 (z) "
                                       "sharded on axis 1; expected its sharded producers to agree "
                                       "on one axis of T2 (y), found axes 0 and 1"));
}

// An unsupported reduction cannot be written: every ReductionOpType (sum,
// max, min, prod) and a matmul's sum are supported; the rule stays as a check.

// ---- printed plans -----------------------------------------------------------

const std::string kFusions = SCHEDLAB_SOURCE_DIR "/configs/fusions/";

ShardedPlan standard(const std::string& name, frontend::FusionDefinition& d) {
  d = frontend::load_fusion_file(kFusions + name + ".yaml");
  return lower::plan_communication(*d.fusion, d.default_sizes, *ir::device_mesh(*d.fusion));
}

TEST(CommunicationPrint, SumSharded) {
  frontend::FusionDefinition d;
  auto p = standard("sum_sharded", d);
  expect_steps_verify(p);
  EXPECT_EQ(lower::print_plan(p, [](size_t s) { return "kernels of step " + std::to_string(s); }),
            R"(mesh [0, 1]
values:
  v0: T0 (x) sharded on axis 1 [4, 8]
  v1: T1 (y) partial sum [4]
  v2: T1 (y) replicated [4]
step 0: kernel sum_sharded_l0 (T0 (x) sharded on axis 1 [4, 8]) -> (T1 (y) partial sum [4]) at N=4, K=8
    kernels of step 0
step 1: allreduce(sum) T1 -> T1 over [0, 1], 16 bytes per rank
outputs: (T1 (y) replicated [4])
)");
}

TEST(CommunicationPrint, SoftmaxSeqSharded) {
  frontend::FusionDefinition d;
  auto p = standard("softmax_seqsharded", d);
  expect_steps_verify(p);
  EXPECT_EQ(lower::print_plan(p), R"(mesh [0, 1]
values:
  v0: T0 (x) sharded on axis 1 [4, 8]
  v1: T1 partial max [4]
  v2: T1 replicated [4]
  v3: T2 (m) replicated [4, 1]
  v4: T3 sharded on axis 1 [4, 8]
  v5: T4 (e) sharded on axis 1 [4, 8]
  v6: T5 partial sum [4]
  v7: T5 replicated [4]
  v8: T6 (s) replicated [4, 1]
  v9: T7 (y) sharded on axis 1 [4, 8]
step 0: kernel softmax_seqsharded_l0 (T0 (x) sharded on axis 1 [4, 8]) -> (T1 partial max [4]) at N=4, K=8
step 1: allreduce(max) T1 -> T1 over [0, 1], 16 bytes per rank
step 2: kernel softmax_seqsharded_l1 (T0 (x) sharded on axis 1 [4, 8], T1 replicated [4]) -> (T4 (e) sharded on axis 1 [4, 8], T5 partial sum [4]) at N=4, K=8
step 3: allreduce(sum) T5 -> T5 over [0, 1], 16 bytes per rank
step 4: kernel softmax_seqsharded_l2 (T4 (e) sharded on axis 1 [4, 8], T5 replicated [4]) -> (T7 (y) sharded on axis 1 [4, 8]) at N=4, K=8
outputs: (T7 (y) sharded on axis 1 [4, 8])
)");
}

TEST(CommunicationPlan, LayernormRowShardedHasNoCommunication) {
  frontend::FusionDefinition d;
  auto p = standard("layernorm_rowsharded", d);
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(output(p).str(), "T17 (y) sharded on axis 0 [2, 16]");
  EXPECT_EQ(locals(p)[0]->sizes.at("N"), 2);
  expect_steps_verify(p);
}

TEST(CommunicationPlan, TensorParallelMlpIsOneAllreduce) {
  frontend::FusionDefinition d;
  auto p = standard("mlp_tp_bf16", d);
  auto c = comms(p);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_THAT(c[0], HasSubstr("allreduce(sum)"));
  EXPECT_EQ(locals(p).size(), 2u);
  EXPECT_EQ(locals(p)[0]->sizes.at("N"), 16);
  EXPECT_EQ(output(p).layout, PlanValue::Layout::Replicated);
  expect_steps_verify(p);
}

// ---- every standard fusion -----------------------------------------------------

bool declares_sharding(const ir::Fusion& f) {
  for (const ir::TensorView* t : f.tensors())
    if (ir::declared_sharding(t)) return true;
  return false;
}

TEST(CommunicationPlan, EveryStandardFusionWithoutShardsIsOneStep) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kFusions)) {
    if (e.path().extension() != ".yaml") continue;
    auto d = frontend::load_fusion_file(e.path().string());
    auto sizes = frontend::bind_sizes(d, {});
    std::vector<ir::DeviceMesh> meshes = {ir::DeviceMesh::of_size(1)};
    if (!declares_sharding(*d.fusion)) meshes.push_back(kTwo);
    for (const auto& mesh : meshes) {
      SCOPED_TRACE(e.path().string() + " on " + mesh.str());
      auto p = lower::plan_communication(*d.fusion, sizes, mesh);
      ASSERT_EQ(p.steps.size(), 1u);
      ASSERT_TRUE(std::holds_alternative<LocalStep>(p.steps[0]));
      EXPECT_EQ(std::get<LocalStep>(p.steps[0]).sizes, sizes);
      EXPECT_EQ(p.outputs.size(), d.fusion->outputs().size());
      for (int v : p.outputs)
        EXPECT_EQ(p.values.at(static_cast<size_t>(v)).layout, PlanValue::Layout::Replicated);
      expect_steps_verify(p);
    }
    ++n;
  }
  EXPECT_GE(n, 30);
}

// Every standard fusion with one input sharded on each of its named axes in
// turn plans (and its steps verify) or is refused with a user error, never
// an internal one.
TEST(CommunicationPlan, EveryStandardFusionShardedOnEachInputAxisPlansOrRefuses) {
  int planned = 0, refused = 0;
  for (const auto& e : fs::directory_iterator(kFusions)) {
    if (e.path().extension() != ".yaml") continue;
    auto probe = frontend::load_fusion_file(e.path().string());
    ir::SizeBindings sizes = frontend::bind_sizes(probe, {});
    for (auto& [k, v] : sizes) v *= 2;
    for (size_t i = 0; i < probe.fusion->inputs().size(); ++i)
      for (int a = 0; a < probe.fusion->inputs()[i]->nlogical(); ++a) {
        auto d = frontend::load_fusion_file(e.path().string());
        ir::TensorView* in = d.fusion->inputs()[i];
        if (!in->logical()[static_cast<size_t>(a)]->extent().is_symbol()) continue;
        if (!ir::device_mesh(*d.fusion)) ir::set_device_mesh(*d.fusion, kTwo);
        ir::shard(in, a);
        SCOPED_TRACE(e.path().stem().string() + ": " + in->describe() + " on axis " +
                     std::to_string(a));
        try {
          auto p = lower::plan_communication(*d.fusion, sizes, kTwo);
          expect_steps_verify(p);
          ++planned;
        } catch (const UserError&) {
          ++refused;
        }
      }
  }
  EXPECT_GE(planned, 90);  // 92 of 124 at this commit; the rest break a rule
  EXPECT_GE(refused, 1);
}

}  // namespace
