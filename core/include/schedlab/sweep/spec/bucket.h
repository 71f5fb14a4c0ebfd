// schedlab/sweep/bucket: size buckets, how a sweep's `buckets:` rules
// group the sizes of a fusion (docs/tuning.md). A sweep file declares the
// rules (spec.h), `schedlab tune` chooses one configuration per bucket and a
// tuned file serves it at every size of the bucket (tuned_file.h).
//
// Owns: the rules, the range each gives a size, and the bucket of a binding.
// May depend on: schedlab/base (SourceLoc), ir (sizes).
// Invariants: a bucket names every size of its fusion (a size without a rule
// is exact), so a lookup never matches on a size it did not see; an open
// bound is kBucketMin or kBucketMax, and `any` is both.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/ir/size_expr.h"

namespace schedlab::sweep {

/// The open bounds of a range: `any` is [kBucketMin, kBucketMax], and an
/// Edges rule's last range ends at kBucketMax ("inf" in a tuned file).
inline constexpr int64_t kBucketMin = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kBucketMax = std::numeric_limits<int64_t>::max();

/// How a sweep buckets one named size (`buckets: {K: pow2, N: any}`).
struct BucketRule {
  enum class Kind {
    Exact,  ///< the value itself (every size the sweep does not name)
    Pow2,   ///< [2^k, 2^(k+1) - 1] around the value
    Edges,  ///< [edges[i], edges[i+1] - 1]: `K: [1024, 4096, 16384]`; the last is open
    Any,    ///< every value
  };
  std::string size;  ///< the size's name
  Kind kind = Kind::Exact;
  std::vector<int64_t> edges;  ///< Edges: ascending, at least one
  SourceLoc loc;               ///< the rule's key in the sweep file
};

/// The values of one size a bucket covers: [lo, hi], both included.
struct BucketRange {
  std::string size;
  int64_t lo = 0;
  int64_t hi = 0;
  bool any() const;
  bool contains(int64_t v) const { return v >= lo && v <= hi; }
  /// "K=[4096, 8191]", "N=any", "N=1024".
  std::string str() const;
};
using Bucket = std::vector<BucketRange>;

/// "N=any K=[4096, 8191]".
std::string bucket_str(const Bucket& b);
/// The bucket of `sizes` under `rules`, one range per name in `size_names`
/// (the fusion's declaration order); sizes without a rule are exact. An
/// Edges value below the first edge gets [1, edges[0] - 1].
Bucket bucket_of(const std::vector<BucketRule>& rules, const std::vector<std::string>& size_names,
                 const ir::SizeBindings& sizes);

}  // namespace schedlab::sweep
