// Sweep values against a plugin's schema or a script's placeholders.
#include "param_values.h"

#include <cmath>
#include <limits>

namespace schedlab::sweep {

using schedlab::as_double;
using schedlab::as_int;
using schedlab::kind_name;
using plugin::ParamKind;

namespace {

/// A choice's type in constraints: integer when every name is one
/// (pointwise's vector: "1", "2", "4", "8"), so `block * vector <= K` works.
ValueType choice_type(const plugin::ParamDesc& d) {
  for (const std::string& c : d.choices)
    if (!as_int(c)) return ValueType::String;
  return ValueType::Int;
}

ValueType type_of(const plugin::ParamDesc& d) {
  switch (d.kind) {
    case ParamKind::Int:
      return ValueType::Int;
    case ParamKind::Float:
      return ValueType::Float;
    case ParamKind::Bool:
      return ValueType::Bool;
    case ParamKind::Choice:
      return choice_type(d);
    default:
      return ValueType::String;  // string parameters
  }
}

bool is_pow2(int64_t v) {
  return v > 0 && (v & (v - 1)) == 0;
}

}  // namespace

ValueReader ValueReader::for_plugin(const YamlReader& r, std::string scheduler,
                                    const std::string& plugin,
                                    const std::vector<plugin::ParamDesc>& schema) {
  ValueReader v(r, std::move(scheduler));
  v.owner_ = "plugin '" + plugin + "'";
  v.what_ = "parameter";
  for (const plugin::ParamDesc& d : schema) v.params_.push_back({d.name, type_of(d), &d});
  return v;
}

ValueReader ValueReader::for_script(const YamlReader& r, std::string scheduler,
                                    const std::string& script,
                                    const std::vector<std::string>& placeholders) {
  ValueReader v(r, std::move(scheduler));
  v.owner_ = "script '" + script + "'";
  v.what_ = "placeholder";
  for (const std::string& p : placeholders) v.params_.push_back({p, ValueType::Int, nullptr});
  return v;
}

std::string ValueReader::prefix(const std::string& param) const {
  return "scheduler '" + scheduler_ + "': " + param + ": ";
}

const ParamInfo& ValueReader::param(const YAML::Node& key) const {
  std::string name = key.IsScalar() ? key.Scalar() : "";
  std::vector<std::string> names;
  for (const ParamInfo& p : params_) {
    if (p.name == name) return p;
    names.push_back(p.name);
  }
  std::string list, hint = closest_name(name, names);
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  user_error_at(r_.loc(key)) << "scheduler '" << scheduler_ << "': " << owner_ << " has no "
                             << what_ << " '" << name << "'; expected one of "
                             << (list.empty() ? "(none)" : list)
                             << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
}

Value ValueReader::scalar(const YAML::Node& n, const ParamInfo& p) const {
  const plugin::ParamDesc* d = p.desc;
  std::string expected = d ? d->domain_str() : "an integer";
  auto fail = [&]() {
    user_error_at(r_.loc(n)) << prefix(p.name) << "expected " << expected << ", found "
                             << kind_name(n);
  };
  if (!n.IsScalar()) fail();
  const std::string& s = n.Scalar();
  if (!d) {
    auto v = as_int(s);
    if (!v) fail();
    return Value::integer(*v);
  }
  switch (d->kind) {
    case ParamKind::Int: {
      auto v = as_int(s);
      if (!v || *v < d->int_min || *v > d->int_max) fail();
      return Value::integer(*v);
    }
    case ParamKind::Float: {
      auto v = as_double(s);
      if (!v || !std::isfinite(*v) || *v < d->float_min || *v > d->float_max) fail();
      return Value::real(*v);
    }
    case ParamKind::Bool:
      if (s != "true" && s != "false") fail();
      return Value::boolean(s == "true");
    case ParamKind::Choice:
      if (std::find(d->choices.begin(), d->choices.end(), s) == d->choices.end()) fail();
      return Value::string(s);
    default:
      return Value::string(s);  // string parameters take any text
  }
}

std::vector<Value> ValueReader::dimension(const YAML::Node& n, const ParamInfo& p) const {
  if (n.IsMap()) return range(n, p);
  if (!n.IsSequence() || n.size() == 0)
    user_error_at(r_.loc(n)) << prefix(p.name) << "expected a non-empty list of values or a "
                             << "range {from, to, step} or {from, to, pow2: true}, found "
                             << kind_name(n)
                             << (n.IsScalar() ? " (a fixed value goes in set:)" : "");
  std::vector<Value> values;
  for (const auto& item : n) {
    Value v = scalar(item, p);
    if (std::find(values.begin(), values.end(), v) != values.end())
      user_error_at(r_.loc(item)) << prefix(p.name) << v.str() << " is listed twice; expected "
                                  << "each value once";
    values.push_back(std::move(v));
  }
  return values;
}

std::vector<Value> ValueReader::range(const YAML::Node& n, const ParamInfo& p) const {
  static const std::vector<std::string> kKeys = {"from", "to", "step", "pow2"};
  r_.check_keys(n, kKeys, "the range of " + p.name);
  bool is_float = p.desc && p.desc->kind == ParamKind::Float;
  if (p.desc && p.desc->kind != ParamKind::Int && !is_float)
    user_error_at(r_.loc(n)) << prefix(p.name) << "a range needs an int or float parameter, "
                             << "found " << p.desc->domain_str() << "; expected a list of values";
  for (const char* k : {"from", "to"})
    if (!n[k])
      user_error_at(r_.loc(n)) << prefix(p.name) << "the range is missing '" << k
                               << "'; expected {from: 32, to: 1024, step: 32} or {from: 32, "
                               << "to: 1024, pow2: true}";
  Value from = scalar(n["from"], p), to = scalar(n["to"], p);
  bool pow2 = false;
  if (const YAML::Node& b = n["pow2"]) {
    if (!b.IsScalar() || (b.Scalar() != "true" && b.Scalar() != "false"))
      user_error_at(r_.loc(b)) << prefix(p.name) << "pow2: expected true or false, found "
                               << kind_name(b);
    pow2 = b.Scalar() == "true";
  }
  if (pow2 && n["step"])
    user_error_at(r_.loc(n["step"])) << prefix(p.name) << "expected step or pow2: true, found "
                                     << "both";
  std::vector<Value> values;
  if (is_float) {
    if (pow2 || !n["step"])
      user_error_at(r_.loc(n)) << prefix(p.name) << "a float range needs a step, e.g. {from: "
                               << "0.5, to: 2, step: 0.5}";
    double st = n["step"].IsScalar() ? as_double(n["step"].Scalar()).value_or(0) : 0;
    if (!(st > 0) || !std::isfinite(st))
      user_error_at(r_.loc(n["step"])) << prefix(p.name) << "step: expected a positive number, "
                                       << "found " << kind_name(n["step"]);
    if (to.f < from.f)
      user_error_at(r_.loc(n)) << prefix(p.name) << "the range is empty: to (" << to.str()
                               << ") < from (" << from.str() << ")";
    // Index-based, so that rounding cannot add or drop the last value.
    double count = std::floor((to.f - from.f) / st + 1e-9) + 1;
    if (count > static_cast<double>(kMaxGridPoints))
      user_error_at(r_.loc(n)) << prefix(p.name) << "the range has " << count << " values; "
                               << "expected at most " << kMaxGridPoints;
    for (int64_t i = 0; i < static_cast<int64_t>(count); ++i)
      values.push_back(Value::real(from.f + static_cast<double>(i) * st));
    return values;
  }
  if (to.i < from.i)
    user_error_at(r_.loc(n)) << prefix(p.name) << "the range is empty: to (" << to.i << ") < from ("
                             << from.i << ")";
  if (pow2) {
    if (!is_pow2(from.i))
      user_error_at(r_.loc(n["from"])) << prefix(p.name) << "pow2: expected from to be a power "
                                       << "of two, found " << from.i;
    for (int64_t v = from.i; v <= to.i; v *= 2) {
      values.push_back(Value::integer(v));
      if (v > std::numeric_limits<int64_t>::max() / 2) break;
    }
    return values;
  }
  int64_t step = 1;
  if (const YAML::Node& sn = n["step"]) {
    int64_t sv = sn.IsScalar() ? as_int(sn.Scalar()).value_or(0) : 0;
    if (sv <= 0)
      user_error_at(r_.loc(sn)) << prefix(p.name) << "step: expected a positive integer, found "
                                << kind_name(sn);
    step = sv;
  }
  uint64_t count = static_cast<uint64_t>(to.i - from.i) / static_cast<uint64_t>(step) + 1;
  if (count > kMaxGridPoints)
    user_error_at(r_.loc(n)) << prefix(p.name) << "the range has " << count << " values; "
                             << "expected at most " << kMaxGridPoints;
  for (uint64_t i = 0; i < count; ++i)
    values.push_back(Value::integer(from.i + static_cast<int64_t>(i) * step));
  return values;
}

}  // namespace schedlab::sweep
