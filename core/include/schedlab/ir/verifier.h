// The IR verifier: checks the invariants every pass may rely on.
//
// Needs: a Fusion. Guarantees: returns normally only if
//  * definition/uses links are consistent and the expression graph is acyclic;
//  * every IterDomain belongs to exactly one tensor's logical domain;
//  * every expression's operands agree with its output in rank, extents,
//    IterTypes and dtype, by the rules of that node kind;
//  * fusion inputs have no definition, inputs and outputs are Global, and every
//    output is computed;
//  * loop domains are well formed and compute-at positions are in range.
// A violation is a bug in whatever built the IR: it throws InternalError
// naming the expression, the tensor and the broken rule.
#pragma once

#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

void verify(const Fusion& f);

}  // namespace schedlab::ir
