// Parameter values, configurations and the odometer order of a space.
#include "schedlab/sweep/spec/space.h"

#include <cstdio>
#include <cstdlib>
#include <limits>

namespace schedlab::sweep {

std::string Value::str() const {
  switch (kind) {
    case Kind::Int:
      return std::to_string(i);
    case Kind::Bool:
      return i ? "true" : "false";
    case Kind::String:
      return s;
    case Kind::Float: {
      // The shortest spelling that reads back as the same double.
      char buf[32];
      for (int prec = 1; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, f);
        if (std::strtod(buf, nullptr) == f) break;
      }
      return buf;
    }
  }
  return "?";
}

bool Value::operator==(const Value& o) const {
  return kind == o.kind && i == o.i && f == o.f && s == o.s;
}

const Value* Config::find(const std::string& name) const {
  for (const auto& [k, v] : values)
    if (k == name) return &v;
  return nullptr;
}

std::string Config::str() const {
  std::string r;
  for (const auto& [k, v] : values) r += (r.empty() ? "" : ", ") + k + "=" + v.str();
  return r;
}

uint64_t ParamSpace::size() const {
  uint64_t n = 1;
  for (const Dimension& d : dims) {
    uint64_t k = d.values.size();
    if (k != 0 && n > std::numeric_limits<uint64_t>::max() / k)
      return std::numeric_limits<uint64_t>::max();
    n *= k;
  }
  return n;
}

Config ParamSpace::point(uint64_t index) const {
  internal_assert(index < size()) << "space point " << index << " of " << size();
  Config c;
  c.values.resize(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    uint64_t k = dims[d].values.size();
    c.values[d] = {dims[d].name, dims[d].values[index % k]};
    index /= k;
  }
  return c;
}

}  // namespace schedlab::sweep
