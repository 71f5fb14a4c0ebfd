// Schedule scripts, applied: the whole text is parsed first
// (schedule_parser.cpp, so a syntax error anywhere applies nothing), then
// each statement is resolved and applied against the fusion as it is at
// that line.
#include "schedlab/frontend/schedule_script.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <variant>

#include "parser.h"
#include "schedlab/base/error.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/sched/sched.h"

namespace schedlab::frontend {

using ir::CacheOp;
using ir::LoadStoreOpType;
using ir::LoopTransform;
using ir::MemoryType;
using ir::ParallelType;
using ir::TensorView;

namespace {

using Value = ScheduleValue;
using Arg = ScheduleArg;
using Statement = ScheduleStatement;

// ---- enumerations, matched case-insensitively -------------------------------

template <typename E>
using Choices = std::vector<std::pair<std::string, E>>;

const Choices<ParallelType> kParallelTypes = {
    {"BIDx", ParallelType::BIDx}, {"BIDy", ParallelType::BIDy},    {"BIDz", ParallelType::BIDz},
    {"TIDx", ParallelType::TIDx}, {"TIDy", ParallelType::TIDy},    {"TIDz", ParallelType::TIDz},
    {"DIDx", ParallelType::DIDx}, {"Serial", ParallelType::Serial}};
// LoopTransform::Serial is spelled through ParallelType::Serial: one "Serial".
const Choices<LoopTransform> kLoopTransforms = {{"Vectorize", LoopTransform::Vectorize},
                                                {"Unroll", LoopTransform::Unroll},
                                                {"Unswitch", LoopTransform::Unswitch},
                                                {"Bulk", LoopTransform::Bulk}};
const Choices<MemoryType> kMemoryTypes = {
    {"local", MemoryType::Local}, {"shared", MemoryType::Shared}, {"global", MemoryType::Global}};
const Choices<LoadStoreOpType> kLoadStoreOps = {{"Set", LoadStoreOpType::Set},
                                                {"CpAsync", LoadStoreOpType::CpAsync},
                                                {"LdMatrix", LoadStoreOpType::LdMatrix},
                                                {"Tma", LoadStoreOpType::Tma}};
const Choices<CacheOp> kCacheOps = {{"Unspecified", CacheOp::Unspecified},
                                    {"AllLevels", CacheOp::AllLevels},
                                    {"Streaming", CacheOp::Streaming},
                                    {"Global", CacheOp::Global}};
const Choices<bool> kBools = {{"true", true}, {"false", false}};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

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

std::string join(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : ", ") + s;
  return r;
}

/// " (did you mean 'X'?)" for the closest of `names`, ignoring case; or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& names) {
  std::vector<std::string> lowered;
  for (const auto& n : names) lowered.push_back(lower(n));
  std::string hit = closest_name(lower(name), lowered);
  for (size_t i = 0; i < names.size(); ++i)
    if (!hit.empty() && lowered[i] == hit) return " (did you mean '" + names[i] + "'?)";
  return "";
}

/// The value of an integer literal ("-12"); nullopt if it overflows int64.
std::optional<int64_t> to_integer(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return x;
}

/// v's first token as Token::describe() spells it ("'4'", "'-'", "'['"): for
/// messages about what was found where a name was expected.
std::string first_token(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Int:
      return v.text[0] == '-' ? "'-'" : "'" + v.text + "'";
    case Value::Kind::Name:
      return "'" + v.text + "'";
    case Value::Kind::List:
      return "'['";
    case Value::Kind::Param:
    case Value::Kind::Map:
      return "'{'";
  }
  return "";
}

/// Adds the defaults of a params(name=integer, ...) statement to `defaults`,
/// checking each argument (a user error at the argument) and that no name
/// gets a second default.
void read_params_statement(const Statement& st, std::map<std::string, int64_t>& defaults) {
  if (st.bind)
    user_error_at(st.bind_loc) << "cannot bind '" << *st.bind << "': params creates no tensor";
  for (const Arg& a : st.args) {
    if (a.keyword.empty() || a.value.kind != Value::Kind::Int)
      user_error_at(a.loc) << "params: expected name=integer, such as params(block=128), "
                           << "found "
                           << (a.keyword.empty() ? first_token(a.value) : "a non-integer value");
    if (defaults.count(a.keyword))
      user_error_at(a.loc) << "params: '" << a.keyword << "' already has a default ("
                           << defaults.at(a.keyword) << ")";
    auto v = to_integer(a.value.text);
    if (!v)
      user_error_at(a.value.loc) << "params: " << a.keyword << "=" << a.value.text
                                 << " is not a 64-bit integer";
    defaults[a.keyword] = *v;
  }
}

/// Calls f on every {placeholder} value of v, nested ones included.
template <typename F>
void for_each_placeholder(const Value& v, F&& f) {
  if (v.kind == Value::Kind::Param) f(v);
  for (const Value& item : v.items) for_each_placeholder(item, f);
}

// ---- primitives ---------------------------------------------------------------

class Script;
class Args;

/// A parameter of a primitive: its keyword name and, if optional, its
/// default as documented (nullptr when required).
struct Param {
  const char* name;
  const char* default_text = nullptr;
};

struct Primitive {
  std::string name;
  std::vector<Param> params;
  bool creates;  ///< returns a new tensor, which a statement may bind
  TensorView* (*apply)(Args&, ir::Fusion&);

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
  Args(const Script& s, const Primitive& p, std::vector<const Value*> slots)
      : s_(s), p_(p), slots_(std::move(slots)) {}

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
  std::vector<TensorView*> tensors(size_t i) const {
    std::vector<TensorView*> r;
    if (!given(i)) return r;
    for (const Value& v : list(i, "tensors such as [x, y]")) r.push_back(tensor_of(v, i));
    return r;
  }
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
    return ParallelType::Serial;
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
  [[noreturn]] void fail(const Value& v, size_t i, const std::string& want,
                         const std::vector<std::string>& names = {}) const;
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

  const Script& s_;
  const Primitive& p_;
  std::vector<const Value*> slots_;  ///< per parameter; null when not given
};

// Each apply reads its arguments into locals first, in parameter order, so
// that the first bad argument is the one reported.
const std::vector<Primitive> kPrimitives = {
    {"split",
     {{"tv"}, {"axis"}, {"factor"}, {"inner_split", "true"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int axis = a.axis(1);
       int64_t factor = a.integer(2);
       tv->split(axis, factor, a.flag(3, true));
       return nullptr;
     }},
    {"merge",
     {{"tv"}, {"axis_o"}, {"axis_i", "axis_o+1"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int o = a.axis(1);
       if (a.given(2))
         tv->merge(o, a.axis(2));
       else
         tv->merge(o);
       return nullptr;
     }},
    {"reorder",
     {{"tv"}, {"old2new"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       tv->reorder(a.old2new(1));
       return nullptr;
     }},
    {"parallelize",
     {{"tv"}, {"axis"}, {"type"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int axis = a.axis(1);
       std::visit([&](auto t) { tv->parallelize(axis, t); }, a.binding(2));
       return nullptr;
     }},
    {"set_memory_type",
     {{"tv"}, {"memory"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       sched::set_memory_type(tv, a.choice(1, kMemoryTypes, "a memory type", MemoryType::Local));
       return nullptr;
     }},
    {"cache_after",
     {{"tv"}, {"op", "Set"}, {"cache_op", "Unspecified"}},
     true,
     [](Args& a, ir::Fusion&) {
       TensorView* tv = a.tensor(0);
       auto op = a.choice(1, kLoadStoreOps, "a LoadStoreOpType", LoadStoreOpType::Set);
       auto cache = a.choice(2, kCacheOps, "a CacheOp", CacheOp::Unspecified);
       return sched::cache_after(tv, op, cache);
     }},
    {"cache_before",
     {{"tv"}},
     true,
     [](Args& a, ir::Fusion&) { return sched::cache_before(a.tensor(0)); }},
    {"cache_fork",
     {{"tv"}},
     true,
     [](Args& a, ir::Fusion&) { return sched::cache_fork(a.tensor(0)); }},
    {"rfactor",
     {{"tv"}, {"axes"}},
     true,
     [](Args& a, ir::Fusion&) {
       TensorView* tv = a.tensor(0);
       return sched::rfactor(tv, a.ints(1));
     }},
    {"propagate_transformation",
     {{"reference"}, {"selected", "[]"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* ref = a.tensor(0);
       sched::propagate_transformation(ref, a.tensors(1));
       return nullptr;
     }},
    {"parallelize_all_like",
     {{"reference"},
      {"pos", "-1"},
      {"selected", "[]"},
      {"types", "[]"},
      {"transforms", "[Unroll, Unswitch]"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* ref = a.tensor(0);
       int pos = a.given(1) ? a.axis(1) : -1;
       auto selected = a.tensors(2);
       auto types = a.choice_set(3, kParallelTypes, "a ParallelType", {});
       auto transforms = a.choice_set(4, kLoopTransforms, "a LoopTransform",
                                      {LoopTransform::Unroll, LoopTransform::Unswitch});
       sched::parallelize_all_like(ref, pos, selected, types, transforms);
       return nullptr;
     }},
    {"inline_at",
     {{"tv"}, {"pos"}, {"best_effort", "false"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int pos = a.axis(1);
       sched::inline_at(tv, pos, a.flag(2, false));
       return nullptr;
     }},
    {"inline_selected_at",
     {{"selected"}, {"reference"}, {"pos"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       auto selected = a.tensors(0);
       TensorView* ref = a.tensor(1);
       sched::inline_selected_at(selected, ref, a.axis(2));
       return nullptr;
     }},
    {"inline_most",
     {{"selected", "[]"}},
     false,
     [](Args& a, ir::Fusion& f) -> TensorView* {
       sched::inline_most(f, a.tensors(0));
       return nullptr;
     }},
};

/// Applies statements to one fusion and keeps the script's names and params.
class Script {
 public:
  Script(ir::Fusion& fusion, const ScheduleParams& params) : fusion_(fusion), params_(params) {}

  std::string apply(const Statement& st) {
    if (st.primitive == "params") return declare_params(st);
    auto prim = std::find_if(kPrimitives.begin(), kPrimitives.end(),
                             [&](const Primitive& p) { return p.name == st.primitive; });
    if (prim == kPrimitives.end()) {
      std::vector<std::string> names{"params"};
      for (const Primitive& p : kPrimitives) names.push_back(p.name);
      user_error_at(st.loc) << "unknown primitive '" << st.primitive << "'"
                            << did_you_mean(st.primitive, names) << "; expected one of "
                            << join(names);
    }
    if (st.bind) check_bindable(*st.bind, st.bind_loc, *prim);
    Args args(*this, *prim, match(st, *prim));
    TensorView* made = nullptr;
    try {
      made = prim->apply(args, fusion_);
    } catch (const UserError& e) {
      if (e.loc().valid()) throw;
      throw UserError(st.loc, e.message());
    }
    if (st.bind) bindings_.emplace(*st.bind, std::make_pair(made, st.bind_loc));
    ir::verify(fusion_);
    return render(st) + (made ? " -> " + made->describe() : "");
  }

  TensorView* lookup(const std::string& name, const SourceLoc& loc) const {
    if (auto it = bindings_.find(name); it != bindings_.end()) return it->second.first;
    std::vector<TensorView*> named;
    for (TensorView* tv : fusion_.tensors())
      if (tv->user_name() == name) named.push_back(tv);
    if (named.size() > 1)
      user_error_at(loc) << "tensor name '" << name << "' is ambiguous: it names "
                         << named[0]->str() << " and " << named[1]->str()
                         << "; write T<n> to pick one";
    if (named.size() == 1) return named[0];
    if (auto n = tensor_number(name)) {
      for (TensorView* tv : fusion_.tensors())
        if (tv->number() == *n) return tv;
      user_error_at(loc) << "unknown tensor '" << name << "'; the fusion has T0 to T"
                         << fusion_.tensors().back()->number();
    }
    std::vector<std::string> names;
    for (const auto& [k, v] : bindings_) names.push_back(k);
    for (TensorView* tv : fusion_.tensors())
      if (!tv->user_name().empty()) names.push_back(tv->user_name());
    user_error_at(loc) << "unknown tensor '" << name
                       << "'; expected a fusion name, T<n> or a name bound earlier in the "
                       << "script" << did_you_mean(name, names);
    return nullptr;
  }

  int64_t param(const Value& v) const {
    if (auto it = params_.find(v.text); it != params_.end()) return it->second;
    if (auto it = defaults_.find(v.text); it != defaults_.end()) return it->second;
    std::vector<std::string> known;
    for (const auto& [k, x] : params_) known.push_back(k);
    for (const auto& [k, x] : defaults_)
      if (!params_.count(k)) known.push_back(k);
    user_error_at(v.loc) << "no value for parameter '{" << v.text
                         << "}'; known params: " << (known.empty() ? "(none)" : join(known))
                         << did_you_mean(v.text, known) << " (declare a default with params("
                         << v.text << "=...))";
    return 0;
  }

 private:
  static std::optional<int> tensor_number(const std::string& s) {
    if (s.size() < 2 || s.size() > 9 || s[0] != 'T') return std::nullopt;
    if (!std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::atoi(s.c_str() + 1);
  }

  void check_bindable(const std::string& name, const SourceLoc& loc, const Primitive& p) const {
    if (!p.creates)
      user_error_at(loc) << "cannot bind '" << name << "': " << p.name
                         << " creates no tensor; only cache_after, cache_before, "
                         << "cache_fork and rfactor results can be bound";
    if (auto it = bindings_.find(name); it != bindings_.end())
      user_error_at(loc) << "'" << name << "' is already bound at " << it->second.second.str()
                         << "; each name is bound once";
    if (tensor_number(name))
      user_error_at(loc) << "cannot bind '" << name
                         << "': names of the form T<n> refer to tensors by number";
    for (TensorView* tv : fusion_.tensors())
      if (tv->user_name() == name)
        user_error_at(loc) << "cannot bind '" << name << "': it already names " << tv->describe()
                           << " in the fusion; choose another name";
  }

  /// Matches positional then keyword arguments to p's parameters.
  std::vector<const Value*> match(const Statement& st, const Primitive& p) const {
    std::vector<const Value*> slots(p.params.size(), nullptr);
    size_t next = 0;
    const Arg* first_kw = nullptr;
    for (const Arg& a : st.args) {
      if (a.keyword.empty()) {
        if (first_kw)
          user_error_at(a.value.loc) << p.name << ": positional argument after the keyword "
                                     << "argument '" << first_kw->keyword << "'";
        if (next == p.params.size())
          user_error_at(a.value.loc) << p.name << ": expected at most " << p.params.size()
                                     << " argument" << (p.params.size() == 1 ? "" : "s")
                                     << ", found " << st.args.size() << "; usage: " << p.usage();
        slots[next++] = &a.value;
        continue;
      }
      if (!first_kw) first_kw = &a;
      auto k = std::find_if(p.params.begin(), p.params.end(),
                            [&](const Param& q) { return a.keyword == q.name; });
      if (k == p.params.end()) {
        std::vector<std::string> names;
        for (const Param& q : p.params) names.push_back(q.name);
        user_error_at(a.loc) << p.name << ": unknown keyword '" << a.keyword
                             << "'; expected one of " << join(names)
                             << did_you_mean(a.keyword, names);
      }
      size_t idx = static_cast<size_t>(k - p.params.begin());
      if (slots[idx])
        user_error_at(a.loc) << p.name << ": argument '" << a.keyword << "' given twice";
      slots[idx] = &a.value;
    }
    for (size_t i = 0; i < p.params.size(); ++i)
      if (!slots[i] && !p.params[i].default_text)
        user_error_at(st.loc) << p.name << ": missing argument '" << p.params[i].name
                              << "'; usage: " << p.usage();
    return slots;
  }

  /// params(name=value, ...): defaults for placeholders, which callers override.
  std::string declare_params(const Statement& st) {
    read_params_statement(st, defaults_);
    return render(st);
  }

  std::string render(const Value& v) const {
    switch (v.kind) {
      case Value::Kind::Int:
      case Value::Kind::Name:
        return v.text;
      case Value::Kind::Param:
        return std::to_string(param(v));
      case Value::Kind::List:
      case Value::Kind::Map: {
        std::string r = v.kind == Value::Kind::List ? "[" : "{";
        for (size_t i = 0; i < v.items.size(); ++i) {
          bool key = v.kind == Value::Kind::Map && i % 2 == 0;
          r += (i == 0                               ? ""
                : key || v.kind == Value::Kind::List ? ", "
                                                     : ": ") +
               render(v.items[i]);
        }
        return r + (v.kind == Value::Kind::List ? "]" : "}");
      }
    }
    return "";
  }

  std::string render(const Statement& st) const {
    std::vector<std::string> args;
    for (const Arg& a : st.args)
      args.push_back((a.keyword.empty() ? "" : a.keyword + "=") + render(a.value));
    return std::to_string(st.loc.line) + ": " + (st.bind ? *st.bind + " = " : "") + st.primitive +
           "(" + join(args) + ")";
  }

  ir::Fusion& fusion_;
  const ScheduleParams& params_;
  std::map<std::string, int64_t> defaults_;  ///< from params(...)
  std::map<std::string, std::pair<TensorView*, SourceLoc>> bindings_;
};

void Args::fail(const Value& v, size_t i, const std::string& want,
                const std::vector<std::string>& names) const {
  std::string found;
  switch (v.kind) {
    case Value::Kind::Int:
      found = v.text;
      break;
    case Value::Kind::Param:
      found = "{" + v.text + "}";
      break;
    case Value::Kind::Name:
      found = "'" + v.text + "'" + did_you_mean(v.text, names);
      break;
    case Value::Kind::List:
      found = "a list";
      break;
    case Value::Kind::Map:
      found = "a map";
      break;
  }
  user_error_at(v.loc) << p_.name << ": expected " << want << " for '" << p_.params[i].name
                       << "', found " << found;
  std::abort();  // not reached: the report throws
}

TensorView* Args::tensor_of(const Value& v, size_t i) const {
  if (v.kind != Value::Kind::Name) fail(v, i, "a tensor");
  return s_.lookup(v.text, v.loc);
}

int64_t Args::integer_of(const Value& v, size_t i) const {
  if (v.kind == Value::Kind::Param) return s_.param(v);
  if (v.kind != Value::Kind::Int || v.text.find_first_of(".eE") != std::string::npos)
    fail(v, i, "an integer");
  auto x = to_integer(v.text);
  if (!x) fail(v, i, "an integer that fits in 64 bits");
  return *x;
}

}  // namespace

std::vector<std::string> apply_parsed_schedule(const ParsedSchedule& schedule, ir::Fusion& fusion,
                                               const ScheduleParams& params) {
  Script script(fusion, params);
  std::vector<std::string> log;
  for (const Statement& st : schedule.statements) log.push_back(script.apply(st));
  return log;
}

std::vector<std::string> apply_parsed_schedule(const ParsedSchedule& schedule,
                                               FusionDefinition& def,
                                               const ScheduleParams& params) {
  internal_assert(def.fusion != nullptr);
  return apply_parsed_schedule(schedule, *def.fusion, params);
}

std::vector<std::string> apply_schedule_text(const std::string& text, const std::string& path,
                                             FusionDefinition& def, const ScheduleParams& params) {
  internal_assert(def.fusion != nullptr);
  return apply_parsed_schedule(parse_schedule(text, path), def, params);
}

ParsedSchedule parse_schedule_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good() && !std::filesystem::is_directory(path))
      << "cannot read schedule file '" << path << "': "
      << (std::filesystem::exists(path) ? "permission denied or not a file" : "no such file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_schedule(ss.str(), path);
}

std::vector<std::string> apply_schedule_file(const std::string& path, FusionDefinition& def,
                                             const ScheduleParams& params) {
  internal_assert(def.fusion != nullptr);
  return apply_parsed_schedule(parse_schedule_file(path), def, params);
}

std::vector<SchedulePlaceholder> schedule_placeholders(const ParsedSchedule& schedule) {
  std::vector<SchedulePlaceholder> r;
  auto entry = [&](const std::string& name, const SourceLoc& loc) -> SchedulePlaceholder& {
    for (SchedulePlaceholder& p : r)
      if (p.name == name) return p;
    r.push_back({name, std::nullopt, loc, false});
    return r.back();
  };
  std::map<std::string, int64_t> defaults;
  for (const Statement& st : schedule.statements) {
    if (st.primitive == "params") {
      read_params_statement(st, defaults);
      for (const Arg& a : st.args) entry(a.keyword, a.loc).default_value = defaults.at(a.keyword);
      continue;
    }
    for (const Arg& a : st.args)
      for_each_placeholder(a.value, [&](const Value& v) { entry(v.text, v.loc).used = true; });
  }
  return r;
}

std::vector<SchedulePlaceholder> schedule_placeholders(const std::string& path) {
  return schedule_placeholders(parse_schedule_file(path));
}

ScheduleParams parse_schedule_args(const std::string& text, const std::string& what) {
  ScheduleParams r;
  auto trim = [](std::string s) {
    size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    item = trim(item);
    if (item.empty() && trim(text).empty()) break;
    size_t eq = item.find('=');
    user_assert(eq != std::string::npos && eq > 0)
        << what << ": expected NAME=INTEGER, found '" << item << "' in '" << text << "'";
    std::string name = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    bool ident =
        !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
        std::all_of(name.begin(), name.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    user_assert(ident) << what << ": expected a placeholder name before '=', found '" << name
                       << "' in '" << text << "'";
    auto v = to_integer(value);
    user_assert(!value.empty() && v)
        << what << ": " << name << " must be an integer, found '" << value << "'";
    user_assert(!r.count(name)) << what << ": " << name << " is given twice";
    r[name] = *v;
  }
  return r;
}

}  // namespace schedlab::frontend
