#include "schedlab/ir/printer.h"

#include <sstream>

#include "schedlab/ir/scalar_format.h"

namespace schedlab::ir {

namespace {
char memory_letter(MemoryType m) {
  switch (m) {
    case MemoryType::Local: return 'l';
    case MemoryType::Shared: return 's';
    case MemoryType::Global: return 'g';
  }
  return '?';
}

std::string val_str(const Val* v) {
  if (auto* t = v->as<TensorView>()) return tensor_str(t);
  return std::string(dtype_name(v->dtype())) + "(" + v->str() + ")";
}

std::string bools_str(const std::vector<bool>& b) {
  std::string s = "{";
  for (size_t i = 0; i < b.size(); ++i) s += (i ? ", " : "") + std::string(b[i] ? "true" : "false");
  return s + "}";
}

std::string ints_str(const std::vector<int>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}
}  // namespace

std::string tensor_str(const TensorView* t) {
  std::ostringstream os;
  os << t->str() << '_' << memory_letter(t->memory_type()) << '_' << dtype_name(t->dtype()) << '[';
  const auto& dom = t->loop();
  for (size_t i = 0; i < dom.size(); ++i) os << (i ? ", " : "") << dom[i]->str();
  os << ']';
  if (t->compute_at_pos() > 0) os << " ca_pos(" << t->compute_at_pos() << ")";
  return os.str();
}

std::string expr_str(const Expr* e) {
  std::ostringstream os;
  const TensorView* out = e->out();
  os << tensor_str(out);
  if (!out->user_name().empty()) os << "   # " << out->user_name();
  os << "\n   = " << e->op_name() << "(";
  for (size_t i = 0; i < e->inputs().size(); ++i) os << (i ? ", " : "") << val_str(e->inputs()[i]);
  if (auto* r = e->as<ReductionOp>())
    os << ", op = " << reduction_op_name(r->op()) << ", init = " << format_scalar(r->init(), out->dtype());
  else if (auto* b = e->as<BroadcastOp>())
    os << ", flags = " << bools_str(b->is_broadcast_dim());
  else if (auto* p = e->as<PermuteOp>())
    os << ", new2old = " << ints_str(p->new2old());
  else if (auto* v = e->as<ViewOp>()) {
    if (v->fn() != v->op_name()) os << ", fn = " << v->fn();
    os << ", root = [";
    for (size_t i = 0; i < out->root().size(); ++i) os << (i ? ", " : "") << out->root()[i]->str();
    os << "], logical = [";
    for (size_t i = 0; i < out->logical().size(); ++i)
      os << (i ? ", " : "") << out->logical()[i]->str();
    os << "]";
  }
  else if (auto* c = e->as<LoadStoreOp>()) {
    if (c->op() != LoadStoreOpType::Set) os << ", op = " << load_store_op_name(c->op());
    if (c->cache_op() != CacheOp::Unspecified) os << ", cache_op = " << cache_op_name(c->cache_op());
  }
  os << ")";
  return os.str();
}

std::string print_math(const Fusion& f) {
  std::ostringstream os;
  os << "Fusion " << f.name() << "\nInputs:\n";
  for (const TensorView* t : f.inputs())
    os << "  " << tensor_str(t) << (t->user_name().empty() ? "" : "   # " + t->user_name()) << "\n";
  os << "Outputs:\n";
  for (const TensorView* t : f.outputs())
    os << "  " << tensor_str(t) << (t->user_name().empty() ? "" : "   # " + t->user_name()) << "\n";
  os << "\n%kernel_math {\n";
  for (const Expr* e : f.exprs_for_outputs()) os << expr_str(e) << "\n";
  os << "} // %kernel_math\n";
  return os.str();
}

std::string shape_str(const TensorView* t) {
  std::string s = "[";
  for (const IterDomain* id : t->logical_no_reductions())
    s += (s.size() > 1 ? ", " : "") + id->extent().str();
  return s + "]";
}

std::string shape_str(const std::vector<int64_t>& extents) {
  std::string s = "[";
  for (int64_t e : extents) s += (s.size() > 1 ? ", " : "") + std::to_string(e);
  return s + "]";
}

}  // namespace schedlab::ir
