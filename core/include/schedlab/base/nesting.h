// schedlab/base: the nesting limit of every recursive-descent parser (fusion
// bodies, sweep constraints, schedule scripts), so that deeply nested input
// is a user error rather than a stack overflow.
//
// Owns: kMaxNestingDepth and the guard that counts one level.
// May depend on: schedlab/base/error.h.
#pragma once

#include "schedlab/base/error.h"

namespace schedlab {

/// Levels of parentheses, calls, brackets and prefix operators one expression
/// may nest. Far beyond any hand-written input (nvFuser's deepest standard
/// fusions nest under 20), far below what overflows an 8 MiB stack.
inline constexpr int kMaxNestingDepth = 256;

/// Counts one level of nesting in `depth` for its lifetime. Past
/// kMaxNestingDepth it raises a user error at `loc`: "<what> nested deeper
/// than 256 levels; expected at most 256 (...)".
class NestingGuard {
 public:
  NestingGuard(int& depth, const SourceLoc& loc, const char* what) : depth_(depth) {
    if (++depth_ > kMaxNestingDepth) {
      --depth_;
      user_error_at(loc) << what << " nested deeper than " << kMaxNestingDepth
                         << " levels; expected at most " << kMaxNestingDepth
                         << " (split it into named steps)";
    }
  }
  ~NestingGuard() { --depth_; }
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;

 private:
  int& depth_;
};

}  // namespace schedlab
