// The YAML of size-bucket rules (`buckets: {K: pow2, N: any, M: [256, 1024]}`),
// shared by sweep files (spec.cpp) and tuned files (tuned_file.cpp); defined
// in bucket_yaml.cpp. Private to libschedlab, as yaml-cpp is.
#pragma once

#include <vector>

#include "../../base/yaml_reader.h"
#include "schedlab/sweep/spec/bucket.h"

namespace schedlab::sweep {

/// Parses a `buckets:` mapping: each key a size name, each value `pow2`,
/// `any`, `exact` or an ascending list of positive edges. user_error at the
/// offending node otherwise.
std::vector<BucketRule> parse_bucket_rules(const YAML::Node& n, const YamlReader& r);

}  // namespace schedlab::sweep
