// The loop tree: placement of expressions under shared and own loops, then a
// dependency-respecting order of every node's children.
#include "loop_tree.h"

#include <algorithm>
#include <functional>
#include <set>

#include "mma_tile.h"

#include "schedlab/base/error.h"

namespace schedlab::lower {

using ir::TensorView;

LoopKey loop_owner(const TensorView* t, int k) {
  internal_assert(k >= 0 && k < t->nloop()) << t->str() << " has no loop " << k;
  auto o = sched::loop_owner(t, k);
  user_assert(o.has_value()) << "lowering: " << t->describe() << " is inlined at position "
                             << t->compute_at_pos() << " but its consumers run loop " << k
                             << " in different loop nests; expected them inlined into a common "
                                "loop nest (or inline "
                             << t->describe() << " less)";
  return *o;
}

bool inlined_into_widened_loops(const TensorView* t) {
  for (int k = 0; k < t->compute_at_pos(); ++k) {
    const ir::IterDomain* own = t->loop()[static_cast<size_t>(k)];
    const ir::IterDomain* loop = loop_owner(t, k).id();
    // A block index over a Broadcast axis of an mma tile's operand bound to
    // the same index only makes every block compute it (the operand tile,
    // once per block of the other operand's axis), in the block's memory.
    if (own->is_broadcast() && ir::is_block_dim(own->parallel_type()) &&
        own->parallel_type() == loop->parallel_type() && is_mma_tile_operand(t))
      continue;
    if (!loop->extent().same_as(own->extent())) return true;
  }
  return false;
}

namespace {

/// Tensors written and read by everything under an item.
struct Effects {
  std::set<const TensorView*> writes, reads;
};

void collect(const LoopItem& item, Effects& fx) {
  if (item.kind == LoopItem::Kind::Loop) {
    for (const LoopItem& c : item.loop->items) collect(c, fx);
    return;
  }
  fx.writes.insert(item.expr->out());
  if (item.kind == LoopItem::Kind::Init) return;
  for (const ir::Val* in : item.expr->inputs())
    if (auto* t = in->as<TensorView>()) {
      fx.reads.insert(t);
      // An mma tile reads an operand's source in its place (mma_operand_source).
      if (const TensorView* q = item.expr->is<ir::MmaOp>() ? mma_operand_source(t) : nullptr)
        fx.reads.insert(q);
    }
  // Accumulating reads the accumulator its Init wrote.
  if (ir::accumulation(item.expr)) fx.reads.insert(item.expr->out());
}

/// Stable topological order of a node's items (Kahn, earliest first).
void order(LoopNode& node) {
  for (LoopItem& it : node.items)
    if (it.kind == LoopItem::Kind::Loop) order(*it.loop);
  size_t n = node.items.size();
  std::vector<Effects> fx(n);
  for (size_t i = 0; i < n; ++i) collect(node.items[i], fx[i]);
  auto depends = [&](size_t b, size_t a) {  // b reads what a writes
    if (a == b) return false;
    for (const TensorView* t : fx[a].writes)
      if (fx[b].reads.count(t)) return true;
    return false;
  };
  // An Init writes the accumulator and the loop that accumulates reads it,
  // so the Init comes first.
  std::vector<bool> placed(n, false);
  std::vector<LoopItem> out;
  for (size_t round = 0; round < n; ++round) {
    size_t pick = n;
    for (size_t b = 0; b < n && pick == n; ++b) {
      if (placed[b]) continue;
      bool ready = true;
      for (size_t a = 0; a < n && ready; ++a)
        if (!placed[a] && depends(b, a)) ready = false;
      if (ready) pick = b;
    }
    user_assert(pick != n) << "lowering: the inline positions create a cycle between loop nests "
                              "(a loop needs a value computed in a later loop); inline less";
    placed[pick] = true;
    out.push_back(std::move(node.items[pick]));
  }
  node.items = std::move(out);
}

LoopNode* child(LoopNode& parent, const LoopKey& key) {
  for (LoopItem& it : parent.items)
    if (it.kind == LoopItem::Kind::Loop && it.loop->key == key) return it.loop.get();
  parent.items.push_back({LoopItem::Kind::Loop, std::make_unique<LoopNode>(), nullptr});
  parent.items.back().loop->key = key;
  return parent.items.back().loop.get();
}

}  // namespace

std::unique_ptr<LoopNode> build_loop_tree(const ir::Fusion& f) {
  auto root = std::make_unique<LoopNode>();
  for (const ir::Expr* e : f.exprs_for_outputs()) {
    const TensorView* t = e->out();
    // Read in place by its mma tile: not computed (mma_operand_source).
    if (mma_operand_source(t) != nullptr) continue;
    LoopNode* node = root.get();
    // A reduction is initialised once, just before its first reduction loop:
    // outside every loop over its reduction axes (the init covers the
    // iteration axes nested among them with loops of its own, generate's
    // open_after), and inside only loops that precede them, which are the
    // ones its accumulator is not shared across. Inlining stops at the first
    // reduction axis (sched/inline.cpp), so those loops are never a consumer's.
    int first = -1;
    if (ir::accumulation(e))
      for (int k = 0; k < t->nloop() && first < 0; ++k)
        if (t->loop()[static_cast<size_t>(k)]->is_reduction()) first = k;
    internal_assert(first < 0 || t->compute_at_pos() <= first)
        << t->describe() << " is inlined at " << t->compute_at_pos()
        << ", past its first reduction axis " << first;
    for (int k = 0; k < t->nloop(); ++k) {
      LoopKey key = loop_owner(t, k);
      if (k == first) {
        LoopNode* loop = child(*node, key);
        auto pos = std::find_if(node->items.begin(), node->items.end(),
                                [&](const LoopItem& it) { return it.loop.get() == loop; });
        node->items.insert(pos, {LoopItem::Kind::Init, nullptr, e});
      }
      node = child(*node, key);
    }
    node->items.push_back({LoopItem::Kind::Expr, nullptr, e});
  }
  order(*root);
  return root;
}

}  // namespace schedlab::lower
