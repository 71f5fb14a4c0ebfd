// Size buckets: see schedlab/sweep/spec/bucket.h.
#include "schedlab/sweep/spec/bucket.h"

#include <fmt/core.h>

#include <algorithm>

namespace schedlab::sweep {

bool BucketRange::any() const { return lo == kBucketMin && hi == kBucketMax; }

std::string BucketRange::str() const {
  if (any()) return size + "=any";
  if (lo == hi) return fmt::format("{}={}", size, lo);
  if (hi == kBucketMax) return fmt::format("{}=[{}, inf]", size, lo);
  return fmt::format("{}=[{}, {}]", size, lo, hi);
}

std::string bucket_str(const Bucket& b) {
  std::string r;
  for (const BucketRange& x : b) r += (r.empty() ? "" : " ") + x.str();
  return r;
}

Bucket bucket_of(const std::vector<BucketRule>& rules, const std::vector<std::string>& size_names,
                 const ir::SizeBindings& sizes) {
  Bucket b;
  for (const std::string& name : size_names) {
    auto it = sizes.find(name);
    internal_assert(it != sizes.end()) << "bucket_of: size " << name << " is not bound";
    const int64_t v = it->second;
    BucketRange r{name, v, v};
    auto rule = std::find_if(rules.begin(), rules.end(),
                             [&](const BucketRule& x) { return x.size == name; });
    if (rule != rules.end()) {
      switch (rule->kind) {
        case BucketRule::Kind::Exact:
          break;
        case BucketRule::Kind::Any:
          r.lo = kBucketMin, r.hi = kBucketMax;
          break;
        case BucketRule::Kind::Pow2: {
          if (v < 1) break;  // no power of two holds it: exact
          int64_t p = 1;
          while (p <= v / 2) p *= 2;
          r.lo = p;
          r.hi = p > kBucketMax / 2 ? kBucketMax : 2 * p - 1;
          break;
        }
        case BucketRule::Kind::Edges: {
          const std::vector<int64_t>& e = rule->edges;
          auto up = std::upper_bound(e.begin(), e.end(), v);  // first edge above v
          r.lo = up == e.begin() ? 1 : *(up - 1);
          r.hi = up == e.end() ? kBucketMax : *up - 1;
          if (v < r.lo) r.lo = v;  // below 1: a bucket of its own
          break;
        }
      }
    }
    b.push_back(r);
  }
  return b;
}

}  // namespace schedlab::sweep
