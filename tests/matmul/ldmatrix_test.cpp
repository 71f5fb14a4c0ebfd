// ldmatrix for the mma tile's Shared operands (core/lower/mma_tile.cpp):
// wherever an operand's Shared layout makes each 8-element row of the
// fragment 16 contiguous, 16-byte-aligned bytes, the tile reads A with
// ldmatrix.x4 and B with ldmatrix.x2 (.trans when B's n, not its k, is
// contiguous); a partial tile (past M, N or K) takes the element reads,
// which zero what is past the end. Validated on the CPU backend (the exact
// emulation of ldmatrix and mma.sync) against the reference at sizes that
// are and are not multiples of 16 x 8 x 16, sanitized, compiled by NVRTC.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "lower_test_util.h"
#include "schedlab/ir/arith.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/model/device.h"
#include "schedlab/model/profile.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"
#include "schedlab/sched/sched.h"

namespace schedlab::lower::testing {
namespace {

using ir::Fusion;
using ir::ParallelType;
using ir::TensorView;
using ::testing::HasSubstr;
using ::testing::Not;

/// How the operand tiles are laid out in Shared memory.
enum class Layout {
  Tile,     ///< by the tile's loops [lane, fragment, k16] (k contiguous for A and B)
  BByN,     ///< B as [m16, k16, n8]: n contiguous, 16-byte rows of k (ldmatrix .trans)
  BPadded,  ///< B as [m16, k16, n8 + 1 pad]: rows not 16-byte aligned (element reads)
  /// A as [32 TIDx, 64]: rows of 64 halves (m % 4, k16), four m rows each,
  /// so an ldmatrix matrix (m 0-7) meets each 16-byte chunk twice: 2-way
  /// bank conflicts.
  AChunks,
  AChunksSwizzled,  ///< the same, swizzle(A, 4, 16 bytes): no conflicts
};

/// mma_tile_test's schedule_tile ([.., Mo BIDy, No BIDx, rKo, lane TIDx,
/// fragment, k16], the operands staged in Shared memory once per K step),
/// with B laid out by `layout`. m, n, k: the sum's axes.
TensorView* schedule(Fusion& f, int m, int n, int k, Layout layout) {
  TensorView* mm = sched::fuse_mma(sched::get_reduction_tvs(f).at(0));
  const int b = mm->nloop() - 3;
  mm->reorder({{m, b}, {n, b + 1}, {k, b + 2}});  // [.., M, N, rK]
  mm->split(b, 16);
  mm->split(b + 2, 8);
  mm->split(b + 4, 16);  // [.., Mo, m16, No, n8, rKo, k16]
  mm->reorder({{b + 1, b + 3}, {b + 2, b + 1}, {b + 3, b + 4}, {b + 4, b + 2}});
  const auto* op = mm->definition()->as<ir::MmaOp>();
  TensorView* bt = op->b();
  std::vector<TensorView*> others;
  const bool a_chunks = layout == Layout::AChunks || layout == Layout::AChunksSwizzled;
  TensorView* at = op->a();
  if (a_chunks) {
    sched::propagate_transformation(mm);
    for (TensorView* tv : f.tensors())
      if (tv != at) others.push_back(tv);
  } else if (layout != Layout::Tile) {
    // B keeps [.., Mo, No, Ko, m16, n8, k16] and becomes [.., m16, 4, 32 TIDx]
    // over k16 x n8 (n innermost).
    sched::propagate_transformation(mm);
    for (TensorView* tv : f.tensors())
      if (tv != bt) others.push_back(tv);
  }
  sched::mma_tile(mm);  // [.., Mo, No, rKo, lane, frag, k16]
  mm->parallelize(b, ParallelType::BIDy);
  mm->parallelize(b + 1, ParallelType::BIDx);
  sched::propagate_transformation(mm, others);
  if (a_chunks) {
    // A: [.., m16, n8, k16] -> [.., n8, m4o, m4i * k16] -> [.., n8 * m4o (32 TIDx), 64].
    at->reorder({{b + 3, b + 4}, {b + 4, b + 3}});
    at->split(b + 4, 4);
    at->merge(b + 5, b + 6);
    at->merge(b + 3, b + 4);
    at->parallelize(b + 3, ParallelType::TIDx);
    sched::parallelize_all_like(mm, b + 2);
    sched::parallelize_all_like(mm, -1, others);
  } else if (layout != Layout::Tile) {
    bt->reorder({{b + 4, b + 5}, {b + 5, b + 4}});  // [.., m16, k16, n8]
    bt->merge(b + 4, b + 5);
    bt->split(b + 4, 32);  // [.., m16, 4, 32]
    bt->parallelize(b + 5, ParallelType::TIDx);
    sched::parallelize_all_like(mm, b + 2);
    sched::parallelize_all_like(mm, -1, others);
  } else {
    sched::parallelize_all_like(mm);
  }
  for (TensorView* operand : {op->a(), op->b()}) operand->set_memory_type(ir::MemoryType::Shared);
  if (layout == Layout::BPadded) sched::pad_shared(bt, 1);
  if (layout == Layout::AChunksSwizzled) sched::swizzle(at, 4, 16);
  sched::inline_most(f);
  for (TensorView* operand : {op->a(), op->b()}) sched::inline_at(operand, b + 3);
  return mm;
}

/// The sum's axes (m, n, k) of each standard fusion: matmul's sum is
/// [M, rK, N]; linear's [M, N, rK]; the batched one [B, M, rK, N].
struct Case {
  const char* fusion;
  int m, n, k;
};
constexpr Case kMatmul{"matmul_bf16", 0, 2, 1};
constexpr Case kLinear{"linear_bias_gelu_bf16", 0, 1, 2};
constexpr Case kBatched{"batched_matmul_bf16", 1, 3, 2};

std::vector<ir::SizeBindings> sizes(const Case& c) {
  std::vector<ir::SizeBindings> all = {{{"M", 16}, {"N", 8}, {"K", 16}},
                                       {{"M", 130}, {"N", 70}, {"K", 48}},
                                       {{"M", 2}, {"N", 3}, {"K", 5}},
                                       {{"M", 33}, {"N", 16}, {"K", 64}},
                                       {{"M", 1}, {"N", 1}, {"K", 16}}};
  if (std::string(c.fusion).starts_with("batched"))
    for (auto& s : all) s["B"] = 2;
  return all;
}

/// The CUDA of `c` scheduled with `layout` at its first size.
runtime::PreparedKernel prepared(const Case& c, Layout layout, frontend::FusionDefinition& def) {
  schedule(*def.fusion, c.m, c.n, c.k, layout);
  return prepare_or_report(def, sizes(c).front());
}

/// Validates `c` with `layout` at every size on the test backend, and the
/// same kernel traced under the sanitizer at two edge sizes.
void check(const Case& c, Layout layout) {
  auto def = load(c.fusion);
  auto plain = load(c.fusion);
  runtime::PreparedKernel p = prepared(c, layout, def);
  expect_nvrtc_accepts(p.source);
  expect_matches_at(def, plain, p, sizes(c),
                    [](const auto& pl, const auto& pk, auto& cc, const auto& sz) {
                      return run_and_compare(pl, pk, cc, sz);
                    });
  if (kCudaTestBackend) return;
  for (ir::SizeBindings sz : {ir::SizeBindings{{"M", 130}, {"N", 70}, {"K", 48}},
                              ir::SizeBindings{{"M", 16}, {"N", 8}, {"K", 32}}}) {
    if (std::string(c.fusion).starts_with("batched")) sz["B"] = 2;
    runtime::PreparedKernel at = prepare_or_report(def, sz);
    auto inputs = ref::make_inputs(*plain.fusion, sz, 5, plain.input_ranges);
    auto want = ref::evaluate(*plain.fusion, inputs, sz);
    auto run = runtime::execute_sanitized(cpu_backend(), at, inputs, sz, c.fusion);
    EXPECT_EQ(run.report, "") << sizes_str(sz);
    auto cmp = ref::compare(run.outputs.at(0), want.at(0),
                            ref::Tolerance::error_bound(plain.fusion->outputs()[0]->dtype()));
    EXPECT_TRUE(cmp.ok) << sizes_str(sz) << ": " << cmp.first_mismatch;
  }
}

using Ldmatrix = BackendTest;

TEST_F(Ldmatrix, TheTileLayoutReadsBothOperandsWithoutTrans) {
  auto def = load("matmul_bf16");
  const std::string cuda = prepared(kMatmul, Layout::Tile, def).source.source;
  EXPECT_THAT(cuda, HasSubstr("sl_ldmatrix<false>(sl_ma, SL_VLD("));
  EXPECT_THAT(cuda, HasSubstr("sl_ldmatrix<false>(sl_mb, "));
  EXPECT_THAT(cuda, Not(HasSubstr("sl_ldmatrix<true>")));
  check(kMatmul, Layout::Tile);
}
TEST_F(Ldmatrix, ABByNReadsBWithTrans) {
  auto def = load("matmul_bf16");
  const std::string cuda = prepared(kMatmul, Layout::BByN, def).source.source;
  EXPECT_THAT(cuda, HasSubstr("sl_ldmatrix<false>(sl_ma, SL_VLD("));
  EXPECT_THAT(cuda, HasSubstr("sl_ldmatrix<true>(sl_mb, "));
  check(kMatmul, Layout::BByN);
}
TEST_F(Ldmatrix, UnalignedRowsKeepTheElementReads) {
  auto def = load("matmul_bf16");
  runtime::PreparedKernel p = prepared(kMatmul, Layout::BPadded, def);
  EXPECT_THAT(p.source.source, HasSubstr("sl_ldmatrix<false>(sl_ma, SL_VLD("));
  EXPECT_THAT(p.source.source, Not(HasSubstr("(sl_mb, ")));
  EXPECT_THAT(p.source.source, HasSubstr("const uint32_t sl_mb[2] = {sl_pack_b16"));
  // The kernel IR says why.
  EXPECT_THAT(kir::print_kir(p.kernel), HasSubstr("b: element reads (along k: "));
  EXPECT_THAT(kir::print_kir(p.kernel), HasSubstr("a: ldmatrix.x4 row "));
  check(kMatmul, Layout::BPadded);
}
TEST_F(Ldmatrix, LinearBiasGelu) {
  check(kLinear, Layout::Tile);
  check(kLinear, Layout::BByN);
}
TEST_F(Ldmatrix, Batched) {
  check(kBatched, Layout::Tile);
}
TEST_F(Ldmatrix, F16) {
  check({"matmul_f16", 0, 2, 1}, Layout::BByN);
}

TEST_F(Ldmatrix, ChunkSwizzledA) {
  for (Layout layout : {Layout::AChunks, Layout::AChunksSwizzled}) {
    auto def = load("matmul_bf16");
    const std::string cuda = prepared(kMatmul, layout, def).source.source;
    EXPECT_THAT(cuda, HasSubstr("sl_ldmatrix<false>(sl_ma, SL_VLD("));
    if (layout == Layout::AChunksSwizzled) {
      EXPECT_THAT(cuda, HasSubstr(" ^ "));
    }
    check(kMatmul, layout);
    check(kLinear, layout);
  }
}

TEST(LdmatrixSwizzle, ChunkSwizzleRefusals) {
  auto def = load("matmul_bf16");
  schedule(*def.fusion, 0, 2, 1, Layout::AChunks);
  TensorView* at = nullptr;
  for (TensorView* tv : def.fusion->tensors())
    if (tv->memory_type() == ir::MemoryType::Shared && at == nullptr) at = tv;
  ASSERT_NE(at, nullptr);
  EXPECT_THAT(test_support::user_error_of([&] { sched::swizzle(at, 4, 8); }),
              HasSubstr("must be 4 bytes (a bank word) or 16 bytes (an ldmatrix row chunk), got 8"));
  EXPECT_THAT(test_support::user_error_of([&] { sched::swizzle(at, 16, 16); }),
              HasSubstr("must be a power of two in [1, 8], got 16 (16-byte units"));
  // The tile layout's rows hold 16 halves: two chunks, so width 4 cannot
  // stay within a row.
  auto tile = load("matmul_bf16");
  TensorView* mm = schedule(*tile.fusion, 0, 2, 1, Layout::Tile);
  sched::swizzle(mm->definition()->as<ir::MmaOp>()->a(), 4, 16);
  EXPECT_THAT(test_support::user_error_of(
                  [&] { runtime::prepare(*tile.fusion, {{"M", 16}, {"N", 8}, {"K", 16}}); }),
              HasSubstr("expected a constant multiple of 32 (width 4 x 8 elements per 16-byte chunk)"));
}

/// The ldmatrix.x4 site of A in the profile of `layout` at 64x8x16 (four
/// blocks): its conflict degree as the model counts it.
double a_ldmatrix_conflict_ways(Layout layout, int64_t* wavefronts) {
  auto def = load("matmul_bf16");
  const ir::SizeBindings sz = {{"M", 64}, {"N", 8}, {"K", 16}};
  schedule(*def.fusion, 0, 2, 1, layout);
  runtime::PreparedKernel p = prepare_or_report(def, sz);
  static const model::DeviceModel h200 =
      model::load_device("h200", {SCHEDLAB_SOURCE_DIR "/configs/devices"});
  model::ProfileOptions o;
  o.cache_dir = kernel_cache_dir();
  model::KernelProfile prof =
      model::profile_kernel(cpu_backend(), p, *def.fusion, sz, 0, h200, o, "matmul_bf16");
  // The site of the ldmatrix's SL_VLD: the one whose line holds sl_ma's ldmatrix.
  std::vector<std::string> lines;
  std::string line;
  for (std::istringstream in(p.source.source); std::getline(in, line);) lines.push_back(line);
  for (const model::SharedSiteTraffic& s : prof.traffic.shared)
    if (!s.is_write && s.line >= 1 && static_cast<size_t>(s.line) <= lines.size() &&
        lines[static_cast<size_t>(s.line - 1)].find("sl_ldmatrix<false>(sl_ma") != std::string::npos) {
      *wavefronts = s.wavefronts;
      EXPECT_EQ(s.requests, 4);  // one per block
      return s.conflict_ways();
    }
  ADD_FAILURE() << "no traced ldmatrix site of A in the profile";
  return 0;
}

TEST(LdmatrixModel, ASwizzleRemovesTheBankConflictsOfLdmatrix) {
  int64_t plain = 0, swizzled = 0;
  // Four matrices per ldmatrix.x4, 4 blocks: 16 wavefronts without conflicts.
  EXPECT_DOUBLE_EQ(a_ldmatrix_conflict_ways(Layout::AChunks, &plain), 2.0);
  EXPECT_EQ(plain, 32);
  EXPECT_DOUBLE_EQ(a_ldmatrix_conflict_ways(Layout::AChunksSwizzled, &swizzled), 1.0);
  EXPECT_EQ(swizzled, 16);
  // The tile's own layout puts A's rows m 512 bytes apart (the lane axis
  // holds 64 halves): the eight rows of a matrix share four banks, 8-way.
  int64_t tile = 0;
  EXPECT_DOUBLE_EQ(a_ldmatrix_conflict_ways(Layout::Tile, &tile), 8.0);
  EXPECT_EQ(tile, 128);
}

TEST(LdmatrixSources, CompileForSm80AndSm90) {
  for (Layout layout : {Layout::Tile, Layout::BByN, Layout::AChunksSwizzled}) {
    auto def = load("matmul_bf16");
    runtime::PreparedKernel p = prepared(kMatmul, layout, def);
    for (const char* arch : {"sm_80", "sm_90"}) {
      std::string log;
      EXPECT_NO_THROW(runtime::nvrtc_compile(p.source, arch, &log, kernel_cache_dir())) << arch;
    }
  }
}

}  // namespace
}  // namespace schedlab::lower::testing
