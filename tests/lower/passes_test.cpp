// Before/expected tests of the lowering passes (core/lower): each builds a
// small scheduled fusion, runs one pass (or lower() where the pass needs the
// others), and compares what matters of the output with what is expected.
// The negative tests check lowering's user errors. On failure the guard
// prints the input (the scheduled fusion) and, when there is one, the output
// kernel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "allocation.h"
#include "indexing.h"
#include "loop_tree.h"
#include "lower_test_util.h"
#include "schedlab/lower/lower.h"

namespace schedlab::lower::testing {
namespace {

using ir::Fusion;
using ir::MemoryType;
using ir::ParallelType;
using ir::TensorView;
using ::testing::AllOf;
using ::testing::HasSubstr;

/// A fusion from YAML text (one op per body line, so every tensor is named).
frontend::FusionDefinition parse(const std::string& text) {
  return frontend::parse_fusion_text(text, "passes_test.yaml");
}

/// Prints the input and the output of the pass under test if the test has
/// failed (or is unwinding) when the guard goes out of scope.
class PrintOnFailure {
 public:
  explicit PrintOnFailure(const Fusion& f) : f_(f) {}
  PrintOnFailure(const PrintOnFailure&) = delete;
  PrintOnFailure& operator=(const PrintOnFailure&) = delete;
  ~PrintOnFailure() {
    if (!::testing::Test::HasFailure() && std::uncaught_exceptions() == 0) return;
    std::cout << "--- input ---\n" << sched::print_scheduled_fusion(f_);
    if (kernel_) std::cout << "--- output ---\n" << codegen::print_kernel(*kernel_);
    std::cout << std::flush;
  }
  /// The kernel to print as the output.
  void set_output(const kir::Kernel& k) { kernel_ = &k; }

 private:
  const Fusion& f_;
  const kir::Kernel* kernel_ = nullptr;
};

/// A tensor's name for tree dumps: its user name, else T<n>.
std::string name_of(const TensorView* t) {
  return t->user_name().empty() ? t->str() : t->user_name();
}

/// The loop tree as indented text: "for <owner>[<pos>] <extent>" for a loop
/// ('r' marks a reduction loop), "init <t>" and "<t> = <op>" for the leaves.
void dump(const LoopNode& n, int depth, std::string& out) {
  for (const LoopItem& it : n.items) {
    out += std::string(static_cast<size_t>(depth) * 2, ' ');
    switch (it.kind) {
      case LoopItem::Kind::Loop: {
        const ir::IterDomain* id = it.loop->key.id();
        out += "for " + name_of(it.loop->key.owner) + "[" + std::to_string(it.loop->key.pos) +
               "] " + (id->is_reduction() ? "r" : "") + "{" + id->extent().str() + "}\n";
        dump(*it.loop, depth + 1, out);
        break;
      }
      case LoopItem::Kind::Init:
        out += "init " + name_of(it.expr->out()) + "\n";
        break;
      case LoopItem::Kind::Expr:
        out += name_of(it.expr->out()) + " = " + it.expr->op_name() + "\n";
        break;
    }
  }
}

std::string loop_tree(const Fusion& f) {
  std::string out;
  dump(*build_loop_tree(f), 0, out);
  return out;
}

// ---------------------------------------------------------------------------
// Loop tree.

TEST(LoopTree, ReductionInitPrecedesItsLoop) {
  auto def = load("row_sum");
  PrintOnFailure guard(*def.fusion);
  EXPECT_EQ(loop_tree(*def.fusion),
            "for y[0] {N}\n"
            "  init y\n"
            "  for y[1] r{K}\n"
            "    y = reduction\n");
}

TEST(LoopTree, OuterReductionInitIsHoistedAboveTheReductionLoop) {
  // col_sum reduces axis 0: the accumulator of every column is initialised
  // (in its own loop over K) before the loop over N that accumulates.
  auto def = load("col_sum");
  PrintOnFailure guard(*def.fusion);
  EXPECT_EQ(loop_tree(*def.fusion),
            "init y\n"
            "for y[0] r{N}\n"
            "  for y[1] {K}\n"
            "    y = reduction\n");
}

TEST(LoopTree, ReductionIsInitialisedOnceBeforeItsFirstReductionLoop) {
  // nvFuser's rfactor order [BIDx, serial R, TIDx, R4]: the partial's
  // reduction loops enclose its TIDx loop. Its accumulator is initialised
  // once, before the serial reduction loop; an initialisation before the
  // inner reduction loop would reset it on every serial iteration.
  auto def = load("row_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  y->split(1, 4)->split(1, 2);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  TensorView* p = sched::rfactor(y, {1, 3});
  sched::inline_most(f);
  std::string pn = name_of(p);
  EXPECT_EQ(loop_tree(f),
            "for y[0] {N}\n"
            "  init " + pn + "\n"
            "  for " + pn + "[1] r{ceilDiv(ceilDiv(K, 4), 2)}\n"
            "    for " + pn + "[2] {2}\n"
            "      for " + pn + "[3] r{4}\n"
            "        " + pn + " = reduction\n"
            "  init y\n"
            "  for y[1] r{2}\n"
            "    y = reduction\n");
}

TEST(LoopTree, InlinedReductionSharesTheRowLoop) {
  // softmax inlined most at rows: both reductions run inside the row loop,
  // each initialised just before its own reduction loop, and every reader
  // after its writer.
  auto def = load("softmax");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  sched::propagate_transformation(y);
  sched::inline_most(f);
  // e feeds both the sum and the division, whose column loops differ: it
  // keeps a column loop of its own, in which the max's broadcast and the
  // subtraction are inlined.
  EXPECT_EQ(loop_tree(f),
            "for y[0] {N}\n"
            "  init T1\n"
            "  for T1[1] r{K}\n"
            "    T1 = reduction\n"
            "  for e[1] {K}\n"
            "    m = broadcast\n"
            "    T3 = sub\n"
            "    e = exp\n"
            "  init T5\n"
            "  for T5[1] r{K}\n"
            "    T5 = reduction\n"
            "  for y[1] {K}\n"
            "    s = broadcast\n"
            "    y = div\n");
}

constexpr const char* kTwoChains = R"(
fusion: two_chains
inputs:
  x: {dtype: f32, shape: [N, K]}
  z: {dtype: f32, shape: [N, K]}
body: |
  a = exp(x)
  b = exp(z)
  c = a + b
outputs: [c]
)";

TEST(LoopTree, WriterPrecedesReaderAcrossSiblingNests) {
  // a is inlined into c's row loop and b is not. The row loop is created by
  // a (the first expression), before b's nest, but c in it reads b: the
  // sibling order must put b's nest first.
  auto def = parse(kTwoChains);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  sched::inline_at(named(f, "a"), 1);
  EXPECT_EQ(loop_tree(f),
            "for b[0] {N}\n"
            "  for b[1] {K}\n"
            "    b = exp\n"
            "for c[0] {N}\n"
            "  for a[1] {K}\n"
            "    a = exp\n"
            "  for c[1] {K}\n"
            "    c = add\n");
}

constexpr const char* kFork = R"(
fusion: fork
inputs:
  x: {dtype: f32, shape: [N, K]}
body: |
  p = exp(x)
  c1 = p + 1
  c2 = p * 2
outputs: [c1, c2]
)";

TEST(LoopTree, LoopOwnerOfConsumersInDifferentNestsIsAnError) {
  // p's two consumers run their row loops in separate nests; p inlined at 1
  // (forced past inline_at's check) has no single loop to live in.
  auto def = parse(kFork);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* p = named(f, "p");
  EXPECT_EQ(loop_owner(p, 1).owner, p);  // its own loop past the position
  p->set_compute_at_pos(1);
  EXPECT_THAT(user_error_of([&] { loop_owner(p, 0); }),
              AllOf(HasSubstr("lowering: T1 (p) is inlined at position 1"),
                    HasSubstr("its consumers run loop 0 in different loop nests")));
  // lower() finds it first in its admission check (the bindings of shared
  // loops), with both consumers named.
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              HasSubstr("its consumers T2 (c1) and T3 (c2) run loop 0 in different loop nests"));
}

TEST(LoopTree, LoopOwnerFollowsTheConsumerChain) {
  // q fully inlined into r, p inlined into q at the row: p's row loop is
  // r's (through q), its column loop its own.
  auto def = parse(R"(
fusion: chain
inputs:
  x: {dtype: f32, shape: [N, K]}
body: |
  p = exp(x)
  q = p + 1
  r = q * 2
outputs: [r]
)");
  Fusion& g = *def.fusion;
  PrintOnFailure guard(g);
  sched::inline_at(named(g, "q"), 2);
  sched::inline_at(named(g, "p"), 1);
  LoopKey k0 = loop_owner(named(g, "p"), 0), k1 = loop_owner(named(g, "p"), 1);
  EXPECT_EQ(k0.owner, named(g, "r"));
  EXPECT_EQ(k0.pos, 0);
  EXPECT_EQ(k1.owner, named(g, "p"));
  EXPECT_EQ(k1.pos, 1);
  EXPECT_EQ(loop_tree(g),
            "for r[0] {N}\n"
            "  for p[1] {K}\n"
            "    p = exp\n"
            "  for r[1] {K}\n"
            "    q = add\n"
            "    r = mul\n");
}

// ---------------------------------------------------------------------------
// Allocation.

constexpr const char* kExpScale = R"(
fusion: exp_scale
inputs:
  x: {dtype: f32, shape: [N, K]}
body: |
  t = exp(x)
  y = t * 2
outputs: [y]
)";

/// y [N, K] -> [N, ceilDiv(K, 32), 4, 8] bound BIDx, -, TIDx, -; t scheduled
/// alike and inlined at `pos`.
void tile_exp_scale(Fusion& f, int pos) {
  TensorView* y = named(f, "y");
  y->split(1, 8)->split(1, 4);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(2, ParallelType::TIDx);
  sched::propagate_transformation(y);
  sched::parallelize_all_like(y);
  sched::inline_at(named(f, "t"), pos);
}

TEST(Allocation, LocalBufferSpansItsOwnSerialLoops) {
  // t at position 2 keeps loops 2 (TIDx: one thread each, no storage) and
  // 3 (8, serial): 8 registers.
  auto def = parse(kExpScale);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  tile_exp_scale(f, 2);
  TensorView* t = named(f, "t");
  using Axes = std::vector<std::pair<int, int64_t>>;
  EXPECT_EQ(Indexer::allocation_axes(t), (Axes{{3, 8}}));
  kir::Kernel k;
  auto buffers = allocate_buffers(f, k);
  const kir::Buffer* b = buffers.at(t);
  EXPECT_FALSE(b->is_param);
  EXPECT_EQ(b->memory, MemoryType::Local);
  EXPECT_EQ(b->size, 8);
  EXPECT_EQ(k.shared_bytes, 0);
  ASSERT_EQ(k.params.size(), 2u);  // x, y: no workspace
}

TEST(Allocation, SharedBufferSpansThreadLoopsToo) {
  // The same t in shared memory is one buffer per block: it spans the TIDx
  // loop (4) and the serial one (8), but not the BIDx one.
  auto def = parse(kExpScale);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* t = named(f, "t");
  sched::set_memory_type(t, MemoryType::Shared);
  tile_exp_scale(f, 2);
  using Axes = std::vector<std::pair<int, int64_t>>;
  EXPECT_EQ(Indexer::allocation_axes(t), (Axes{{2, 4}, {3, 8}}));
  kir::Kernel k;
  auto buffers = allocate_buffers(f, k);
  const kir::Buffer* b = buffers.at(t);
  EXPECT_EQ(b->memory, MemoryType::Shared);
  EXPECT_EQ(b->size, 32);
  EXPECT_EQ(b->shared_offset, 0);
  EXPECT_EQ(k.shared_bytes, 32 * 4);
}

TEST(Allocation, SharedBufferOverSymbolicExtentIsSizedAtLaunch) {
  // At position 1 the Shared t keeps loop 1, of extent ceilDiv(K, 32): its
  // buffer of ceilDiv(K, 32) * 4 * 8 floats is placed in dynamic shared
  // memory at launch (no block reduction: at byte 0).
  auto def = parse(kExpScale);
  auto plain = parse(kExpScale);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* t = named(f, "t");
  sched::set_memory_type(t, MemoryType::Shared);
  tile_exp_scale(f, 1);
  using Axes = std::vector<std::pair<int, int64_t>>;
  EXPECT_EQ(Indexer::allocation_axes(t), (Axes{{1, -1}, {2, 4}, {3, 8}}));
  kir::Kernel k = lower::lower(f);
  ASSERT_EQ(k.dynamic_shared.size(), 1u);
  EXPECT_EQ(k.dynamic_shared[0]->tv, t);
  EXPECT_EQ(k.dynamic_shared[0]->size, -1);
  EXPECT_EQ(runtime::launch_dims(k, {{"N", 3}, {"K", 100}}).shared_bytes, 4u * 32 * 4);
  EXPECT_THAT(codegen::print_kernel(k), HasSubstr("*>(sl_smem + 0);  // sized at launch"));
  for (int64_t kk : {1, 31, 100, 1000}) {
    ir::SizeBindings sizes{{"N", 3}, {"K", kk}};
    runtime::PreparedKernel p = prepare_or_report(def, sizes);
    auto compiled = cpu_backend().compile(p.source);
    EXPECT_EQ(run_and_compare(plain, p, *compiled, sizes), "") << "K=" << kk;
  }
}

TEST(Allocation, SymbolicLocalBufferBecomesAGlobalWorkspace) {
  // Unscheduled, t would need N * K registers: it gets a workspace parameter
  // after the inputs and outputs. Inlined at the row it still spans K.
  // Inlined fully, it is one register.
  for (int pos : {0, 1, 2}) {
    SCOPED_TRACE("t inlined at " + std::to_string(pos));
    auto def = parse(kExpScale);
    Fusion& f = *def.fusion;
    PrintOnFailure guard(f);
    TensorView* t = named(f, "t");
    if (pos > 0) sched::inline_at(t, pos);
    kir::Kernel k;
    auto buffers = allocate_buffers(f, k);
    const kir::Buffer* b = buffers.at(t);
    if (pos < 2) {
      ASSERT_EQ(k.params.size(), 3u);
      EXPECT_EQ(k.params[0].source, kir::Param::Source::Input);
      EXPECT_EQ(k.params[1].source, kir::Param::Source::Output);
      EXPECT_EQ(k.params[2].source, kir::Param::Source::Workspace);
      EXPECT_EQ(k.params[2].tv, t);
      EXPECT_TRUE(b->is_param);
      EXPECT_EQ(b->rank, 2);
    } else {
      EXPECT_EQ(k.params.size(), 2u);
      EXPECT_FALSE(b->is_param);
      EXPECT_EQ(b->size, 1);
    }
    // Named sizes are read from the first input that has them.
    ASSERT_EQ(k.size_sources.count("K"), 1u);
    EXPECT_EQ(k.size_sources.at("K").first->tv, named(f, "x"));
    EXPECT_EQ(k.size_sources.at("K").second, 1);
  }
}

// ---------------------------------------------------------------------------
// Barriers.

constexpr const char* kSmemTranspose = R"(
fusion: smem_transpose
inputs:
  x: {dtype: f32, shape: [N, 32, 32]}
body: |
  y = permute(x, [0, 2, 1])
outputs: [y]
)";

/// x -> xs (Shared cache) -> y = permute(xs). y binds its axis 2 to TIDx,
/// xs its own axis 2: a thread reads what another thread wrote. xs is
/// inlined at the batch loop, bound to BIDx or serial.
struct SmemTranspose {
  frontend::FusionDefinition def = parse(kSmemTranspose);
  TensorView* xs = nullptr;
  explicit SmemTranspose(bool batch_on_bidx) {
    Fusion& f = *def.fusion;
    TensorView* y = named(f, "y");
    xs = sched::cache_after(named(f, "x"));
    sched::set_memory_type(xs, MemoryType::Shared);
    if (batch_on_bidx) y->parallelize(0, ParallelType::BIDx);
    y->parallelize(2, ParallelType::TIDx);
    if (batch_on_bidx) xs->parallelize(0, ParallelType::BIDx);
    xs->parallelize(2, ParallelType::TIDx);
    sched::inline_at(xs, 1);
  }
};

TEST(Barriers, SharedWriteThenReadByAnotherThreadMappingGetsSyncthreads) {
  SmemTranspose s(/*batch_on_bidx=*/true);
  const Fusion& f = *s.def.fusion;
  PrintOnFailure guard(f);
  kir::Kernel k = lower::lower(f);
  guard.set_output(k);
  expect_nvrtc_accepts(source_of(k));
  EXPECT_TRUE(k.has_barrier);
  EXPECT_EQ(k.shared_bytes, 32 * 32 * 4);
  std::string text = codegen::print_kernel(k);
  std::string xs = s.xs->str();
  size_t write = text.find(", " + xs + ", ");  // SL_ST(site, T2, index, value)
  size_t sync = text.find("SL_SYNC(");
  size_t read = text.find(", " + xs + ", ", sync == std::string::npos ? 0 : sync);  // SL_LD
  ASSERT_NE(write, std::string::npos);
  ASSERT_NE(sync, std::string::npos);
  ASSERT_NE(read, std::string::npos);
  EXPECT_LT(write, sync);
  EXPECT_LT(sync, read);
  // One barrier: nothing is written after the read.
  EXPECT_EQ(text.find("SL_SYNC(", sync + 1), std::string::npos);

  // And the kernel is right on the CPU backend, whose threads are fibers.
  auto plain = parse(kSmemTranspose);
  // Size-generic, as lower(f) above.
  runtime::PreparedKernel p = runtime::prepare(f, {{"N", 3}}, {}, runtime::KernelOptions{true});
  ASSERT_EQ(codegen::print_kernel(p.kernel), text);
  expect_nvrtc_accepts(p.source);
  auto compiled = cpu_backend().compile(p.source);
  EXPECT_EQ(run_and_compare(plain, p, *compiled, {{"N", 3}}), "");
}

TEST(Barriers, LoopThatWritesAndReadsSharedEndsWithSyncthreads) {
  // With the batch loop serial, the next iteration's writes must wait for
  // this iteration's reads: a second barrier closes the loop body.
  SmemTranspose s(/*batch_on_bidx=*/false);
  const Fusion& f = *s.def.fusion;
  PrintOnFailure guard(f);
  kir::Kernel k = lower::lower(f);
  guard.set_output(k);
  expect_nvrtc_accepts(source_of(k));
  ASSERT_TRUE(k.has_barrier);
  // The body: Allocate, then the batch loop.
  const kir::For* loop = nullptr;
  for (const auto& st : k.body->body)
    if (const auto* f = st->as<kir::For>()) loop = f;
  ASSERT_NE(loop, nullptr);
  std::vector<kir::Stmt::Kind> kinds;
  for (const auto& st : loop->body) kinds.push_back(st->kind);
  using K = kir::Stmt::Kind;
  EXPECT_EQ(kinds, (std::vector<K>{K::For, K::Sync, K::For, K::Sync}));

  auto plain = parse(kSmemTranspose);
  runtime::PreparedKernel p = runtime::prepare(f, {{"N", 2}});
  expect_nvrtc_accepts(p.source);
  auto compiled = cpu_backend().compile(p.source);
  EXPECT_EQ(run_and_compare(plain, p, *compiled, {{"N", 2}}), "");
}

TEST(Barriers, NoSharedMemoryNoBarrier) {
  auto def = parse(kExpScale);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  tile_exp_scale(f, 4);
  kir::Kernel k = lower::lower(f);
  guard.set_output(k);
  expect_nvrtc_accepts(source_of(k));
  EXPECT_FALSE(k.has_barrier);
  EXPECT_THAT(codegen::print_kernel(k), ::testing::Not(HasSubstr("SL_SYNC")));
}

// ---------------------------------------------------------------------------
// Generated statements: predicates and launch extents.

TEST(Generate, UnevenSplitIsPredicatedAndBoundLoopsAreRecorded) {
  auto def = parse(kExpScale);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  tile_exp_scale(f, 4);
  kir::Kernel k = lower::lower(f);
  guard.set_output(k);
  expect_nvrtc_accepts(source_of(k));
  std::string text = codegen::print_kernel(k);
  // K is split by 8 then 4: the rebuilt column index is checked against K.
  EXPECT_THAT(text, HasSubstr("< T0.size[1])"));
  ASSERT_EQ(k.launch_extents.count(ParallelType::BIDx), 1u);
  ASSERT_EQ(k.launch_extents.count(ParallelType::TIDx), 1u);
  EXPECT_EQ(k.launch_extents.at(ParallelType::BIDx).front().str(), "N");
  EXPECT_EQ(k.launch_extents.at(ParallelType::TIDx).front().str(), "4");
  auto dims = runtime::launch_dims(k, {{"N", 5}, {"K", 70}});
  EXPECT_EQ(dims.grid[0], 5);
  EXPECT_EQ(dims.block[0], 4);
}

TEST(Generate, RfactorPartialsAreAllInitialised) {
  // row_sum's K split by 8 and rfactored: T2 accumulates 8 partials per row
  // over ceilDiv(K, 8), y sums them. For K < 8 some partials receive no
  // element, but y still reads all 8: each must be initialised, so the
  // initialisation is not predicated by the split of K (the accumulation is).
  auto def = load("row_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  y->split(1, 8);
  TensorView* partials = sched::rfactor(y, {1});
  sched::inline_most(f);
  kir::Kernel k = lower::lower(f);
  guard.set_output(k);
  expect_nvrtc_accepts(source_of(k));
  std::string text = codegen::print_kernel(k);
  std::string p = partials->str();
  EXPECT_THAT(text, ::testing::ContainsRegex("for \\(sl_index_t (j[0-9]+) = 0; j[0-9]+ < 8; "
                                             "\\+\\+j[0-9]+\\) \\{\n +SL_ST\\([0-9]+, " +
                                             p + ", j[0-9]+, 0.0f\\);"));
  EXPECT_THAT(text, ::testing::ContainsRegex("< T0.size\\[1\\]\\)\\) \\{\n          SL_ST\\([0-9]+, " +
                                             p + ", "));

  auto plain = load("row_sum");
  // One size-generic kernel, run at every K.
  runtime::PreparedKernel prepared =
      runtime::prepare(f, {{"N", 2}, {"K", 3}}, {}, runtime::KernelOptions{true});
  expect_nvrtc_accepts(prepared.source);
  auto compiled = cpu_backend().compile(prepared.source);
  for (int64_t kk : {1, 3, 8, 17}) {
    ir::SizeBindings sizes{{"N", 2}, {"K", kk}};
    EXPECT_EQ(run_and_compare(plain, prepared, *compiled, sizes), "") << "K=" << kk;
  }
}

// ---------------------------------------------------------------------------
// Lowering's user errors.

TEST(Lowerable, ReductionAxisBoundToThreadsIsABlockReduction) {
  // Once refused; now a block reduction (block_reduction_test.cpp runs them).
  auto def = load("row_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  named(f, "y")->parallelize(1, ParallelType::TIDx);
  kir::Kernel k = lower::lower(f);
  guard.set_output(k);
  EXPECT_TRUE(k.has_barrier);
  EXPECT_THAT(codegen::print_kernel(k),
              ::testing::ContainsRegex(
                  "sl_block_reduce<true, false, false, [0-9]+, [0-9]+, [0-9]+, float>\\("));
}

TEST(Lowerable, ReductionAxisBoundToBlocksIsAGridReduction) {
  // Once refused; now a grid reduction (grid_reduction_test.cpp runs them).
  auto def = load("col_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  // [rN, K] bound BIDx, TIDx: a thread per column, a block per row.
  named(f, "y")->parallelize(0, ParallelType::BIDx);
  named(f, "y")->parallelize(1, ParallelType::TIDx);
  kir::Kernel k = lower::lower(f);
  guard.set_output(k);
  EXPECT_FALSE(k.has_barrier);
  EXPECT_THAT(codegen::print_kernel(k), HasSubstr("sl_grid_reduce<float>("));
  ASSERT_EQ(k.params.size(), 4u);
  EXPECT_EQ(k.params[2].source, kir::Param::Source::GridWorkspace);
  EXPECT_FALSE(k.params[2].semaphore);
  EXPECT_TRUE(k.params[3].semaphore);
  EXPECT_EQ(k.params[3].buffer->dtype, ir::DataType::I32);
}

TEST(Lowerable, ReductionAxisBoundToBIDzIsNotSupported) {
  auto def = load("col_sum");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  named(f, "y")->parallelize(0, ParallelType::BIDz);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }), HasSubstr("is a Reduction bound to BIDz"));
}

TEST(Lowerable, VectorizedAxisReorderedAwayFromInnermostIsAnError) {
  // parallelize(Vectorize) checked the axis innermost; the reorder after it
  // moves it out, which only lowering can see.
  auto def = load("add");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* c = sched::cache_after(named(f, "x"));
  c->split(1, 4)->parallelize(2, ir::LoopTransform::Vectorize);
  c->reorder({{2, 1}});
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              HasSubstr("lowering: " + c->describe() + " loop axis 1 (" + c->axis(1)->str() +
                        ") is vectorized but is not the innermost loop axis (2), found " +
                        c->axis(2)->str() + " there; expected the vectorized axis innermost"));
}

TEST(Lowerable, LdMatrixLoadIsNotSupportedYet) {
  auto def = load("gelu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  sched::cache_after(named(f, "x"), ir::LoadStoreOpType::LdMatrix);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              HasSubstr("LdMatrix load; only Set and CpAsync are supported yet"));
}

TEST(Lowerable, NotInlinedBroadcastInRegistersIsAnError) {
  // bias_relu flattened: the broadcast of b [K] -> [1, K] merges to K, not
  // N * K. Kept in its own loop nest in registers, the thread computing
  // column k would hold it, while the thread at (n, k) reads it.
  auto def = load("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  TensorView* add = y->definition()->inputs()[0]->as<TensorView>();
  TensorView* bcast = add->definition()->inputs()[1]->as<TensorView>();
  y->merge(0)->split(0, 128);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  sched::propagate_transformation(y);
  sched::parallelize_all_like(y);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              AllOf(HasSubstr("lowering: T3 reads elements of Local T2 computed by other blocks: "
                              "its axis 0"),
                    HasSubstr("is bound to BIDx but no axis of the consumer bound to BIDx iterates "
                              "exactly the same elements"),
                    HasSubstr("expected it inlined (inline_most)")));
  // Inlined, it is computed where it is read.
  sched::inline_most(f, {bcast});
  EXPECT_NO_THROW(expect_nvrtc_accepts(source_of(lower::lower(f))));
}

TEST(Lowerable, NotInlinedProducerOfAWidenedBroadcastIsAnError) {
  // A Local cache of b, scheduled like y but not inlined, feeds the
  // broadcast, which is inlined into the add's loops over N * K. The
  // broadcast's own loops map the cache's exactly, but it runs in the add's
  // loops: the thread at flattened (n, k) reads the cache element that the
  // thread at flattened k wrote.
  auto def = load("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  TensorView* bc = sched::cache_after(named(f, "b"));
  y->merge(0)->split(0, 128);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  sched::propagate_transformation(y);
  sched::parallelize_all_like(y);
  std::vector<TensorView*> rest;
  for (TensorView* t : f.tensors())
    if (t != bc && !f.is_input(t)) rest.push_back(t);
  sched::inline_most(f, rest);
  ASSERT_EQ(bc->compute_at_pos(), 0);
  ASSERT_EQ(bc->nloop(), 2);
  bc->parallelize(0, ParallelType::BIDx);
  bc->parallelize(1, ParallelType::TIDx);
  auto plain = load("bias_relu");
  runtime::PreparedKernel p;
  std::string err = user_error_of([&] {
    p = runtime::prepare(f, {{"N", 3}, {"K", 5}});
    guard.set_output(p.kernel);
    auto compiled = cpu_backend().compile(p.source);
    std::string why = run_and_compare(plain, p, *compiled, {{"N", 3}, {"K", 5}});
    ADD_FAILURE() << "lowered without an error; on the CPU backend: "
                  << (why.empty() ? "correct" : why) << "\n"
                  << codegen::print_kernel(p.kernel);
  });
  EXPECT_THAT(err, HasSubstr("computed by other blocks"));
}

TEST(Lowerable, InlinedIntoBroadcastWidenedLoopsButKeepingOwnLoopsIsAnError) {
  // The broadcast's flattened axis 0 is ceilDiv(K, 128) while the loop it
  // would share is ceilDiv(N * K, 128); it must then take its index from its
  // consumer, which works only if it has no loops of its own.
  auto def = load("bias_relu");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  // Serial loops: the check of bound loops read across threads does not
  // apply, the indexing one does.
  y->merge(0)->split(0, 128);
  sched::propagate_transformation(y);
  TensorView* add = y->definition()->inputs()[0]->as<TensorView>();
  TensorView* bcast = add->definition()->inputs()[1]->as<TensorView>();
  sched::inline_at(add, 2);
  sched::inline_at(bcast, 1);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              AllOf(HasSubstr("is inlined at position 1 into loops that iterate a "
                              "broadcast-widened domain, but keeps loops of its own"),
                    HasSubstr("expected it fully inlined")));
}

TEST(Lowerable, SharedCacheOfABroadcastInput) {
  // w [1, K] cached in shared memory and inlined into y's flattened loops over
  // N * K: the cache's own loops (K split by 128) put columns k and k + 128
  // in one slot, and one block of y reads both when K = 130.
  auto def = parse(R"(
fusion: row_bias
inputs:
  x: {dtype: f32, shape: [N, K]}
  w: {dtype: f32, shape: [1, K]}
body: |
  y = x + w
outputs: [y]
)");
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  TensorView* y = named(f, "y");
  TensorView* wc = sched::cache_after(named(f, "w"));
  sched::set_memory_type(wc, MemoryType::Shared);
  y->merge(0)->split(0, 128);
  y->parallelize(0, ParallelType::BIDx);
  y->parallelize(1, ParallelType::TIDx);
  sched::propagate_transformation(y);
  sched::parallelize_all_like(y);
  sched::inline_most(f);
  // inline_most (best effort) stops before the widened loops: a Shared
  // tensor may not share them (docs/lowering-rules.md, rule 4).
  EXPECT_EQ(wc->compute_at_pos(), 0);
  // Asked for explicitly, lowering refuses it.
  sched::inline_at(wc, 2);
  ASSERT_EQ(wc->compute_at_pos(), 2);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              AllOf(HasSubstr("lowering: T3 (w_cache) is Shared and inlined at position 2 into "
                              "loops that iterate a broadcast-widened domain"),
                    HasSubstr("expected it Local")));
  // In registers it is right: each thread holds the element it reads.
  sched::set_memory_type(wc, MemoryType::Local);
  auto plain = parse(R"(
fusion: row_bias
inputs:
  x: {dtype: f32, shape: [N, K]}
  w: {dtype: f32, shape: [1, K]}
body: |
  y = x + w
outputs: [y]
)");
  runtime::PreparedKernel p = runtime::prepare(f, {{"N", 3}, {"K", 130}});
  guard.set_output(p.kernel);
  expect_nvrtc_accepts(p.source);
  auto compiled = cpu_backend().compile(p.source);
  EXPECT_EQ(run_and_compare(plain, p, *compiled, {{"N", 3}, {"K", 130}}), "");
}

TEST(Lowerable, InlineIntoConsumersThatDoNotShareLoopsIsAnError) {
  // The same shape as LoopOwnerOfConsumersInDifferentNestsIsAnError, reached
  // through lower(): p's consumers are separate nests.
  auto def = parse(kFork);
  Fusion& f = *def.fusion;
  PrintOnFailure guard(f);
  named(f, "p")->set_compute_at_pos(2);
  EXPECT_THAT(user_error_of([&] { lower::lower(f); }),
              AllOf(HasSubstr("T1 (p) is inlined at position 2 but its consumers T2 (c1) and "
                              "T3 (c2) run loop 0 in different loop nests")));
}

}  // namespace
}  // namespace schedlab::lower::testing
