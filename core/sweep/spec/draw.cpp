// The random draw of a scheduler's space: see schedlab/sweep/spec/draw.h.
#include "schedlab/sweep/spec/draw.h"

#include <algorithm>
#include <random>
#include <set>

namespace schedlab::sweep {

namespace {

/// FNV-1a: a stable hash (std::hash may differ between runs and libraries).
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

uint64_t search_seed(uint64_t strategy_seed, const std::string& scheduler,
                     const std::string& fusion, const ir::SizeBindings& sizes) {
  // "K=8,N=2", by name: what the random strategy has always hashed, so that
  // a sweep draws the same points as before.
  std::string by_name;
  for (const auto& [k, v] : sizes)
    by_name += (by_name.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return strategy_seed ^ fnv1a(scheduler + '\0' + fusion + '\0' + by_name);
}

std::vector<Config> draw_admissible(const SchedulerSpec& s, const ir::SizeBindings& sizes,
                                    uint64_t seed, uint64_t n) {
  std::mt19937_64 rng(seed);
  auto below = [&](uint64_t bound) { return rng() % bound; };  // bias < bound / 2^64
  std::vector<uint64_t> chosen;
  const uint64_t size = s.space.size();
  if (size <= kMaxGridPoints) {
    std::vector<uint64_t> admissible;
    for (uint64_t i = 0; i < size; ++i)
      if (s.admits(s.space.point(i), sizes)) admissible.push_back(i);
    const uint64_t take = std::min<uint64_t>(n, admissible.size());
    for (uint64_t k = 0; k < take; ++k) {
      std::swap(admissible[k], admissible[k + below(admissible.size() - k)]);
      chosen.push_back(admissible[k]);
    }
  } else {
    std::set<uint64_t> seen;
    const uint64_t tries = std::max<uint64_t>(1000, 100 * n);
    for (uint64_t t = 0; t < tries && chosen.size() < n; ++t) {
      const uint64_t i = below(size);
      if (seen.insert(i).second && s.admits(s.space.point(i), sizes)) chosen.push_back(i);
    }
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<Config> r;
  for (uint64_t i : chosen) r.push_back(s.space.point(i));
  return r;
}

}  // namespace schedlab::sweep
