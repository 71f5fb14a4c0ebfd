// schedlab/sweep: constraints, boolean expressions over a scheduler's
// parameters and the fusion's named sizes that decide which points of a
// space run (`block * vector <= K`, `K % vector == 0`).
//
// Owns: the expression language, its parser and type checker, and its
// evaluation. May depend on: schedlab/base and sweep/spec/space.h.
// Language (docs/sweeps.md): integers, reals, true/false, 'quoted' or
// "quoted" strings, names; + - * / % (unary -), comparisons == != < <= > >=,
// and/or/not, parentheses. Precedence, loosest first: or, and, not,
// comparison (non-associative), + -, * / %, unary -. Arithmetic on two
// integers is 64-bit integer arithmetic as in C: / truncates toward zero and
// % takes the sign of the dividend (the same as floor semantics for the
// non-negative values sweeps use); with a real operand it is real arithmetic,
// and % needs integers.
// Invariants: everything that can be checked without values is checked at
// parse time (unknown names, types, syntax), each error at the offending
// token's file:line:col; evaluation can fail only on a division by zero.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/sweep/spec/space.h"

namespace schedlab::sweep {

/// The static type of a name or expression.
enum class ValueType { Int, Float, Bool, String };
std::string_view value_type_name(ValueType t);

/// Maps a 1-based column inside the constraint text to its file position.
using ColumnLocator = std::function<SourceLoc(int col)>;

/// A parsed, type-checked constraint.
class Constraint {
 public:
  /// Parses `text`; `names` are the names it may use and their types.
  /// UserError at the offending token otherwise.
  static Constraint parse(const std::string& text, const std::map<std::string, ValueType>& names,
                          const ColumnLocator& loc);

  /// Whether the point satisfies it; `lookup` gives each name's value (it is
  /// only asked for names the constraint uses, each with the declared type).
  /// UserError at the operator on a division or remainder by zero.
  bool holds(const std::function<const Value&(const std::string&)>& lookup) const;

  const std::string& text() const { return text_; }
  const SourceLoc& loc() const { return loc_; }  ///< the start of the text

  struct Node;  ///< an expression node (constraint.cpp)

 private:
  std::string text_;
  SourceLoc loc_;
  std::shared_ptr<const Node> root_;  ///< immutable; copies share it
};

}  // namespace schedlab::sweep
