// Constraint expressions: tokenizer, recursive-descent parser with type
// checking, and evaluator. The grammar, loosest first:
//   or   := and ('or' and)*
//   and  := not ('and' not)*
//   not  := 'not' not | cmp
//   cmp  := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?
//   sum  := prod (('+'|'-') prod)*
//   prod := neg (('*'|'/'|'%') neg)*
//   neg  := '-' neg | atom
//   atom := INT | REAL | STRING | 'true' | 'false' | NAME | '(' or ')'
#include "schedlab/sweep/spec/constraint.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "schedlab/base/nesting.h"
#include "schedlab/base/suggest.h"

namespace schedlab::sweep {

std::string_view value_type_name(ValueType t) {
  switch (t) {
    case ValueType::Int:
      return "integer";
    case ValueType::Float:
      return "real";
    case ValueType::Bool:
      return "bool";
    case ValueType::String:
      return "string";
  }
  return "?";
}

struct Constraint::Node {
  enum class Op { Lit, Name, Neg, Not, Add, Sub, Mul, Div, Mod, Eq, Ne, Lt, Le, Gt, Ge, And, Or };
  Op op = Op::Lit;
  ValueType type = ValueType::Int;  ///< the result's type
  Value lit;                        ///< Lit
  std::string name;                 ///< Name; for other ops the operator's spelling
  std::shared_ptr<const Node> a, b;
  SourceLoc loc;  ///< the literal, the name or the operator
};

namespace {

using Node = Constraint::Node;
using NodeP = std::shared_ptr<const Node>;

struct Tok {
  enum class Kind { Name, Int, Real, Str, Punct, End };
  Kind kind = Kind::End;
  std::string text;  ///< spelling; the contents for Str
  int col = 0;       ///< 1-based column of the first character

  std::string describe() const {
    if (kind == Kind::End) return "the end of the constraint";
    if (kind == Kind::Str) return "the string '" + text + "'";
    return "'" + text + "'";
  }
  bool is(const char* p) const { return kind == Kind::Punct && text == p; }
  bool word(const char* w) const { return kind == Kind::Name && text == w; }
};

constexpr const char* kPuncts[] = {"==", "!=", "<=", ">=", "<", ">", "+",
                                   "-",  "*",  "/",  "%",  "(", ")"};

std::vector<Tok> tokenize(const std::string& s, const ColumnLocator& loc) {
  std::vector<Tok> toks;
  size_t i = 0;
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < s.size()) {
    char c = s[i];
    int col = static_cast<int>(i) + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    size_t start = i;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (i < s.size() && ident(s[i])) ++i;
      toks.push_back({Tok::Kind::Name, s.substr(start, i - start), col});
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
      if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
        if (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) {
          i = j;
          while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        }
      }
      std::string text = s.substr(start, i - start);
      if (i < s.size() && ident(s[i]))
        user_error_at(loc(col)) << "constraint: malformed number '" << text << s[i]
                                << "...'; expected digits, e.g. 128 or 0.5";
      bool real = text.find_first_of(".eE") != std::string::npos;
      if (!real && (text.size() > 18))
        user_error_at(loc(col)) << "constraint: integer " << text << " is too large";
      toks.push_back({real ? Tok::Kind::Real : Tok::Kind::Int, text, col});
      continue;
    }
    if (c == '\'' || c == '"') {
      size_t end = s.find(c, i + 1);
      if (end == std::string::npos)
        user_error_at(loc(col)) << "constraint: unterminated string; expected a closing " << c;
      toks.push_back({Tok::Kind::Str, s.substr(i + 1, end - i - 1), col});
      i = end + 1;
      continue;
    }
    bool matched = false;
    for (const char* p : kPuncts) {
      std::string_view pv(p);
      if (s.compare(i, pv.size(), pv) == 0) {
        toks.push_back({Tok::Kind::Punct, std::string(pv), col});
        i += pv.size();
        matched = true;
        break;
      }
    }
    if (matched) continue;
    std::string hint;
    if (s.compare(i, 2, "&&") == 0)
      hint = " (write 'and' for &&)";
    else if (s.compare(i, 2, "||") == 0)
      hint = " (write 'or' for ||)";
    else if (c == '!')
      hint = " (write 'not' for !)";
    else if (c == '=')
      hint = " (write '==' to compare)";
    user_error_at(loc(col)) << "constraint: unexpected character '" << c
                            << "'; expected a name, a number, a 'string', an operator "
                            << "(+ - * / % == != < <= > >= and or not) or a parenthesis" << hint;
  }
  toks.push_back({Tok::Kind::End, "", static_cast<int>(s.size()) + 1});
  return toks;
}

bool numeric(ValueType t) {
  return t == ValueType::Int || t == ValueType::Float;
}

class Parser {
 public:
  Parser(std::vector<Tok> toks, const std::map<std::string, ValueType>& names,
         const ColumnLocator& loc)
      : toks_(std::move(toks)), names_(names), loc_(loc) {}

  NodeP run() {
    NodeP n = or_expr();
    if (cur().kind != Tok::Kind::End)
      user_error_at(at(cur())) << "constraint: expected an operator or the end of the "
                               << "constraint, found " << cur().describe();
    return n;
  }

 private:
  const Tok& cur() const { return toks_[pos_]; }
  Tok take() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  SourceLoc at(const Tok& t) const { return loc_(t.col); }

  /// An operator node; `t` is the operator's token.
  NodeP make(Node::Op op, ValueType type, const Tok& t, NodeP a, NodeP b = nullptr) const {
    auto n = std::make_shared<Node>();
    n->op = op;
    n->type = type;
    n->name = t.text;
    n->loc = at(t);
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }

  /// user_error unless `n` has a type `ok` accepts; `what` says what was expected.
  template <typename Pred>
  void expect(const NodeP& n, const Tok& op, Pred ok, const char* what) const {
    if (!ok(n->type))
      user_error_at(at(op)) << "constraint: '" << op.text << "' expects " << what << ", found "
                            << value_type_name(n->type) << " " << spelled(n);
  }
  static std::string spelled(const NodeP& n) {
    if (n->op == Node::Op::Name) return "'" + n->name + "'";
    if (n->op == Node::Op::Lit)
      return n->lit.kind == Value::Kind::String ? "'" + n->lit.s + "'" : n->lit.str();
    return "operand";
  }

  NodeP or_expr() {
    // Parentheses re-enter here.
    NestingGuard nest(depth_, at(cur()), "constraint");
    NodeP l = and_expr();
    while (cur().word("or")) {
      Tok op = take();
      NodeP r = and_expr();
      expect(
          l, op, [](ValueType t) { return t == ValueType::Bool; }, "bool operands");
      expect(
          r, op, [](ValueType t) { return t == ValueType::Bool; }, "bool operands");
      l = make(Node::Op::Or, ValueType::Bool, op, l, r);
    }
    return l;
  }
  NodeP and_expr() {
    NodeP l = not_expr();
    while (cur().word("and")) {
      Tok op = take();
      NodeP r = not_expr();
      expect(
          l, op, [](ValueType t) { return t == ValueType::Bool; }, "bool operands");
      expect(
          r, op, [](ValueType t) { return t == ValueType::Bool; }, "bool operands");
      l = make(Node::Op::And, ValueType::Bool, op, l, r);
    }
    return l;
  }
  NodeP not_expr() {
    if (!cur().word("not")) return cmp();
    NestingGuard nest(depth_, at(cur()), "constraint");
    Tok op = take();
    NodeP a = not_expr();
    expect(
        a, op, [](ValueType t) { return t == ValueType::Bool; }, "a bool operand");
    return make(Node::Op::Not, ValueType::Bool, op, a);
  }
  static std::optional<Node::Op> cmp_op(const Tok& t) {
    if (t.is("==")) return Node::Op::Eq;
    if (t.is("!=")) return Node::Op::Ne;
    if (t.is("<")) return Node::Op::Lt;
    if (t.is("<=")) return Node::Op::Le;
    if (t.is(">")) return Node::Op::Gt;
    if (t.is(">=")) return Node::Op::Ge;
    return std::nullopt;
  }
  NodeP cmp() {
    NodeP l = sum();
    auto op_kind = cmp_op(cur());
    if (!op_kind) return l;
    Tok op = take();
    NodeP r = sum();
    bool equality = *op_kind == Node::Op::Eq || *op_kind == Node::Op::Ne;
    bool ok = numeric(l->type) ? numeric(r->type) : equality && l->type == r->type;
    if (!ok)
      user_error_at(at(op)) << "constraint: cannot compare " << value_type_name(l->type) << " "
                            << spelled(l) << " with " << value_type_name(r->type) << " "
                            << spelled(r) << " using '" << op.text << "'; expected "
                            << (equality ? "two numbers, two strings or two bools" : "two numbers");
    if (cmp_op(cur()))
      user_error_at(at(cur())) << "constraint: comparisons do not chain; expected 'and' "
                               << "between them (a < b and b < c), found " << cur().describe();
    return make(*op_kind, ValueType::Bool, op, l, r);
  }
  NodeP arith(Node::Op kind, const Tok& op, NodeP l, NodeP r) const {
    bool mod = kind == Node::Op::Mod;
    bool (*want)(ValueType) = mod ? +[](ValueType t) { return t == ValueType::Int; } : numeric;
    const char* what = mod ? "integer operands" : "numeric operands";
    expect(l, op, want, what);
    expect(r, op, want, what);
    ValueType t =
        l->type == ValueType::Int && r->type == ValueType::Int ? ValueType::Int : ValueType::Float;
    return make(kind, t, op, l, r);
  }
  NodeP sum() {
    NodeP l = prod();
    while (cur().is("+") || cur().is("-")) {
      Tok op = take();
      l = arith(op.text == "+" ? Node::Op::Add : Node::Op::Sub, op, l, prod());
    }
    return l;
  }
  NodeP prod() {
    NodeP l = neg();
    while (cur().is("*") || cur().is("/") || cur().is("%")) {
      Tok op = take();
      Node::Op k = op.text == "*" ? Node::Op::Mul : op.text == "/" ? Node::Op::Div : Node::Op::Mod;
      l = arith(k, op, l, neg());
    }
    return l;
  }
  NodeP neg() {
    if (!cur().is("-")) return atom();
    NestingGuard nest(depth_, at(cur()), "constraint");
    Tok op = take();
    NodeP a = neg();
    expect(a, op, numeric, "a numeric operand");
    return make(Node::Op::Neg, a->type, op, a);
  }
  NodeP atom() {
    Tok t = take();
    auto lit = [&](Value v, ValueType type) {
      auto n = std::make_shared<Node>();
      n->op = Node::Op::Lit;
      n->type = type;
      n->lit = std::move(v);
      n->loc = at(t);
      return NodeP(n);
    };
    switch (t.kind) {
      case Tok::Kind::Int:
        return lit(Value::integer(std::stoll(t.text)), ValueType::Int);
      case Tok::Kind::Real:
        return lit(Value::real(std::strtod(t.text.c_str(), nullptr)), ValueType::Float);
      case Tok::Kind::Str:
        return lit(Value::string(t.text), ValueType::String);
      case Tok::Kind::Name: {
        if (t.text == "true" || t.text == "false")
          return lit(Value::boolean(t.text == "true"), ValueType::Bool);
        if (t.text == "and" || t.text == "or" || t.text == "not") break;
        auto it = names_.find(t.text);
        if (it == names_.end()) {
          std::vector<std::string> known;
          std::string list;
          for (const auto& [k, v] : names_) {
            known.push_back(k);
            list += (list.empty() ? "" : ", ") + k;
          }
          std::string hint = closest_name(t.text, known);
          user_error_at(at(t)) << "constraint: unknown name '" << t.text
                               << "'; expected a size every fusion has, a swept parameter or a "
                               << "`set:` parameter: " << (list.empty() ? "(none)" : list)
                               << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
        }
        auto n = std::make_shared<Node>();
        n->op = Node::Op::Name;
        n->type = it->second;
        n->name = t.text;
        n->loc = at(t);
        return n;
      }
      case Tok::Kind::Punct:
        if (t.is("(")) {
          NodeP n = or_expr();
          if (!cur().is(")"))
            user_error_at(at(cur())) << "constraint: expected ')' to close the '(' at column "
                                     << t.col << ", found " << cur().describe();
          take();
          return n;
        }
        break;
      case Tok::Kind::End:
        break;
    }
    user_error_at(at(t)) << "constraint: expected a name, a number or '(', found " << t.describe();
  }

  std::vector<Tok> toks_;
  size_t pos_ = 0;
  int depth_ = 0;  ///< nesting (NestingGuard)
  const std::map<std::string, ValueType>& names_;
  const ColumnLocator& loc_;
};

/// A number as the evaluator uses it: a choice whose names are integers
/// arrives as a String and is read as its integer.
Value numeric_value(const Value& v) {
  if (v.kind == Value::Kind::String) return Value::integer(std::stoll(v.s));
  return v;
}
double as_real(const Value& v) {
  return v.kind == Value::Kind::Float ? v.f : static_cast<double>(v.i);
}

Value eval(const Node& n, const std::function<const Value&(const std::string&)>& lookup) {
  using Op = Node::Op;
  switch (n.op) {
    case Op::Lit:
      return n.lit;
    case Op::Name: {
      const Value& v = lookup(n.name);
      return n.type == ValueType::Int ? numeric_value(v) : v;
    }
    case Op::Not:
      return Value::boolean(!eval(*n.a, lookup).i);
    case Op::And:
      return Value::boolean(eval(*n.a, lookup).i && eval(*n.b, lookup).i);
    case Op::Or:
      return Value::boolean(eval(*n.a, lookup).i || eval(*n.b, lookup).i);
    case Op::Neg: {
      Value a = eval(*n.a, lookup);
      if (a.kind == Value::Kind::Float) return Value::real(-a.f);
      user_assert(a.i != INT64_MIN) << "constraint: integer overflow negating " << a.i;
      return Value::integer(-a.i);
    }
    default:
      break;
  }
  Value a = eval(*n.a, lookup), b = eval(*n.b, lookup);
  bool ints = a.kind != Value::Kind::Float && b.kind != Value::Kind::Float;
  switch (n.op) {
    case Op::Eq:
    case Op::Ne: {
      bool eq = a.kind == Value::Kind::String ? a.s == b.s
                : ints                        ? a.i == b.i
                                              : as_real(a) == as_real(b);
      return Value::boolean(eq == (n.op == Op::Eq));
    }
    case Op::Lt:
      return Value::boolean(ints ? a.i < b.i : as_real(a) < as_real(b));
    case Op::Le:
      return Value::boolean(ints ? a.i <= b.i : as_real(a) <= as_real(b));
    case Op::Gt:
      return Value::boolean(ints ? a.i > b.i : as_real(a) > as_real(b));
    case Op::Ge:
      return Value::boolean(ints ? a.i >= b.i : as_real(a) >= as_real(b));
    default:
      break;
  }
  if ((n.op == Op::Div || n.op == Op::Mod) && (ints ? b.i == 0 : as_real(b) == 0.0))
    user_error_at(n.loc) << "constraint: " << (n.op == Op::Div ? "division" : "remainder")
                         << " by zero (" << a.str() << " " << n.name << " " << b.str()
                         << "); expected a non-zero divisor";
  if (!ints) {
    double x = as_real(a), y = as_real(b);
    switch (n.op) {
      case Op::Add:
        return Value::real(x + y);
      case Op::Sub:
        return Value::real(x - y);
      case Op::Mul:
        return Value::real(x * y);
      case Op::Div:
        return Value::real(x / y);
      default:
        break;
    }
    internal_error << "constraint: real operands reached '" << n.name << "'";
  }
  int64_t r = 0;
  bool overflow = false;
  switch (n.op) {
    case Op::Add:
      overflow = __builtin_add_overflow(a.i, b.i, &r);
      break;
    case Op::Sub:
      overflow = __builtin_sub_overflow(a.i, b.i, &r);
      break;
    case Op::Mul:
      overflow = __builtin_mul_overflow(a.i, b.i, &r);
      break;
    case Op::Div:
      overflow = a.i == INT64_MIN && b.i == -1;
      r = overflow ? 0 : a.i / b.i;
      break;
    case Op::Mod:
      r = b.i == -1 ? 0 : a.i % b.i;
      break;
    default:
      internal_error << "constraint: unexpected operator '" << n.name << "'";
  }
  if (overflow)
    user_error_at(n.loc) << "constraint: integer overflow in " << a.str() << " " << n.name << " "
                         << b.str();
  return Value::integer(r);
}

}  // namespace

Constraint Constraint::parse(const std::string& text, const std::map<std::string, ValueType>& names,
                             const ColumnLocator& loc) {
  Constraint c;
  c.text_ = text;
  c.loc_ = loc(1);
  std::vector<Tok> toks = tokenize(text, loc);
  if (toks.size() == 1)
    user_error_at(loc(1)) << "constraint: expected an expression such as 'block * vector <= K', "
                          << "found nothing";
  c.root_ = Parser(std::move(toks), names, loc).run();
  if (c.root_->type != ValueType::Bool)
    user_error_at(c.loc_) << "constraint: expected a condition (a comparison, and/or/not, or "
                          << "a bool), found an expression of type "
                          << value_type_name(c.root_->type);
  return c;
}

bool Constraint::holds(const std::function<const Value&(const std::string&)>& lookup) const {
  return eval(*root_, lookup).i != 0;
}

}  // namespace schedlab::sweep
