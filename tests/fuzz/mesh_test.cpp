// The sharding draw of `fuzz --mesh` (core/fuzz/shard_gen.cpp): a pure
// function of (seed, case, mesh), on a stream of its own (the unsharded
// fusion is the single-device fuzzer's, sizes aside), every sharded text
// parses, plans or is refused as a user error, and the features appear.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/fuzz/mesh.h"
#include "schedlab/ir/mesh.h"
#include "schedlab/lower/communication.h"

namespace schedlab::fuzz {
namespace {

TEST(FuzzMesh, SameSeedCaseAndMeshGiveTheSameShardedCase) {
  for (uint64_t i : {0u, 3u, 17u})
    for (int mesh : {2, 4})
      EXPECT_EQ(generate_mesh_case(11, i, mesh).text(), generate_mesh_case(11, i, mesh).text());
}

TEST(FuzzMesh, TheShardingLeavesTheUnshardedDrawAlone) {
  // The body, inputs and outputs are generate_case's; only sizes may change.
  for (uint64_t i = 0; i < 40; ++i) {
    const GenFusion plain = generate_case(7, i).fusion;
    GenFusion sharded = generate_mesh_case(7, i, 2).fusion;
    sharded.sizes = plain.sizes;
    EXPECT_EQ(sharded.text(), plain.text()) << "case " << i;
  }
}

TEST(FuzzMesh, EveryShardedTextParsesAndPlansOrIsRefused) {
  std::set<std::string> features;
  int planned = 0, refused = 0, with_collective = 0;
  std::set<lower::CollectiveKind> kinds;
  for (uint64_t i = 0; i < 200; ++i) {
    const MeshCase c = generate_mesh_case(2026, i, 2);
    features.insert(c.sharding.features.begin(), c.sharding.features.end());
    const std::string text = c.text();
    ASSERT_NE(text.find("mesh: [0, 1]\n"), std::string::npos) << text;
    frontend::FusionDefinition def = frontend::parse_fusion_text(text, "fuzz.yaml");
    const ir::SizeBindings sizes = frontend::bind_sizes(def, {});
    try {
      const lower::ShardedPlan plan =
          lower::plan_communication(*def.fusion, sizes, ir::DeviceMesh::of_size(2));
      ++planned;
      bool collective = false;
      for (const lower::PlanStep& s : plan.steps)
        if (const auto* k = std::get_if<lower::Communication>(&s)) {
          kinds.insert(k->kind);
          collective = collective || k->kind != lower::CollectiveKind::Slice;
        }
      with_collective += collective;
    } catch (const UserError&) {
      ++refused;  // a sharding rule: the campaign's "refused (plan)"
    }
  }
  EXPECT_GE(planned, 80);
  EXPECT_GE(refused, 10);
  EXPECT_GE(with_collective, 30);
  for (auto k : {lower::CollectiveKind::Allreduce, lower::CollectiveKind::ReduceScatter,
                 lower::CollectiveKind::Allgather, lower::CollectiveKind::Slice})
    EXPECT_TRUE(kinds.count(k)) << lower::collective_name(k);
  for (const char* f : {"shard_input", "shard_two_inputs", "shard_body", "shard_output",
                        "replicated", "size_divisible", "size_indivisible"})
    EXPECT_TRUE(features.count(f)) << f;
}

}  // namespace
}  // namespace schedlab::fuzz
