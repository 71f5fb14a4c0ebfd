// The Fusion container: owns every IterDomain, Val and Expr of one fusion.
//
// Nodes are created only through the Fusion, which numbers them in creation
// order (T0, T1, ..., iS0, iS1, ...) so printed IR is deterministic. Creating
// an Expr wires definition/uses on its operands. Nothing is ever deleted while
// the Fusion lives; scheduling rewires, it does not free.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/ir/ir.h"
#include "schedlab/ir/mesh.h"

namespace schedlab::ir {

class Fusion {
 public:
  explicit Fusion(std::string name = "fusion") : name_(std::move(name)) {}
  Fusion(const Fusion&) = delete;
  Fusion& operator=(const Fusion&) = delete;

  const std::string& name() const { return name_; }

  /// A new axis.
  IterDomain* make_iter_domain(SizeExpr extent, IterType t);
  /// A new tensor over the given logical axes (owned by this fusion).
  TensorView* make_tensor(DataType t, std::vector<IterDomain*> logical);
  /// A new tensor with fresh Iteration/Broadcast axes of the given extents;
  /// extent constant 1 gives a Broadcast axis.
  TensorView* make_tensor(DataType t, const std::vector<SizeExpr>& shape);
  /// A new tensor numbered `number` instead of next in line, so that a copy
  /// of part of a fusion (ir::extract) keeps the original's names; tensors
  /// made later are numbered after it. Internal error if the number is taken.
  TensorView* make_tensor_numbered(DataType t, std::vector<IterDomain*> logical, int number);
  /// A constant.
  Scalar* make_scalar(double v, DataType t);
  /// A named size used as a value (i64, known at launch).
  Scalar* make_size_scalar(SizeExpr size);

  /// Creates an expression node and wires its operands' uses and its outputs'
  /// definition. Outputs must not already have a definition.
  template <typename T, typename... Args>
  T* create(Args&&... args) {
    auto e = std::make_unique<T>(std::forward<Args>(args)...);
    T* raw = e.get();
    register_expr(std::move(e));
    return raw;
  }

  /// Records a split of `in` (a loop axis) and returns {outer, inner}. The
  /// outputs inherit in's IterType.
  std::pair<IterDomain*, IterDomain*> split(IterDomain* in, int64_t factor, bool inner_split);
  /// Records a merge and returns the merged axis.
  IterDomain* merge(IterDomain* outer, IterDomain* inner);
  /// Changes an axis' IterType. Only rfactor uses it: the producer it makes
  /// iterates, rather than reduces, the axes it leaves to the consumer.
  void set_iter_type(IterDomain* id, IterType t) { id->iter_type_ = t; }
  /// Every split and merge, in the order recorded.
  std::vector<IterDomainExpr*> id_exprs() const;

  /// Makes `e` read `with` where it read `old` (uses are updated).
  void replace_input(Expr* e, Val* old, Val* with);
  /// Makes `e` produce `with` instead of `old`; `old` loses its definition.
  void replace_output(Expr* e, Val* old, Val* with);
  /// Replaces `old` by `with` in the output list (cache_before).
  void replace_fusion_output(TensorView* old, TensorView* with);

  /// Marks t a fusion input; it moves to Global memory.
  void add_input(TensorView* t);
  /// Marks t a fusion output; it moves to Global memory.
  void add_output(TensorView* t);
  const std::vector<TensorView*>& inputs() const { return inputs_; }
  const std::vector<TensorView*>& outputs() const { return outputs_; }
  bool is_input(const Val* v) const;
  bool is_output(const Val* v) const;

  /// Every tensor, in creation order.
  std::vector<TensorView*> tensors() const;
  /// Every expression, in a stable topological order: creation order, except
  /// that an expression comes after the definitions of its inputs.
  std::vector<Expr*> exprs() const;
  /// The expressions the outputs depend on, in a deterministic topological
  /// order (statement sort): depth-first from the outputs, operands first.
  std::vector<Expr*> exprs_for_outputs() const;
  /// The uses of v whose result some output depends on (nvFuser's
  /// resetTvUses). Scheduling and lowering look only at these: a statement
  /// the outputs do not need is never lowered, so it must not change where
  /// or how the live ones are computed (inlining, indexing, checks).
  std::vector<Expr*> live_uses(const Val* v) const;
  /// Whether some output depends on e's result.
  bool is_live(const Expr* e) const;
  /// Named sizes in first-seen order over the inputs' shapes.
  std::vector<std::string> size_symbols() const;
  const std::vector<std::unique_ptr<IterDomain>>& iter_domains() const { return ids_; }

 private:
  void register_expr(std::unique_ptr<Expr> e);
  // The device mesh and sharding declarations (schedlab/ir/mesh.h owns the
  // interface; ir::extract does not copy them: local fusions never see DIDx).
  friend const std::optional<DeviceMesh>& device_mesh(const Fusion& f);
  friend void set_device_mesh(Fusion& f, const DeviceMesh& mesh);
  friend void shard(TensorView* tv, int axis);
  friend void replicate(TensorView* tv);
  friend std::optional<Sharding> declared_sharding(const TensorView* tv);

  std::string name_;
  std::vector<std::unique_ptr<IterDomain>> ids_;
  std::vector<std::unique_ptr<Val>> vals_;
  std::vector<std::unique_ptr<Expr>> exprs_;
  std::vector<std::unique_ptr<IterDomainExpr>> id_exprs_;
  std::vector<TensorView*> inputs_;
  std::vector<TensorView*> outputs_;
  int next_tensor_ = 0;
  std::optional<DeviceMesh> mesh_;
  std::map<int, Sharding> shardings_;  ///< by tensor number
};

}  // namespace schedlab::ir
