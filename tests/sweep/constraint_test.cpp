// Constraint expressions: precedence, integer and real semantics, types,
// and the columns of errors. Positions in files are covered by
// invalid/constraint_*.yaml.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "schedlab/sweep/spec/constraint.h"
#include "test_support.h"

namespace schedlab::sweep {
namespace {

using test_support::user_error_of;

const std::map<std::string, ValueType> kNames = {
    {"K", ValueType::Int},       {"N", ValueType::Int},        {"block", ValueType::Int},
    {"vector", ValueType::Int},  {"order", ValueType::String}, {"eps", ValueType::Float},
    {"welford", ValueType::Bool}};

ColumnLocator at_line(int line) {
  return [line](int col) { return SourceLoc{"c.yaml", line, col}; };
}

/// Evaluates `text` with the values below: K=1000, N=-7, block=128,
/// vector="4" (a choice with integer names arrives as a string), order=inner,
/// eps=0.5, welford=true.
bool eval(const std::string& text) {
  const std::map<std::string, Value> values = {
      {"K", Value::integer(1000)},       {"N", Value::integer(-7)},
      {"block", Value::integer(128)},    {"vector", Value::string("4")},
      {"order", Value::string("inner")}, {"eps", Value::real(0.5)},
      {"welford", Value::boolean(true)}};
  Constraint c = Constraint::parse(text, kNames, at_line(1));
  return c.holds([&](const std::string& n) -> const Value& { return values.at(n); });
}

TEST(Constraint, ArithmeticAndComparison) {
  EXPECT_TRUE(eval("block * vector <= K"));  // 512 <= 1000
  EXPECT_FALSE(eval("block * vector * 2 <= K"));
  EXPECT_TRUE(eval("K % vector == 0"));
  EXPECT_FALSE(eval("K % 3 == 0"));
  EXPECT_TRUE(eval("1 + 2 * 3 == 7"));  // * binds tighter than +
  EXPECT_TRUE(eval("(1 + 2) * 3 == 9"));
  EXPECT_TRUE(eval("10 - 2 - 3 == 5"));  // left associative
  EXPECT_TRUE(eval("-block == 0 - 128"));
}

TEST(Constraint, IntegerDivisionTruncatesTowardZero) {
  EXPECT_TRUE(eval("K / 3 == 333"));
  EXPECT_TRUE(eval("N / 2 == -3"));  // C, not floor (-4)
  EXPECT_TRUE(eval("N % 2 == -1"));  // the dividend's sign
  EXPECT_TRUE(eval("7 / 2 * 2 == 6"));
}

TEST(Constraint, RealOperandsMakeRealArithmetic) {
  EXPECT_TRUE(eval("eps * 2 == 1"));
  EXPECT_TRUE(eval("7 / 2.0 == 3.5"));
  EXPECT_TRUE(eval("eps < 1 and eps > 0.25"));
}

TEST(Constraint, LogicPrecedence) {
  EXPECT_TRUE(eval("true or false and false"));  // and binds tighter than or
  EXPECT_FALSE(eval("(true or false) and false"));
  EXPECT_TRUE(eval("not block > K"));  // not binds looser than comparison
  EXPECT_TRUE(eval("not not welford"));
  EXPECT_TRUE(eval("welford == true and order == 'inner' and order != \"outer\""));
}

TEST(Constraint, DivisionByZeroIsAnErrorAtTheOperator) {
  Constraint c = Constraint::parse("K / (block - 128) > 1", kNames, at_line(3));
  const std::map<std::string, Value> v = {{"K", Value::integer(5)}, {"block", Value::integer(128)}};
  try {
    c.holds([&](const std::string& n) -> const Value& { return v.at(n); });
    FAIL() << "expected a division-by-zero error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc().line, 3);
    EXPECT_EQ(e.loc().col, 3);
    EXPECT_EQ(e.message(), "constraint: division by zero (5 / 0); expected a non-zero divisor");
  }
}

TEST(Constraint, ErrorsNameTheColumn) {
  auto col_of = [](const std::string& text) {
    try {
      Constraint::parse(text, kNames, at_line(1));
    } catch (const UserError& e) {
      return e.loc().col;
    }
    return 0;
  };
  EXPECT_EQ(col_of("block * vec <= K"), 9);
  EXPECT_EQ(col_of("block <= K)"), 11);
  EXPECT_EQ(col_of("(block <= K"), 12);
  EXPECT_EQ(col_of("block % eps == 0"), 7);
  EXPECT_EQ(col_of("order < 'z'"), 7);
  EXPECT_EQ(col_of("block = 128"), 7);
}

TEST(Constraint, Messages) {
  auto msg = [](const std::string& text) {
    return user_error_of([&] { Constraint::parse(text, kNames, at_line(1)); });
  };
  EXPECT_EQ(msg("block % eps == 0"), "constraint: '%' expects integer operands, found real 'eps'");
  EXPECT_EQ(msg("order < 'z'"),
            "constraint: cannot compare string 'order' with string 'z' using '<'; expected two "
            "numbers");
  EXPECT_EQ(msg("welford == 1"),
            "constraint: cannot compare bool 'welford' with integer 1 using '=='; expected two "
            "numbers, two strings or two bools");
  EXPECT_EQ(msg("block <= K)"),
            "constraint: expected an operator or the end of the constraint, found ')'");
  EXPECT_EQ(msg("(block <= K"),
            "constraint: expected ')' to close the '(' at column 1, found the end of the "
            "constraint");
  EXPECT_EQ(msg("block = 128"),
            "constraint: unexpected character '='; expected a name, a number, a 'string', an "
            "operator (+ - * / % == != < <= > >= and or not) or a parenthesis (write '==' to "
            "compare)");
  EXPECT_EQ(msg("   "),
            "constraint: expected an expression such as 'block * vector <= K', found nothing");
  EXPECT_EQ(msg("welford and block"),
            "constraint: 'and' expects bool operands, found integer 'block'");
  EXPECT_EQ(msg("blocks > 1"),
            "constraint: unknown name 'blocks'; expected a size every fusion has, a swept "
            "parameter or a `set:` parameter: K, N, block, eps, order, vector, welford (did you "
            "mean 'block'?)");
  EXPECT_EQ(msg("2x > 1"),
            "constraint: malformed number '2x...'; expected digits, e.g. 128 or 0.5");
  EXPECT_EQ(msg("order == 'inner"), "constraint: unterminated string; expected a closing '");
}

}  // namespace
}  // namespace schedlab::sweep
