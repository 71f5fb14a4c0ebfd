// Schedule scripts, applied: the whole text is parsed first
// (schedule_ast.cpp, so a syntax error anywhere applies nothing), then
// each statement is resolved and applied against the fusion as it is at
// that line. The arguments and the enum spellings are in schedule_args.h,
// the primitives in schedule_primitives.h.
#include "schedlab/frontend/schedule_script.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "parser.h"
#include "schedule_args.h"
#include "schedule_primitives.h"
#include "schedlab/base/error.h"
#include "schedlab/ir/verifier.h"

namespace schedlab::frontend {

using ir::TensorView;

namespace {

using script::Args;
using script::did_you_mean;
using script::first_token;
using script::join;
using script::Object;
using script::Param;
using script::Primitive;
using script::Returns;
using script::to_integer;
using Value = ScheduleValue;
using Arg = ScheduleArg;
using Statement = ScheduleStatement;

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

/// Applies statements to one fusion and keeps the script's names and params.
class Script final : public script::ArgNames {
 public:
  Script(ir::Fusion& fusion, const ScheduleParams& params) : fusion_(fusion), params_(params) {}

  std::string apply(const Statement& st) {
    if (st.primitive == "params") return declare_params(st);
    const auto& all = script::primitives();
    auto prim = std::find_if(all.begin(), all.end(),
                             [&](const Primitive& p) { return p.name == st.primitive; });
    if (prim == all.end()) {
      std::vector<std::string> names{"params"};
      for (const Primitive& p : all) names.push_back(p.name);
      user_error_at(st.loc) << "unknown primitive '" << st.primitive << "'"
                            << did_you_mean(st.primitive, names) << "; expected one of "
                            << join(names);
    }
    if (st.bind) check_bindable(*st.bind, st.bind_loc, *prim);
    Args args(*this, *prim, match(st, *prim));
    Object made;
    try {
      made = prim->apply(args, fusion_);
    } catch (const UserError& e) {
      if (e.loc().valid()) throw;
      throw UserError(st.loc, e.message());
    }
    if (st.bind) bindings_.emplace(*st.bind, std::make_pair(made, st.bind_loc));
    ir::verify(fusion_);
    return render(st) + (made.none() ? "" : " -> " + made.str());
  }

  Object lookup(const std::string& name, const SourceLoc& loc) const override {
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
  }

  int64_t param(const Value& v) const override {
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
  }

 private:
  static std::optional<int> tensor_number(const std::string& s) {
    if (s.size() < 2 || s.size() > 9 || s[0] != 'T') return std::nullopt;
    if (!std::all_of(s.begin() + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return std::nullopt;
    return std::atoi(s.c_str() + 1);
  }

  void check_bindable(const std::string& name, const SourceLoc& loc, const Primitive& p) const {
    if (p.returns == Returns::Nothing) {
      std::vector<std::string> returning;
      for (const Primitive& q : script::primitives())
        if (q.returns != Returns::Nothing) returning.push_back(q.name);
      user_error_at(loc) << "cannot bind '" << name << "': " << p.name
                         << " returns nothing; only the results of " << join(returning)
                         << " can be bound";
    }
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
      case Value::Kind::Index:
        return render(v.items[0]) + "[" + render(v.items[1]) + "]";
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
    internal_error << "schedule script: unknown value kind " << static_cast<int>(v.kind);
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
  /// What each name the script binds stands for, and where it was bound.
  std::map<std::string, std::pair<Object, SourceLoc>> bindings_;
};

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

std::string read_schedule_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good() && !std::filesystem::is_directory(path))
      << "cannot read schedule file '" << path << "': "
      << (std::filesystem::exists(path) ? "permission denied or not a file" : "no such file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ParsedSchedule parse_schedule_file(const std::string& path) {
  return parse_schedule(read_schedule_file(path), path);
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
