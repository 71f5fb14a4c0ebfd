// Sweeps over meshes (docs/sweeps.md, "Meshes"): `mesh: [1, 2, 4]` is a point
// dimension; a mesh-1 point runs here as any point, a point on more ranks
// goes through RunOptions::run_mesh_point (the CLI runs `schedlab exec
// --mesh N`; here a stand-in), and records and tables carry mesh and comm_us.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/report/html.h"
#include "schedlab/report/table.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/sweep/run/runner.h"
#include "schedlab/sweep/run/shard.h"
#include "schedlab/sweep/spec/spec.h"
#include "test_support.h"

namespace schedlab::sweep {
namespace {

namespace fs = std::filesystem;
using testing::HasSubstr;

const char* kMeshSweep = R"(sweep: meshes
fusions:
  - fusion: pointwise_add_mul
    sizes: {N: 32, K: [256, 512]}
    mesh: [1, 2, 4, 2]
schedulers:
  - plugin: pointwise
    set: {vector: 1}
measure: {repetitions: 2, warmup: 0}
validation: {sanitize: false}
backend: cpu
)";

struct Fixture {
  fs::path dir;
  plugin::Registry registry{plugin::plugin_search_path()};
  SweepSpec spec;
  std::unique_ptr<runtime::Backend> backend;

  explicit Fixture(const std::string& name, const char* text = kMeshSweep) {
    dir = fs::path(SCHEDLAB_BINARY_DIR) / "tests/sweep_run" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string file = (dir / "meshes.yaml").string();
    std::ofstream(file) << text;
    LoadOptions lo;
    lo.fusion_dirs = {test_support::config_fusion_dir()};
    lo.plugins = registry_lookup(registry);
    spec = load_sweep_file(file, lo);
    backend = runtime::make_cpu_backend(model::model_device_properties(), (dir / "cache").string());
  }
};

TEST(SweepMesh, EveryBindingOnEveryMeshTheMeshFastest) {
  Fixture fx("mesh_spec");
  const FusionSpec& f = fx.spec.fusions.at(0);
  ASSERT_EQ(f.sizes.size(), 6u);  // 2 bindings x 3 meshes (the repeated 2 dropped)
  EXPECT_EQ(f.meshes, (std::vector<int>{1, 2, 4, 1, 2, 4}));
  EXPECT_EQ(f.sizes[0], f.sizes[2]);
  EXPECT_EQ(f.sizes[3].at("K"), 512);
  std::vector<Point> pts = expand(fx.spec);
  ASSERT_EQ(pts.size(), 6u);
  EXPECT_EQ(describe(fx.spec, pts[1]),
            "pointwise_add_mul N=32,K=256 mesh=2 | pointwise | (heuristic) vector=1");
  // Shards tell the meshes apart: six points, six identities, one per shard.
  std::set<std::string> ids;
  for (const Point& p : pts) ids.insert(point_identity(fx.spec, p));
  EXPECT_EQ(ids.size(), 6u);
  size_t dealt = 0;
  for (int s = 0; s < 6; ++s) {
    ShardPlan plan(fx.spec, parse_shard(std::to_string(s) + "/6"));
    for (const Point& p : pts) dealt += plan.has_point(fx.spec, p);
  }
  EXPECT_EQ(dealt, 6u);
}

TEST(SweepMesh, ManyRanksGoThroughRunMeshPointOneRankRunsHere) {
  Fixture fx("mesh_run");
  std::vector<MeshPointRequest> asked;
  RunOptions ro;
  ro.output = (fx.dir / "r.jsonl").string();
  ro.run_mesh_point = [&](const MeshPointRequest& q) {
    asked.push_back(q);
    MeshPointOutcome o;
    o.seconds = 1e-3 * q.mesh;
    o.max_abs_error = 0;
    o.comm_us = 1.5 * q.mesh;
    return o;
  };
  RunResult res = run_sweep(fx.spec, fx.registry, *fx.backend, ro);
  ASSERT_EQ(res.records.size(), 6u);
  // Only the points on more than one rank were handed out, with their scheduler.
  ASSERT_EQ(asked.size(), 4u);
  for (const MeshPointRequest& q : asked) {
    EXPECT_GT(q.mesh, 1);
    EXPECT_EQ(q.scheduler->plugin, "pointwise");
    EXPECT_EQ(q.settings, (std::vector<std::string>{"vector=1"}));
    EXPECT_FALSE(q.sanitize);      // the sweep's validation
    EXPECT_EQ(q.device, nullptr);  // no profile device: the default is the caller's
  }
  std::set<std::string> keys;
  for (const report::Record& r : res.records) {
    EXPECT_EQ(r.status, report::Status::Ok) << r.error;
    keys.insert(r.key);
    if (r.mesh == 1) {
      EXPECT_EQ(r.times_us.size(), 2u);  // timed here, the sweep's repetitions
      EXPECT_EQ(r.comm_us, 0.0);
      EXPECT_FALSE(r.kernel_hash.empty());
    } else {
      ASSERT_EQ(r.times_us.size(), 1u);  // the slowest rank's one run
      EXPECT_DOUBLE_EQ(r.times_us[0], 1e3 * r.mesh);
      EXPECT_EQ(r.comm_us, 1.5 * r.mesh);
    }
  }
  EXPECT_EQ(keys.size(), 6u) << "each mesh is its own point";
  // The file keeps mesh and comm_us (a many-rank record is written as soon
  // as it is final, before the one-rank points are timed); a resumed run
  // finds every point.
  report::RecordFile file = report::read_records(ro.output);
  ASSERT_EQ(file.records.size(), 6u);
  for (const report::Record& r : res.records) {
    auto it = std::find_if(file.records.begin(), file.records.end(),
                           [&](const report::Record& x) { return x.key == r.key; });
    ASSERT_NE(it, file.records.end());
    EXPECT_EQ(it->mesh, r.mesh);
    EXPECT_EQ(it->comm_us, r.comm_us);
  }
  ro.resume = true;
  asked.clear();
  RunResult again = run_sweep(fx.spec, fx.registry, *fx.backend, ro);
  EXPECT_EQ(again.resumed, 6u);
  EXPECT_TRUE(asked.empty());

  // The table: a row per (sizes, mesh), with the mesh and the predicted
  // communication beside the size.
  const std::string text = report::render_console(report::build_tables(res.records, {}), false);
  EXPECT_THAT(text, HasSubstr("mesh  comm us"));
  EXPECT_THAT(text, testing::ContainsRegex("N=32,K=256 +1 +0\\.00 +pointwise"));
  EXPECT_THAT(text, testing::ContainsRegex("N=32,K=512 +4 +6\\.00 +pointwise"));
  size_t rows = 0;
  for (size_t at = 0; (at = text.find("pointwise  ", at)) != std::string::npos; ++at) ++rows;
  EXPECT_EQ(rows, 6u) << text;
  // CSV ends every line with mesh and comm_us; JSON rows carry them; HTML
  // names the row by its size and mesh.
  const std::vector<report::Table> tables = report::build_tables(res.records, {});
  const std::string csv = report::render_csv(tables);
  EXPECT_THAT(csv, HasSubstr(",cpu_verdict,mesh,comm_us\n"));
  EXPECT_THAT(csv, testing::ContainsRegex("\"N=32,K=512\",pointwise,.*,4,6\n"));
  const nlohmann::json json_rows =
      nlohmann::json::parse(report::render_json(tables))["sections"][0]["rows"];
  ASSERT_EQ(json_rows.size(), 6u);
  EXPECT_EQ(json_rows[5]["mesh"], 4);
  EXPECT_EQ(json_rows[5]["comm_us"], 6.0);
  report::TableOptions to;
  EXPECT_THAT(report::render_html(res.records, to, {}), HasSubstr("N=32,K=512 mesh=4"));
}

TEST(SweepMesh, WithoutARunnerAManyRankPointCrashesSayingWhy) {
  Fixture fx("mesh_no_runner");
  RunOptions ro;
  ro.output = (fx.dir / "r.jsonl").string();
  RunResult res = run_sweep(fx.spec, fx.registry, *fx.backend, ro);
  ASSERT_EQ(res.records.size(), 6u);
  EXPECT_EQ(res.records[0].status, report::Status::Ok);
  EXPECT_EQ(res.records[1].status, report::Status::Crashed);
  EXPECT_THAT(res.records[1].error, HasSubstr("mesh 2: a point on more than one rank runs"));
}

TEST(SweepMesh, AFailedMeshPointKeepsItsStatusAndPrediction) {
  Fixture fx("mesh_fail");
  RunOptions ro;
  ro.output = (fx.dir / "r.jsonl").string();
  ro.run_mesh_point = [&](const MeshPointRequest& q) {
    MeshPointOutcome o;
    o.status = q.mesh == 2 ? report::Status::WrongResult : report::Status::ScheduleError;
    o.error = "because";
    o.comm_us = 2.0;
    return o;
  };
  RunResult res = run_sweep(fx.spec, fx.registry, *fx.backend, ro);
  EXPECT_EQ(res.records[1].status, report::Status::WrongResult);
  EXPECT_EQ(res.records[2].status, report::Status::ScheduleError);
  EXPECT_EQ(res.records[2].error, "because");
  EXPECT_EQ(res.records[2].comm_us, 2.0);
  EXPECT_TRUE(res.records[2].times_us.empty());
}

TEST(SweepMesh, NoMeshDimensionNoMeshField) {
  Fixture fx("mesh_none", R"(fusions:
  - fusion: pointwise_add_mul
    sizes: {N: 32, K: 256}
schedulers: [{plugin: pointwise}]
measure: {repetitions: 1, warmup: 0}
backend: cpu
)");
  EXPECT_FALSE(fx.spec.fusions[0].has_mesh());
  RunOptions ro;
  ro.output = (fx.dir / "r.jsonl").string();
  RunResult res = run_sweep(fx.spec, fx.registry, *fx.backend, ro);
  ASSERT_EQ(res.records.size(), 1u);
  EXPECT_EQ(res.records[0].mesh, 0);
  EXPECT_FALSE(res.records[0].comm_us);
  EXPECT_EQ(report::to_json(res.records[0]).find("\"mesh\""), std::string::npos);
  const std::string text = report::render_console(report::build_tables(res.records, {}), false);
  EXPECT_EQ(text.find("comm us"), std::string::npos);
}

}  // namespace
}  // namespace schedlab::sweep
