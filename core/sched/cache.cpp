// Memory primitives: cache_after, cache_before, cache_fork, set_memory_type,
// pad_shared, swizzle.
// Each inserts one copy (a LoadStoreOp) and rewires the def/use graph around
// it; nothing is freed (the Fusion never deletes), so the tensors and axes a
// cache replaces simply drop out of the graph.
#include "schedlab/sched/cache.h"

#include <algorithm>
#include <string_view>

#include "schedlab/base/error.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/reshape.h"

namespace schedlab::sched {

namespace {

using ir::IterDomain;
using ir::TensorView;

/// Fresh axes with the extents and IterTypes of `dom`, unscheduled and unbound.
std::vector<IterDomain*> fresh_axes(ir::Fusion& f, const std::vector<IterDomain*>& dom) {
  std::vector<IterDomain*> r;
  for (IterDomain* id : dom) r.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
  return r;
}

/// An inlined tensor shares loops with its consumers; a cache would become a
/// consumer (or producer) whose loops nobody checked against them.
void check_not_inlined(std::string_view op, const TensorView* tv) {
  user_assert(tv->compute_at_pos() == 0)
      << op << ": " << tv->describe() << " is inlined at position " << tv->compute_at_pos()
      << "; expected compute_at_pos 0 (cache before inlining)";
}

void name_cache(TensorView* c, const TensorView* tv) {
  if (!tv->user_name().empty()) c->set_user_name(tv->user_name() + "_cache");
}

/// tv's definition, for a primitive (`op`) that copies it: tv must be
/// computed, not yet transformed or inlined, nor any of its producers (a
/// producer inlined into tv shares tv's loops; it would end up inlined into
/// the copy, whose loops nobody has checked it against).
ir::Expr* unscheduled_definition(std::string_view op, TensorView* tv) {
  ir::Expr* def = tv->definition();
  user_assert(def != nullptr) << op << ": " << tv->describe()
                              << " has no definition (a fusion input); expected a tensor "
                                 "computed by an expression";
  // A view's output keeps its root: cache_before moves it to the cache, and
  // recompute replays it on a fresh root.
  const bool view = def->is<ir::ViewOp>();
  user_assert(!view || op == "cache_before" || op == "recompute")
      << op << ": " << tv->describe() << " is made by " << def->as<ir::ViewOp>()->fn()
      << "; expected a tensor computed by math or a copy (" << op
      << " the view's input or its consumers instead)";
  user_assert((view || !tv->has_root()) && tv->loop() == tv->logical())
      << op << ": " << tv->describe()
      << " is already transformed (its loop domain differs from its logical domain); expected "
         "an unscheduled tensor ("
      << (op == "cache_before" ? "cache" : op) << " before transforming)";
  check_not_inlined(op, tv);
  for (ir::Val* in : def->inputs()) {
    auto* p = in->as<TensorView>();
    user_assert(p == nullptr || p->compute_at_pos() == 0)
        << op << ": producer " << p->describe() << " of " << tv->describe()
        << " is inlined at position " << p->compute_at_pos()
        << "; expected producers not yet inlined ("
        << (op == "cache_before" ? "cache" : op) << " before inlining)";
  }
  return def;
}

}  // namespace

TensorView* cache_after(TensorView* tv, ir::LoadStoreOpType op, ir::CacheOp cache_op) {
  user_assert(!tv->uses().empty()) << "cache_after: " << tv->describe()
                                   << " has no uses; expected a tensor that some expression reads";
  check_not_inlined("cache_after", tv);
  ir::Fusion& f = *tv->fusion();
  // Taken before the copy exists, which is itself a use. An expression that
  // reads tv twice (mul(d, d)) is listed once per operand; replace_input
  // rewires every operand at once, so each expression is visited once.
  std::vector<ir::Expr*> uses;
  for (ir::Expr* e : tv->uses())
    if (std::find(uses.begin(), uses.end(), e) == uses.end()) uses.push_back(e);
  TensorView* c = f.make_tensor(tv->dtype(), fresh_axes(f, tv->logical_no_reductions()));
  name_cache(c, tv);
  f.create<ir::LoadStoreOp>(op, c, tv, cache_op);
  for (ir::Expr* e : uses) f.replace_input(e, tv, c);
  return c;
}

TensorView* cache_before(TensorView* tv) {
  // The copy gets tv's logical domain, not its schedule: moving loop
  // transforms, bindings or an inline position onto c would silently change
  // which loops compute what, so cache_before comes first.
  ir::Expr* def = unscheduled_definition("cache_before", tv);
  for (int i = 0; i < tv->nloop(); ++i) {
    const IterDomain* id = tv->loop()[static_cast<size_t>(i)];
    bool bound = id->parallel_type() != ir::ParallelType::Serial ||
                 id->loop_transform() != ir::LoopTransform::Serial;
    user_assert(!bound) << "cache_before: " << tv->describe() << " axis " << i << " (" << id->str()
                        << ") is already bound; expected an unscheduled tensor "
                        << "(cache before binding)";
  }
  ir::Fusion& f = *tv->fusion();
  TensorView* c = nullptr;
  if (def->is<ir::ViewOp>()) {
    // The view's root and its splits and merges move to the cache.
    const std::vector<IterDomain*> root = tv->root(), logical = tv->logical();
    c = f.make_tensor(tv->dtype(), logical);
    c->set_domains(root, logical);
  } else {
    c = f.make_tensor(tv->dtype(), fresh_axes(f, tv->logical()));
  }
  name_cache(c, tv);
  f.replace_output(def, tv, c);
  // tv is now a plain copy: its reduction axes (if any) stay with c.
  tv->set_domains({}, fresh_axes(f, tv->logical_no_reductions()));
  f.create<ir::LoadStoreOp>(ir::LoadStoreOpType::Set, tv, c);
  return c;
}

TensorView* cache_fork(TensorView* tv) {
  ir::Fusion& f = *tv->fusion();
  user_assert(f.is_output(tv)) << "cache_fork: " << tv->describe()
                               << " is not a fusion output; expected an output that other "
                                  "expressions also read";
  user_assert(!f.is_input(tv)) << "cache_fork: " << tv->describe()
                               << " is a fusion input; expected a computed fusion output";
  user_assert(!tv->uses().empty())
      << "cache_fork: fusion output " << tv->describe()
      << " has no uses; expected an output that other expressions also read";
  check_not_inlined("cache_fork", tv);
  TensorView* c = ir::set(tv);
  name_cache(c, tv);
  f.replace_fusion_output(tv, c);
  tv->set_memory_type(ir::MemoryType::Local);
  return c;
}

TensorView* recompute(TensorView* tv, const std::vector<TensorView*>& consumers) {
  ir::Expr* def = unscheduled_definition("recompute", tv);
  user_assert(!ir::accumulation(def))
      << "recompute: " << tv->describe()
      << " is a reduction; expected a tensor computed elementwise (a reduction's result is "
         "kept, not recomputed)";
  std::vector<ir::Expr*> uses;
  for (TensorView* c : consumers) {
    ir::Expr* e = c->definition();
    const bool reads = e != nullptr && std::find(e->inputs().begin(), e->inputs().end(),
                                                 static_cast<ir::Val*>(tv)) != e->inputs().end();
    user_assert(reads) << "recompute: " << c->describe() << " does not read " << tv->describe()
                       << "; expected consumers of " << tv->describe();
    if (std::find(uses.begin(), uses.end(), e) == uses.end()) uses.push_back(e);
  }
  if (consumers.empty())
    for (ir::Expr* e : tv->uses())
      if (std::find(uses.begin(), uses.end(), e) == uses.end()) uses.push_back(e);
  ir::Fusion& f = *tv->fusion();
  TensorView* c = nullptr;
  if (def->is<ir::ViewOp>()) {
    auto [root, logical] = ir::copy_view_domains(f, tv);
    c = f.make_tensor(tv->dtype(), logical);
    c->set_domains(root, logical);
  } else {
    c = f.make_tensor(tv->dtype(), fresh_axes(f, tv->logical()));
  }
  if (!tv->user_name().empty()) c->set_user_name(tv->user_name() + "_recompute");
  const std::vector<ir::Val*>& in = def->inputs();
  switch (def->kind()) {
    case ir::Expr::Kind::Unary:
      f.create<ir::UnaryOp>(def->as<ir::UnaryOp>()->op(), c, in[0]);
      break;
    case ir::Expr::Kind::Binary:
      f.create<ir::BinaryOp>(def->as<ir::BinaryOp>()->op(), c, in[0], in[1]);
      break;
    case ir::Expr::Kind::Where:
      f.create<ir::WhereOp>(c, in[0], in[1], in[2]);
      break;
    case ir::Expr::Kind::Cast:
      f.create<ir::CastOp>(c, in[0]);
      break;
    case ir::Expr::Kind::Broadcast: {
      const auto* b = def->as<ir::BroadcastOp>();
      f.create<ir::BroadcastOp>(c, b->in(), b->is_broadcast_dim());
      break;
    }
    case ir::Expr::Kind::LoadStore: {
      const auto* l = def->as<ir::LoadStoreOp>();
      f.create<ir::LoadStoreOp>(l->op(), c, l->in(), l->cache_op());
      break;
    }
    case ir::Expr::Kind::Permute: {
      const auto* p = def->as<ir::PermuteOp>();
      f.create<ir::PermuteOp>(c, p->in(), p->new2old());
      break;
    }
    case ir::Expr::Kind::View: {
      const auto* v = def->as<ir::ViewOp>();
      f.create<ir::ViewOp>(c, v->in(), v->fn(), v->is_expand());
      break;
    }
    case ir::Expr::Kind::Reduction:
    case ir::Expr::Kind::Mma:
      break;  // refused above
  }
  for (ir::Expr* e : uses) f.replace_input(e, tv, c);
  return c;
}

void set_memory_type(TensorView* tv, ir::MemoryType m) {
  const ir::Fusion& f = *tv->fusion();
  if (m != ir::MemoryType::Global) {
    const char* role = f.is_input(tv) ? "input" : f.is_output(tv) ? "output" : nullptr;
    user_assert(role == nullptr) << "set_memory_type: " << tv->describe() << " is a fusion " << role
                                 << "; expected Global memory, found " << ir::memory_type_name(m);
  }
  user_assert(m == ir::MemoryType::Shared || tv->shared_pad() == 0)
      << "set_memory_type: " << tv->describe() << " is a Shared buffer padded by "
      << tv->shared_pad() << " elements per row (pad_shared); expected Shared, found "
      << ir::memory_type_name(m) << " (pad_shared(" << tv->describe() << ", 0) first)";
  user_assert(m == ir::MemoryType::Shared || tv->shared_swizzle() <= 1)
      << "set_memory_type: " << tv->describe() << " is a Shared buffer swizzled with width "
      << tv->shared_swizzle() << " (swizzle); expected Shared, found " << ir::memory_type_name(m)
      << " (swizzle to 1 first)";
  tv->set_memory_type(m);
}

void pad_shared(TensorView* tv, int64_t elements) {
  user_assert(tv->memory_type() == ir::MemoryType::Shared)
      << "pad_shared: " << tv->describe() << " is in " << ir::memory_type_name(tv->memory_type())
      << " memory; expected a Shared tensor (set_memory_type to Shared first)";
  user_assert(elements >= 0 && elements <= kMaxSharedPad)
      << "pad_shared: padding of " << tv->describe() << " must be in [0, " << kMaxSharedPad
      << "] elements, got " << elements;
  user_assert(elements == 0 || tv->shared_swizzle() <= 1)
      << "pad_shared: " << tv->describe() << " is swizzled with width " << tv->shared_swizzle()
      << " (swizzle); expected one layout, padding or a swizzle, not both (swizzle to 1 first)";
  tv->set_shared_pad(elements);
}

int64_t swizzle_unit(ir::DataType dtype, int64_t bytes) {
  return std::max<int64_t>(1, bytes / ir::dtype_size(dtype));
}

void swizzle(TensorView* tv, int64_t width, int64_t bytes) {
  user_assert(tv->memory_type() == ir::MemoryType::Shared)
      << "swizzle: " << tv->describe() << " is in " << ir::memory_type_name(tv->memory_type())
      << " memory; expected a Shared tensor (set_memory_type to Shared first)";
  user_assert(bytes == 4 || bytes == 16)
      << "swizzle: the unit of " << tv->describe()
      << " must be 4 bytes (a bank word) or 16 bytes (an ldmatrix row chunk), got " << bytes;
  const int64_t widest = bytes == 4 ? kMaxSwizzleWidth : 128 / bytes;
  user_assert(width >= 1 && width <= widest && (width & (width - 1)) == 0)
      << "swizzle: width of " << tv->describe() << " must be a power of two in [1, " << widest
      << "], got " << width << (bytes == 4 ? "" : " (16-byte units: 8 cover a 128-byte row)");
  user_assert(width == 1 || tv->shared_pad() == 0)
      << "swizzle: " << tv->describe() << " is padded by " << tv->shared_pad()
      << " elements per row (pad_shared); expected one layout, padding or a swizzle, not both "
         "(pad_shared to 0 first)";
  tv->set_shared_swizzle(width, bytes);
}

}  // namespace schedlab::sched
