// Schedule-script arguments (private to core/frontend): the enum spellings,
// the primitive table's types, and Args, which holds one call's arguments
// matched to its primitive's parameters and converts each on demand with a
// user error at the argument. The primitives are in schedule_primitives.h,
// the script that applies them in schedule_script.cpp, the grammar in
// docs/schedule-scripts.md.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/frontend/schedule_ast.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::frontend::script {

using Value = ScheduleValue;
using ir::CacheOp;
using ir::LoadStoreOpType;
using ir::LoopTransform;
using ir::MemoryType;
using ir::ParallelType;
using ir::TensorView;

// ---- enumerations, matched case-insensitively -------------------------------

template <typename E>
using Choices = std::vector<std::pair<std::string, E>>;

/// s in lower case.
std::string lower(std::string s);

/// A table of an enum's values under the names ir gives them (one spelling
/// for the script, the printers and the messages), optionally lower-cased.
template <typename E, typename Name>
Choices<E> spelled(std::initializer_list<E> values, Name name, bool lowercase = false) {
  Choices<E> table;
  for (E v : values) {
    std::string s(name(v));
    table.emplace_back(lowercase ? lower(s) : s, v);
  }
  return table;
}

extern const Choices<ir::ParallelType> kParallelTypes;
// LoopTransform::Serial is spelled through ParallelType::Serial: one "Serial".
extern const Choices<ir::LoopTransform> kLoopTransforms;
// Memory types are written in lower case in scripts: set_memory_type(t, shared).
extern const Choices<ir::MemoryType> kMemoryTypes;
extern const Choices<ir::LoadStoreOpType> kLoadStoreOps;
extern const Choices<ir::CacheOp> kCacheOps;
extern const Choices<bool> kBools;

template <typename E>
std::optional<E> find_choice(const Choices<E>& table, const std::string& name) {
  for (const auto& [k, v] : table)
    if (lower(k) == lower(name)) return v;
  return std::nullopt;
}

template <typename E>
std::vector<std::string> choice_names(const Choices<E>& table) {
  std::vector<std::string> r;
  for (const auto& [k, v] : table) r.push_back(k);
  return r;
}

/// "a, b, c".
std::string join(const std::vector<std::string>& v);
/// " (did you mean 'X'?)" for the closest of `names`, ignoring case; or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& names);
/// The value of an integer literal ("-12"); nullopt if it overflows int64.
std::optional<int64_t> to_integer(const std::string& text);
/// v's first token as Token::describe() spells it ("'4'", "'-'", "'['"): for
/// messages about what was found where a name was expected.
std::string first_token(const ScheduleValue& v);

/// A Name or an Index as written ("r", "g[0][-1]", "r[{i}]"), for messages.
std::string spelling(const ScheduleValue& v);

// ---- what names stand for ---------------------------------------------------------

/// What a script name stands for: a tensor, or a list (what a query returns),
/// whose items are tensors or, for group_inputs_outputs_by_inner_dim, lists.
/// A list is a snapshot taken when its statement ran: tensors created later
/// (caches, rfactor producers) are not added to it.
struct Object {
  TensorView* tensor = nullptr;  ///< when not a list; null for "nothing"
  bool is_list = false;
  std::vector<Object> items;  ///< when a list

  Object() = default;
  Object(TensorView* t) : tensor(t) {}  // NOLINT(google-explicit-constructor): a tensor is one
  static Object list(const std::vector<TensorView*>& tensors);
  static Object list(const std::vector<std::vector<TensorView*>>& lists);

  bool none() const { return !is_list && tensor == nullptr; }
  /// "T5 (y)", "[T3 (s), T7]", "[[T0 (x), T5 (y)], [T1 (b)]]".
  std::string str() const;
  /// "a tensor, T5 (y)", "a list of 2 tensors", "a list of 1 list", "an empty list".
  std::string what() const;
};

// ---- primitives ---------------------------------------------------------------

class Args;

/// What arguments refer to, resolved by the script at the statement being
/// applied: names (bound by the script, else the fusion's), and {param}
/// placeholders.
class ArgNames {
 public:
  virtual ~ArgNames() = default;
  /// The object `name` stands for; a UserError at `loc` if none.
  virtual Object lookup(const std::string& name, const SourceLoc& loc) const = 0;
  virtual int64_t param(const Value& v) const = 0;
};

/// A parameter of a primitive: its keyword name and, if optional, its
/// default as documented (nullptr when required).
struct Param {
  const char* name;
  const char* default_text = nullptr;
};

/// What a primitive returns, which decides whether a statement may bind it.
enum class Returns {
  Nothing,    ///< changes the schedule only
  NewTensor,  ///< creates a tensor (a cache, an rfactor producer) and returns it
  Query,      ///< changes nothing; returns a tensor or a list (a query)
};

struct Primitive {
  std::string name;
  std::vector<Param> params;
  Returns returns;
  /// Applies the call; returns Object() when `returns` is Nothing.
  Object (*apply)(Args&, ir::Fusion&);

  std::string usage() const {
    std::vector<std::string> ps;
    for (const Param& p : params)
      ps.push_back(p.default_text ? std::string(p.name) + "=" + p.default_text : p.name);
    return name + "(" + join(ps) + ")";
  }
};

/// The arguments of one call, matched to the primitive's parameters and
/// converted on demand. Each accessor raises a UserError at the argument.
class Args {
 public:
  Args(const ArgNames& names, const Primitive& p, std::vector<const Value*> slots)
      : names_(names), p_(p), slots_(std::move(slots)) {}

  bool given(size_t i) const { return slots_.at(i) != nullptr; }
  TensorView* tensor(size_t i) const { return tensor_of(*slots_.at(i), i); }
  int64_t integer(size_t i) const { return integer_of(*slots_.at(i), i); }
  int axis(size_t i) const { return narrow(*slots_.at(i), i); }
  bool flag(size_t i, bool dflt) const { return choice(i, kBools, "a bool", dflt); }

  std::vector<int> ints(size_t i) const {
    std::vector<int> r;
    for (const Value& v : list(i, "integers such as [1]")) r.push_back(narrow(v, i));
    return r;
  }
  /// A list literal of tensors, or a name (or index) standing for a list of
  /// tensors; [] when not given.
  std::vector<TensorView*> tensors(size_t i) const;
  std::vector<std::pair<int, int>> old2new(size_t i) const {
    const Value& m = *slots_.at(i);
    if (m.kind != Value::Kind::Map) fail(m, i, "a map {old: new, ...}");
    std::vector<std::pair<int, int>> r;
    for (size_t k = 0; k + 1 < m.items.size(); k += 2)
      r.emplace_back(narrow(m.items[k], i), narrow(m.items[k + 1], i));
    return r;
  }
  std::variant<ParallelType, LoopTransform> binding(size_t i) const {
    const Value& v = *slots_.at(i);
    if (v.kind == Value::Kind::Name) {
      if (auto p = find_choice(kParallelTypes, v.text)) return *p;
      if (auto t = find_choice(kLoopTransforms, v.text)) return *t;
    }
    auto names = choice_names(kParallelTypes);
    for (const auto& n : choice_names(kLoopTransforms)) names.push_back(n);
    fail(v, i,
         "a ParallelType (" + join(choice_names(kParallelTypes)) + ") or a LoopTransform (" +
             join(choice_names(kLoopTransforms)) + ")",
         names);
  }
  template <typename E>
  E choice(size_t i, const Choices<E>& table, const std::string& what, E dflt) const {
    return given(i) ? choice_of(*slots_[i], i, table, what) : dflt;
  }
  template <typename E>
  std::set<E> choice_set(size_t i, const Choices<E>& table, const std::string& what,
                         std::set<E> dflt) const {
    if (!given(i)) return dflt;
    std::set<E> r;
    for (const Value& v : list(i, "names such as [" + table.front().first + "]"))
      r.insert(choice_of(v, i, table, what));
    return r;
  }

 private:
  /// A UserError at v: "P: expected WANT for 'PARAM', found V". `names`
  /// offers a did-you-mean for a Name; `is`, what v was resolved to.
  [[noreturn]] void fail(const Value& v, size_t i, const std::string& want,
                         const std::vector<std::string>& names = {},
                         const Object* is = nullptr) const;
  /// What a Name or an Index stands for; a UserError at the name or index.
  Object object_of(const Value& v) const;
  TensorView* tensor_of(const Value& v, size_t i) const;
  int64_t integer_of(const Value& v, size_t i) const;
  int narrow(const Value& v, size_t i) const {
    int64_t x = integer_of(v, i);
    if (x < INT_MIN || x > INT_MAX) fail(v, i, "an integer that fits in 32 bits");
    return static_cast<int>(x);
  }
  const std::vector<Value>& list(size_t i, const std::string& what) const {
    const Value& v = *slots_.at(i);
    if (v.kind != Value::Kind::List) fail(v, i, "a list of " + what);
    return v.items;
  }
  template <typename E>
  E choice_of(const Value& v, size_t i, const Choices<E>& table, const std::string& what) const {
    if (v.kind == Value::Kind::Name)
      if (auto e = find_choice(table, v.text)) return *e;
    fail(v, i, what + " (" + join(choice_names(table)) + ")", choice_names(table));
  }

  const ArgNames& names_;
  const Primitive& p_;
  std::vector<const Value*> slots_;  ///< per parameter; null when not given
};

}  // namespace schedlab::frontend::script
