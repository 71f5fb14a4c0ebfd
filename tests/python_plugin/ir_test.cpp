// The Python IR built from plugin ABI 1.7's operands: a definition's
// operands in order, a repeated tensor as the same node twice (x * x), a
// constant or a named size as a Scalar node, a Permute's order, a
// Broadcast's new axes and a copy's data path, each matched as a heuristic
// matches them.
#include <gtest/gtest.h>

#include <string>

#include "py_test_util.h"

namespace schedlab::plugin {
namespace {

using py_testing::Heuristic;
using py_testing::reason_on;

/// A heuristic whose can_schedule runs `prelude`, then matches each node of
/// segment.exprs against `cases` (match cases, indented 12), which append to
/// `found`; it refuses with what they found, '; '-joined.
std::string found_on(const std::string& fusion, const std::string& cases,
                     const std::string& prelude = "") {
  Heuristic h("found.py",
              "from schedlab_heuristic import *\n"
              "def can_schedule(segment):\n"
              "    found = []\n" +
                  prelude +
                  "    for e in segment.exprs:\n"
                  "        match e:\n" +
                  cases +
                  "    return (False, '; '.join(found))\n"
                  "def schedule(segment, params):\n"
                  "    pass\n");
  return reason_on(h.plugin(), fusion);
}

TEST(PythonIrOperands, ARepeatedTensorIsTheSameNodeTwice) {
  // rmsnorm: ms = mean(x * x, ...): the square reads x twice.
  EXPECT_EQ(found_on("rmsnorm", R"py(
            case Binary("mul", out, x, y) if x == y:
                found.append(f"{out!r} squares {x!r}")
            case Reduction("sum", _, Binary("mul", _, Tensor(x) as a, b), _) if a is b:
                found.append(f"sum of squares of {x.name}")
)py"),
            "T2 squares Tensor(out=T0); sum of squares of x");
}

TEST(PythonIrOperands, ConstantsAndSizesAreScalars) {
  // rmsnorm: ms = sum(...) / K, then ms + 1e-6.
  EXPECT_EQ(found_on("rmsnorm", R"py(
            case Binary("div", out, _, Scalar(k, DataType.i64, "K")):
                found.append(f"{out!r} divides by K={k}")
            case Binary("add", out, _, Scalar(eps, DataType.f64) as s):
                found.append(f"{out!r} adds {eps} ({s.text})")
)py",
                     R"py(
    assert Scalar(0.5, DataType.f64) == Scalar(0.5, DataType.Double, "0.5")
    assert hash(Scalar(0.5, DataType.f64)) == hash(Scalar(0.5, DataType.f64, "x"))
    assert Scalar(0.5, DataType.f64) != Scalar(0.5, DataType.f32)
)py"),
            "T5 divides by K=5.0; T6 adds 1e-06 (1e-06)");
  // masked_row_sum: where(mask, x, 0): the condition first, the constant last, in order.
  EXPECT_EQ(found_on("masked_row_sum", R"py(
            case Where(out=out) as w if not found:
                found.append(repr(w))
)py"),
            "Where(out=T2, cond=Tensor(out=T1), a=Tensor(out=T0), b=Scalar(value=0.0, "
            "dtype=<DataType.Int: 2>, text='0'))");
}

TEST(PythonIrOperands, APermuteCarriesItsOrder) {
  EXPECT_EQ(found_on("transpose2d", R"py(
            case Permute(out, Tensor(x), (1, 0) as perm):
                found.append(f"{out!r} = {x.name} permuted by {perm}")
)py"),
            "T1 = x permuted by (1, 0)");
}

TEST(PythonIrOperands, BroadcastAxesAndACopysDataPath) {
  // softmax's max is broadcast along its new axis 1; a cache copy of x says
  // how it loads, and comes first: the max reads it (the IR is built, in
  // topological order, when segment.exprs is read).
  EXPECT_EQ(found_on("softmax", R"py(
            case Broadcast(out, Reduction("max"), axes):
                found.append(f"{out!r} broadcasts the max along {axes}")
            case LoadStore(out, Tensor(x), LoadStoreOpType.set, CacheOp.streaming):
                found.append(f"{out!r} loads {x.name} streaming")
)py",
                     "    segment.inputs[0].cache_after(CacheOp.streaming)\n"),
            "T8 loads x streaming; T2 broadcasts the max along (1,)");
}

}  // namespace
}  // namespace schedlab::plugin
