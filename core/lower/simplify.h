// Pass: simplify. Index math rewritten with what the kernel knows about its
// variables (Halide's Simplify, much smaller): each loop variable lies in
// [0, extent), each thread and block index below its launch extent (exact
// when the kernel fixes its launch: Kernel::static_block, the grid), each size and
// stride is >= 0, and inside `if (v < e)` v lies below e. With that:
//  * constants fold, and a variable with one possible value becomes it;
//  * sums are put in a canonical linear form (terms sorted, coefficients
//    collected), so equal indices print equal;
//  * `a / c` and `a % c` by a constant c > 0 split a = c*q + r: the result is
//    q (resp. r) when r is known to lie in [0, c), and q + r / c (r % c)
//    when r >= 0; nested divisions by constants combine;
//  * a comparison whose outcome the bounds decide becomes true or false, and
//    so do the conjunctions, branches and loops built on it: `if (true)` and
//    a loop of one iteration are spliced into their parent, `if (false)` and
//    a loop of none are dropped;
//  * `ceilDiv(a, c)` by a constant c that divides every coefficient of a's
//    terms is exact: 4 q for ceilDiv(16 q, 4);
//  * a comparison d < 0 that the bounds do not decide is reduced by the
//    largest common factor g of its unbounded terms for which the rest r of
//    d lies within one multiple of g: `16 q i + 4 tx + j < 16 q` (j < 4)
//    becomes `4 q i + tx < 4 q`, the same atom as its vector's check. With
//    a dynamic kernel's sizes that are multiples of 16 written 16 q
//    (divisibility specialization, kir::Kernel::divisible) these two fold
//    its index math much as constants do;
//  * a product of variables keeps its constant factors in its coefficient:
//    i * (q * 16) is the term i * q, 16 times;
//  * `a ^ b` (a swizzled Shared column, sched::swizzle) folds only when both
//    are constants or one is 0; its bounds are [0, 2^k) when a and b lie in
//    [0, 2^k), unknown otherwise.
// With the sizes compiled in (size specialization), this is what turns the
// forward replay of a Local buffer's index, ((x / 4) / 256) * 4 + x % 4 with
// x = (i * 256 + tx) * 4 + j, back into the loop indices i * 4 + j, so that
// an unrolled loop indexes its registers with constants.
//
// Needs: a generated kernel, all index values >= 0 (as every index and
// extent of a lowered kernel is). Guarantees: every rewritten expression
// has the value of the original for every value of its variables within
// their bounds; statements change only where a predicate or extent became
// constant.
#pragma once

#include <array>
#include <cstdint>

#include "schedlab/lower/kir.h"
#include "schedlab/lower/size_variable.h"

namespace schedlab::lower {

/// Simplifies kernel.body in place. grid: the launch's grid when the kernel
/// fixes it (the sizes are compiled in), else 0s.
void simplify(kir::Kernel& kernel, const std::array<int64_t, 3>& grid = {});

}  // namespace schedlab::lower
