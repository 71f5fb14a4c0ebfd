// Index replay: a few hand-checked points, the errors, and a property test
// over random schedules: the unmasked loop points map one-to-one onto the
// logical index space.
#include "schedlab/sched/index_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../ir/test_fusions.h"
#include "schedlab/base/error.h"
#include "schedlab/ir/arith.h"

namespace schedlab::sched {
namespace {

using ir::DataType;
using ir::Fusion;
using ir::SizeExpr;
using ir::TensorView;
using ir::testing::sym;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

TensorView* input(Fusion& f, const std::vector<SizeExpr>& shape) {
  TensorView* x = f.make_tensor(DataType::F32, shape);
  f.add_input(x);
  return x;
}

TEST(IndexReplayTest, InnerSplitWithRemainderIsMasked) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  x->split(0, 4);
  ir::SizeBindings n{{"N", 10}};
  EXPECT_THAT(loop_extents(x, n), ElementsAre(3, 4));
  EXPECT_THAT(loop_to_logical(x, {2, 1}, n), Optional(ElementsAre(9)));
  EXPECT_EQ(loop_to_logical(x, {2, 2}, n), std::nullopt);
}

TEST(IndexReplayTest, OuterSplitStridesByTheInnerExtent) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  x->split(0, 4, /*inner_split=*/false);
  ir::SizeBindings n{{"N", 10}};
  EXPECT_THAT(loop_extents(x, n), ElementsAre(4, 3));
  EXPECT_THAT(loop_to_logical(x, {1, 2}, n), Optional(ElementsAre(5)));
  EXPECT_THAT(loop_to_logical(x, {3, 0}, n), Optional(ElementsAre(9)));
  EXPECT_EQ(loop_to_logical(x, {3, 1}, n), std::nullopt);
}

TEST(IndexReplayTest, MergeDividesByTheInnerExtent) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  x->merge(0)->split(0, 5)->reorder({{0, 1}});
  ir::SizeBindings nk{{"N", 3}, {"K", 4}};
  EXPECT_THAT(loop_extents(x, nk), ElementsAre(5, 3));
  // loop (inner 3, outer 1) -> merged 1 * 5 + 3 = 8 -> (8 / 4, 8 % 4).
  EXPECT_THAT(loop_to_logical(x, {3, 1}, nk), Optional(ElementsAre(2, 0)));
}

TEST(IndexReplayTest, ReductionAxesKeepTheirIndex) {
  Fusion f;
  TensorView* y = ir::sum(input(f, {sym("N"), sym("K")}), {1});
  y->split(1, 2)->reorder({{0, -1}});
  ir::SizeBindings nk{{"N", 3}, {"K", 4}};
  EXPECT_THAT(loop_extents(y, nk), ElementsAre(2, 2, 3));
  EXPECT_THAT(loop_to_logical(y, {1, 1, 2}, nk), Optional(ElementsAre(2, 3)));
}

TEST(IndexReplayTest, RootedTensorReturnsItsLogicalIndex) {
  // An rfactor-style producer: logical {outer, inner} derived from root {N}.
  Fusion f;
  ir::IterDomain* n = f.make_iter_domain(sym("N"), ir::IterType::Iteration);
  TensorView* t = f.make_tensor(DataType::F32, std::vector<ir::IterDomain*>{n});
  auto [outer, inner] = f.split(n, 4, true);
  t->set_domains({n}, {outer, inner});
  t->merge(0);
  ir::SizeBindings b{{"N", 8}};
  EXPECT_THAT(loop_extents(t, b), ElementsAre(8));
  EXPECT_THAT(loop_to_logical(t, {6}, b), Optional(ElementsAre(1, 2)));
}

TEST(IndexReplayTest, UnboundSizeIsAUserError) {
  Fusion f;
  TensorView* x = input(f, {sym("N"), sym("K")});
  x->merge(0);
  try {
    loop_extents(x, {{"N", 3}});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(), HasSubstr("extent (N * K) of T0"));
    EXPECT_THAT(e.message(), HasSubstr("named size(s) K"));
  }
}

TEST(IndexReplayTest, LoopIndexPastItsExtentIsAnInternalError) {
  Fusion f;
  TensorView* x = input(f, {sym("N")});
  x->split(0, 4);
  EXPECT_THROW(loop_to_logical(x, {0, 4}, {{"N", 10}}), InternalError);
  EXPECT_THROW(loop_to_logical(x, {0}, {{"N", 10}}), InternalError);
}

// ---------------------------------------------------------------------------
// Property: for a random tensor and a random legal schedule, every logical
// point is produced by exactly one unmasked loop point.

struct RandomCase {
  std::unique_ptr<Fusion> fusion;
  TensorView* tv = nullptr;
  ir::SizeBindings sizes;
  std::string log;  ///< the shape, sizes and transforms, for failure messages
};

RandomCase make_case(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomCase c;
  c.fusion = std::make_unique<Fusion>();
  std::ostringstream log;
  int rank = pick(1, 3);
  std::vector<SizeExpr> shape;
  log << "shape [";
  for (int k = 0; k < rank; ++k) {
    int kind = pick(0, 9);
    if (kind < 6) {  // a named size
      std::string name = "S" + std::to_string(k);
      c.sizes[name] = pick(1, 9);
      shape.push_back(sym(name));
      log << (k ? ", " : "") << name << "=" << c.sizes[name];
    } else {  // a constant; 1 gives a Broadcast axis
      int v = kind < 9 ? pick(2, 9) : 1;
      shape.push_back(SizeExpr::constant(v));
      log << (k ? ", " : "") << v;
    }
  }
  log << "]";
  c.tv = input(*c.fusion, shape);
  if (pick(0, 2) == 0) {
    std::vector<int> axes;
    for (int k = 0; k < rank; ++k)
      if (pick(0, 1)) axes.push_back(k);
    if (axes.empty()) axes.push_back(pick(0, rank - 1));
    c.tv = ir::sum(c.tv, axes);
    log << " sum over [";
    for (size_t k = 0; k < axes.size(); ++k) log << (k ? ", " : "") << axes[k];
    log << "]";
  }
  int ntransforms = pick(1, 6);
  for (int t = 0; t < ntransforms; ++t) {
    TensorView* tv = c.tv;
    int n = tv->nloop();
    switch (pick(0, 2)) {
      case 0: {
        int axis = pick(0, n - 1);
        int factor = pick(1, 5);
        bool inner = pick(0, 1) != 0;
        tv->split(axis, factor, inner);
        log << "\n  split(" << axis << ", " << factor << (inner ? ")" : ", outer)");
        break;
      }
      case 1: {
        if (n < 2) break;
        int o = pick(0, n - 1);
        int i = pick(0, n - 2);
        if (i >= o) ++i;
        bool ro = tv->axis(o)->is_reduction(), ri = tv->axis(i)->is_reduction();
        auto iter = [&](int a) { return tv->axis(a)->iter_type() == ir::IterType::Iteration; };
        if ((ro && iter(i)) || (ri && iter(o))) break;  // illegal: skip
        // Exercise negative axes too.
        int oa = pick(0, 1) ? o - n : o;
        tv->merge(oa, i);
        log << "\n  merge(" << oa << ", " << i << ")";
        break;
      }
      default: {
        std::vector<int> from(static_cast<size_t>(n)), to(static_cast<size_t>(n));
        std::iota(from.begin(), from.end(), 0);
        std::iota(to.begin(), to.end(), 0);
        std::shuffle(from.begin(), from.end(), rng);
        std::shuffle(to.begin(), to.end(), rng);
        int moved = pick(1, n);  // a partial map: the rest keep their relative order
        std::vector<std::pair<int, int>> old2new;
        log << "\n  reorder({";
        for (int k = 0; k < moved; ++k) {
          int a = from[static_cast<size_t>(k)], b = to[static_cast<size_t>(k)];
          if (pick(0, 3) == 0) b -= n;
          old2new.emplace_back(a, b);
          log << (k ? ", " : "") << "{" << a << ", " << b << "}";
        }
        log << "})";
        tv->reorder(old2new);
      }
    }
  }
  log << "\n  loop:";
  for (const ir::IterDomain* id : c.tv->loop()) log << " " << id->str();
  c.log = log.str();
  return c;
}

std::string str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + ")";
}

/// Checks the bijection; returns an empty string or what went wrong.
std::string check_bijection(const RandomCase& c) {
  const TensorView* tv = c.tv;
  std::vector<int64_t> lext = loop_extents(tv, c.sizes);
  std::vector<int64_t> gext;
  int64_t logical_size = 1;
  for (const ir::IterDomain* id : tv->logical()) {
    gext.push_back(*id->extent().evaluate(c.sizes));
    logical_size *= gext.back();
  }
  // The loop point that reached each logical point, if any.
  std::vector<std::optional<std::vector<int64_t>>> hit_by(static_cast<size_t>(logical_size));
  std::vector<int64_t> point(lext.size(), 0);
  bool empty = std::find(lext.begin(), lext.end(), 0) != lext.end();
  for (bool more = !empty; more;) {
    std::optional<std::vector<int64_t>> g = loop_to_logical(tv, point, c.sizes);
    if (g) {
      int64_t linear = 0;
      for (size_t k = 0; k < gext.size(); ++k) {
        int64_t v = (*g)[k];
        if (v < 0 || v >= gext[k]) {
          return "loop point " + str(point) + " gives logical " + str(*g) + ", outside " +
                 str(gext);
        }
        linear = linear * gext[k] + v;
      }
      auto& first = hit_by[static_cast<size_t>(linear)];
      if (first)
        return "loop points " + str(*first) + " and " + str(point) + " both give logical " +
               str(*g);
      first = point;
    }
    // Odometer step, innermost axis fastest.
    more = false;
    for (size_t k = point.size(); k-- > 0;) {
      if (++point[k] < lext[k]) {
        more = true;
        break;
      }
      point[k] = 0;
    }
  }
  for (int64_t p = 0; p < logical_size; ++p) {
    if (hit_by[static_cast<size_t>(p)]) continue;
    std::vector<int64_t> g(gext.size());
    int64_t rest = p;
    for (size_t k = gext.size(); k-- > 0;) {
      g[k] = rest % gext[k];
      rest /= gext[k];
    }
    return "logical point " + str(g) + " is not reached by any unmasked loop point";
  }
  return "";
}

TEST(IndexReplayPropertyTest, UnmaskedLoopPointsCoverLogicalSpaceExactlyOnce) {
  std::mt19937 rng(20240611);
  constexpr int kCases = 4000;
  int64_t points = 0;
  for (int i = 0; i < kCases; ++i) {
    RandomCase c = make_case(rng);
    std::vector<int64_t> lext = loop_extents(c.tv, c.sizes);
    points += std::accumulate(lext.begin(), lext.end(), int64_t{1}, std::multiplies<>());
    std::string err = check_bijection(c);
    ASSERT_EQ(err, "") << "case " << i << ": " << c.log;
  }
  RecordProperty("loop_points", std::to_string(points));
}

}  // namespace
}  // namespace schedlab::sched
