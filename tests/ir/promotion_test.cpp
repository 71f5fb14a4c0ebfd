// Result dtypes of the builder (arith.h) against PyTorch's type promotion,
// torch.result_type, as a table: for each operation and operand pair, the
// dtype PyTorch gives (written down from PyTorch's documented rules; PyTorch
// is not installed here, and must not be). A Python scalar is a constant
// (a float one F64, an int one I64): it never widens a tensor of its own
// category.
#include <gtest/gtest.h>

#include <string>

#include "schedlab/ir/arith.h"
#include "schedlab/ir/verifier.h"
#include "test_fusions.h"

namespace schedlab::ir {
namespace {

using testing::input;
using testing::sym;
using D = DataType;

/// An operand: a tensor of a dtype, or a Python float/int scalar.
struct Operand {
  enum class Kind { Tensor, Float, Int } kind;
  D dtype = D::F32;
  std::string str() const {
    return kind == Kind::Float ? "0.5" : kind == Kind::Int ? "2" : std::string(dtype_name(dtype));
  }
};
constexpr Operand T(D d) { return {Operand::Kind::Tensor, d}; }
constexpr Operand kFloat{Operand::Kind::Float};
constexpr Operand kInt{Operand::Kind::Int};

struct Case {
  std::string op;  // add, mul, sub, div, lt, max, where
  Operand a, b;
  D want;
};

Val* make(Fusion& f, const Operand& o, int i) {
  switch (o.kind) {
    case Operand::Kind::Float: return constant(f, 0.5);
    case Operand::Kind::Int: return constant(f, 2, D::I64);
    case Operand::Kind::Tensor: break;
  }
  return input(f, "t" + std::to_string(i), o.dtype, {sym("N")});
}

Val* apply(Fusion& f, const std::string& op, Val* a, Val* b) {
  if (op == "add") return add(a, b);
  if (op == "sub") return sub(a, b);
  if (op == "mul") return mul(a, b);
  if (op == "div") return div(a, b);
  if (op == "max") return binary(BinaryOpType::Max, a, b);
  if (op == "lt") return binary(BinaryOpType::Lt, a, b);
  Val* c = binary(BinaryOpType::Gt, input(f, "c", D::F32, {sym("N")}), constant(f, 0.0));
  return where(c, a, b);
}

class PromotionTest : public ::testing::TestWithParam<Case> {};

TEST_P(PromotionTest, MatchesTorchResultType) {
  const Case& c = GetParam();
  Fusion f;
  Val* r = apply(f, c.op, make(f, c.a, 0), make(f, c.b, 1));
  EXPECT_EQ(dtype_name(r->dtype()), dtype_name(c.want))
      << c.op << "(" << c.a.str() << ", " << c.b.str() << ")";
  f.add_output(r->as<TensorView>());
  EXPECT_NO_THROW(verify(f));
}

// torch.result_type(a, b) for the arithmetic ops; bool for comparisons.
INSTANTIATE_TEST_SUITE_P(
    Torch, PromotionTest,
    ::testing::Values(
        // tensor-tensor: the half types stay themselves, mix to f32
        Case{"add", T(D::F16), T(D::F16), D::F16}, Case{"mul", T(D::BF16), T(D::BF16), D::BF16},
        Case{"sub", T(D::F16), T(D::BF16), D::F32}, Case{"mul", T(D::F16), T(D::F32), D::F32},
        Case{"add", T(D::BF16), T(D::F64), D::F64}, Case{"mul", T(D::F16), T(D::I32), D::F16},
        Case{"add", T(D::I64), T(D::BF16), D::BF16}, Case{"add", T(D::I32), T(D::I64), D::I64},
        Case{"mul", T(D::I32), T(D::I32), D::I32}, Case{"add", T(D::F32), T(D::I64), D::F32},
        Case{"max", T(D::F16), T(D::F16), D::F16}, Case{"max", T(D::BF16), T(D::I32), D::BF16},
        // true division: integers give the default float, halves stay
        Case{"div", T(D::I32), T(D::I32), D::F32}, Case{"div", T(D::I64), T(D::I32), D::F32},
        Case{"div", T(D::F16), T(D::F16), D::F16}, Case{"div", T(D::I32), T(D::BF16), D::BF16},
        // a Python float does not widen a float tensor; it makes an integer
        // tensor's arithmetic the default float (f32)
        Case{"mul", T(D::F16), kFloat, D::F16}, Case{"add", kFloat, T(D::BF16), D::BF16},
        Case{"mul", T(D::I32), kFloat, D::F32}, Case{"sub", T(D::I64), kFloat, D::F32},
        Case{"mul", T(D::F32), kFloat, D::F32}, Case{"add", T(D::F64), kFloat, D::F64},
        Case{"div", T(D::F16), kFloat, D::F16},
        // a Python int widens nothing
        Case{"mul", T(D::F16), kInt, D::F16}, Case{"add", T(D::I32), kInt, D::I32},
        Case{"div", T(D::I32), kInt, D::F32},
        // comparisons are bool
        Case{"lt", T(D::F16), T(D::F16), D::Bool}, Case{"lt", T(D::I32), kFloat, D::Bool},
        // where: the branches' promotion
        Case{"where", T(D::F16), T(D::F16), D::F16}, Case{"where", T(D::BF16), kFloat, D::BF16},
        Case{"where", T(D::I32), T(D::F16), D::F16}, Case{"where", T(D::I32), kFloat, D::F32}),
    [](const ::testing::TestParamInfo<Case>& i) {
      auto name = [](const Operand& o) {
        return o.kind == Operand::Kind::Float ? std::string("float")
               : o.kind == Operand::Kind::Int ? std::string("int")
                                              : std::string(dtype_name(o.dtype));
      };
      return i.param.op + "_" + name(i.param.a) + "_" + name(i.param.b);
    });

struct UnaryCase {
  UnaryOpType op;
  D in, want;
};
class UnaryPromotionTest : public ::testing::TestWithParam<UnaryCase> {};

TEST_P(UnaryPromotionTest, MatchesTorch) {
  const UnaryCase& c = GetParam();
  Fusion f;
  Val* r = unary(c.op, input(f, "x", c.in, {sym("N")}));
  EXPECT_EQ(dtype_name(r->dtype()), dtype_name(c.want))
      << unary_op_name(c.op) << "(" << dtype_name(c.in) << ")";
  f.add_output(r->as<TensorView>());
  EXPECT_NO_THROW(verify(f));
}

// Unary math keeps a float dtype (exp of f16 is f16); integers' transcendental
// math is the default float; neg/abs/relu keep integers.
INSTANTIATE_TEST_SUITE_P(
    Torch, UnaryPromotionTest,
    ::testing::Values(UnaryCase{UnaryOpType::Exp, D::F16, D::F16},
                      UnaryCase{UnaryOpType::Tanh, D::BF16, D::BF16},
                      UnaryCase{UnaryOpType::Erf, D::F16, D::F16},
                      UnaryCase{UnaryOpType::Rsqrt, D::BF16, D::BF16},
                      UnaryCase{UnaryOpType::Relu, D::F16, D::F16},
                      UnaryCase{UnaryOpType::Neg, D::F16, D::F16},
                      UnaryCase{UnaryOpType::Abs, D::BF16, D::BF16},
                      UnaryCase{UnaryOpType::Sqrt, D::F64, D::F64},
                      UnaryCase{UnaryOpType::Exp, D::I32, D::F32},
                      UnaryCase{UnaryOpType::Sigmoid, D::I64, D::F32},
                      UnaryCase{UnaryOpType::Neg, D::I32, D::I32},
                      UnaryCase{UnaryOpType::Abs, D::I64, D::I64}),
    [](const ::testing::TestParamInfo<UnaryCase>& i) {
      return std::string(unary_op_name(i.param.op)) + "_" + std::string(dtype_name(i.param.in));
    });

}  // namespace
}  // namespace schedlab::ir
