// Debug printing of scheduled tensors and fusions, in nvFuser's layout:
// domains in the order root -> logical -> loop, each followed by the splits
// and merges that lead to the next one.
#include "schedlab/sched/debug_print.h"

#include <set>
#include <sstream>

#include "schedlab/ir/printer.h"

namespace schedlab::sched {

namespace {

std::string domain_str(const std::vector<ir::IterDomain*>& dom) {
  std::string s = "(";
  for (size_t i = 0; i < dom.size(); ++i) s += (i ? ", " : "") + dom[i]->str();
  return s + ")";
}

/// The splits and merges that derive `to` from `from`, in the order recorded
/// (the order applied): walk definitions back from `to` until reaching `from`.
std::vector<ir::IterDomainExpr*> transforms_between(const ir::Fusion& f,
                                                    const std::vector<ir::IterDomain*>& from,
                                                    const std::vector<ir::IterDomain*>& to) {
  std::set<const ir::IterDomain*> stop(from.begin(), from.end());
  std::set<const ir::IterDomainExpr*> seen;
  std::vector<const ir::IterDomain*> stack(to.begin(), to.end());
  while (!stack.empty()) {
    const ir::IterDomain* id = stack.back();
    stack.pop_back();
    if (stop.count(id) || id->definition() == nullptr) continue;
    if (!seen.insert(id->definition()).second) continue;
    for (const ir::IterDomain* in : id->definition()->inputs()) stack.push_back(in);
  }
  std::vector<ir::IterDomainExpr*> r;
  for (ir::IterDomainExpr* e : f.id_exprs())
    if (seen.count(e)) r.push_back(e);
  return r;
}

/// print_tensor without its header line, each line starting with `indent`.
void print_domains(std::ostream& os, const ir::TensorView* tv, const std::string& indent) {
  auto transforms = [&](const std::vector<ir::IterDomainExpr*>& es) {
    for (const ir::IterDomainExpr* e : es) os << indent << " " << e->str() << "\n";
  };
  if (tv->has_root()) {
    os << indent << "root domain : " << domain_str(tv->root()) << "\n";
    transforms(transforms_between(*tv->fusion(), tv->root(), tv->logical()));
  }
  os << indent << "logical domain : " << domain_str(tv->logical()) << "\n";
  transforms(tv->loop_history());
  os << indent << "loop domain : " << domain_str(tv->loop()) << "\n";
  os << indent << "memory : " << ir::memory_type_name(tv->memory_type());
  if (tv->shared_pad() > 0) os << ", rows padded by " << tv->shared_pad() << " (pad_shared)";
  if (tv->shared_swizzle() > 1)
    os << ", rows swizzled with width " << tv->shared_swizzle()
       << (tv->shared_swizzle_bytes() == 4 ? "" : " in 16-byte chunks") << " (swizzle)";
  if (tv->circular_stages() > 1)
    os << ", " << tv->circular_stages() << " stages, prefetch " << tv->circular_prefetch()
       << " (circular_buffer)";
  os << "\n";
}

}  // namespace

std::string print_tensor(const ir::TensorView* tv) {
  std::ostringstream os;
  os << ir::tensor_str(tv);
  if (!tv->user_name().empty()) os << "   # " << tv->user_name();
  os << "\n";
  print_domains(os, tv, " ");
  return os.str();
}

std::string print_scheduled_fusion(const ir::Fusion& f) {
  std::ostringstream os;
  os << "Fusion " << f.name() << " (scheduled)\n%kernel {\n";
  // expr_str already opens with the output's header line (tensor_str), so
  // only the domains follow it.
  for (const ir::Expr* e : f.exprs()) {
    os << ir::expr_str(e) << "\n";
    print_domains(os, e->out(), "    ");
  }
  os << "} // %kernel\nOutputs:\n";
  for (const ir::TensorView* t : f.outputs())
    os << "  " << ir::tensor_str(t) << (t->user_name().empty() ? "" : "   # " + t->user_name())
       << "\n";
  return os.str();
}

}  // namespace schedlab::sched
