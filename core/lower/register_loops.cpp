// Unrolling the loops that index registers; see register_loops.h.
#include "register_loops.h"

#include "schedlab/lower/kir_visitor.h"

namespace schedlab::lower {

namespace {

/// Whether s indexes a Local buffer with an expression that reads `var`.
bool indexes_registers(const kir::Stmt& s, const std::string& var) {
  auto reads_var = [&](const kir::ExprP& e) { return kir::reads_var(e, var); };
  auto local = [](const kir::Buffer* b) {
    return b->memory == ir::MemoryType::Local && !b->is_param;
  };
  bool hit = kir::any_stmt(s, [&](const kir::Stmt& x) {
    if (const auto* st = x.as<kir::Store>()) return local(st->buffer) && reads_var(st->index);
    if (const auto* br = x.as<kir::BlockReduce>()) return local(br->buffer) && reads_var(br->index);
    if (const auto* gr = x.as<kir::GridReduce>()) return local(gr->buffer) && reads_var(gr->index);
    if (const auto* mt = x.as<kir::MmaTile>())
      return local(mt->acc) && std::any_of(mt->acc_index.begin(), mt->acc_index.end(), reads_var);
    return false;
  });
  return hit || kir::any_expr(s, [&](const kir::Expr& x) {
           const auto* l = x.as<kir::Load>();
           return l && local(l->buffer) && reads_var(l->index);
         });
}

class Unroller : public kir::IRMutator {
 protected:
  using kir::IRMutator::visit;
  void visit(kir::For& s) override {
    kir::IRMutator::visit(s);
    const auto* n = s.extent->as<kir::IntImm>();
    if (!s.unroll && n && n->value <= kMaxRegisterLoopTrips && indexes_registers(s, s.var))
      s.unroll = true;
  }
};

}  // namespace

void unroll_register_loops(kir::Kernel& kernel) { Unroller().mutate(*kernel.body); }

}  // namespace schedlab::lower
