// The YAML of size-bucket rules: see bucket_yaml.h.
#include "bucket_yaml.h"

#include <set>

namespace schedlab::sweep {

std::vector<BucketRule> parse_bucket_rules(const YAML::Node& n, const YamlReader& r) {
  const char* example = "{K: pow2, N: any} or {K: [1024, 4096, 16384]}";
  if (!n.IsMap() || n.size() == 0)
    user_error_at(r.loc(n)) << "buckets: expected a mapping such as " << example << ", found "
                            << kind_name(n);
  std::vector<BucketRule> rules;
  std::set<std::string> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node key = it->first, value = it->second;
    BucketRule rule;
    rule.size = key.IsScalar() ? key.Scalar() : "";
    rule.loc = r.loc(key);
    if (!is_identifier(rule.size))
      user_error_at(r.loc(key)) << "buckets: expected a size name such as K, found "
                                << kind_name(key);
    if (!seen.insert(rule.size).second)
      user_error_at(r.loc(key)) << "buckets: duplicate size '" << rule.size << "'";
    if (value.IsScalar() && value.Scalar() == "pow2") {
      rule.kind = BucketRule::Kind::Pow2;
    } else if (value.IsScalar() && value.Scalar() == "any") {
      rule.kind = BucketRule::Kind::Any;
    } else if (value.IsScalar() && value.Scalar() == "exact") {
      rule.kind = BucketRule::Kind::Exact;
    } else if (value.IsSequence() && value.size() > 0) {
      rule.kind = BucketRule::Kind::Edges;
      for (const YAML::Node& e : value) {
        std::optional<int64_t> x = e.IsScalar() ? as_int(e.Scalar()) : std::nullopt;
        if (!x || *x < 1)
          user_error_at(r.loc(e)) << "buckets " << rule.size
                                  << ": expected a positive integer edge, found " << kind_name(e);
        if (!rule.edges.empty() && *x <= rule.edges.back())
          user_error_at(r.loc(e)) << "buckets " << rule.size << ": edges must ascend; found "
                                  << *x << " after " << rule.edges.back();
        rule.edges.push_back(*x);
      }
    } else {
      user_error_at(r.loc(value)) << "buckets " << rule.size
                                  << ": expected pow2, any, exact or a list of edges such as "
                                  << "[1024, 4096], found " << kind_name(value);
    }
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace schedlab::sweep
