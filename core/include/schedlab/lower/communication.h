// The communication pass (docs/multi-device.md): a fusion with a device mesh
// becomes a plan of local steps (each a standalone fusion over local extents,
// scheduled and run like any fusion on every rank) and communications
// between them. nvFuser's insertReshardings + its host program, in one pass.
//
// Owns: sharding propagation, the sharding rules, where collectives go, the
// local extents, and the plan's printed form (`show --stage kir`).
// May depend on: base, ir (extract).
//
// Propagation, in topological order, for every tensor nobody declared:
//   - pointwise, cast, where, broadcast, a reduction over another axis, a
//     matmul's M/N (and batch) axes: the sharded axis maps to the output;
//     all sharded producers must map to the same output axis;
//   - a reduction (sum/max/min/prod, a matmul's K) over the sharded axis:
//     the output is Partial and gets an Allreduce (ReduceScatter when the
//     output is declared sharded on another axis);
//   - a replicated producer read with a sharded one is sliced (Slice: no
//     communication, each rank takes its chunk); a body tensor read only
//     that way, made from replicated tensors only, is made sharded from
//     sliced inputs instead, so that it stays in its consumer's step.
// Local steps: an expression runs in the first step where every input is
// available in the layout it reads (a partial's consumers after its
// allreduce); a communication runs right after the step that made its
// source (before step 0 for a fusion input). A one-device mesh ignores the
// declarations: one step, no communication.
// A declared sharding that differs from the propagated one inserts:
// sharded -> replicated: Allgather; replicated -> sharded: Slice;
// sharded(a) -> sharded(b): Allgather then Slice.
// Rules (each a user_error naming the tensor and axis, with what was expected
// and found): the sharded extent is a plain named size and a multiple of the
// mesh size; a view, permute or reshape may not move or split a sharded
// axis; a named size used as a value in the math may not be sharded; within
// one local step a named size is sharded on every axis that has it or on
// none; a reduction over a sharded axis is sum, max, min or prod.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "schedlab/ir/extract.h"
#include "schedlab/ir/fusion.h"
#include "schedlab/ir/mesh.h"

namespace schedlab::lower {

/// nvFuser's CommunicationType, the ones the plan emits.
enum class CollectiveKind { Allreduce, ReduceScatter, Allgather, Slice };
std::string_view collective_name(CollectiveKind k);  ///< "allreduce", ...

/// A value of the plan as every rank holds it: a tensor of the original
/// fusion in one layout.
struct PlanValue {
  enum class Layout { Replicated, Sharded, Partial };
  const ir::TensorView* tensor = nullptr;  ///< the original fusion's
  Layout layout = Layout::Replicated;
  int axis = -1;  ///< Sharded: the data axis (Reduction axes not counted)
  ir::ReductionOpType partial_op = ir::ReductionOpType::Sum;  ///< Partial: how to combine
  std::vector<int64_t> local_shape;  ///< the data's shape on one rank
  int bytes_per_element = 4;
  std::string str() const;  ///< "T3 (s) sharded on axis 1 [3, 4]", "T2 partial sum [3]"
};

/// A standalone fusion run on every rank (the same math, local extents).
struct LocalStep {
  ir::Extraction fusion;     ///< ir::extract of the original's expressions
  ir::SizeBindings sizes;    ///< the local sizes (a sharded size is E / D)
  std::vector<int> inputs;   ///< PlanValue index of each input of fusion, in order
  std::vector<int> outputs;  ///< PlanValue index of each output of fusion, in order
};

/// One collective (or Slice) from one value to another.
struct Communication {
  CollectiveKind kind;
  int input = -1, output = -1;  ///< PlanValue indices
  ir::ReductionOpType op = ir::ReductionOpType::Sum;  ///< Allreduce, ReduceScatter
  int axis = -1;  ///< Allgather, ReduceScatter, Slice: the data axis
  /// Bytes each rank sends (the model's input): Allreduce/ReduceScatter the
  /// local partial, Allgather the local chunk, Slice 0.
  int64_t bytes_per_rank = 0;
  std::string str(const std::vector<PlanValue>& values) const;  ///< "allreduce(sum) T2 -> T2"
};

using PlanStep = std::variant<LocalStep, Communication>;

struct ShardedPlan {
  const ir::Fusion* fusion = nullptr;  ///< the original (must outlive the plan)
  ir::DeviceMesh mesh;
  ir::SizeBindings sizes;              ///< the global sizes
  std::vector<PlanValue> values;       ///< inputs first, in the fusion's input order
  std::vector<PlanStep> steps;         ///< in the order every rank runs them
  std::vector<int> outputs;            ///< PlanValue of each fusion output (never Partial)
};

/// Plans `f` (unscheduled, with a mesh; a fusion without one gets a
/// one-device mesh) at global `sizes` on `mesh` (which overrides the
/// fusion's own; its size is what matters). user_error for a broken rule.
ShardedPlan plan_communication(const ir::Fusion& f, const ir::SizeBindings& sizes,
                               const ir::DeviceMesh& mesh);

/// The plan as `show --stage kir` prints it around each step's kernels:
/// "mesh [0, 1]", the values, then one line per step ("step 0: kernel
/// sum_sharded_l0 (T0 sharded ...) -> (T2 partial sum ...)", "step 1:
/// allreduce(sum) T2 -> T2 over [0, 1], 12 bytes per rank"). `kernel_text`
/// (may be null) is printed indented under each local step.
std::string print_plan(const ShardedPlan& plan,
                       const std::function<std::string(size_t step)>& kernel_text = {});

}  // namespace schedlab::lower
