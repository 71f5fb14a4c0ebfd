// cp.async copies and circular buffering (issue 36), on the CPU backend
// against the reference: a sum of products over K whose two operand caches
// are 16-byte cp.async copies (bf16 x 8) into Shared tiles, circular-buffered
// with 2, 3 and 4 stages in the serial loop over K's tiles (and a 2-stage
// buffer of plain loads), validates traced under the sanitizer with no
// finding, at K a multiple of the tile and not (a partial tile's copies are
// zero fills), and one row of one tile; the CUDA has cp.async, commit_group
// and wait_group <prefetch>, and NVRTC compiles it for sm_80 and sm_90. A
// planted missing wait_group and a planted missing end-of-iteration barrier
// (the kernel IR edited after lowering, the test hook) are reported by the
// sanitizer. The refusals are tests/lower/soundness/cp_async_* and circular_*.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "lower_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"

namespace schedlab::lower::testing {
namespace {

using ::testing::HasSubstr;

const char* const kFusion = R"(fusion: dot_rows
inputs:
  a: {dtype: bf16, shape: [M, K], range: [-1, 1]}
  b: {dtype: bf16, shape: [M, K], range: [-1, 1]}
sizes: {M: 3, K: 48}
body: |
  c = sum(cast(a * b, f32), axis=1)
outputs: [c]
)";

/// a's and b's caches copied by `op` 8 elements (16 bytes) at a time by 4
/// threads per 32-element tile of K, one row per block, the tiles in a
/// serial loop; the product read by 8 threads, thread t the elements t, t +
/// 8, ... of the tile, which other threads copied (so the barriers matter).
/// The caches circular-buffered with `stages` (1: not).
std::string schedule(const std::string& op, int stages, const std::string& cache_op) {
  std::string s;
  for (const char* t : {"a", "b"})
    s += std::string(t) + "c = cache_after(" + t + ", " + op + ", cache_op=" + cache_op +
         ")\nset_memory_type(" + t + "c, Shared)\n";
  s += "split(c, 1, 8)\nsplit(c, 1, 4)\nparallelize(c, 0, BIDx)\nparallelize(c, 3, TIDx)\n"
       "propagate_transformation(c)\nparallelize_all_like(c)\n";
  for (const char* t : {"ac", "bc"})
    s += "parallelize(" + std::string(t) + ", 3, Serial)\nparallelize(" + t +
         ", 2, TIDx)\nparallelize(" + t + ", 3, Vectorize)\n";
  s += "inline_most()\n";
  if (stages > 1)
    s += "circular_buffer(ac, " + std::to_string(stages) + ")\ncircular_buffer(bc, " +
         std::to_string(stages) + ")\n";
  return s;
}

/// Lowers the scheduled fusion at M, K; `plant` may edit the kernel IR
/// before it is printed (the test hook); runs it traced on the CPU backend.
Traced run(const std::string& sched, int64_t m, int64_t k,
           const std::function<void(kir::Kernel&)>& plant = {}) {
  auto plain = frontend::parse_fusion_text(kFusion, "dot_rows.yaml");
  auto def = frontend::parse_fusion_text(kFusion, "dot_rows.yaml");
  frontend::apply_schedule_text(sched, "dot_rows.sched", def, {});
  return run_traced(def, plain, {{"M", m}, {"K", k}}, "dot_rows", 3, plant);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct StageCase {
  std::string op;  ///< CpAsync or Set
  int stages;
};

class CircularBuffer : public ::testing::TestWithParam<StageCase> {};

TEST_P(CircularBuffer, ValidatesCleanAtTileMultiplesAndNot) {
  const auto& [op, stages] = GetParam();
  const std::string sched = schedule(op, stages, "Unspecified");
  // 130 x 48 (K a multiple of the 32-element tile and of nothing more),
  // 7 x 200 (a partial last tile), 1 x 16 (one partial tile).
  for (auto [m, k] : {std::pair<int64_t, int64_t>{130, 48}, {7, 200}, {1, 16}, {2, 256}}) {
    SCOPED_TRACE("M=" + std::to_string(m) + ", K=" + std::to_string(k));
    Traced r = run(sched, m, k);
    EXPECT_EQ(r.sanitized.report, "");
    EXPECT_EQ(r.mismatch, "");
  }
  const std::string cuda = run(sched, 7, 200).kernel.source.source;
  const bool async = op == "CpAsync";
  EXPECT_EQ(cuda.find("sl_cp_async<16, true>(") != std::string::npos, async);
  EXPECT_EQ(cuda.find("schedlab tensor-core runtime") != std::string::npos, async);
  if (async) {
    // A commit per prologue tile and one per iteration; one wait, for all
    // but the `prefetch` newest groups.
    const std::string kernel = cuda.substr(cuda.find("schedlab_kernel("));
    EXPECT_EQ(count(kernel, "sl_cp_async_commit();"), stages) << kernel;
    EXPECT_EQ(count(kernel, "sl_cp_async_wait<" + std::to_string(stages - 1) + ">();"), 1)
        << kernel;
  }
  if (runtime::nvrtc_version() == "unknown") GTEST_SKIP() << "NVRTC does not answer";
  auto p = run(sched, 7, 200).kernel;
  for (const char* arch : {"sm_80", "sm_90"}) {
    std::string log;
    std::string ptx;
    try {
      ptx = runtime::nvrtc_compile_all(p.source, arch, {}, &log, kernel_cache_dir()).ptx;
    } catch (const UserError& e) {
      ADD_FAILURE() << arch << ": NVRTC rejected the unit: " << e.what() << "\n" << log;
      continue;
    }
    EXPECT_EQ(ptx.find("cp.async.cg.shared.global") != std::string::npos, async) << arch;
    EXPECT_EQ(ptx.find("cp.async.wait_group " + std::to_string(stages - 1)) != std::string::npos,
              async)
        << arch;
  }
}

INSTANTIATE_TEST_SUITE_P(Stages, CircularBuffer,
                         ::testing::Values(StageCase{"Set", 2}, StageCase{"CpAsync", 1},
                                           StageCase{"CpAsync", 2}, StageCase{"CpAsync", 3},
                                           StageCase{"CpAsync", 4}),
                         [](const auto& info) {
                           return info.param.op + "_" + std::to_string(info.param.stages);
                         });

// The cache policy picks cp.async's qualifier: .cg for 16 bytes unless
// AllLevels asks for .ca.
TEST(AsyncCopy, CacheOpPicksTheQualifier) {
  for (auto [cache, cg] : {std::pair<std::string, bool>{"Unspecified", true},
                           {"Global", true},
                           {"AllLevels", false}}) {
    SCOPED_TRACE(cache);
    Traced r = run(schedule("CpAsync", 3, cache), 7, 200);
    EXPECT_EQ(r.mismatch, "");
    EXPECT_THAT(r.kernel.source.source,
                HasSubstr(std::string("sl_cp_async<16, ") + (cg ? "true" : "false") + ">("));
    EXPECT_THAT(kir::print_kir(r.kernel.kernel), HasSubstr("(cp.async, zero fill unless"));
  }
}

/// Removes every statement of the kernel that `drop` selects (in every
/// statement list, loops and branches included).
class Drop : public kir::IRMutator {
 public:
  explicit Drop(std::function<bool(kir::Stmt&)> drop) : drop_(std::move(drop)) {}
  int dropped = 0;
  void mutate_body(std::vector<kir::StmtP>& body) override {
    std::vector<kir::StmtP> out;
    for (kir::StmtP& s : body) {
      if (drop_(*s)) {
        ++dropped;
        continue;
      }
      mutate(*s);
      out.push_back(std::move(s));
    }
    body = std::move(out);
  }

 private:
  std::function<bool(kir::Stmt&)> drop_;
};

// Without its wait_group, a stage is read before its copies land: the
// sanitizer reports the reads (of bytes no copy has written yet, or the
// copy's landing write against them).
TEST(AsyncCopy, PlantedMissingWaitGroupIsReported) {
  for (int stages : {1, 3}) {
    SCOPED_TRACE(std::to_string(stages) + " stages");
    int dropped = 0;
    Traced r = run(schedule("CpAsync", stages, "Unspecified"), 2, 256, [&](kir::Kernel& k) {
      Drop d([](kir::Stmt& s) {
        auto* g = s.as<kir::AsyncGroup>();
        if (g && g->wait >= 0) g->wait = -1;  // keep the commit
        return false;
      });
      d.mutate(*k.body);
      dropped = !kir::any_stmt(*k.body, [](const kir::Stmt& s) {
        const auto* g = s.as<kir::AsyncGroup>();
        return g && g->wait >= 0;
      });
    });
    EXPECT_TRUE(dropped);
    const std::string& unit = r.kernel.source.source;
    EXPECT_THAT(unit.substr(unit.find("schedlab_kernel(")),
                ::testing::Not(HasSubstr("sl_cp_async_wait<")));
    EXPECT_FALSE(r.sanitized.findings.empty()) << unit;
    EXPECT_THAT(r.sanitized.report, HasSubstr("(a_cache)")) << r.sanitized.report;
  }
}

// Without the barrier at the end of an iteration, iteration i + 1 stores the
// next tile into the stage other threads still read in iteration i: a race.
TEST(AsyncCopy, PlantedMissingEndOfIterationBarrierIsReported) {
  Traced r = run(schedule("Set", 2, "Unspecified"), 2, 256, [](kir::Kernel& k) {
    Drop d([](kir::Stmt& s) {
      auto* f = s.as<kir::For>();
      if (f && !f->body.empty() && f->body.back()->as<kir::Sync>()) f->body.pop_back();
      return false;
    });
    d.mutate(*k.body);
  });
  bool race = false;
  for (const auto& f : r.sanitized.findings)
    race = race || f.kind == runtime::SanitizerFinding::Kind::ThreadRace;
  EXPECT_TRUE(race) << r.sanitized.report << "\n" << r.kernel.source.source;
}

// The same with cp.async copies: iteration i + 1 issues the copy of tile
// i + 2 into the stage other threads still read in iteration i. The copy lands
// only at a later wait on the CPU, so the sanitizer traces its destination at
// issue: a stage-overwrite finding (not a race of the landed bytes).
TEST(AsyncCopy, PlantedMissingEndOfIterationBarrierWithCpAsyncIsAStageOverwrite) {
  Traced r = run(schedule("CpAsync", 2, "Unspecified"), 2, 256, [](kir::Kernel& k) {
    Drop d([](kir::Stmt& s) {
      auto* f = s.as<kir::For>();
      if (f && !f->body.empty() && f->body.back()->as<kir::Sync>()) f->body.pop_back();
      return false;
    });
    d.mutate(*k.body);
  });
  bool overwrite = false;
  for (const auto& f : r.sanitized.findings) {
    if (f.kind != runtime::SanitizerFinding::Kind::StageOverwrite) continue;
    overwrite = true;
    EXPECT_THAT(f.tensor, ::testing::AnyOf(HasSubstr("(a_cache)"), HasSubstr("(b_cache)")));
    EXPECT_THAT(f.second.text, HasSubstr("sl_cp_async<16, true>("));
    EXPECT_THAT(f.message(), HasSubstr("write to a stage still being read"));
    EXPECT_THAT(f.message(), HasSubstr("end-of-iteration barrier"));
  }
  EXPECT_TRUE(overwrite) << r.sanitized.report << "\n" << r.kernel.source.source;
  // With the barrier, the same kernel is clean (ValidatesCleanAtTileMultiplesAndNot).
}

}  // namespace
}  // namespace schedlab::lower::testing
