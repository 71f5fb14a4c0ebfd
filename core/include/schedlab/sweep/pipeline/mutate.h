// schedlab/sweep/mutate: mutation self-tests of validation
// (docs/mutation.md). A Mutation perturbs a kernel's outputs after
// the launch and before the comparison, so that a front end (`exec
// --mutate`, `fuzz --mutate`) can check that its validation rejects outputs
// that are plainly wrong: a check that passes a mutant is too weak.
//
// Owns: the mutation kinds, their parsing, and applying one to host outputs.
// May depend on: ref (host tensors), ir (storage rounding).
// Invariants: a mutation is deterministic (the element it moves depends only
// on the reference values), every mutated value is one the output's dtype
// can store (ir::round_to_dtype), and an output it cannot change (all zeros
// under `zero`, a single element under `swap`, an integer output under
// `nan`) is reported as unchanged, never silently counted as mutated.
#pragma once

#include <string>
#include <vector>

#include "schedlab/ref/tensor.h"

namespace schedlab::sweep {

/// One way of making outputs wrong.
struct Mutation {
  enum class Kind {
    Zero,   ///< every element 0
    Scale,  ///< every element times `value`
    One,    ///< one element moved by `value` x the largest |reference| of its output
            ///< (away from zero for value > 0; an integer by at least 1)
    Swap,   ///< the elements holding the largest and the smallest reference value exchanged
    Nan,    ///< one element NaN
  };
  Kind kind = Kind::Zero;
  double value = 0.0;  ///< Scale: the factor F; One: the ratio R; otherwise unused

  /// As written on the command line: "zero", "scale:0.99", "one:0.01", "swap", "nan".
  std::string str() const;
};

/// Parses `text` (`flag` names it in errors). user_error, e.g. "--mutate:
/// expected zero, scale:F, one:R, swap or nan, got 'scal:2'", or for a bad
/// number "--mutate scale:F: expected a finite number F other than 1, got 'x'".
Mutation parse_mutation(const std::string& text, const std::string& flag = "--mutate");

/// What applying a mutation did to each output.
struct MutationEffect {
  /// Per output: "element 12 [1, 4]: 0.25 -> 0.2525", "every element times
  /// 0.99 (4096 changed)", or "unchanged: ..." with the reason.
  std::vector<std::string> outputs;
  int64_t changed = 0;  ///< elements whose value changed, over every output
  /// Nothing changed: the mutant equals the original, so validation cannot
  /// be expected to reject it.
  bool noop() const { return changed == 0; }
};

struct Validation;

/// How validation judged a mutant.
struct MutantVerdict {
  bool killed = false;  ///< validation rejected the mutated outputs
  /// Killed: "wrong_result under mutation scale:0.99: output 0 (T5 (out)): 3
  /// mismatches, ..."; survived: "mutation one:0.01 survived validation:
  /// every output within its tolerance (max abs error 1.2e-05)".
  std::string line;
};
/// The verdict of `mutated`, the validation of the outputs under `m`.
MutantVerdict judge_mutant(const Mutation& m, const Validation& mutated);

/// Applies `m` to every output in `got` in place; `want` is the reference of
/// the same outputs (it picks the elements of One, Swap and Nan: the one with
/// the largest |reference|, first in row-major order on a tie; Swap exchanges
/// it with the smallest reference value, both taken from `got`).
MutationEffect mutate(const Mutation& m, std::vector<ref::HostTensor>& got,
                      const std::vector<ref::HostTensor>& want);

}  // namespace schedlab::sweep
