// Positive tests of the fusion-text frontend (docs/fusion-text.md): what each
// construct builds, checked on the IR. The error paths live in
// invalid_test.cpp (one file per diagnostic) and, for the size helpers, at the
// end of this file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/mesh.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using schedlab::UserError;
using schedlab::frontend::FusionDefinition;
using schedlab::ir::DataType;
using schedlab::ir::Expr;
using schedlab::ir::IterType;
using schedlab::ir::Scalar;
using schedlab::ir::TensorView;
using schedlab::ir::Val;
using testing::ElementsAre;
using testing::HasSubstr;

const std::string kFusionDir = schedlab::test_support::config_fusion_dir();

std::string indent(const std::string& text) {
  std::stringstream in(text);
  std::string out;
  for (std::string l; std::getline(in, l);) out += "  " + l + "\n";
  return out;
}

/// A fusion from `inputs` (one "name: {spec}" per line), a body and the
/// comma-separated outputs.
FusionDefinition fusion(const std::string& inputs, const std::string& body,
                        const std::string& outputs) {
  return schedlab::frontend::parse_fusion_text(
      "inputs:\n" + indent(inputs) + "body: |\n" + indent(body) + "outputs: [" + outputs + "]\n",
      "test.yaml");
}

const std::string kAbc =
    "a: {dtype: f32, shape: [N]}\nb: {dtype: f32, shape: [N]}\nc: {dtype: f32, shape: [N]}";
const std::string kNK = "x: {dtype: f32, shape: [N, K]}";

/// The tensor the body bound to `name`.
const TensorView* named(const FusionDefinition& d, const std::string& name) {
  for (const TensorView* t : d.fusion->tensors())
    if (t->user_name() == name) return t;
  throw std::runtime_error("no tensor named '" + name + "'");
}

/// The expression that defines the tensor bound to `name`.
const Expr* def(const FusionDefinition& d, const std::string& name) {
  const Expr* e = named(d, name)->definition();
  if (!e) throw std::runtime_error("'" + name + "' has no definition");
  return e;
}

/// `v` as an expression tree: "sub(sub(a, b), c)". Leaves are user names
/// (inputs, and named tensors below the root) or constants; reductions print
/// as "reduction.sum(...)".
std::string tree(const Val* v, bool root = true) {
  if (const auto* s = v->as<Scalar>()) return s->str();
  const auto* t = v->as<TensorView>();
  if (!t->definition() || (!root && !t->user_name().empty()))
    return t->user_name().empty() ? t->str() : t->user_name();
  const Expr* e = t->definition();
  std::string r = e->op_name();
  if (const auto* red = e->as<schedlab::ir::ReductionOp>())
    r += "." + std::string(schedlab::ir::reduction_op_name(red->op()));
  r += "(";
  for (size_t i = 0; i < e->inputs().size(); ++i)
    r += (i ? ", " : "") + tree(e->inputs()[i], false);
  return r + ")";
}
std::string tree(const FusionDefinition& d, const std::string& name) {
  return tree(named(d, name));
}

std::vector<IterType> iter_types(const TensorView* t) {
  std::vector<IterType> r;
  for (const auto* id : t->logical()) r.push_back(id->iter_type());
  return r;
}

std::vector<std::string> extents(const TensorView* t) {
  std::vector<std::string> r;
  for (const auto* id : t->logical()) r.push_back(id->extent().str());
  return r;
}

/// The constant operand `i` of the expression defining `name`.
double constant_operand(const FusionDefinition& d, const std::string& name, size_t i) {
  const auto* s = def(d, name)->inputs().at(i)->as<Scalar>();
  if (!s) throw std::runtime_error("operand is not a constant");
  return s->value();
}

constexpr auto I = IterType::Iteration;
constexpr auto R = IterType::Reduction;
constexpr auto B = IterType::Broadcast;

// ---- precedence and associativity -------------------------------------------

TEST(Precedence, AdditiveAndMultiplicativeAreLeftAssociative) {
  auto d = fusion(kAbc, "y = a - b - c\nz = a / b * c\nw = a - b + c", "y, z, w");
  EXPECT_EQ(tree(d, "y"), "sub(sub(a, b), c)");
  EXPECT_EQ(tree(d, "z"), "mul(div(a, b), c)");
  EXPECT_EQ(tree(d, "w"), "add(sub(a, b), c)");
}

TEST(Precedence, MultiplicationBindsTighterThanAddition) {
  auto d = fusion(kAbc, "y = a + b * c\nz = (a + b) * c\nw = a * b - c / a", "y, z, w");
  EXPECT_EQ(tree(d, "y"), "add(a, mul(b, c))");
  EXPECT_EQ(tree(d, "z"), "mul(add(a, b), c)");
  EXPECT_EQ(tree(d, "w"), "sub(mul(a, b), div(c, a))");
}

TEST(Precedence, PowerBindsTighterThanUnaryMinus) {
  auto d = fusion(kAbc, "y = -a ** 2\nz = -(a ** 2)\nw = (-a) ** 2\nv = a - -b\nu = a ** -b",
                  "y, z, w, v, u");
  EXPECT_EQ(tree(d, "y"), "neg(pow(a, 2))");
  EXPECT_EQ(tree(d, "z"), tree(d, "y"));
  EXPECT_EQ(tree(d, "w"), "pow(neg(a), 2)");
  EXPECT_EQ(tree(d, "v"), "sub(a, neg(b))");
  EXPECT_EQ(tree(d, "u"), "pow(a, neg(b))");
}

TEST(Precedence, PowerIsRightAssociativeAndFolds) {
  auto d = fusion(
      kAbc, "p = 2 ** 3 ** 2\nq = (2 ** 3) ** 2\nr = 2 ** -1\ny = a * p\nz = a * q\nw = a * r",
      "y, z, w");
  EXPECT_EQ(constant_operand(d, "y", 1), 512.0);
  EXPECT_EQ(constant_operand(d, "z", 1), 64.0);
  EXPECT_EQ(constant_operand(d, "w", 1), 0.5);
}

TEST(Precedence, ComparisonsBindLoosestAndYieldBool) {
  auto d = fusion(kAbc,
                  "e = a == b\nn = a != b\nl = a < b\nle = a <= b\ng = a > b\nge = a >= b\n"
                  "m = a + 1 < b * 2",
                  "e, n, l, le, g, ge, m");
  EXPECT_EQ(tree(d, "e"), "eq(a, b)");
  EXPECT_EQ(tree(d, "n"), "ne(a, b)");
  EXPECT_EQ(tree(d, "l"), "lt(a, b)");
  EXPECT_EQ(tree(d, "le"), "le(a, b)");
  EXPECT_EQ(tree(d, "g"), "gt(a, b)");
  EXPECT_EQ(tree(d, "ge"), "ge(a, b)");
  EXPECT_EQ(tree(d, "m"), "lt(add(a, 1), mul(b, 2))");
  for (const char* n : {"e", "n", "l", "le", "g", "ge", "m"})
    EXPECT_EQ(named(d, n)->dtype(), DataType::Bool) << n;
}

// ---- constants --------------------------------------------------------------

TEST(Constants, NamedConstantIsReusedNotATensor) {
  auto d = fusion(kAbc, "eps = 1e-5\ny = a + eps\nz = b * eps", "y, z");
  EXPECT_FLOAT_EQ(constant_operand(d, "y", 1), 1e-5);
  EXPECT_FLOAT_EQ(constant_operand(d, "z", 1), 1e-5);
  // Only y and z are computed: binding a constant creates no tensor.
  EXPECT_EQ(d.fusion->exprs().size(), 2u);
}

TEST(Constants, ConstantOnlyExpressionsFold) {
  auto d =
      fusion(kAbc, "r = 1 / sqrt(2)\nh = pi / 2\nk = -(3 - 5)\ny = a * r\nz = a + h\nw = a - k",
             "y, z, w");
  EXPECT_FLOAT_EQ(constant_operand(d, "y", 1), 1.0 / std::sqrt(2.0));
  EXPECT_FLOAT_EQ(constant_operand(d, "z", 1), std::acos(-1.0) / 2);
  EXPECT_EQ(constant_operand(d, "w", 1), 2.0);
  EXPECT_EQ(d.fusion->exprs().size(), 3u);
}

TEST(Constants, ReservedNamesAndNumberForms) {
  auto d = fusion(kAbc, "y = where(a > 0.5, a, -inf)\nz = a * 2.5e+1\nw = a + .25", "y, z, w");
  EXPECT_EQ(def(d, "y")->kind(), Expr::Kind::Where);
  EXPECT_EQ(def(d, "y")->inputs()[2]->as<Scalar>()->value(), -INFINITY);
  EXPECT_EQ(constant_operand(d, "z", 1), 25.0);
  EXPECT_EQ(constant_operand(d, "w", 1), 0.25);
  auto b = fusion(kAbc, "t = true\ny = where(a > 0, a, b)\nz = where(t, a, b)", "y, z");
  EXPECT_EQ(def(b, "z")->inputs()[0]->dtype(), DataType::Bool);
}

// ---- reductions ---------------------------------------------------------------

TEST(Reductions, KeepdimLeavesABroadcastAxis) {
  auto d = fusion(kNK, "m = max(x, axis=1, keepdim=true)\ns = sum(x, axis=1)", "m, s");
  EXPECT_EQ(tree(d, "m"), "broadcast(reduction.max(x))");
  EXPECT_THAT(iter_types(named(d, "m")), ElementsAre(I, B));
  EXPECT_THAT(def(d, "m")->as<schedlab::ir::BroadcastOp>()->is_broadcast_dim(),
              ElementsAre(false, true));
  EXPECT_EQ(tree(d, "s"), "reduction.sum(x)");
  EXPECT_THAT(iter_types(named(d, "s")), ElementsAre(I, R));
  EXPECT_THAT(extents(named(d, "s")), ElementsAre("N", "K"));
}

TEST(Reductions, AxisListsNegativeAxesAndAllAxes) {
  auto d = fusion("x: {dtype: f32, shape: [B, N, K]}",
                  "s = sum(x, axis=[0, -1])\nt = prod(x, axis=-2)\nu = min(x)\n"
                  "v = sum(x, axis=[2], keepdim=false)",
                  "s, t, u, v");
  EXPECT_THAT(iter_types(named(d, "s")), ElementsAre(R, I, R));
  EXPECT_THAT(iter_types(named(d, "t")), ElementsAre(I, R, I));
  EXPECT_THAT(iter_types(named(d, "u")), ElementsAre(R, R, R));
  EXPECT_THAT(iter_types(named(d, "v")), ElementsAre(I, I, R));
  EXPECT_EQ(tree(d, "t"), "reduction.prod(x)");
  EXPECT_EQ(tree(d, "u"), "reduction.min(x)");
}

TEST(Reductions, MaxWithTwoOperandsIsElementwise) {
  auto d = fusion(kNK, "e = max(x, 0)\nf = min(x, e)\nr = max(x, axis=1)\ng = maximum(x, 1)",
                  "e, f, r, g");
  EXPECT_EQ(tree(d, "e"), "maximum(x, 0)");
  EXPECT_EQ(tree(d, "f"), "minimum(x, e)");
  EXPECT_EQ(tree(d, "r"), "reduction.max(x)");
  EXPECT_EQ(tree(d, "g"), "maximum(x, 1)");
}

TEST(Reductions, MeanDividesBySizesOfTheReducedAxes) {
  auto d = fusion(kNK, "m = mean(x, axis=1, keepdim=true)\na = mean(x)", "m, a");
  EXPECT_EQ(tree(d, "m"), "div(broadcast(reduction.sum(x)), K)");
  EXPECT_THAT(iter_types(named(d, "m")), ElementsAre(I, B));
  EXPECT_EQ(tree(d, "a"), "div(reduction.sum(x), (N * K))");
  EXPECT_TRUE(def(d, "a")->inputs()[1]->as<Scalar>()->is_size());
}

TEST(Constants, NamedSizesAreValuesKnownAtLaunch) {
  auto d = fusion(kNK, "k = K\ny = x / k\nz = x - N", "y, z");
  EXPECT_EQ(tree(d, "y"), "div(x, K)");
  EXPECT_EQ(tree(d, "z"), "sub(x, N)");
  const auto* k = def(d, "y")->inputs()[1]->as<Scalar>();
  ASSERT_NE(k, nullptr);
  EXPECT_TRUE(k->is_size());
  EXPECT_EQ(k->dtype(), DataType::I64);
  // Binding a size to a name creates no tensor.
  EXPECT_EQ(d.fusion->exprs().size(), 2u);
}

// ---- other functions ------------------------------------------------------------

TEST(Functions, CastTakesThePositionalOrKeywordDtype) {
  auto d = fusion(kNK, "h = cast(x, f16)\nb = cast(x, dtype=bf16)\ni = cast(x, i32)", "h, b, i");
  EXPECT_EQ(def(d, "h")->kind(), Expr::Kind::Cast);
  EXPECT_EQ(named(d, "h")->dtype(), DataType::F16);
  EXPECT_EQ(named(d, "b")->dtype(), DataType::BF16);
  EXPECT_EQ(named(d, "i")->dtype(), DataType::I32);
}

TEST(Functions, BroadcastInsertsAxesWhereFlagged) {
  auto d = fusion("v: {dtype: f32, shape: [N]}", "b = broadcast(v, [true, false, true])", "b");
  EXPECT_THAT(iter_types(named(d, "b")), ElementsAre(B, I, B));
  EXPECT_THAT(def(d, "b")->as<schedlab::ir::BroadcastOp>()->is_broadcast_dim(),
              ElementsAre(true, false, true));
}

TEST(Functions, PermuteAndTranspose) {
  auto d = fusion("x: {dtype: f32, shape: [B, N, K]}",
                  "p = permute(x, [2, 0, 1])\nt = transpose(x, 0, -1)", "p, t");
  EXPECT_THAT(def(d, "p")->as<schedlab::ir::PermuteOp>()->new2old(), ElementsAre(2, 0, 1));
  EXPECT_THAT(extents(named(d, "p")), ElementsAre("K", "B", "N"));
  EXPECT_THAT(def(d, "t")->as<schedlab::ir::PermuteOp>()->new2old(), ElementsAre(2, 1, 0));
  EXPECT_THAT(extents(named(d, "t")), ElementsAre("K", "N", "B"));
}

TEST(Functions, BindingANameCopiesIt) {
  auto d = fusion(kNK, "y = x\nz = y\nw = set(x)", "y, z, w");
  EXPECT_EQ(tree(d, "y"), "set(x)");
  EXPECT_EQ(tree(d, "z"), "set(y)");
  EXPECT_EQ(tree(d, "w"), "set(x)");
  EXPECT_NE(named(d, "y"), named(d, "w"));
  EXPECT_EQ(d.fusion->inputs().at(0)->user_name(), "x");
}

TEST(Functions, WhereAndLogicalOperators) {
  auto d = fusion(
      kAbc, "p = a > 0\nq = logical_and(p, b < 1)\nn = logical_not(q)\ny = where(n, a, b)", "y");
  EXPECT_EQ(tree(d, "q"), "logical_and(p, lt(b, 1))");
  EXPECT_EQ(tree(d, "y"), "where(n, a, b)");
  EXPECT_EQ(named(d, "y")->dtype(), DataType::F32);
}

// ---- body layout ------------------------------------------------------------------

TEST(Body, CommentsAndBlankLinesAreIgnored) {
  auto d = fusion(kNK,
                  "# row softmax, numerically stable\n\nm = max(x, axis=1)   # row max\n\n\n"
                  "# the rest\ny = exp(x)\n",
                  "m, y");
  EXPECT_EQ(d.fusion->exprs().size(), 2u);
  EXPECT_EQ(tree(d, "y"), "exp(x)");
}

TEST(Body, InlineBodies) {
  const std::string head = "inputs:\n  x: {dtype: f32, shape: [N]}\n";
  for (const char* body : {"\"y = exp(x) * 2\"", "'y = exp(x) * 2'", "y = exp(x) * 2"}) {
    auto d = schedlab::frontend::parse_fusion_text(head + "body: " + body + "\noutputs: [y]\n",
                                                   "inline.yaml");
    EXPECT_EQ(tree(d, "y"), "mul(exp(x), 2)") << body;
  }
}

TEST(Body, UserNamesMarkBoundTensorsOnly) {
  auto d = fusion(kNK, "y = exp(x - 1) * 2", "y");
  std::vector<std::string> names;
  for (const TensorView* t : d.fusion->tensors()) names.push_back(t->user_name());
  EXPECT_THAT(names, ElementsAre("x", "", "", "y"));
}

// ---- dtypes -------------------------------------------------------------------------

TEST(Dtypes, HalfMathStaysHalfAsInPyTorch) {
  auto d = fusion("x: {dtype: f16, shape: [N]}\nh: {dtype: bf16, shape: [N]}",
                  "y = x + x\nz = cast(y, f32)\ne = exp(x)\ns = sum(x)\nm = x * h", "z, e, s, m");
  // + of two f16 tensors is an f16 op; exp computes in f32 and rounds back.
  EXPECT_EQ(tree(d, "y"), "add(x, x)");
  EXPECT_EQ(named(d, "y")->dtype(), DataType::F16);
  EXPECT_EQ(named(d, "z")->dtype(), DataType::F32);
  EXPECT_EQ(tree(d, "e"), "cast(exp(cast(x)))");
  EXPECT_EQ(named(d, "e")->dtype(), DataType::F16);
  // A reduction of a half accumulates in f32 and gives the half type (PyTorch).
  EXPECT_EQ(named(d, "s")->dtype(), DataType::F16);
  // f16 with bf16 promotes to f32.
  EXPECT_EQ(named(d, "m")->dtype(), DataType::F32);
}

TEST(Dtypes, HalfReductionsGiveTheHalfTypeRoundedOnce) {
  auto d = fusion("x: {dtype: f16, shape: [N, 4]}\nh: {dtype: bf16, shape: [N, 4]}\n"
                  "b: {dtype: bool, shape: [N, 4]}\ni: {dtype: i32, shape: [N, 4]}",
                  "s = sum(x, axis=1)\nmx = max(x, axis=1, keepdim=true)\nmn = min(h, axis=0)\n"
                  "p = prod(h)\nm = mean(x, axis=1)\nmk = mean(h, axis=1, keepdim=true)\n"
                  "v = mean((x - mx) * (x - mx), axis=1)\nf = sum(cast(x, f32), axis=1)\n"
                  "bo = max(b, axis=1)\nis = sum(i, axis=1)\nim = mean(i, axis=1)",
                  "s, mx, mn, p, m, mk, v, f, bo, is, im");
  for (const char* n : {"s", "mx", "m", "v"}) EXPECT_EQ(named(d, n)->dtype(), DataType::F16) << n;
  for (const char* n : {"mn", "p", "mk"}) EXPECT_EQ(named(d, n)->dtype(), DataType::BF16) << n;
  // Accumulated in f32, rounded once at the end: after the division for mean,
  // before keepdim's broadcast for the others.
  EXPECT_EQ(tree(d, "s"), "cast(reduction.sum(cast(x)))");
  EXPECT_EQ(tree(d, "mx"), "broadcast(cast(reduction.max(cast(x))))");
  EXPECT_EQ(tree(d, "m"), "cast(div(reduction.sum(cast(x)), 4))");
  EXPECT_EQ(tree(d, "mk"), "cast(div(broadcast(reduction.sum(cast(h))), 4))");
  // An f32 operand (the cast first) keeps an f32 result; bool, integers unchanged.
  EXPECT_EQ(named(d, "f")->dtype(), DataType::F32);
  EXPECT_EQ(tree(d, "f"), "reduction.sum(cast(x))");
  EXPECT_EQ(named(d, "bo")->dtype(), DataType::Bool);
  EXPECT_EQ(named(d, "is")->dtype(), DataType::I32);
  EXPECT_EQ(named(d, "im")->dtype(), DataType::F32);
}

TEST(Dtypes, IntegerPromotion) {
  auto d = fusion("i: {dtype: i32, shape: [N]}",
                  "q = i / 2\nf = i + 0.5\nk = i * 3\np = i ** 2\nc = i > 0", "q, f, k, p, c");
  EXPECT_EQ(named(d, "q")->dtype(), DataType::F32);
  EXPECT_EQ(named(d, "f")->dtype(), DataType::F32);
  EXPECT_EQ(named(d, "k")->dtype(), DataType::I32);
  EXPECT_EQ(named(d, "p")->dtype(), DataType::F32);
  EXPECT_EQ(named(d, "c")->dtype(), DataType::Bool);
}

// ---- the YAML around the body ------------------------------------------------------------

TEST(FusionFile, InputsRangesSizesAndNames) {
  auto d = schedlab::frontend::parse_fusion_text(
      "description: three inputs\n"
      "inputs:\n"
      "  x: {dtype: f32, shape: [N, K], range: [-4, 4]}\n"
      "  i: {dtype: i64, shape: [N, 1]}\n"
      "  w: {dtype: f64, shape: [8]}\n"
      "  l: {dtype: f32, shape: [], range: [0.5, 2]}\n"
      "sizes: {N: 4, K: 8}\n"
      "body: |\n"
      "  y = x * i + l\n"
      "  z = w * 2\n"
      "outputs: [z, y]\n",
      "some/dir/my_fusion.yaml");
  EXPECT_EQ(d.fusion->name(), "my_fusion");
  EXPECT_EQ(d.path, "some/dir/my_fusion.yaml");
  EXPECT_EQ(d.description, "three inputs");
  ASSERT_EQ(d.input_ranges.size(), 4u);
  EXPECT_EQ(d.input_ranges[0].lo, -4.0);
  EXPECT_EQ(d.input_ranges[0].hi, 4.0);
  EXPECT_EQ(d.input_ranges[1].lo, -8.0);  // integer default
  EXPECT_EQ(d.input_ranges[1].hi, 8.0);
  EXPECT_EQ(d.input_ranges[2].lo, -1.0);  // float default
  EXPECT_EQ(d.input_ranges[2].hi, 1.0);
  EXPECT_EQ(d.input_ranges[3].lo, 0.5);
  EXPECT_EQ(d.input_ranges[3].hi, 2.0);
  EXPECT_EQ(d.default_sizes, (schedlab::ir::SizeBindings{{"N", 4}, {"K", 8}}));

  std::vector<std::string> ins, outs;
  for (const auto* t : d.fusion->inputs()) ins.push_back(t->user_name());
  for (const auto* t : d.fusion->outputs()) outs.push_back(t->user_name());
  EXPECT_THAT(ins, ElementsAre("x", "i", "w", "l"));
  EXPECT_THAT(outs, ElementsAre("z", "y"));
  EXPECT_THAT(iter_types(named(d, "i")), ElementsAre(I, B));
  EXPECT_THAT(extents(named(d, "w")), ElementsAre("8"));
  EXPECT_TRUE(named(d, "l")->logical().empty());
  EXPECT_EQ(named(d, "i")->dtype(), DataType::I64);
  EXPECT_EQ(named(d, "w")->dtype(), DataType::F64);
}

TEST(FusionFile, FusionKeyOverridesTheFileStem) {
  auto d = schedlab::frontend::parse_fusion_text(
      "fusion: named\ninputs: {x: {dtype: bool, shape: [N]}}\nbody: y = logical_not(x)\n"
      "outputs: [y]\n",
      "other.yaml");
  EXPECT_EQ(d.fusion->name(), "named");
  EXPECT_EQ(named(d, "y")->dtype(), DataType::Bool);
}

TEST(FusionFile, PrintsTheSoftmaxMath) {
  auto d = schedlab::test_support::load_config_fusion("softmax");
  std::string math = schedlab::ir::print_math(*d.fusion);
  EXPECT_THAT(math, HasSubstr("T0_g_f32[iS0{N}, iS1{K}]   # x"));
  EXPECT_THAT(math, HasSubstr("= reduction(T0_g_f32[iS0{N}, iS1{K}], op = max, init = -inf)"));
  EXPECT_THAT(math, HasSubstr("T2_l_f32[iS4{N}, bS5{1}]   # m"));
}

// Every shipped fusion parses and verifies.
TEST(FusionFile, EveryConfiguredFusionLoads) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(kFusionDir)) {
    if (e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().string());
    auto d = schedlab::frontend::load_fusion_file(e.path().string());
    EXPECT_NO_THROW(schedlab::ir::verify(*d.fusion));
    EXPECT_EQ(d.fusion->inputs().size(), d.input_ranges.size());
    ++n;
  }
  EXPECT_GT(n, 0);
}

TEST(FusionFile, UnreadableFileIsAUserError) {
  try {
    schedlab::frontend::load_fusion_file("/nonexistent/fusion.yaml");
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_THAT(e.message(),
                HasSubstr("cannot read fusion file '/nonexistent/fusion.yaml': no such file"));
  }
}

// ---- resolve_fusion ------------------------------------------------------------------

/// test_support::user_error_of for the command-line helpers, whose errors
/// must carry no file position.
template <typename F>
std::string cli_error_of(F&& fn) {
  return schedlab::test_support::user_error_of([&] {
    try {
      fn();
    } catch (const UserError& e) {
      EXPECT_FALSE(e.loc().valid()) << "command-line errors have no file position";
      throw;
    }
  });
}

TEST(ResolveFusion, ByNameAndByPath) {
  using schedlab::frontend::resolve_fusion;
  const std::string softmax = kFusionDir + "/softmax.yaml";
  EXPECT_EQ(resolve_fusion("softmax", {kFusionDir}), softmax);
  // Directories are searched in order; a missing one is skipped.
  EXPECT_EQ(resolve_fusion("softmax", {"/nonexistent", kFusionDir}), softmax);
  EXPECT_EQ(resolve_fusion(softmax, {}), softmax);
}

TEST(ResolveFusion, Errors) {
  using schedlab::frontend::resolve_fusion;
  EXPECT_EQ(cli_error_of([&] { resolve_fusion("softmx", {kFusionDir}); }),
            "unknown fusion 'softmx'; expected a file path or a name from " + kFusionDir +
                " (did you mean 'softmax'?)");
  EXPECT_EQ(cli_error_of([&] { resolve_fusion("softmax", {}); }),
            "unknown fusion 'softmax'; expected a file path or a name from (no directories)");
  EXPECT_EQ(cli_error_of([&] { resolve_fusion("no/such.yaml", {kFusionDir}); }),
            "fusion file 'no/such.yaml' does not exist");
}

// ---- sizes ---------------------------------------------------------------------------------

TEST(Sizes, ParseSizeList) {
  using schedlab::frontend::parse_size_list;
  EXPECT_EQ(parse_size_list("N=4,K=8", "--size"), (schedlab::ir::SizeBindings{{"N", 4}, {"K", 8}}));
  EXPECT_TRUE(parse_size_list("", "--size").empty());
}

TEST(Sizes, ParseSizeListErrors) {
  using schedlab::frontend::parse_size_list;
  auto err = [](const std::string& text) {
    return cli_error_of([&] { parse_size_list(text, "--size"); });
  };
  EXPECT_EQ(err("N=4,K8"), "--size: expected NAME=VALUE, found 'K8' in 'N=4,K8'");
  EXPECT_EQ(err("4=4"), "--size: expected a size name before '=', found '4'");
  EXPECT_EQ(err("N=0"), "--size: N must be a positive integer, found '0'");
  EXPECT_EQ(err("N=-3"), "--size: N must be a positive integer, found '-3'");
  EXPECT_EQ(err("N=x"), "--size: N must be a positive integer, found 'x'");
  EXPECT_EQ(err("N=4,N=5"), "--size: N is given twice");
}

TEST(Sizes, BindSizesOverlaysDefaults) {
  using schedlab::frontend::bind_sizes;
  auto d = schedlab::frontend::parse_fusion_text(
      "inputs: {x: {dtype: f32, shape: [N, K]}}\nsizes: {K: 8}\nbody: y = exp(x)\noutputs: [y]\n",
      "f.yaml");
  EXPECT_EQ(bind_sizes(d, {{"N", 2}}), (schedlab::ir::SizeBindings{{"N", 2}, {"K", 8}}));
  EXPECT_EQ(bind_sizes(d, {{"N", 2}, {"K", 3}}), (schedlab::ir::SizeBindings{{"N", 2}, {"K", 3}}));
}

TEST(Sizes, BindSizesErrors) {
  using schedlab::frontend::bind_sizes;
  auto d = schedlab::frontend::parse_fusion_text(
      "inputs: {x: {dtype: f32, shape: [N, K]}}\nbody: y = exp(x)\noutputs: [y]\n", "f.yaml");
  EXPECT_EQ(cli_error_of([&] {
              bind_sizes(d, {{"N", 2}});
            }),
            "fusion 'f': size K is not bound; pass it with --size K=<value>");
  EXPECT_EQ(cli_error_of([&] {
              bind_sizes(d, {{"N", 2}, {"K", 2}, {"Q", 3}});
            }),
            "fusion 'f' has no size named Q; its sizes are N, K");
  EXPECT_EQ(cli_error_of([&] {
              bind_sizes(d, {{"N", 0}, {"K", 2}});
            }),
            "fusion 'f': size N must be positive, found 0");
  auto c = schedlab::frontend::parse_fusion_text(
      "inputs: {x: {dtype: f32, shape: [4]}}\nbody: y = exp(x)\noutputs: [y]\n", "c.yaml");
  EXPECT_TRUE(bind_sizes(c, {}).empty());
  EXPECT_EQ(cli_error_of([&] {
              bind_sizes(c, {{"N", 2}});
            }),
            "fusion 'c' has no size named N; its sizes are (none)");
}

// mesh: and shard: (docs/multi-device.md): the mesh, and each declaration
// by index (negative from the end), by size name, and `replicated`; an index
// counts the shape's axes, a reduction's reduced axes left out.
TEST(Mesh, ShardDeclarations) {
  auto d = schedlab::frontend::parse_fusion_text(R"(fusion: m
inputs:
  x: {dtype: f32, shape: [N, K]}
  w: {dtype: f32, shape: [K]}
mesh: [3, 1]
shard: {x: -1, w: replicated, s: N}
body: |
  s = sum(x, axis=1)
  y = s * 2
outputs: [y]
)",
                                                 "m.yaml");
  const auto& f = *d.fusion;
  ASSERT_TRUE(schedlab::ir::device_mesh(f));
  EXPECT_EQ(schedlab::ir::device_mesh(f)->str(), "[3, 1]");
  auto x = schedlab::ir::declared_sharding(f.inputs()[0]);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->axis, 1);
  auto w = schedlab::ir::declared_sharding(f.inputs()[1]);
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->sharded());
  const schedlab::ir::TensorView* s =
      f.outputs()[0]->definition()->inputs()[0]->as<schedlab::ir::TensorView>();
  auto ss = schedlab::ir::declared_sharding(s);
  ASSERT_TRUE(ss);
  EXPECT_EQ(ss->axis, 0);
  EXPECT_FALSE(schedlab::ir::declared_sharding(f.outputs()[0]));
}

TEST(Mesh, NoMeshNoDeclarations) {
  auto d =
      schedlab::frontend::load_fusion_file(SCHEDLAB_SOURCE_DIR "/configs/fusions/softmax.yaml");
  EXPECT_FALSE(schedlab::ir::device_mesh(*d.fusion));
  for (const auto* t : d.fusion->tensors()) EXPECT_FALSE(schedlab::ir::declared_sharding(t));
}

TEST(Mesh, IrChecks) {
  schedlab::ir::Fusion f("g");
  auto* t = f.make_tensor(schedlab::ir::DataType::F32, {schedlab::ir::SizeExpr::symbol("N")});
  f.add_input(t);
  EXPECT_THROW(schedlab::ir::shard(t, 0), schedlab::UserError);  // no mesh
  EXPECT_THROW(schedlab::ir::set_device_mesh(f, {{0, 0}}), schedlab::UserError);
  EXPECT_THROW(schedlab::ir::set_device_mesh(f, {{}}), schedlab::UserError);
  schedlab::ir::set_device_mesh(f, schedlab::ir::DeviceMesh::of_size(2));
  EXPECT_THROW(schedlab::ir::set_device_mesh(f, {{0, 1, 2}}), schedlab::UserError);
  EXPECT_THROW(schedlab::ir::shard(t, 1), schedlab::UserError);
  schedlab::ir::shard(t, -1);
  EXPECT_EQ(schedlab::ir::declared_sharding(t)->axis, 0);
}

}  // namespace
