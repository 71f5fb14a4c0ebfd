// The mma.sync tile of tests/matmul/mma_tile_test.cpp with its operand tiles
// loaded by cp.async and circular-buffered over the K loop: the schedule is
// configs/schedules/matmul_mma_async.sched (the K loop outermost so that the
// caches of a and b, which lack N and M, share it; a's 16x16 and b's 16x8
// tiles copied global -> shared by 32 lanes, vectorized as wide as K and N
// allow, zero-filled past the ends; the MmaOp's broadcast operands Shared
// copies of the stage). Run traced on the CPU backend under the sanitizer
// against the reference at 130x70x48, 33x16x64, 1x1x16 and 2x3x5; NVRTC
// compiles it for sm_80 and sm_90. A planted missing wait_group is reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lower_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"

namespace schedlab::lower::testing {
namespace {

using ::testing::HasSubstr;

std::string script_text() {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/matmul_mma_async.sched");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The widest copy (elements) that divides `extent`, at most 8 (16 bytes).
int64_t width(int64_t extent) {
  for (int64_t w : {8, 4, 2})
    if (extent % w == 0) return w;
  return 1;
}

void replace(std::string& s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

struct Plan {
  std::string script;
  frontend::ScheduleParams params;
  bool async_a, async_b;
  int64_t stages;  ///< 0: not circular-buffered (fewer K tiles than 2 stages)
};

/// The script at these sizes: a copy of one element (an odd contiguous
/// extent) is a plain load (cp.async copies 4, 8 or 16 bytes), 3 stages when
/// both operands are cp.async and the K loop has 3 tiles, 2 with a plain
/// load (rule 15), none with one tile.
Plan plan(const ir::SizeBindings& sz) {
  Plan p{script_text(), {}, false, false, 0};
  const int64_t aw = width(sz.at("K")), bw = width(sz.at("N"));
  p.params = {{"aw", aw}, {"ak", 16 / aw}, {"bw", bw}, {"bn", 8 / bw}};
  p.async_a = aw > 1;
  p.async_b = bw > 1;
  if (!p.async_a) {
    replace(p.script, "cache_after(a, CpAsync)", "cache_after(a, Set)");
    replace(p.script, "parallelize(ac, 4, Vectorize)", "");
  }
  if (!p.async_b) {
    replace(p.script, "cache_after(b, CpAsync)", "cache_after(b, Set)");
    replace(p.script, "parallelize(bc, 4, Vectorize)", "");
  }
  const int64_t tiles = (sz.at("K") + 15) / 16;
  p.stages = p.async_a && p.async_b && tiles >= 3 ? 3 : tiles >= 2 ? 2 : 0;
  if (p.stages == 0) {
    replace(p.script, "circular_buffer(ac, {stages})", "");
    replace(p.script, "circular_buffer(bc, {stages})", "");
  } else {
    p.params["stages"] = p.stages;
  }
  return p;
}

Traced run(const ir::SizeBindings& sz, const std::function<void(kir::Kernel&)>& plant = {}) {
  auto plain = load("matmul_bf16");
  auto def = load("matmul_bf16");
  Plan pl = plan(sz);
  frontend::apply_schedule_text(pl.script, "matmul_mma_async.sched", def, pl.params);
  // matmul_bf16 has one output, c (bf16).
  return run_traced(def, plain, sz, "matmul_bf16", 5, plant);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(MmaAsync, ValidatesCleanAtTileMultiplesAndNot) {
  for (const ir::SizeBindings& sz : {ir::SizeBindings{{"M", 130}, {"N", 70}, {"K", 48}},
                                     ir::SizeBindings{{"M", 33}, {"N", 16}, {"K", 64}},
                                     ir::SizeBindings{{"M", 1}, {"N", 1}, {"K", 16}},
                                     ir::SizeBindings{{"M", 2}, {"N", 3}, {"K", 5}}}) {
    SCOPED_TRACE(sizes_str(sz));
    const Plan pl = plan(sz);
    Traced r = run(sz);
    EXPECT_EQ(r.sanitized.report, "");
    EXPECT_EQ(r.mismatch, "");
    const std::string& cuda = r.kernel.source.source;
    const std::string kernel = cuda.substr(cuda.find("schedlab_kernel("));
    EXPECT_THAT(kernel, HasSubstr("sl_mma_m16n8k16<sl_bfloat16>("));
    const int64_t aw = width(sz.at("K")), bw = width(sz.at("N"));
    EXPECT_EQ(kernel.find("sl_cp_async<16, true>(") != std::string::npos, pl.async_a);
    if (pl.async_b) {
      EXPECT_THAT(kernel, HasSubstr("sl_cp_async<" + std::to_string(2 * bw) + ", " +
                                    (bw == 8 ? "true" : "false") + ">("));
    }
    EXPECT_EQ(aw == 8, pl.async_a);
    if (pl.stages > 0 && (pl.async_a || pl.async_b)) {
      // One commit per prologue tile and one per iteration, one wait for all
      // but the `stages - 1` newest groups.
      EXPECT_EQ(count(kernel, "sl_cp_async_commit();"), pl.stages) << kernel;
      EXPECT_EQ(count(kernel, "sl_cp_async_wait<" + std::to_string(pl.stages - 1) + ">();"), 1)
          << kernel;
    }
  }
}

TEST(MmaAsync, NvrtcCompilesForSm80AndSm90) {
  if (runtime::nvrtc_version() == "unknown") GTEST_SKIP() << "NVRTC does not answer";
  auto def = load("matmul_bf16");
  const ir::SizeBindings sz{{"M", 130}, {"N", 70}, {"K", 48}};
  Plan pl = plan(sz);
  frontend::apply_schedule_text(pl.script, "matmul_mma_async.sched", def, pl.params);
  runtime::PreparedKernel p = prepare_or_report(def, sz);
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string log, ptx;
    try {
      ptx = runtime::nvrtc_compile_all(p.source, arch, {}, &log, kernel_cache_dir()).ptx;
    } catch (const UserError& e) {
      ADD_FAILURE() << arch << ": NVRTC rejected the unit: " << e.what() << "\n" << log;
      continue;
    }
    EXPECT_THAT(ptx, HasSubstr("cp.async.cg.shared.global")) << arch;
    EXPECT_THAT(ptx, HasSubstr("cp.async.ca.shared.global")) << arch;
    EXPECT_THAT(ptx, HasSubstr("cp.async.wait_group 2")) << arch;
    EXPECT_THAT(ptx, HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32")) << arch;
  }
}

/// Sets every wait_group of the kernel to none (keeping the commits).
void drop_waits(kir::Kernel& k) {
  struct Drop : kir::IRMutator {
    void mutate_body(std::vector<kir::StmtP>& body) override {
      for (kir::StmtP& s : body) {
        if (auto* g = s->as<kir::AsyncGroup>(); g && g->wait >= 0) g->wait = -1;
        mutate(*s);
      }
    }
  } d;
  d.mutate(*k.body);
}

TEST(MmaAsync, PlantedMissingWaitGroupIsReported) {
  Traced r = run({{"M", 130}, {"N", 70}, {"K", 48}}, drop_waits);
  const std::string& unit = r.kernel.source.source;
  EXPECT_THAT(unit.substr(unit.find("schedlab_kernel(")),
              ::testing::Not(HasSubstr("sl_cp_async_wait<")));
  ASSERT_FALSE(r.sanitized.findings.empty()) << unit;
  // Each stage is read (by the mma tile, which reads the stage in place:
  // lowering's mma_operand_source) before its cp.async lands: a
  // finding of its own kind that names the missing wait, the read and the
  // copy.
  bool a = false, b = false;
  for (const auto& f : r.sanitized.findings) {
    if (f.kind != runtime::SanitizerFinding::Kind::PendingCopyRead) continue;
    a = a || f.tensor == "T10 (a_cache)";
    b = b || f.tensor == "T11 (b_cache)";
    EXPECT_THAT(f.message(), HasSubstr("a cp.async.wait_group of the issuing thread"));
    EXPECT_THAT(f.first.text, HasSubstr("sl_cp_async<"));
    // The tile's ldmatrix, or its element reads at a tile past M, N or K.
    EXPECT_THAT(f.second.text, ::testing::AnyOf(HasSubstr("sl_ldmatrix<"), HasSubstr("SL_LD(")));
  }
  EXPECT_TRUE(a && b) << r.sanitized.report;
}

}  // namespace
}  // namespace schedlab::lower::testing
