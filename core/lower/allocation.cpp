// Buffers and kernel parameters.
#include "allocation.h"

#include <algorithm>
#include <set>

#include "indexing.h"
#include "mma_tile.h"
#include "schedlab/base/error.h"

namespace schedlab::lower {

using ir::TensorView;
using kir::Expr;
using kir::ExprP;

namespace {

/// A size in launch terms: each symbol a Var of its own name.
ExprP launch_size(const ir::SizeExpr& e) {
  switch (e.kind()) {
    case ir::SizeExpr::Kind::Const:
      return Expr::integer(e.const_value());
    case ir::SizeExpr::Kind::Symbol:
      return Expr::var(e.symbol_name());
    case ir::SizeExpr::Kind::Mul:
      return launch_size(e.lhs()) * launch_size(e.rhs());
    case ir::SizeExpr::Kind::CeilDiv:
      return Expr::ceil_div(launch_size(e.lhs()), launch_size(e.rhs()));
  }
  internal_error << "lowering: unknown size kind " << static_cast<int>(e.kind());
}

ExprP align16(const ExprP& bytes) {
  return Expr::ceil_div(bytes, Expr::integer(16)) * Expr::integer(16);
}

}  // namespace

bool stored_in_global(const TensorView* t) {
  if (t->memory_type() == ir::MemoryType::Global) return true;
  if (t->memory_type() == ir::MemoryType::Shared) return false;
  // An unscheduled (or partly scheduled) Local tensor whose buffer would span
  // a symbolic extent cannot live in registers: it gets a global workspace,
  // which is what makes an unscheduled fusion lower to a correct kernel.
  auto axes = Indexer::allocation_axes(t);
  return std::any_of(axes.begin(), axes.end(), [](auto a) { return a.second < 0; });
}

std::map<const TensorView*, const kir::Buffer*> allocate_buffers(const ir::Fusion& f,
                                                                 kir::Kernel& kernel) {
  std::map<const TensorView*, const kir::Buffer*> buf;
  auto add = [&](const TensorView* t, bool param) {
    auto b = std::make_unique<kir::Buffer>();
    b->name = t->str();
    b->dtype = t->dtype();
    b->memory = t->memory_type();
    b->is_param = param;
    b->rank = static_cast<int>(t->logical_no_reductions().size());
    b->tv = t;
    buf[t] = b.get();
    kernel.buffers.push_back(std::move(b));
    return kernel.buffers.back().get();
  };
  for (size_t i = 0; i < f.inputs().size(); ++i)
    kernel.params.push_back(
        {kir::Param::Source::Input, static_cast<int>(i), f.inputs()[i], add(f.inputs()[i], true)});
  for (size_t i = 0; i < f.outputs().size(); ++i)
    kernel.params.push_back({kir::Param::Source::Output, static_cast<int>(i), f.outputs()[i],
                             add(f.outputs()[i], true)});
  std::set<const TensorView*> live;
  for (const ir::Expr* e : f.exprs_for_outputs()) {
    live.insert(e->out());
    for (const ir::Val* v : e->inputs())
      if (auto* t = v->as<TensorView>()) live.insert(t);
  }
  // An mma tile's operand copied from another Shared tensor is read there
  // (mma_operand_source): no buffer of its own; it names its source's.
  std::vector<std::pair<const TensorView*, const TensorView*>> aliases;
  for (const TensorView* t : f.tensors()) {
    if (!live.count(t) || buf.count(t)) continue;
    if (const TensorView* q = mma_operand_source(t)) {
      aliases.emplace_back(t, q);
      continue;
    }
    auto axes = Indexer::allocation_axes(t);
    bool symbolic = std::any_of(axes.begin(), axes.end(), [](auto a) { return a.second < 0; });
    bool shared = t->memory_type() == ir::MemoryType::Shared;
    if (stored_in_global(t)) {
      kernel.params.push_back({kir::Param::Source::Workspace, 0, t, add(t, true)});
      continue;
    }
    kir::Buffer* b = add(t, false);
    // The innermost allocation axis's rows are padded (pad_shared): its pitch
    // is extent + pad, and the last row keeps its padding too, so the size is
    // exactly what Indexer::offset's row-major fold spans.
    const int64_t pad = Indexer::row_pad(t);
    // A swizzle (sched::swizzle) permutes each row within itself: no change
    // to the size. Its checks run at the first access (Indexer::offset),
    // after plan_vectorization has refused vectors into swizzled buffers.
    if (symbolic) {  // Shared, sized at launch (place_dynamic_shared)
      b->size = -1;
      b->dynamic_elements = Expr::integer(1);
      for (size_t a = 0; a < axes.size(); ++a) {
        ExprP ext = launch_size(t->loop()[static_cast<size_t>(axes[a].first)]->extent());
        if (a + 1 == axes.size() && pad > 0) ext = ext + Expr::integer(pad);
        b->dynamic_elements = b->dynamic_elements * ext;
      }
      continue;
    }
    int64_t n = 1;
    for (size_t a = 0; a < axes.size(); ++a) n *= axes[a].second + (a + 1 == axes.size() ? pad : 0);
    // A circular buffer (sched::circular_buffer) holds a tile per stage, one
    // after another (lower/circular_buffer.cpp indexes stage i % stages).
    n *= std::max<int64_t>(1, t->circular_stages());
    b->size = n;
    if (shared) {
      int64_t align = 16;
      kernel.shared_bytes = (kernel.shared_bytes + align - 1) / align * align;
      b->shared_offset = kernel.shared_bytes;
      kernel.shared_bytes += n * ir::dtype_size(t->dtype());
    }
  }
  for (auto [t, q] : aliases) buf[t] = buf.at(q);
  for (const TensorView* in : f.inputs()) {
    auto dom = in->logical_no_reductions();
    for (size_t k = 0; k < dom.size(); ++k) {
      if (!dom[k]->extent().is_symbol()) continue;
      kernel.size_sources.emplace(dom[k]->extent().symbol_name(),
                                  std::make_pair(buf.at(in), static_cast<int>(k)));
    }
  }
  // A size that only a view's output carries, as ceilDiv(E, c) (segment
  // inputs past a reshape): E is c times that extent (views are exact).
  for (auto [t, q] : aliases) buf[t] = buf.at(q);
  for (const TensorView* in : f.inputs()) {
    auto dom = in->logical_no_reductions();
    for (size_t k = 0; k < dom.size(); ++k) {
      const ir::SizeExpr& e = dom[k]->extent();
      if (e.kind() != ir::SizeExpr::Kind::CeilDiv || !e.lhs().is_symbol() || !e.rhs().is_const())
        continue;
      if (kernel.size_sources.emplace(e.lhs().symbol_name(),
                                      std::make_pair(buf.at(in), static_cast<int>(k))).second)
        kernel.size_scale[e.lhs().symbol_name()] = e.rhs().const_value();
    }
  }
  // A compound extent ((H * W), a view's merge) is read whole where its
  // symbols have no source of their own: the kernel then needs only the
  // product (Indexer::size looks a compound up before its parts).
  std::vector<std::string> in_compound;
  for (auto [t, q] : aliases) buf[t] = buf.at(q);
  for (const TensorView* in : f.inputs()) {
    auto dom = in->logical_no_reductions();
    for (size_t k = 0; k < dom.size(); ++k) {
      const ir::SizeExpr& e = dom[k]->extent();
      if (e.is_const() || e.is_symbol()) continue;
      std::vector<std::string> syms;
      e.collect_symbols(syms);
      bool sourced = true;
      for (const std::string& s : syms) sourced = sourced && kernel.size_sources.count(s);
      if (sourced) continue;
      kernel.size_sources.emplace(e.str(), std::make_pair(buf.at(in), static_cast<int>(k)));
      in_compound.insert(in_compound.end(), syms.begin(), syms.end());
    }
  }
  for (const std::string& s : f.size_symbols())
    internal_assert(kernel.size_sources.count(s) ||
                    std::find(in_compound.begin(), in_compound.end(), s) != in_compound.end())
        << "size " << s << " has no source";
  return buf;
}

void place_dynamic_shared(kir::Kernel& kernel, const std::map<std::string, ExprP>& size_reads) {
  ExprP end = Expr::integer(kernel.shared_bytes);
  if (kernel.reduce_workspace_bytes > 0) {
    using P = ir::ParallelType;
    ExprP threads =
        Expr::launch_extent(P::TIDx) * Expr::launch_extent(P::TIDy) * Expr::launch_extent(P::TIDz);
    end = Expr::integer(kernel.reduce_workspace_offset) +
          threads * Expr::integer(kernel.reduce_workspace_bytes);
  }
  for (const auto& b : kernel.buffers) {
    if (!b->dynamic_elements) continue;
    ExprP offset = align16(end);
    b->dynamic_offset = kir::substitute(offset, size_reads);
    end = offset + b->dynamic_elements * Expr::integer(ir::dtype_size(b->dtype));
    kernel.dynamic_shared.push_back(b.get());
  }
  kernel.launch_shared_bytes = end;
}

}  // namespace schedlab::lower
