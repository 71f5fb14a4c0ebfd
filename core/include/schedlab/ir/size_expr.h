// Symbolic extents.
//
// Generated kernels are size-generic: an axis extent is an expression over
// named sizes (N, K, ...) and constants. Split and merge build ceil_div and
// mul nodes; heuristics and the reference evaluator evaluate them under a
// SizeBindings. A SizeExpr is an immutable value; copies share the tree.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace schedlab::ir {

/// Concrete values for named sizes, e.g. {N: 4, K: 8}.
using SizeBindings = std::map<std::string, int64_t>;

/// `sizes` in the order of `names` (a fusion's size_symbols(): the order
/// its inputs declare them), then any other bound names by name. SizeBindings
/// is a std::map, sorted by name; what users read follows the fusion.
std::vector<std::pair<std::string, int64_t>> ordered_sizes(const SizeBindings& sizes,
                                                           const std::vector<std::string>& names);

class SizeExpr {
 public:
  /// The operator of one node.
  enum class Kind { Const, Symbol, Mul, CeilDiv };

  /// Constant 1; the extent of a broadcast axis.
  SizeExpr();
  static SizeExpr constant(int64_t v);
  static SizeExpr symbol(std::string name);
  /// a * b, folded when both are constants or one is 1.
  static SizeExpr mul(const SizeExpr& a, const SizeExpr& b);
  /// ceil(a / b), folded when both are constants or b is 1.
  static SizeExpr ceil_div(const SizeExpr& a, const SizeExpr& b);

  Kind kind() const;
  bool is_const() const { return kind() == Kind::Const; }
  bool is_symbol() const { return kind() == Kind::Symbol; }
  int64_t const_value() const;           ///< only for Const
  const std::string& symbol_name() const;  ///< only for Symbol
  SizeExpr lhs() const;                    ///< only for Mul/CeilDiv
  SizeExpr rhs() const;                    ///< only for Mul/CeilDiv

  /// The value under `b`, or nullopt if a symbol is unbound.
  std::optional<int64_t> evaluate(const SizeBindings& b) const;
  /// Every symbol this expression mentions, in first-seen order, no repeats.
  void collect_symbols(std::vector<std::string>& out) const;
  /// Structural equality.
  bool same_as(const SizeExpr& o) const;
  /// "N", "8", "ceilDiv(N, 128)", "(N * K)".
  std::string str() const;

 private:
  struct Node;
  explicit SizeExpr(std::shared_ptr<const Node> n);
  std::shared_ptr<const Node> node_;
};

}  // namespace schedlab::ir
