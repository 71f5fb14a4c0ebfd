// autosched/rules.h: the autoscheduler's rewrite rules (the Finch
// autoscheduler's design: small pattern-matching rewrites, one class per
// rule, matched deterministically in a fixed order, no e-graph).
//
// A rule matches on the segment's facts (facts.h, read before any rewrite)
// and on what earlier rules recorded in the State, and rewrites the segment
// through the plugin ABI's primitives only. run_rules tries every rule once,
// in the order of rules(): each earlier rule creates what a later one needs
// (caches before the reference is transformed, the reference's loop before
// it is propagated, propagation before rfactor and vectorization, inlining
// last). The rules' free choices are the Config, the plugin's schema.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "facts.h"
#include "schedlab/plugin_api/loop.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace autosched {

/// The free choices of the rules (one schema parameter each; see autosched.cpp).
struct Config {
  int64_t vector = 1;  ///< elements per vector access (VectorizeInnermost)
  int64_t threads =
      128;           ///< threads per block (pointwise, serial and outer reductions, transposes)
  int64_t rows = 1;  ///< rows per block (TIDy) of an inner block reduction or a normalization
  int64_t reduce_threads = 1;   ///< threads that reduce one element together (1: serial)
  int64_t unroll = 1;           ///< unrolled iterations per thread
  int64_t persist = 1;          ///< normalization: vectors of a row each thread keeps
  bool shared_persist = false;  ///< normalization: the kept row in Shared memory
  int64_t grid = 1;             ///< blocks that reduce one element together (1: none)
  int64_t tile = 32;            ///< transpose: the tile's edge
  bool stage = true;            ///< transpose: stage the other layout through Shared memory
};

/// The reference's loop axes by role while rules transform it, so that a rule
/// names what an axis is for rather than where it is.
using Loop = pa::Loop;

/// What the rules share while they rewrite one segment.
struct State {
  pa::Segment& seg;
  const Facts& facts;
  const Config& config;
  Loop loop;                               ///< the reference's loop, by role
  std::vector<pa::TensorView> vectorized;  ///< copies whose innermost axis is to be Vectorize
  std::vector<pa::TensorView> hoisted;     ///< input copies computed outside the unrolled loop
  int hoist_at = 0;                        ///< ... at this position
  std::vector<pa::TensorView> staged;      ///< transpose: what runs in the other layout's order
  std::vector<pa::TensorView>
      persistent;                    ///< normalization: the kept buffers (inputs: their copies)
  std::vector<std::string> applied;  ///< the rules that matched, in order
};

/// One rewrite rule.
class Rule {
 public:
  virtual ~Rule() = default;
  /// The rule's name, as the schedule log and docs/plugins.md print it.
  virtual const char* name() const = 0;
  virtual bool matches(const State& s) const = 0;
  virtual void apply(State& s) const = 0;
};

/// Every rule, in the order run_rules tries them.
const std::vector<std::unique_ptr<Rule>>& rules();

/// Applies every matching rule once, in order; `s.applied` names them.
void run_rules(State& s);

}  // namespace autosched
