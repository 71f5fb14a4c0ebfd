// Helpers shared by the segment suites: fake schedulers that look at the IR
// directly (so the segmenter is tested without plugins), and evaluation of a
// chain of extracted fusions with the reference evaluator.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "schedlab/ir/extract.h"
#include "schedlab/ir/reshape.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/segment/segment.h"

namespace schedlab::segment::testing {

/// The reduction expressions of f, in topological order.
inline std::vector<const ir::Expr*> reductions(const ir::Fusion& f) {
  std::vector<const ir::Expr*> r;
  for (const ir::Expr* e : f.exprs())
    if (e->is<ir::ReductionOp>()) r.push_back(e);
  return r;
}

/// "no_reduction": takes fusions without a reduction (a pointwise scheduler).
inline Scheduler no_reduction() {
  return {"no_reduction", [](ir::Fusion& f, const ir::SizeBindings&) {
            auto r = reductions(f);
            if (r.empty()) return Verdict{true, ""};
            return Verdict{
                false,
                "no_reduction takes no reductions; " + r.front()->out()->str() + " is a " +
                    std::string(ir::reduction_op_name(r.front()->as<ir::ReductionOp>()->op())) +
                    " reduction"};
          }};
}

/// "one_reduction": takes fusions with exactly one reduction that nothing in
/// the fusion reads (a reduction scheduler with a pointwise prologue).
inline Scheduler one_reduction() {
  return {"one_reduction", [](ir::Fusion& f, const ir::SizeBindings&) {
            auto r = reductions(f);
            if (r.size() != 1)
              return Verdict{
                  false, "one_reduction takes one reduction; found " + std::to_string(r.size())};
            const ir::TensorView* out = r.front()->out();
            if (!out->uses().empty())
              return Verdict{false, "one_reduction ends a segment with its reduction; " +
                                        out->str() + " is read by " +
                                        out->uses().front()->out()->str()};
            return Verdict{true, ""};
          }};
}

/// Evaluates the extractions in order with the reference evaluator, each on
/// the values its inputs' originals hold (the fusion's inputs, then earlier
/// extractions' outputs). Returns the values of f's outputs.
inline std::vector<ref::HostTensor> evaluate_chain(const ir::Fusion& f,
                                                   const std::vector<const ir::Extraction*>& chain,
                                                   const std::vector<ref::HostTensor>& inputs,
                                                   const ir::SizeBindings& sizes) {
  std::map<const ir::TensorView*, ref::HostTensor> held;
  for (size_t i = 0; i < inputs.size(); ++i) held[f.inputs()[i]] = inputs[i];
  for (const ir::Extraction* x : chain) {
    std::vector<ref::HostTensor> args;
    for (const ir::TensorView* t : x->original_inputs()) {
      EXPECT_TRUE(held.count(t)) << x->fusion->name() << " reads " << t->describe()
                                 << " before anything produced it";
      args.push_back(held[t]);
    }
    auto outs = ref::evaluate(*x->fusion, args, sizes);
    auto originals = x->original_outputs();
    for (size_t k = 0; k < outs.size(); ++k) held[originals[k]] = outs[k];
  }
  std::vector<ref::HostTensor> r;
  for (const ir::TensorView* t : f.outputs()) r.push_back(held[t]);
  return r;
}

/// Every size symbol of f bound to a distinct ragged value (37, 29, 7, 5, ...).
inline ir::SizeBindings ragged_sizes(const ir::Fusion& f) {
  static const int64_t kValues[] = {37, 29, 7, 5, 3};
  ir::SizeBindings s;
  size_t i = 0;
  for (const std::string& sym : f.size_symbols())
    if (!s.count(sym)) s[sym] = kValues[std::min(i++, std::size(kValues) - 1)];
  // A reshape that splits a named size by a constant (split_heads: E into
  // 8 heads) needs a multiple of it; the rest stay ragged.
  for (const ir::ViewOp* v : ir::view_ops(f))
    for (const ir::IterDomainExpr* e : v->out()->root_history())
      if (const auto* sp = e->as<ir::Split>(); sp && sp->in()->extent().is_symbol()) {
        int64_t& x = s[sp->in()->extent().symbol_name()];
        if (x % sp->factor() != 0) x *= sp->factor();
      }
  return s;
}

}  // namespace schedlab::segment::testing
