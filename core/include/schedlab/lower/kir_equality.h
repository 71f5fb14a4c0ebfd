// schedlab/lower: structural equality, order and hashing of kernel-IR
// expressions (Halide's IREquality).
//
// Owns: when two expressions are the same tree (equal), a total order
// consistent with it (compare), a hash consistent with it (hash), the
// containers keyed on them, and substitution of equal subtrees. Passes that
// collect, look up or deduplicate expressions (simplify, unswitch) key on
// these, never on printed text. May depend on: lower/kir.h.
// Invariants: equal(a, b) iff compare(a, b) == 0, and equal trees hash
// equal. Buffers compare by identity (the kernel's), never by name.
#pragma once

#include <cstddef>
#include <map>
#include <unordered_map>

#include "schedlab/lower/kir.h"

namespace schedlab::kir {

/// Whether a and b are the same tree: the same node kinds, fields and
/// dtypes, children equal in order. Shared subtrees compare in O(1).
bool equal(const Expr& a, const Expr& b);
inline bool equal(const ExprP& a, const ExprP& b) {
  return a == b || equal(*a, *b);
}

/// A total order on trees: < 0, 0 or > 0 as a sorts before, with or after b;
/// 0 exactly when equal. The canonical order of a simplified sum's terms
/// (simplify.h): compound terms first, then constants, tensor sizes, the
/// block-uniform built-ins (launch extents, block indices), loop variables
/// (by name), and thread indices last; a node's children compare left to
/// right.
int compare(const Expr& a, const Expr& b);

/// A hash of the tree, consistent with equal.
size_t hash(const Expr& e);

struct ExprHash {
  size_t operator()(const ExprP& e) const { return hash(*e); }
};
struct ExprEqual {
  bool operator()(const ExprP& a, const ExprP& b) const { return equal(a, b); }
};
struct ExprLess {
  bool operator()(const ExprP& a, const ExprP& b) const { return a != b && compare(*a, *b) < 0; }
};

/// Maps keyed by structure: a tree finds the entry of any equal tree.
template <typename V>
using ExprMap = std::unordered_map<ExprP, V, ExprHash, ExprEqual>;
template <typename V>
using OrderedExprMap = std::map<ExprP, V, ExprLess>;

/// e with every subtree equal to a key of `values` replaced by its value
/// (the largest such subtree: a replaced tree is not searched further),
/// index arithmetic refolded. Binds built-ins and tensor sizes, e.g.
/// runtime::launch_bindings.
ExprP substitute(const ExprP& e, const ExprMap<ExprP>& values);

}  // namespace schedlab::kir
