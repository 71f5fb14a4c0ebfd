#include "parser.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numbers>
#include <optional>

#include "schedlab/base/nesting.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/reshape.h"

namespace schedlab::frontend {

using ir::BinaryOpType;
using ir::DataType;
using ir::ReductionOpType;
using ir::TensorView;
using ir::UnaryOpType;
using ir::Val;

namespace {

/// One argument of a call: positional or keyword; an expression, a bracketed
/// list, or a dtype name.
struct Arg {
  Token at;                 ///< first token of the value
  Token key;                ///< the keyword's token; equals `at` when positional
  std::string keyword;      ///< "" when positional
  Val* val = nullptr;       ///< an expression's value
  bool is_list = false;     ///< a [ ... ] list
  std::vector<Token> list;  ///< its items (Number, possibly negated, or true/false)
  std::optional<DataType> dtype;  ///< a dtype name
};

struct Call {
  Token name;
  std::vector<Arg> args;
};

const std::vector<std::pair<std::string, UnaryOpType>> kUnary = {
    {"neg", UnaryOpType::Neg},       {"abs", UnaryOpType::Abs},
    {"exp", UnaryOpType::Exp},       {"log", UnaryOpType::Log},
    {"sqrt", UnaryOpType::Sqrt},     {"rsqrt", UnaryOpType::Rsqrt},
    {"tanh", UnaryOpType::Tanh},     {"sigmoid", UnaryOpType::Sigmoid},
    {"relu", UnaryOpType::Relu},     {"erf", UnaryOpType::Erf},
    {"reciprocal", UnaryOpType::Reciprocal}, {"logical_not", UnaryOpType::Not}};

const std::vector<std::pair<std::string, BinaryOpType>> kBinary = {
    {"add", BinaryOpType::Add},     {"sub", BinaryOpType::Sub},
    {"mul", BinaryOpType::Mul},     {"div", BinaryOpType::Div},
    {"maximum", BinaryOpType::Max}, {"minimum", BinaryOpType::Min},
    {"pow", BinaryOpType::Pow},     {"lt", BinaryOpType::Lt},
    {"le", BinaryOpType::Le},       {"gt", BinaryOpType::Gt},
    {"ge", BinaryOpType::Ge},       {"eq", BinaryOpType::Eq},
    {"ne", BinaryOpType::Ne},       {"logical_and", BinaryOpType::And},
    {"logical_or", BinaryOpType::Or}};

const std::vector<std::pair<std::string, ReductionOpType>> kReduce = {
    {"sum", ReductionOpType::Sum},
    {"max", ReductionOpType::Max},
    {"min", ReductionOpType::Min},
    {"prod", ReductionOpType::Prod}};

const std::vector<std::string> kOtherFunctions = {"mean",      "where",   "cast",
                                                  "broadcast", "set",     "permute",
                                                  "transpose", "matmul",  "linear",
                                                  "reshape",   "view",    "flatten",
                                                  "squeeze",   "unsqueeze", "expand"};
const std::vector<std::string> kReserved = {"true", "false", "inf", "nan", "pi"};

template <typename T>
const T* lookup(const std::vector<std::pair<std::string, T>>& table, const std::string& n) {
  for (const auto& [k, v] : table)
    if (k == n) return &v;
  return nullptr;
}

std::vector<std::string> all_function_names() {
  std::vector<std::string> r;
  for (const auto& [k, v] : kUnary) r.push_back(k);
  for (const auto& [k, v] : kBinary) r.push_back(k);
  for (const auto& [k, v] : kReduce) r.push_back(k);
  r.insert(r.end(), kOtherFunctions.begin(), kOtherFunctions.end());
  return r;
}

class Parser {
 public:
  Parser(std::vector<Token> toks, const Locator& loc, ir::Fusion& f, Scope& scope)
      : toks_(std::move(toks)), loc_(loc), f_(f), scope_(scope) {}

  void run() {
    while (cur().kind != Token::Kind::End) statement();
  }

 private:
  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t k = 1) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token take() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  SourceLoc at(const Token& t) const { return loc_(t.line, t.col); }

  void expect(const char* punct, const std::string& context) {
    if (!cur().is(punct))
      user_error_at(at(cur())) << "expected '" << punct << "' " << context << ", found "
                               << cur().describe();
    take();
  }

  /// Runs a builder call; a UserError it raises without a location is
  /// re-raised at `t`.
  template <typename F>
  auto build(const Token& t, F&& fn) -> decltype(fn()) {
    try {
      return fn();
    } catch (const UserError& e) {
      if (e.loc().valid()) throw;
      throw UserError(at(t), e.message());
    }
  }

  void statement() {
    Token name = take();
    if (name.kind != Token::Kind::Ident)
      user_error_at(at(name)) << "expected a statement 'name = expression', found "
                              << name.describe();
    if (std::find(kReserved.begin(), kReserved.end(), name.text) != kReserved.end())
      user_error_at(at(name)) << "'" << name.text
                              << "' is a reserved constant; expected a new name to bind";
    if (auto it = scope_.find(name.text); it != scope_.end())
      user_error_at(at(name)) << "'" << name.text << "' is already defined at "
                              << it->second.where.str() << "; each name is bound once";
    if (!cur().is("="))
      user_error_at(at(cur())) << "expected '=' after '" << name.text << "', found "
                               << cur().describe();
    take();
    if (cur().kind == Token::Kind::Newline || cur().kind == Token::Kind::End)
      user_error_at(at(cur())) << "expected an expression after '" << name.text << " =', found "
                               << cur().describe();
    Token first = cur();
    Val* v = expr();
    if (cur().kind != Token::Kind::Newline)
      user_error_at(at(cur())) << "expected end of line after the expression bound to '"
                               << name.text << "', found " << cur().describe();
    take();
    // `y = x` makes a copy, so that every name owns its tensor.
    if (auto* t = v->as<TensorView>(); t && !t->user_name().empty())
      v = build(first, [&] { return ir::set(t); });
    if (auto* t = v->as<TensorView>()) t->set_user_name(name.text);
    scope_.emplace(name.text, Binding{v, at(name)});
  }

  Val* expr() {
    // Parentheses and call arguments re-enter here.
    NestingGuard nest(depth_, at(cur()), "expression");
    Val* lhs = additive();
    static const std::vector<std::pair<std::string, BinaryOpType>> cmp = {
        {"==", BinaryOpType::Eq}, {"!=", BinaryOpType::Ne}, {"<", BinaryOpType::Lt},
        {"<=", BinaryOpType::Le}, {">", BinaryOpType::Gt},  {">=", BinaryOpType::Ge}};
    if (cur().kind != Token::Kind::Punct) return lhs;
    const BinaryOpType* op = lookup(cmp, cur().text);
    if (!op) return lhs;
    Token t = take();
    Val* rhs = additive();
    Val* r = build(t, [&] { return ir::binary(*op, lhs, rhs); });
    if (cur().kind == Token::Kind::Punct && lookup(cmp, cur().text))
      user_error_at(at(cur())) << "comparisons do not chain; found " << cur().describe()
                               << " after a comparison, expected end of expression";
    return r;
  }

  Val* additive() {
    Val* lhs = multiplicative();
    while (cur().is("+") || cur().is("-")) {
      Token t = take();
      Val* rhs = multiplicative();
      auto op = t.text == "+" ? BinaryOpType::Add : BinaryOpType::Sub;
      lhs = build(t, [&] { return ir::binary(op, lhs, rhs); });
    }
    return lhs;
  }

  Val* multiplicative() {
    Val* lhs = unary();
    while (cur().is("*") || cur().is("/")) {
      Token t = take();
      Val* rhs = unary();
      auto op = t.text == "*" ? BinaryOpType::Mul : BinaryOpType::Div;
      lhs = build(t, [&] { return ir::binary(op, lhs, rhs); });
    }
    return lhs;
  }

  Val* unary() {
    if (cur().is("-")) {
      NestingGuard nest(depth_, at(cur()), "expression");
      Token t = take();
      Val* v = unary();
      return build(t, [&] { return ir::unary(UnaryOpType::Neg, v); });
    }
    return power();
  }

  Val* power() {
    Val* base = primary();
    if (!cur().is("**")) return base;
    Token t = take();
    Val* e = unary();
    return build(t, [&] { return ir::binary(BinaryOpType::Pow, base, e); });
  }

  Val* primary() {
    Token t = cur();
    if (t.is("(")) {
      take();
      Val* v = expr();
      if (!cur().is(")"))
        user_error_at(at(cur())) << "expected ')' to close the '(' at " << at(t).str()
                                 << ", found " << cur().describe();
      take();
      return v;
    }
    if (t.kind == Token::Kind::Number) {
      take();
      bool integral = t.text.find_first_of(".eE") == std::string::npos;
      char* end = nullptr;
      double v = std::strtod(t.text.c_str(), &end);
      // The lexer takes any run of digits and dots, so "1.2.3" arrives here.
      if (*end != '\0')
        user_error_at(at(t)) << "malformed number '" << t.text << "'; expected digits with an "
                             << "optional fraction and exponent, e.g. 2, 0.5, 1e-5";
      if (!std::isfinite(v))
        user_error_at(at(t)) << "number " << t.text << " is out of range; expected a finite "
                             << "value (write inf for infinity)";
      if (integral && std::fabs(v) > 9007199254740992.0)
        user_error_at(at(t)) << "integer constant " << t.text
                             << " is too large; expected at most 2^53 in magnitude";
      return ir::constant(f_, v, integral ? DataType::I64 : DataType::F64);
    }
    if (t.kind != Token::Kind::Ident)
      user_error_at(at(t)) << "expected an expression (a name, a number, a call or '('), found "
                           << t.describe();
    take();
    if (cur().is("(")) return call(t);
    if (t.text == "true" || t.text == "false")
      return ir::constant(f_, t.text == "true" ? 1.0 : 0.0, DataType::Bool);
    if (t.text == "inf") return ir::constant(f_, INFINITY, DataType::F64);
    if (t.text == "nan") return ir::constant(f_, NAN, DataType::F64);
    if (t.text == "pi") return ir::constant(f_, std::numbers::pi, DataType::F64);
    auto it = scope_.find(t.text);
    if (it != scope_.end()) return it->second.val;
    // A named size of the inputs' shapes is a value known at launch. (Asked
    // only for a name not bound: size_symbols() walks every input, and a
    // fusion with thousands of inputs has thousands of names to look up.)
    if (auto sizes = f_.size_symbols(); std::find(sizes.begin(), sizes.end(), t.text) != sizes.end())
      return f_.make_size_scalar(ir::SizeExpr::symbol(t.text));
    if (auto fns = all_function_names(); std::find(fns.begin(), fns.end(), t.text) != fns.end())
      user_error_at(at(cur())) << "expected '(' after the function '" << t.text << "', found "
                               << cur().describe();
    {
      std::vector<std::string> names;
      for (const auto& [k, v] : scope_) names.push_back(k);
      std::string hint = closest_name(t.text, names);
      user_error_at(at(t)) << "unknown name '" << t.text
                           << "'; expected an input or a name bound on an earlier line"
                           << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
    }
    return it->second.val;
  }

  /// Argument number `index` of a call to `callee`.
  Arg argument(const Token& callee, size_t index) {
    Arg a{cur(), cur(), "", nullptr, false, {}, std::nullopt};
    if (cur().kind == Token::Kind::Ident && peek().is("=")) {
      a.keyword = take().text;
      take();
      a.at = cur();
    }
    if (cur().is("[")) {
      take();
      while (!cur().is("]")) {
        Token item = cur();
        if (item.is("-") && peek().kind == Token::Kind::Number) {
          take();
          item = take();
          item.text = "-" + item.text;
        } else if (item.kind == Token::Kind::Number ||
                   (item.kind == Token::Kind::Ident && (item.text == "true" || item.text == "false")) ||
                   (item.kind == Token::Kind::Ident && takes_shape(callee.text))) {
          take();
        } else {
          user_error_at(at(item)) << "expected an integer or true/false in the list, found "
                                  << item.describe();
        }
        a.list.push_back(item);
        if (cur().is(",")) take();
        else if (!cur().is("]"))
          user_error_at(at(cur())) << "expected ',' or ']' in the list, found " << cur().describe();
      }
      take();
      a.is_list = true;
      return a;
    }
    if (cur().kind == Token::Kind::Ident && !scope_.count(cur().text) &&
        (peek().is(",") || peek().is(")"))) {
      if (auto d = ir::parse_dtype(cur().text)) {
        take();
        a.dtype = d;
        return a;
      }
      // A misspelt dtype would otherwise be reported as an unknown name.
      bool dtype_slot =
          callee.text == "cast" && (a.keyword == "dtype" || (a.keyword.empty() && index == 1));
      if (dtype_slot &&
          std::find(kReserved.begin(), kReserved.end(), cur().text) == kReserved.end())
        user_error_at(at(cur())) << "cast: expected a dtype (" << ir::dtype_choices() << "), found "
                                 << cur().describe();
    }
    a.val = expr();
    return a;
  }

  Val* call(const Token& name) {
    Call c{name, {}};
    Token open = take();  // '('
    while (!cur().is(")")) {
      if (cur().kind == Token::Kind::Newline || cur().kind == Token::Kind::End)
        user_error_at(at(cur())) << "expected ')' to close the call to '" << name.text << "' at "
                                 << at(name).str() << ", found " << cur().describe();
      c.args.push_back(argument(name, c.args.size()));
      if (cur().is(",")) take();
      else if (!cur().is(")"))
        user_error_at(at(cur())) << "expected ',' or ')' in the call to '" << name.text
                                 << "', found " << cur().describe();
    }
    take();
    (void)open;
    return dispatch(c);
  }

  // ---- argument access --------------------------------------------------

  std::vector<const Arg*> positional(const Call& c) const {
    std::vector<const Arg*> r;
    for (const Arg& a : c.args)
      if (a.keyword.empty()) r.push_back(&a);
    return r;
  }

  void check_keywords(const Call& c, const std::vector<std::string>& allowed) const {
    bool seen_kw = false;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const Arg& a = c.args[i];
      if (a.keyword.empty()) {
        if (seen_kw)
          user_error_at(at(a.at)) << c.name.text
                                  << ": positional argument after a keyword argument";
        continue;
      }
      seen_kw = true;
      if (std::find(allowed.begin(), allowed.end(), a.keyword) == allowed.end()) {
        std::string list, hint = closest_name(a.keyword, allowed);
        for (const auto& k : allowed) list += (list.empty() ? "" : ", ") + k;
        user_error_at(at(a.key)) << c.name.text << ": unknown keyword '" << a.keyword
                                 << "'; expected " << (list.empty() ? "no keywords" : list)
                                 << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
      }
      for (size_t j = 0; j < i; ++j)
        if (c.args[j].keyword == a.keyword)
          user_error_at(at(a.key)) << c.name.text << ": keyword '" << a.keyword
                                   << "' given twice (first at " << at(c.args[j].key).str() << ")";
    }
  }

  const Arg* keyword(const Call& c, const std::string& k) const {
    for (const Arg& a : c.args)
      if (a.keyword == k) return &a;
    return nullptr;
  }

  void check_arity(const Call& c, size_t lo, size_t hi) const {
    size_t n = positional(c).size();
    if (n >= lo && n <= hi) return;
    std::string want = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
    user_error_at(at(c.name)) << c.name.text << ": expected " << want << " positional argument"
                              << (hi == 1 ? "" : "s") << ", found " << n;
  }

  Val* value(const Call& c, const Arg* a, const char* what) const {
    if (!a->val)
      user_error_at(at(a->at)) << c.name.text << ": expected an expression for " << what
                               << ", found " << (a->is_list ? "a list" : "a dtype name");
    return a->val;
  }

  TensorView* tensor(const Call& c, const Arg* a, const char* what) const {
    Val* v = value(c, a, what);
    if (!v->is<TensorView>())
      user_error_at(at(a->at)) << c.name.text << ": expected a tensor for " << what
                               << ", found the constant " << v->str();
    return v->as<TensorView>();
  }

  int64_t int_item(const Call& c, const Token& t, const char* what) const {
    bool ok = t.kind == Token::Kind::Number && t.text.find_first_of(".eE") == std::string::npos;
    if (!ok)
      user_error_at(at(t)) << c.name.text << ": expected an integer " << what << ", found "
                           << t.describe();
    return std::strtoll(t.text.c_str(), nullptr, 10);
  }

  /// An integer given as a list item, a literal, or a negated literal.
  std::vector<int> int_list(const Call& c, const Arg* a, const char* what) const {
    std::vector<int> r;
    if (a->is_list) {
      for (const Token& t : a->list) r.push_back(static_cast<int>(int_item(c, t, what)));
      return r;
    }
    auto* s = a->val ? a->val->as<ir::Scalar>() : nullptr;
    if (!s || s->is_size() || !ir::is_integral(s->dtype()))
      user_error_at(at(a->at)) << c.name.text << ": expected an integer or a list of integers for "
                               << what << ", found " << (a->val ? a->val->str() : "a dtype name");
    r.push_back(static_cast<int>(s->value()));
    return r;
  }

  bool bool_value(const Call& c, const Arg* a, const char* what) const {
    auto* s = a->val ? a->val->as<ir::Scalar>() : nullptr;
    if (!s || s->dtype() != DataType::Bool)
      user_error_at(at(a->at)) << c.name.text << ": " << what << " must be true or false, found "
                               << (a->val ? a->val->str() : a->is_list ? "a list" : "a dtype name");
    return s->value() != 0.0;
  }

  /// Functions whose list argument is a shape: named sizes may appear in it.
  static bool takes_shape(const std::string& fn) {
    return fn == "reshape" || fn == "view" || fn == "expand";
  }

  /// A shape list: named sizes, integers >= 0, and -1 (inferred / kept).
  std::vector<ir::ShapeEntry> shape_list(const Call& c, const Arg* a) const {
    if (!a->is_list)
      user_error_at(at(a->at)) << c.name.text << ": expected a shape such as [N, -1], found "
                               << a->at.describe();
    std::vector<ir::ShapeEntry> r;
    for (const Token& t : a->list) {
      if (t.kind == Token::Kind::Ident) {
        auto sizes = f_.size_symbols();
        if (std::find(sizes.begin(), sizes.end(), t.text) == sizes.end()) {
          std::string hint = closest_name(t.text, sizes);
          user_error_at(at(t)) << c.name.text << ": '" << t.text
                               << "' is not a named size of the inputs' shapes; expected a named "
                                  "size, an integer or -1"
                               << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
        }
        r.emplace_back(ir::SizeExpr::symbol(t.text));
        continue;
      }
      int64_t v = int_item(c, t, "extent");
      if (v == -1) {
        r.emplace_back(std::nullopt);
        continue;
      }
      if (v < 0)
        user_error_at(at(t)) << c.name.text << ": extent " << v
                             << " in the shape; expected -1, 0 or a positive integer";
      r.emplace_back(ir::SizeExpr::constant(v));
    }
    return r;
  }

  /// One integer argument (not a list).
  int single_int(const Call& c, const Arg* a, const char* what) const {
    if (a->is_list)
      user_error_at(at(a->at)) << c.name.text << ": expected an integer " << what << ", found a list";
    return int_list(c, a, what).at(0);
  }

  // ---- functions ----------------------------------------------------------

  Val* dispatch(const Call& c) {
    const std::string& n = c.name.text;
    auto pos = positional(c);
    if (const UnaryOpType* op = lookup(kUnary, n)) {
      check_keywords(c, {});
      check_arity(c, 1, 1);
      Val* x = value(c, pos[0], "the operand");
      return build(c.name, [&] { return ir::unary(*op, x); });
    }
    const ReductionOpType* red = lookup(kReduce, n);
    // max(a, b) / min(a, b) with two operands are the elementwise forms.
    bool elementwise_minmax = (n == "max" || n == "min") && pos.size() == 2;
    if (const BinaryOpType* op = lookup(kBinary, n); op || elementwise_minmax) {
      BinaryOpType bop = op ? *op : (n == "max" ? BinaryOpType::Max : BinaryOpType::Min);
      check_keywords(c, {});
      check_arity(c, 2, 2);
      Val* a = value(c, pos[0], "the first operand");
      Val* b = value(c, pos[1], "the second operand");
      return build(c.name, [&] { return ir::binary(bop, a, b); });
    }
    if (red || n == "mean") {
      if ((n == "max" || n == "min") && pos.size() > 2)
        user_error_at(at(c.name)) << n << ": expected 1 positional argument (a reduction) or 2 "
                                  << "(elementwise), found " << pos.size();
      check_keywords(c, {"axis", "keepdim"});
      check_arity(c, 1, 1);
      TensorView* x = tensor(c, pos[0], "the operand");
      std::vector<int> axes;
      if (const Arg* a = keyword(c, "axis")) axes = int_list(c, a, "axis");
      if (const Arg* a = keyword(c, "axis"); a && axes.empty())
        user_error_at(at(a->at)) << n << ": expected at least one axis, found an empty list";
      bool keepdim = false;
      if (const Arg* a = keyword(c, "keepdim")) keepdim = bool_value(c, a, "keepdim");
      if (!red) return build(c.name, [&] { return ir::mean(x, axes, keepdim); });
      return build(c.name, [&] { return ir::reduce(*red, x, axes, keepdim); });
    }
    if (n == "where") {
      check_keywords(c, {});
      check_arity(c, 3, 3);
      Val* cond = value(c, pos[0], "the condition");
      Val* a = value(c, pos[1], "the true branch");
      Val* b = value(c, pos[2], "the false branch");
      return build(c.name, [&] { return ir::where(cond, a, b); });
    }
    if (n == "cast") {
      check_keywords(c, {"dtype"});
      const Arg* d = keyword(c, "dtype");
      check_arity(c, d ? 1 : 2, d ? 1 : 2);
      if (!d) d = pos[1];
      Val* x = value(c, pos[0], "the operand");
      if (!d->dtype)
        user_error_at(at(d->at)) << "cast: expected a dtype (" << ir::dtype_choices()
                                 << "), found " << d->at.describe();
      return build(c.name, [&] { return ir::cast(x, *d->dtype); });
    }
    if (n == "broadcast") {
      check_keywords(c, {});
      check_arity(c, 2, 2);
      TensorView* x = tensor(c, pos[0], "the operand");
      if (!pos[1]->is_list)
        user_error_at(at(pos[1]->at)) << "broadcast: expected a list of true/false flags, found "
                                      << pos[1]->at.describe();
      std::vector<bool> flags;
      for (const Token& t : pos[1]->list) {
        if (t.text != "true" && t.text != "false")
          user_error_at(at(t)) << "broadcast: expected true or false, found " << t.describe();
        flags.push_back(t.text == "true");
      }
      return build(c.name, [&] { return ir::broadcast(x, flags); });
    }
    if (n == "set") {
      check_keywords(c, {});
      check_arity(c, 1, 1);
      TensorView* x = tensor(c, pos[0], "the operand");
      return build(c.name, [&] { return ir::set(x); });
    }
    if (n == "permute") {
      check_keywords(c, {});
      check_arity(c, 2, 2);
      TensorView* x = tensor(c, pos[0], "the operand");
      if (!pos[1]->is_list)
        user_error_at(at(pos[1]->at)) << "permute: expected a list of axes such as [1, 0], found "
                                      << pos[1]->at.describe();
      std::vector<int> p = int_list(c, pos[1], "axis");
      return build(c.name, [&] { return ir::permute(x, p); });
    }
    if (n == "transpose") {
      check_keywords(c, {});
      check_arity(c, 3, 3);
      TensorView* x = tensor(c, pos[0], "the operand");
      auto axis = [&](const Arg* a) {
        if (a->is_list)
          user_error_at(at(a->at)) << "transpose: expected an integer axis, found a list";
        return int_list(c, a, "axis").at(0);
      };
      int a = axis(pos[1]);
      int b = axis(pos[2]);
      return build(c.name, [&] { return ir::transpose(x, a, b); });
    }
    if (n == "reshape" || n == "view") {
      check_keywords(c, {});
      check_arity(c, 2, 2);
      TensorView* x = tensor(c, pos[0], "the operand");
      auto shape = shape_list(c, pos[1]);
      return build(c.name, [&] { return ir::reshape(x, shape, n); });
    }
    if (n == "expand") {
      check_keywords(c, {});
      check_arity(c, 2, 2);
      TensorView* x = tensor(c, pos[0], "the operand");
      auto shape = shape_list(c, pos[1]);
      return build(c.name, [&] { return ir::expand(x, shape); });
    }
    if (n == "flatten") {
      check_keywords(c, {"start", "end"});
      check_arity(c, 1, 3);
      TensorView* x = tensor(c, pos[0], "the operand");
      int start = 0, end = -1;
      if (pos.size() > 1) start = single_int(c, pos[1], "start dim");
      if (pos.size() > 2) end = single_int(c, pos[2], "end dim");
      if (const Arg* a = keyword(c, "start")) start = single_int(c, a, "start dim");
      if (const Arg* a = keyword(c, "end")) end = single_int(c, a, "end dim");
      return build(c.name, [&] { return ir::flatten(x, start, end); });
    }
    if (n == "squeeze") {
      check_keywords(c, {"dim"});
      check_arity(c, 1, 2);
      TensorView* x = tensor(c, pos[0], "the operand");
      std::vector<int> dims;
      const Arg* d = pos.size() > 1 ? pos[1] : keyword(c, "dim");
      if (d) dims = int_list(c, d, "dim");
      if (d && dims.empty())
        user_error_at(at(d->at)) << "squeeze: expected at least one dim, found an empty list";
      return build(c.name, [&] { return ir::squeeze(x, dims); });
    }
    if (n == "unsqueeze") {
      check_keywords(c, {"dim"});
      const Arg* d = keyword(c, "dim");
      check_arity(c, d ? 1 : 2, d ? 1 : 2);
      TensorView* x = tensor(c, pos[0], "the operand");
      int dim = single_int(c, d ? d : pos[1], "dim");
      return build(c.name, [&] { return ir::unsqueeze(x, dim); });
    }
    if (n == "matmul") {
      check_keywords(c, {});
      check_arity(c, 2, 2);
      TensorView* a = tensor(c, pos[0], "the first operand");
      TensorView* b = tensor(c, pos[1], "the second operand");
      return build(c.name, [&] { return ir::matmul(a, b); });
    }
    if (n == "linear") {
      check_keywords(c, {});
      check_arity(c, 2, 3);
      TensorView* x = tensor(c, pos[0], "the input");
      TensorView* w = tensor(c, pos[1], "the weight");
      TensorView* bias = pos.size() == 3 ? tensor(c, pos[2], "the bias") : nullptr;
      return build(c.name, [&] { return ir::linear(x, w, bias); });
    }
    std::string hint = closest_name(n, all_function_names());
    user_error_at(at(c.name)) << "unknown function '" << n << "'"
                              << (hint.empty() ? "" : " (did you mean '" + hint + "'?)")
                              << "; see docs/fusion-text.md for the list";
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;  ///< nesting (NestingGuard)
  const Locator& loc_;
  ir::Fusion& f_;
  Scope& scope_;
};

}  // namespace

void parse_body(const std::string& body, const Locator& loc, ir::Fusion& f, Scope& scope) {
  Parser(tokenize(body, loc), loc, f, scope).run();
}

}  // namespace schedlab::frontend
