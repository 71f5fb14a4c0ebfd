// The simplify pass (core/lower/simplify.h): the rewrites it promises on the
// index math lowering emits, and, on thousands of random index expressions
// and predicates, that every rewrite keeps the value at every point within
// the variables' bounds (evaluated exhaustively over small loop nests).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "lower_test_util.h"
#include "schedlab/lower/kir_printer.h"
#include "schedlab/lower/kir_visitor.h"
#include "simplify.h"

namespace schedlab::lower::testing {
namespace {

using kir::Expr;
using kir::ExprP;

/// A kernel `for v0 < e0 { for v1 < e1 { ... buf[index] = value } }`.
struct Nest {
  kir::Kernel kernel;
  kir::Buffer buf;
  Nest(const std::vector<std::pair<std::string, int64_t>>& loops, ExprP index, ExprP value,
       std::array<int64_t, 3> block = {}) {
    buf.name = "T0";
    buf.dtype = ir::DataType::I64;
    buf.memory = ir::MemoryType::Local;
    buf.size = 1 << 20;
    kernel.static_block = block;
    kernel.body = kir::Block::make();
    std::vector<kir::StmtP>* at = &kernel.body->body;
    for (const auto& [v, n] : loops) {
      auto f = kir::For::make(v, Expr::integer(n), false);
      auto* body = &f->body;
      at->push_back(std::move(f));
      at = body;
    }
    auto s = kir::Store::make(&buf, std::move(index), std::move(value));
    at->push_back(std::move(s));
  }
  /// The one store left after simplify (null if it was dropped).
  const kir::Store* store() const {
    const kir::Store* found = nullptr;
    std::function<void(const std::vector<kir::StmtP>&)> walk = [&](const auto& body) {
      for (const auto& s : body) {
        if (const auto* st = s->template as<kir::Store>()) found = st;
        if (const auto* f = s->template as<kir::For>()) walk(f->body);
        if (const auto* i = s->template as<kir::If>()) {
          walk(i->then_body);
          walk(i->else_body);
        }
      }
    };
    walk(kernel.body->body);
    return found;
  }
};

/// A loop variable, or the thread or block index TIDx / BIDx (kir::Builtin).
ExprP v(const std::string& name) {
  if (name == "TIDx") return Expr::launch_index(ir::ParallelType::TIDx);
  if (name == "BIDx") return Expr::launch_index(ir::ParallelType::BIDx);
  return Expr::var(name);
}
ExprP c(int64_t x) { return Expr::integer(x); }

/// e after simplify, alone in a kernel with a block of 128.
ExprP simplified(const ExprP& e) {
  Nest n({}, e, c(0), {128, 1, 1});
  simplify(n.kernel);
  return n.store()->index;
}

TEST(Simplify, ForwardReplayOfARegisterIndexBecomesTheLoopIndices) {
  // softmax at K=1024, 256 threads x 4: x = (i * 256 + tx) * 4 + j; the
  // Local buffer's forward replay ((x / 4) / 256) * 4 + x % 4 is i * 4 + j.
  ExprP x = (v("i") * c(256) + v("TIDx")) * c(4) + v("j");
  ExprP index = ((x / c(4)) / c(256)) * c(4) + x % c(4);
  Nest n({{"i", 2}, {"j", 4}}, index, c(0), {256, 1, 1});
  simplify(n.kernel);
  ASSERT_NE(n.store(), nullptr);
  EXPECT_EQ(kir::print_expr(n.store()->index), kir::print_expr(v("i") * c(4) + v("j")));
}

TEST(Simplify, DivisionBySymbolicSizeUsesTheBranchBound) {
  // A size-generic softmax: C = ceilDiv(K, 4) threads per row, tx < C in the
  // store's predicate; the register index ((x / 4) / C) * 4 + x % 4 with
  // x = (i * C + tx) * 4 + j is i * 4 + j there, and stays as it is outside.
  ExprP cdiv = Expr::ceil_div(v("T0.size[1]"), c(4));
  ExprP x = (v("i") * cdiv + v("TIDx")) * c(4) + v("j");
  ExprP index = ((x / c(4)) / cdiv) * c(4) + x % c(4);
  for (bool guarded : {true, false}) {
    kir::Kernel k;
    kir::Buffer b;
    b.name = "T0";
    b.dtype = ir::DataType::F32;
    b.memory = ir::MemoryType::Local;
    b.size = 8;
    k.body = kir::Block::make();
    auto loop = kir::For::make("i", c(2), false);
    auto inner = kir::For::make("j", c(4), false);
    inner->body.push_back(kir::Store::make(&b, index, Expr::floating(0, ir::DataType::F32)));
    if (guarded) {
      auto branch = kir::If::make(v("TIDx") < cdiv);
      branch->then_body.push_back(std::move(inner));
      loop->body.push_back(std::move(branch));
    } else {
      loop->body.push_back(std::move(inner));
    }
    k.body->body.push_back(std::move(loop));
    simplify(k);
    const kir::Store* st = nullptr;
    kir::any_stmt(*k.body, [&](const kir::Stmt& s) {
      if (const auto* x = s.as<kir::Store>()) st = x;
      return false;
    });
    ASSERT_NE(st, nullptr);
    if (guarded)
      EXPECT_EQ(kir::print_expr(st->index), kir::print_expr(v("i") * c(4) + v("j")));
    else
      EXPECT_THAT(kir::print_expr(st->index), ::testing::HasSubstr("/ ceilDiv(T0.size[1], 4)"));
  }
}

TEST(Specialization, ALaunchAtOtherSizesIsAUserErrorNamingThem) {
  auto def = load("softmax");
  runtime::PreparedKernel p = runtime::prepare(*def.fusion, {{"N", 3}, {"K", 64}});
  EXPECT_EQ(p.kernel.specialized, (ir::SizeBindings{{"N", 3}, {"K", 64}}));
  EXPECT_THAT(user_error_of([&] { runtime::launch_dims(p.kernel, {{"N", 3}, {"K", 65}}); }),
              ::testing::HasSubstr("launch: the kernel was compiled for K=64 (its sizes are "
                                   "constants in the code) but is launched with K=65; expected "
                                   "the same sizes, or a kernel compiled with dynamic sizes"));
  // Size-generic, assuming K (64) stays a multiple of 16 (N = 3 is not one):
  // any N, any K that is a multiple of 16.
  runtime::PreparedKernel g =
      runtime::prepare(*def.fusion, {{"N", 3}, {"K", 64}}, {}, runtime::KernelOptions{true});
  EXPECT_TRUE(g.kernel.specialized.empty());
  EXPECT_EQ(g.kernel.divisible, (ir::SizeBindings{{"K", 16}}));
  EXPECT_NO_THROW(runtime::launch_dims(g.kernel, {{"N", 5}, {"K", 48}}));
  EXPECT_THAT(user_error_of([&] { runtime::launch_dims(g.kernel, {{"N", 3}, {"K", 65}}); }),
              ::testing::HasSubstr("launch: the kernel was compiled assuming K is a multiple of "
                                   "16 (divisibility specialization of a dynamic kernel) but is "
                                   "launched with K=65; expected a multiple of 16"));
  // Without divisibility: any sizes.
  runtime::PreparedKernel any = runtime::prepare(*def.fusion, {{"N", 3}, {"K", 64}}, {},
                                                 runtime::KernelOptions{true, false, false});
  EXPECT_TRUE(any.kernel.divisible.empty());
  EXPECT_NO_THROW(runtime::launch_dims(any.kernel, {{"N", 3}, {"K", 65}}));
}

TEST(Simplify, DivisionAndModuloSplitOffMultiplesOfTheDivisor) {
  // y in [0, 8): (x * 8 + y) / 4 = x * 2 + y / 4 and (x * 8 + y) % 4 = y % 4;
  // z in [0, 4): (x * 8 + z) / 4 = x * 2 and (x * 8 + z) % 4 = z.
  Nest d({{"x", 5}, {"y", 8}, {"z", 4}},
         (v("x") * c(8) + v("y")) / c(4) + ((v("x") * c(8) + v("z")) % c(4)) * c(1000),
         c(0));
  simplify(d.kernel);
  // Terms in the canonical order (by their printed form).
  EXPECT_EQ(kir::print_expr(d.store()->index), "(((y / 4) + (x * 2)) + (z * 1000))");
}

TEST(Simplify, ModuloThenDivisionOfAFlattenedIndexIsTheUnrolledLoop) {
  // pointwise_add_mul at K=4096 with its input caches computed before the
  // unrolled loop (4 x 128 threads x 4): the cache's forward replay through
  // the flattened [N * K] axis, (((bx * 2048 + u * 512 + tx * 4) % 4096) /
  // 512) % 4 * 4, is u * 4: (x % 4096) / 512 = (x / 512) % 8, and % 4 of that.
  ExprP x = v("BIDx") * c(2048) + v("u") * c(512) + v("TIDx") * c(4);
  Nest n({{"u", 4}}, (((x % c(4096)) / c(512)) % c(4)) * c(4), c(0), {128, 1, 1});
  simplify(n.kernel);
  ASSERT_NE(n.store(), nullptr);
  EXPECT_EQ(kir::print_expr(n.store()->index), kir::print_expr(v("u") * c(4)));
}

/// A Local buffer of one I64 element.
kir::Buffer local_scalar(const std::string& name) {
  kir::Buffer b;
  b.name = name;
  b.dtype = ir::DataType::I64;
  b.memory = ir::MemoryType::Local;
  b.size = 1;
  return b;
}

TEST(Simplify, PredicatesTheBoundsDecideDisappear) {
  // threadIdx.x < 256 always holds in a block of 256; < 255 does not.
  for (int64_t limit : {256, 255}) {
    kir::Kernel k;
    k.static_block = {256, 1, 1};
    k.body = kir::Block::make();
    kir::Buffer b = local_scalar("T0");
    auto branch = kir::If::make(v("TIDx") < c(limit));
    branch->then_body.push_back(kir::Store::make(&b, c(0), c(1)));
    k.body->body.push_back(std::move(branch));
    simplify(k);
    ASSERT_EQ(k.body->body.size(), 1u);
    EXPECT_EQ(k.body->body[0]->as<kir::If>() == nullptr, limit == 256) << "limit " << limit;
  }
}

TEST(Simplify, UnitLoopsAreSplicedAndEmptyLoopsDropped) {
  Nest one({{"i", 1}, {"j", 3}}, v("i") * c(7) + v("j"), c(0));
  simplify(one.kernel);
  ASSERT_EQ(one.kernel.body->body.size(), 1u);
  const auto* j = one.kernel.body->body[0]->as<kir::For>();
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->var, "j");
  EXPECT_EQ(kir::print_expr(one.store()->index), "j");
  Nest none({{"i", 0}}, v("i"), c(0));
  simplify(none.kernel);
  EXPECT_TRUE(none.kernel.body->body.empty());
}

// ---- random expressions: the simplified value equals the original ----------

int64_t eval(const ExprP& e, const std::map<std::string, int64_t>& env) {
  if (const auto* i = e->as<kir::IntImm>()) return i->value;
  if (const auto* b = e->as<kir::BoolImm>()) return b->value;
  if (const auto* x = e->as<kir::Var>()) return env.at(x->name);
  if (e->as<kir::Builtin>()) return env.at(kir::print_expr(e));  // "TIDx"
  if (const auto* s = e->as<kir::Select>())
    return eval(s->cond, env) ? eval(s->true_value, env) : eval(s->false_value, env);
  const auto* op = e->as<kir::IndexOp>();
  if (!op) throw std::runtime_error("unexpected node " + kir::print_expr(e));
  const int64_t a = eval(op->a, env), b = eval(op->b, env);
  switch (op->op) {
    case kir::IndexOpType::Add: return a + b;
    case kir::IndexOpType::Mul: return a * b;
    case kir::IndexOpType::Div: return a / b;
    case kir::IndexOpType::Mod: return a % b;
    case kir::IndexOpType::Lt: return a < b;
    case kir::IndexOpType::And: return a && b;
    case kir::IndexOpType::CeilDiv: return (a + b - 1) / b;
    case kir::IndexOpType::Xor: return a ^ b;
  }
  return 0;
}

/// A random non-negative index expression over vars, as lowering builds them;
/// with_xor adds XORs (a swizzled Shared column) without changing the draws
/// of the expressions made without.
ExprP random_index(std::mt19937_64& rng, const std::vector<std::string>& vars, int depth,
                   bool with_xor = false) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  static constexpr int64_t kConsts[] = {1, 2, 3, 4, 5, 8, 16, 32, 7, 256};
  if (depth == 0 || pick(4) == 0)
    return pick(3) == 0 ? c(kConsts[pick(10)]) : v(vars[static_cast<size_t>(pick(static_cast<int>(vars.size())))]);
  ExprP a = random_index(rng, vars, depth - 1, with_xor);
  switch (pick(with_xor ? 7 : 6)) {
    case 0:
    case 1: return a + random_index(rng, vars, depth - 1, with_xor);
    case 6: return a ^ random_index(rng, vars, depth - 1, with_xor);
    case 2: return a * c(kConsts[pick(10)]);
    case 3: return a / c(kConsts[pick(10)]);
    case 4: return a % c(kConsts[pick(10)]);
    default: return Expr::ceil_div(a, c(kConsts[pick(10)]));
  }
}

TEST(Simplify, XorIsBoundedByTheNextPowerOfTwo) {
  // k in [0, 8), threadIdx.x in [0, 6): k ^ threadIdx.x lies in [0, 8), so
  // `< 8` holds everywhere and folds, `< 7` does not; constants fold, ^ 0 goes.
  for (int64_t limit : {8, 7}) {
    Nest n({{"k", 8}}, c(0),
           Expr::select((v("k") ^ v("TIDx")) < c(limit), c(1), c(0), ir::DataType::I64), {6, 1, 1});
    simplify(n.kernel);
    EXPECT_EQ(kir::print_expr(n.store()->value) == "1", limit == 8)
        << "limit " << limit << ": " << kir::print_expr(n.store()->value);
  }
  EXPECT_EQ(kir::print_expr(c(6) ^ c(3)), "5");
  EXPECT_EQ(kir::print_expr(v("k") ^ c(0)), "k");
  EXPECT_EQ(kir::print_expr(v("k") ^ v("j")), "(k ^ j)");
}

/// 1500 random indices and predicates (with XORs or without), each checked at
/// every point of a small nest against its simplified form.
void check_random_indices(bool with_xor, uint64_t seed) {
  SCOPED_TRACE(with_xor ? "with XORs" : "without XORs");
  std::mt19937_64 rng(seed);
  const std::vector<std::pair<std::string, int64_t>> loops = {{"i", 3}, {"j", 5}, {"k", 8}};
  const std::vector<std::string> vars = {"i", "j", "k", "TIDx"};
  int changed = 0;
  for (int t = 0; t < 1500; ++t) {
    ExprP index = random_index(rng, vars, 4, with_xor);
    ExprP pred = random_index(rng, vars, 3, with_xor) < random_index(rng, vars, 3, with_xor);
    ExprP value = Expr::select(pred && (random_index(rng, vars, 2, with_xor) < c(9)), c(1), c(0),
                               ir::DataType::I64);
    Nest n(loops, index, value, {6, 1, 1});
    simplify(n.kernel);
    const kir::Store* s = n.store();
    ASSERT_NE(s, nullptr);
    changed += kir::print_expr(s->index) != kir::print_expr(index);
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j)
        for (int64_t k = 0; k < 8; ++k)
          for (int64_t tx = 0; tx < 6; ++tx) {
            const std::map<std::string, int64_t> env{{"i", i}, {"j", j}, {"k", k}, {"TIDx", tx}};
            ASSERT_EQ(eval(s->index, env), eval(index, env))
                << kir::print_expr(index) << "\n  simplified to " << kir::print_expr(s->index)
                << "\n  at i=" << i << " j=" << j << " k=" << k << " tx=" << tx;
            ASSERT_EQ(eval(s->value, env), eval(value, env))
                << kir::print_expr(value) << "\n  simplified to " << kir::print_expr(s->value)
                << "\n  at i=" << i << " j=" << j << " k=" << k << " tx=" << tx;
          }
  }
  // The check is not vacuous: most expressions do change.
  EXPECT_GT(changed, 500);
}

// ---- sizes that are multiples of 16 (divisibility specialization) ---------

/// A dynamic kernel's size K assumed a multiple of 16, as lowering writes it.
ExprP sixteen_q() { return v("q") * c(16); }

/// e's condition after simplify, in a nest of i < 2, j < 4 and 128 threads.
std::string simplified_predicate(const ExprP& pred) {
  Nest n({{"i", 2}, {"j", 4}}, c(0), Expr::select(pred, c(1), c(0), ir::DataType::I64),
         {128, 1, 1});
  simplify(n.kernel);
  const auto* s = n.store()->value->as<kir::Select>();
  return s ? kir::print_expr(s->cond) : kir::print_expr(n.store()->value);
}

TEST(Simplify, CeilDivOfAMultipleIsExact) {
  // ceilDiv(16 q, 4) = 4 q; ceilDiv(ceilDiv(16 q, 4), 2) = 2 q; ceilDiv(16 q
  // + 3, 4) = 4 q + 1; a divisor that does not divide every coefficient stays.
  EXPECT_EQ(kir::print_expr(simplified(Expr::ceil_div(sixteen_q(), c(4)))),
            kir::print_expr(simplified(v("q") * c(4))));
  EXPECT_EQ(kir::print_expr(simplified(Expr::ceil_div(Expr::ceil_div(sixteen_q(), c(4)), c(2)))),
            kir::print_expr(simplified(v("q") * c(2))));
  EXPECT_EQ(kir::print_expr(simplified(Expr::ceil_div(sixteen_q() + c(3), c(4)))),
            kir::print_expr(simplified(v("q") * c(4) + c(1))));
  EXPECT_THAT(kir::print_expr(simplified(Expr::ceil_div(sixteen_q() + v("TIDx"), c(4)))),
              ::testing::HasSubstr("ceilDiv"));
  // A common factor divides out: ceilDiv(16 q, 32) = ceilDiv(q, 2).
  EXPECT_EQ(kir::print_expr(simplified(Expr::ceil_div(sixteen_q(), c(32)))),
            kir::print_expr(Expr::ceil_div(v("q"), c(2))));
}

TEST(Simplify, AVectorAndItsElementsShareOneBoundsCheckOnAMultipleOf16) {
  // Row i of a 2-row-per-thread split, 4-wide vectors: the vector's check
  // (last element) and each element's check are one atom once K = 16 q.
  ExprP base = sixteen_q() * v("i") + v("TIDx") * c(4);
  const std::string vec = simplified_predicate(base + c(3) < sixteen_q());
  const std::string elem = simplified_predicate(base + v("j") < sixteen_q());
  EXPECT_EQ(vec, elem);
  EXPECT_EQ(simplified_predicate((base + c(3) < sixteen_q()) && (base + v("j") < sixteen_q())),
            vec);
  // Without the divisibility (K itself), the two stay different.
  ExprP k_base = v("K") * v("i") + v("TIDx") * c(4);
  EXPECT_NE(simplified_predicate(k_base + c(3) < v("K")),
            simplified_predicate(k_base + v("j") < v("K")));
}

TEST(Simplify, RandomIndicesOverAMultipleOf16KeepTheirValue) {
  // Sums of loop indices, 16 q, i * 16 q and ceilDivs of them, as indices
  // and in predicates, checked at every point for q = 0..3.
  std::mt19937_64 rng(20261203);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  const std::vector<std::string> vars = {"i", "j", "TIDx"};
  static constexpr int64_t kDivs[] = {1, 2, 4, 8, 16, 3};
  auto piece = [&]() -> ExprP {
    switch (pick(6)) {
      case 0: return random_index(rng, vars, 2);
      case 1: return sixteen_q();
      case 2: return sixteen_q() * v(vars[static_cast<size_t>(pick(3))]);
      case 3: return Expr::ceil_div(sixteen_q(), c(kDivs[pick(6)]));
      case 4: return v(vars[static_cast<size_t>(pick(3))]) * Expr::ceil_div(sixteen_q(), c(4)) * c(4);
      default: return Expr::ceil_div(sixteen_q() + c(pick(20)), c(kDivs[pick(6)]));
    }
  };
  auto sum = [&]() {
    ExprP e = piece();
    for (int n = pick(3); n > 0; --n) e = e + piece();
    return e;
  };
  int changed = 0;
  for (int t = 0; t < 600; ++t) {
    ExprP index = sum();
    ExprP pred = (sum() < sum()) && (sum() + c(pick(5)) < sum());
    ExprP value = Expr::select(pred, c(1), c(0), ir::DataType::I64);
    Nest n({{"i", 3}, {"j", 5}}, index, value, {6, 1, 1});
    simplify(n.kernel);
    const kir::Store* s = n.store();
    ASSERT_NE(s, nullptr);
    changed += kir::print_expr(s->value) != kir::print_expr(value);
    for (int64_t q = 0; q < 4; ++q)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 5; ++j)
          for (int64_t tx = 0; tx < 6; ++tx) {
            const std::map<std::string, int64_t> env{{"i", i}, {"j", j}, {"TIDx", tx}, {"q", q}};
            ASSERT_EQ(eval(s->index, env), eval(index, env))
                << kir::print_expr(index) << "\n  simplified to " << kir::print_expr(s->index);
            ASSERT_EQ(eval(s->value, env), eval(value, env))
                << kir::print_expr(value) << "\n  simplified to " << kir::print_expr(s->value)
                << "\n  at q=" << q << " i=" << i << " j=" << j << " tx=" << tx;
          }
  }
  EXPECT_GT(changed, 300);
}

TEST(Simplify, AContiguousOffsetOfAMergeReplayFoldsBack) {
  // A parameter's offset is row-major over its extents (indexing.cpp); the
  // logical indices of a flattened loop x are x / K and x % K, so the offset
  // (x % K) + (x / K) * K is x, for a constant K and a symbolic one, and over
  // three axes too.
  ExprP x = v("BIDx") * c(128) + v("TIDx");
  Nest two({}, (x % c(4096)) + (x / c(4096)) * c(4096), c(0), {128, 1, 1});
  simplify(two.kernel);
  EXPECT_EQ(kir::print_expr(two.store()->index), kir::print_expr(simplified(x)));
  Nest sym({}, (x % v("K")) * c(1) + (x / v("K")) * v("K"), c(0), {128, 1, 1});
  simplify(sym.kernel);
  EXPECT_EQ(kir::print_expr(sym.store()->index), kir::print_expr(simplified(x)));
  Nest three({}, (x % c(4)) + ((x / c(4)) % c(3)) * c(4) + ((x / c(4)) / c(3)) * c(12), c(0),
             {128, 1, 1});
  simplify(three.kernel);
  EXPECT_EQ(kir::print_expr(three.store()->index), kir::print_expr(simplified(x)));
}

TEST(Simplify, RandomMergeReplaysKeepTheirValue) {
  // Random a, divisors (constant or the symbolic K) and coefficients in the
  // shapes recombine() folds, checked at every point.
  std::mt19937_64 rng(20261202);
  const std::vector<std::string> vars = {"i", "j", "TIDx"};
  static constexpr int64_t kDivs[] = {1, 2, 3, 4, 8};
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  for (int t = 0; t < 300; ++t) {
    ExprP a = random_index(rng, vars, 3, false);
    const int64_t k = 1 + pick(3);
    ExprP d1 = pick(3) == 0 ? v("K") : c(kDivs[pick(5)]);
    ExprP d2 = c(kDivs[pick(5)]);
    ExprP index = pick(2) == 0
                      ? (a % d1) * c(k) + (a / d1) * d1 * c(k)
                      : (a % d1) * c(k) + ((a / d1) % d2) * d1 * c(k) + ((a / d1) / d2) * d1 * d2 * c(k);
    Nest n({{"i", 3}, {"j", 5}}, index, c(0), {6, 1, 1});
    simplify(n.kernel);
    const kir::Store* s = n.store();
    ASSERT_NE(s, nullptr);
    for (int64_t K = 1; K <= 4; ++K)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 5; ++j)
          for (int64_t tx = 0; tx < 6; ++tx) {
            const std::map<std::string, int64_t> env{{"i", i}, {"j", j}, {"TIDx", tx}, {"K", K}};
            ASSERT_EQ(eval(s->index, env), eval(index, env))
                << kir::print_expr(index) << "\n  simplified to " << kir::print_expr(s->index)
                << "\n  at K=" << K << " i=" << i << " j=" << j << " tx=" << tx;
          }
  }
}

TEST(Simplify, RandomIndicesKeepTheirValueEverywhereInBounds) {
  check_random_indices(false, 20261201);
  check_random_indices(true, 20261202);
}

// ---- typed built-ins and tensor sizes (kir::Builtin, kir::TensorDim) --------

/// A rank-2 parameter buffer named `name`.
std::unique_ptr<kir::Buffer> param(const std::string& name) {
  auto b = std::make_unique<kir::Buffer>();
  b->name = name;
  b->dtype = ir::DataType::F32;
  b->memory = ir::MemoryType::Global;
  b->is_param = true;
  b->rank = 2;
  return b;
}

TEST(Simplify, LaunchExtentsFoldToAFixedLaunch) {
  using P = ir::ParallelType;
  // blockDim.x is 128 in a block of 128; blockDim.y is 1; gridDim.x is the
  // grid's 4 when simplify is told it; an unfixed grid leaves gridDim.y.
  Nest n({},
         Expr::launch_extent(P::TIDx) * c(2) + Expr::launch_extent(P::TIDy) +
             Expr::launch_extent(P::BIDx) * c(1000) + Expr::launch_extent(P::BIDy),
         c(0), {128, 1, 1});
  simplify(n.kernel, {4, 0, 0});
  EXPECT_EQ(kir::print_expr(n.store()->index), "(dim(BIDy) + 4257)");
  // The block index lies below the grid: BIDx < 4 holds, BIDx < 3 does not.
  for (int64_t limit : {4, 3}) {
    Nest p({}, c(0), Expr::select(v("BIDx") < c(limit), c(1), c(0), ir::DataType::I64),
           {128, 1, 1});
    simplify(p.kernel, {4, 1, 1});
    EXPECT_EQ(kir::print_expr(p.store()->value) == "1", limit == 4) << "limit " << limit;
  }
}

TEST(Simplify, ABranchOverASizeBoundsTheThreadIndexByThatSizeOnly) {
  // Inside `if (TIDx < A.size[1])`, (i * A.size[1] + TIDx) / A.size[1] is i
  // and the remainder TIDx. The fact is keyed on the size's structure, not
  // its text: another buffer that happens to print the same (B, also "T0")
  // is not bounded by it, and its division stays.
  auto a = param("T0"), b = param("T0");
  for (const kir::Buffer* divisor : {a.get(), b.get()}) {
    const ExprP ka = Expr::tensor_size(a.get(), 1), kd = Expr::tensor_size(divisor, 1);
    kir::Kernel k;
    k.static_block = {128, 1, 1};
    k.body = kir::Block::make();
    kir::Buffer out = local_scalar("T9");
    auto loop = kir::For::make("i", c(4), false);
    auto branch = kir::If::make(v("TIDx") < ka);
    const ExprP x = v("i") * kd + v("TIDx");
    branch->then_body.push_back(kir::Store::make(&out, x / kd, x % kd));
    loop->body.push_back(std::move(branch));
    k.body->body.push_back(std::move(loop));
    simplify(k);
    const auto* s =
        k.body->body[0]->as<kir::For>()->body[0]->as<kir::If>()->then_body[0]->as<kir::Store>();
    if (divisor == a.get()) {
      EXPECT_EQ(kir::print_expr(s->index), "i");
      EXPECT_EQ(kir::print_expr(s->value), "TIDx");
    } else {
      EXPECT_THAT(kir::print_expr(s->index), ::testing::HasSubstr("/ T0.size[1]"));
      EXPECT_THAT(kir::print_expr(s->value), ::testing::HasSubstr("% T0.size[1]"));
    }
  }
}

TEST(Simplify, ASizeQuotientTermPrintsAsAMultipleOfItsDivisor) {
  // K = 16 q with q = T0.size[1] >> 4 (a TensorDim of divisor 16): the term
  // i * q at coefficient 32 prints as (i * (q * 16)) * 2, loop-invariant
  // q * 16 once; a divisor of 12 prints as a division, not a shift.
  auto t = param("T0");
  const ExprP q = Expr::tensor_size(t.get(), 1, 16);
  EXPECT_EQ(kir::print_expr(q), "(T0.size[1] >> 4)");
  EXPECT_EQ(kir::print_expr(Expr::tensor_size(t.get(), 1, 12)), "(T0.size[1] / 12)");
  Nest n({{"i", 3}}, v("i") * q * c(32) + q * c(16), c(0), {128, 1, 1});
  simplify(n.kernel);
  EXPECT_EQ(kir::print_expr(n.store()->index),
            "(((T0.size[1] >> 4) * 16) + ((i * ((T0.size[1] >> 4) * 16)) * 2))");
}

}  // namespace
}  // namespace schedlab::lower::testing
