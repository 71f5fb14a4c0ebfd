#include "schedlab/ir/size_expr.h"

#include <algorithm>

#include "schedlab/base/error.h"

namespace schedlab::ir {

struct SizeExpr::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> a, b;
};

SizeExpr::SizeExpr() : SizeExpr(constant(1)) {}
SizeExpr::SizeExpr(std::shared_ptr<const Node> n) : node_(std::move(n)) {}

SizeExpr SizeExpr::constant(int64_t v) {
  return SizeExpr(std::make_shared<const Node>(Node{Kind::Const, v, {}, {}, {}}));
}
SizeExpr SizeExpr::symbol(std::string name) {
  return SizeExpr(std::make_shared<const Node>(Node{Kind::Symbol, 0, std::move(name), {}, {}}));
}
SizeExpr SizeExpr::mul(const SizeExpr& a, const SizeExpr& b) {
  if (a.is_const() && b.is_const()) return constant(a.const_value() * b.const_value());
  if (a.is_const() && a.const_value() == 1) return b;
  if (b.is_const() && b.const_value() == 1) return a;
  return SizeExpr(std::make_shared<const Node>(Node{Kind::Mul, 0, {}, a.node_, b.node_}));
}
SizeExpr SizeExpr::ceil_div(const SizeExpr& a, const SizeExpr& b) {
  internal_assert(!b.is_const() || b.const_value() > 0) << "ceil_div by " << b.str();
  if (a.is_const() && b.is_const())
    return constant((a.const_value() + b.const_value() - 1) / b.const_value());
  if (b.is_const() && b.const_value() == 1) return a;
  return SizeExpr(std::make_shared<const Node>(Node{Kind::CeilDiv, 0, {}, a.node_, b.node_}));
}

SizeExpr::Kind SizeExpr::kind() const { return node_->kind; }
int64_t SizeExpr::const_value() const {
  internal_assert(is_const()) << str() << " is not a constant";
  return node_->value;
}
const std::string& SizeExpr::symbol_name() const {
  internal_assert(is_symbol()) << str() << " is not a symbol";
  return node_->name;
}
SizeExpr SizeExpr::lhs() const {
  internal_assert(node_->a) << "lhs of a leaf " << str();
  return SizeExpr(node_->a);
}
SizeExpr SizeExpr::rhs() const {
  internal_assert(node_->b) << "rhs of a leaf " << str();
  return SizeExpr(node_->b);
}

std::optional<int64_t> SizeExpr::evaluate(const SizeBindings& bindings) const {
  switch (kind()) {
    case Kind::Const: return node_->value;
    case Kind::Symbol: {
      auto it = bindings.find(node_->name);
      if (it == bindings.end()) return std::nullopt;
      return it->second;
    }
    case Kind::Mul:
    case Kind::CeilDiv: {
      auto a = SizeExpr(node_->a).evaluate(bindings);
      auto b = SizeExpr(node_->b).evaluate(bindings);
      if (!a || !b) return std::nullopt;
      if (kind() == Kind::Mul) return *a * *b;
      internal_assert(*b > 0) << "ceil_div by " << *b << " in " << str();
      return (*a + *b - 1) / *b;
    }
  }
  return std::nullopt;
}

void SizeExpr::collect_symbols(std::vector<std::string>& out) const {
  if (kind() == Kind::Symbol) {
    if (std::find(out.begin(), out.end(), node_->name) == out.end()) out.push_back(node_->name);
  } else if (node_->a) {
    SizeExpr(node_->a).collect_symbols(out);
    SizeExpr(node_->b).collect_symbols(out);
  }
}

bool SizeExpr::same_as(const SizeExpr& o) const {
  if (node_ == o.node_) return true;
  if (kind() != o.kind()) return false;
  switch (kind()) {
    case Kind::Const: return node_->value == o.node_->value;
    case Kind::Symbol: return node_->name == o.node_->name;
    default:
      return SizeExpr(node_->a).same_as(SizeExpr(o.node_->a)) &&
             SizeExpr(node_->b).same_as(SizeExpr(o.node_->b));
  }
}

std::string SizeExpr::str() const {
  switch (kind()) {
    case Kind::Const: return std::to_string(node_->value);
    case Kind::Symbol: return node_->name;
    case Kind::Mul:
      return "(" + SizeExpr(node_->a).str() + " * " + SizeExpr(node_->b).str() + ")";
    case Kind::CeilDiv:
      return "ceilDiv(" + SizeExpr(node_->a).str() + ", " + SizeExpr(node_->b).str() + ")";
  }
  return "?";
}

std::vector<std::pair<std::string, int64_t>> ordered_sizes(const SizeBindings& sizes,
                                                           const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const std::string& n : names)
    if (auto it = sizes.find(n); it != sizes.end()) out.emplace_back(n, it->second);
  for (const auto& [k, v] : sizes)
    if (std::find(names.begin(), names.end(), k) == names.end()) out.emplace_back(k, v);
  return out;
}

}  // namespace schedlab::ir
