#include "schedlab/sched/mma.h"

#include <algorithm>

#include "schedlab/base/error.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/verifier.h"

namespace schedlab::sched {

using ir::TensorView;

namespace {

/// The bf16/f16 tensor an exact f32 cast `t` reads, or nullptr.
TensorView* half_source(const TensorView* t) {
  const ir::Expr* d = t->definition();
  if (!d || !d->is<ir::CastOp>()) return nullptr;
  auto* src = d->inputs()[0]->as<TensorView>();
  return src && ir::is_half(src->dtype()) ? src : nullptr;  // bf16/f16 -> f32 is exact
}

/// The tensor an mma reads for one factor of the product: the bf16/f16
/// tensor an exact f32 cast reads (a broadcast of such a cast becomes the
/// same broadcast of the half tensor, new), or the f32 factor itself.
TensorView* mma_operand(const TensorView* tv, ir::Val* factor) {
  auto* t = factor->as<TensorView>();
  user_assert(t != nullptr) << "fuse_mma: " << tv->describe()
                            << " sums a product with the constant " << factor->str()
                            << "; expected a product of two tensors";
  if (TensorView* src = half_source(t)) return src;
  if (const auto* b = t->definition() ? t->definition()->as<ir::BroadcastOp>() : nullptr)
    if (TensorView* src = half_source(b->in())) return ir::broadcast(src, b->is_broadcast_dim());
  user_assert(t->dtype() == ir::DataType::F32)
      << "fuse_mma: " << tv->describe() << " sums a product whose factor " << t->describe()
      << " is " << ir::dtype_name(t->dtype()) << "; expected f32, or an f32 cast of bf16 or f16";
  return t;
}

}  // namespace

TensorView* fuse_mma(TensorView* tv) {
  ir::Expr* def = tv->definition();
  const auto* red = def ? def->as<ir::ReductionOp>() : nullptr;
  user_assert(red && red->op() == ir::ReductionOpType::Sum)
      << "fuse_mma: " << tv->describe() << " is "
      << (def ? "defined by " + def->op_name() : std::string("a fusion input"))
      << "; expected a sum over a product, as matmul and linear make";
  user_assert(tv->loop() == tv->logical() && tv->compute_at_pos() == 0)
      << "fuse_mma: " << tv->describe()
      << " is already scheduled (its loop domain differs from its logical one, or it is "
         "inlined); expected fuse_mma before the tensor is split, reordered or inlined";
  TensorView* product = red->in();
  const ir::Expr* mul = product->definition();
  user_assert(mul && mul->is<ir::BinaryOp>() &&
              mul->as<ir::BinaryOp>()->op() == ir::BinaryOpType::Mul)
      << "fuse_mma: " << tv->describe() << " sums " << product->describe()
      << ", which is not a product; expected sum(a * b)";
  ir::Fusion& f = *tv->fusion();
  user_assert(f.live_uses(product).size() == 1 && !f.is_output(product))
      << "fuse_mma: the product " << product->describe() << " that " << tv->describe()
      << " sums is also read elsewhere; expected it read by the sum only";
  TensorView* a = mma_operand(tv, mul->inputs()[0]);
  TensorView* b = mma_operand(tv, mul->inputs()[1]);
  user_assert(a->dtype() == b->dtype())
      << "fuse_mma: " << tv->describe() << " multiplies " << a->describe() << " ("
      << ir::dtype_name(a->dtype()) << ") by " << b->describe() << " ("
      << ir::dtype_name(b->dtype()) << "); expected operands of one dtype";
  // Every reduced axis must be iterated by both operands: a Broadcast one
  // would sum one value K times, which is not a contraction.
  const auto& root = tv->root();
  for (const TensorView* t : {a, b}) {
    auto dom = t->logical_no_reductions();
    for (size_t i = 0; i < root.size(); ++i)
      user_assert(!root[i]->is_reduction() || !dom.at(i)->is_broadcast())
          << "fuse_mma: " << tv->describe() << " reduces axis " << i << " (" << root[i]->str()
          << "), along which " << t->describe() << " is Broadcast; expected both operands to "
          << "iterate every reduced axis";
  }
  // The sum now defines a tensor nothing reads (a dead statement, never
  // lowered); the mma defines tv.
  std::vector<ir::IterDomain*> dead_axes;
  for (const ir::IterDomain* id : tv->logical())
    dead_axes.push_back(f.make_iter_domain(id->extent(), id->iter_type()));
  f.replace_output(def, tv, f.make_tensor(tv->dtype(), dead_axes));
  f.create<ir::MmaOp>(tv, a, b);
  ir::verify(f);
  return tv;
}

void mma_tile(TensorView* tv) {
  const auto* mma = tv->definition() ? tv->definition()->as<ir::MmaOp>() : nullptr;
  user_assert(mma) << "mma_tile: " << tv->describe()
                   << " is not defined by an mma; expected the tensor fuse_mma returned";
  user_assert(ir::is_half(mma->a()->dtype()))
      << "mma_tile: " << tv->describe() << " multiplies " << ir::dtype_name(mma->a()->dtype())
      << " operands; mma.sync m16n8k16 takes bf16 or f16 (an f32 matmul runs on CUDA cores)";
  user_assert(tv->compute_at_pos() == 0 && tv->mma_k() == nullptr)
      << "mma_tile: " << tv->describe() << " is "
      << (tv->mma_k() ? "already an mma tile" : "inlined")
      << "; expected mma_tile once, before propagation and inlining";
  const int n = tv->nloop();
  user_assert(n >= 3) << "mma_tile: " << tv->describe() << " has " << n
                      << " loop axes; expected its innermost three to be [m 16, n 8, k 16]";
  auto expect = [&](int pos, int64_t extent, bool reduction, const char* name) {
    const ir::IterDomain* id = tv->loop()[static_cast<size_t>(pos)];
    user_assert(id->extent().is_const() && id->extent().const_value() == extent &&
                id->is_reduction() == reduction && id->parallel_type() == ir::ParallelType::Serial)
        << "mma_tile: loop axis " << pos << " of " << tv->describe() << " is " << id->str()
        << "; expected the instruction tile's " << name << " axis: a serial "
        << (reduction ? "Reduction" : "Iteration") << " axis of extent " << extent
        << " (split the output to [..., m 16, n 8, k 16] first)";
  };
  expect(n - 3, 16, false, "m");
  expect(n - 2, 8, false, "n");
  expect(n - 1, 16, true, "k");
  tv->split(n - 3, 8);            // [.., mh 2, ml 8, n 8, k]
  tv->split(n - 1, 2);            // [.., mh 2, ml 8, nh 4, nl 2, k]
  tv->reorder({{n - 3, n - 1}});  // [.., ml 8, nh 4, mh 2, nl 2, k]
  tv->merge(n - 3);               // [.., lane 32, mh 2, nl 2, k]
  tv->merge(n - 2);               // [.., lane 32, fragment 4, k]
  tv->parallelize(n - 3, ir::ParallelType::TIDx);
  tv->set_mma_k(tv->loop().back());
}

}  // namespace schedlab::sched
