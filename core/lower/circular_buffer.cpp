// Circular buffering: rules and the pass.
#include "circular_buffer.h"

#include <algorithm>

#include <map>

#include "allocation.h"
#include "indexing.h"
#include "loop_tree.h"
#include "schedlab/base/error.h"
#include "schedlab/lower/kir_visitor.h"
#include "schedlab/sched/circular_buffer.h"

namespace schedlab::lower {

using kir::Expr;
using kir::ExprP;
using kir::StmtP;

namespace {

struct Circular {
  const kir::Buffer* buffer;
  int64_t stages, prefetch;
  int64_t tile;  ///< elements of one stage
};
using Circulars = std::vector<Circular>;

const Circular* find(const Circulars& cs, const kir::Buffer* b) {
  for (const Circular& c : cs)
    if (c.buffer == b) return &c;
  return nullptr;
}

/// Puts every access to a circular buffer at stage iter % stages.
class StageOffsets : public kir::IRMutator {
 public:
  StageOffsets(const Circulars& cs, ExprP iter) : cs_(cs), iter_(std::move(iter)) {}

 protected:
  using kir::IRMutator::visit;
  ExprP offset(const Circular& c) const {
    return (iter_ % Expr::integer(c.stages)) * Expr::integer(c.tile);
  }
  ExprP visit(const kir::Load& e, const ExprP& self) override {
    ExprP r = kir::IRMutator::visit(e, self);
    const Circular* c = find(cs_, e.buffer);
    if (c == nullptr) return r;
    const auto* l = r->as<kir::Load>();
    return Expr::load(l->buffer, l->index + offset(*c), l->cache);
  }
  void visit(kir::Store& s) override {
    kir::IRMutator::visit(s);
    if (const Circular* c = find(cs_, s.buffer)) s.index = s.index + offset(*c);
  }

 private:
  const Circulars& cs_;
  ExprP iter_;
};

/// Replaces a loop variable in every expression of a statement.
class Substitute : public kir::IRMutator {
 public:
  explicit Substitute(std::map<std::string, ExprP> values) : values_(std::move(values)) {}
  using kir::IRMutator::mutate;
  ExprP mutate(const ExprP& e) override { return e ? kir::substitute(e, values_) : e; }

 private:
  std::map<std::string, ExprP> values_;
};

bool writes_any(const kir::Stmt& s, const Circulars& cs) {
  return kir::any_stmt(s, [&](const kir::Stmt& x) {
    const auto* st = x.as<kir::Store>();
    return st && find(cs, st->buffer);
  });
}
bool reads_any(const kir::Stmt& s, const Circulars& cs) {
  return kir::any_expr(s, [&](const Expr& x) {
    const auto* l = x.as<kir::Load>();
    return l && find(cs, l->buffer);
  });
}

/// The loads of iteration `iter` (cloned).
std::vector<StmtP> loads_at(const std::vector<StmtP>& loads, const std::string& var,
                            const ExprP& iter) {
  std::vector<StmtP> out;
  Substitute sub({{var, iter}});
  for (const StmtP& s : loads) {
    out.push_back(s->clone());
    sub.mutate(*out.back());
  }
  return out;
}

/// `body` under `cond` (as it is when cond folds to true).
void append_guarded(std::vector<StmtP>& out, const ExprP& cond, std::vector<StmtP> body) {
  if (cond->is_true()) {
    for (StmtP& s : body) out.push_back(std::move(s));
    return;
  }
  auto g = kir::If::make(cond);
  g->then_body = std::move(body);
  out.push_back(std::move(g));
}

/// Rewrites `loop`, the circular-buffer loop of `cs`; returns its prologue.
std::vector<StmtP> pipeline(kir::For& loop, const Circulars& cs) {
  const int64_t prefetch = cs.front().prefetch;
  for (const Circular& c : cs)
    user_assert(c.prefetch == prefetch)
        << "lowering: " << c.buffer->tv->describe() << " and "
        << cs.front().buffer->tv->describe() << " are circular-buffered in the same loop ("
        << loop.var << ") with prefetch " << c.prefetch << " and " << prefetch
        << "; expected one prefetch distance per loop (one prologue)";
  const ExprP i = Expr::var(loop.var);
  StageOffsets(cs, i).mutate_body(loop.body);
  std::vector<StmtP> loads, rest;
  bool read = false;
  for (StmtP& s : loop.body) {
    const bool w = writes_any(*s, cs);
    internal_assert(!(w && read)) << "circular buffer: a load of loop " << loop.var
                                  << " after a read of its stages";
    read = read || reads_any(*s, cs);
    (w ? loads : rest).push_back(std::move(s));
  }
  internal_assert(!loads.empty()) << "circular buffer: loop " << loop.var << " loads nothing";
  // Any of the loads (a plain tile may come first: fuzz seed 2026 case 49,
  // whose prologue then committed no group for the cp.async tile after it).
  const bool async = std::any_of(loads.begin(), loads.end(), [](const StmtP& l) {
    return kir::any_stmt(*l, [](const kir::Stmt& x) {
      const auto* st = x.as<kir::Store>();
      return st && st->async;
    });
  });
  std::vector<StmtP> prologue;
  for (int64_t s = 0; s < prefetch; ++s) {
    append_guarded(prologue, Expr::integer(s) < loop.extent,
                   loads_at(loads, loop.var, Expr::integer(s)));
    if (async) prologue.push_back(kir::AsyncGroup::make(true, -1));
  }
  loop.body.clear();
  const ExprP ahead = i + Expr::integer(prefetch);
  append_guarded(loop.body, ahead < loop.extent, loads_at(loads, loop.var, ahead));
  bool relaxed = false;
  for (StmtP& s : rest) {
    auto* g = s->as<kir::AsyncGroup>();
    if (g && !relaxed && g->wait == 0) {
      g->wait = prefetch;  // the P groups of tiles i + 1 .. i + P stay in flight
      relaxed = true;
    }
    loop.body.push_back(std::move(s));
  }
  internal_assert(relaxed || !async) << "circular buffer: no cp.async wait in loop " << loop.var;
  return prologue;
}

class Pipeline : public kir::IRMutator {
 public:
  explicit Pipeline(std::map<std::string, Circulars> loops) : loops_(std::move(loops)) {}

  void mutate_body(std::vector<StmtP>& body) override {
    std::vector<StmtP> out;
    for (StmtP& c : body) {
      mutate(*c);
      auto* f = c->as<kir::For>();
      auto it = f ? loops_.find(f->var) : loops_.end();
      if (it != loops_.end())
        for (StmtP& p : pipeline(*f, it->second)) out.push_back(std::move(p));
      out.push_back(std::move(c));
    }
    body = std::move(out);
  }

 private:
  std::map<std::string, Circulars> loops_;
};

/// The circular-buffer loop of t: the innermost serial loop t is inlined
/// into (loops bound to threads or blocks inside it have no loop of their
/// own); -1 when there is none.
int circular_axis(const ir::TensorView* t) {
  for (int k = t->compute_at_pos(); k-- > 0;) {
    const ir::IterDomain* id = loop_owner(t, k).id();
    if (id->parallel_type() == ir::ParallelType::Serial && !id->is_broadcast()) return k;
  }
  return -1;
}

}  // namespace

void check_circular_buffer(const ir::TensorView* t) {
  const int64_t stages = t->circular_stages();
  sched::check_circular_buffer_args(t, stages, t->circular_prefetch(), "lowering");
  const int pos = t->compute_at_pos();
  const int k = circular_axis(t);
  std::string bound;
  for (int j = 0; j < pos; ++j)
    bound += std::string(j ? ", " : "") +
             std::string(ir::parallel_type_name(loop_owner(t, j).id()->parallel_type()));
  user_assert(k >= 0) << "lowering: " << t->describe()
                      << " is circular-buffered but is computed inside no serial loop (inlined at "
                         "position "
                      << pos << (pos ? ", inside loops bound to " + bound : std::string())
                      << "); expected it inlined past a serial loop, its circular-buffer loop "
                         "(inline_most, or inline_at)";
  const ir::IterDomain* id = loop_owner(t, k).id();
  const std::string axis = "axis " + std::to_string(k) + " (" + id->str() + ")";
  user_assert(id->loop_transform() == ir::LoopTransform::Serial ||
              id->loop_transform() == ir::LoopTransform::Unroll)
      << "lowering: " << t->describe() << " is circular-buffered in its loop " << axis
      << ", which is " << ir::loop_transform_name(id->loop_transform())
      << "; expected a plain (or unrolled) serial loop";
  user_assert(!(id->extent().is_const() && id->extent().const_value() < stages))
      << "lowering: " << t->describe() << " has " << stages << " stages but its loop " << axis
      << " has only " << id->extent().const_value()
      << " iterations; expected at most as many stages as iterations";
  auto axes = Indexer::allocation_axes(t);
  for (auto [k, extent] : axes)
    user_assert(extent >= 0)
        << "lowering: " << t->describe() << " is circular-buffered but its buffer spans axis "
        << k << " (" << t->loop()[static_cast<size_t>(k)]->str()
        << ") of symbolic extent; expected a tile of constant size (split by a constant, and "
           "inline the cache past its symbolic loops)";
}

void circular_buffer(kir::Kernel& kernel) {
  std::map<std::string, Circulars> loops;
  for (const auto& b : kernel.buffers) {
    const ir::TensorView* t = b->tv;
    if (b->is_param || t == nullptr || t->circular_stages() <= 1) continue;
    const int64_t stages = t->circular_stages();
    const std::string var = Indexer::loop_var_name(loop_owner(t, circular_axis(t)));
    loops[var].push_back({b.get(), stages, t->circular_prefetch(), b->size / stages});
  }
  if (loops.empty()) return;
  Pipeline(std::move(loops)).mutate(*kernel.body);
}

}  // namespace schedlab::lower
