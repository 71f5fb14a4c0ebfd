// schedlab/plugin: the transform log, a schedule as data. Every scheduling
// primitive a plugin calls through the host API (core/plugin/host_api.cpp) is
// one Transform; applying the same Transforms, in order, to a fresh copy of
// the same fusion gives the same scheduled fusion. That is how `--isolate`
// keeps plugin code out of the host (docs/sweeps.md, "Isolation"): the plugin runs in
// a worker process, the worker sends the log, and the host replays it.
//
// Owns: the Transform record, its serialization, and apply(): the one place
// that turns a Transform into calls of ir/sched. The host API's live calls
// go through apply() too, so a replay cannot drift from what the plugin did.
// May depend on: schedlab/ir, schedlab/sched, schedlab/frontend (schedule
// scripts), schedlab/base.
// Invariants: tensors are named by their index in Fusion::tensors()
// (creation order), which is the same in every process that loads the same
// fusion file and applies the same Transforms before. A schedule script is
// logged with its text, not its path, so a replay never reads a file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::plugin {

/// One scheduling primitive and its arguments.
struct Transform {
  enum class Op {
    Split,                    ///< tensors {t}; ints {axis, factor, inner_split}
    Merge,                    ///< tensors {t}; ints {axis_o, axis_i}
    Reorder,                  ///< tensors {t}; ints {old0, new0, old1, new1, ...}
    Parallelize,              ///< tensors {t}; ints {axis, ir::ParallelType}
    SetLoopTransform,         ///< tensors {t}; ints {axis, ir::LoopTransform}
    SetMemoryType,            ///< tensors {t}; ints {ir::MemoryType}
    PadShared,                ///< tensors {t}; ints {elements}
    Swizzle,                  ///< tensors {t}; ints {width} or (ABI 1.10) {width, bytes}
    CacheAfter,               ///< tensors {t}; ints {ir::LoadStoreOpType, ir::CacheOp}
    CacheBefore,              ///< tensors {t}
    CacheFork,                ///< tensors {t}
    Recompute,                ///< tensors {t, consumers...}
    Rfactor,                  ///< tensors {t}; ints {axes...}
    PropagateTransformation,  ///< tensors {reference, selected...}
    /// tensors {reference, selected...}; ints {pos, n_types, types...,
    /// transforms...}
    ParallelizeAllLike,
    InlineAt,          ///< tensors {t}; ints {pos, best_effort}
    InlineSelectedAt,  ///< tensors {reference, selected...}; ints {pos}
    InlineMost,        ///< tensors {selected...}
    /// text: the script; text2: its args ("name=value,..."); path: for messages
    ApplyScript,
    CircularBuffer,  ///< tensors {t}; ints {stages, prefetch}
    FuseMma,         ///< tensors {t} (ABI 1.9)
    MmaTile,         ///< tensors {t} (ABI 1.9)
    GridPersistent,  ///< tensors {t} (ABI 1.10)
    PropagateReshape,  ///< no operands (ABI 1.10)
  };
  Transform() = default;
  Transform(Op o, std::vector<int64_t> t, std::vector<int64_t> i = {})
      : op(o), tensors(std::move(t)), ints(std::move(i)) {}

  Op op = Op::Split;
  std::vector<int64_t> tensors;  ///< indices in Fusion::tensors()
  std::vector<int64_t> ints;
  std::string text, text2, path;
};

/// "split", "cache_after", ...: the host API's names.
std::string_view op_name(Transform::Op op);

/// A whole schedule, in the order it was applied.
using TransformLog = std::vector<Transform>;

/// Applies t to f. Returns the tensor the primitive creates (cache_after,
/// cache_before, cache_fork, recompute, rfactor), else null. Errors are the
/// primitive's own (user errors for an illegal schedule); a tensor index
/// that f does not have is a user error naming the step.
/// `script_log`: for ApplyScript, the script's log lines are appended.
ir::TensorView* apply(ir::Fusion& f, const Transform& t,
                      std::vector<std::string>* script_log = nullptr);
/// Applies every step of `log`, in order. A step that fails is reported with
/// its number and name, then the primitive's message.
void replay(ir::Fusion& f, const TransformLog& log);

/// A JSON array, one object per step; parse_log reads it back (user error
/// naming `what` and the problem on anything malformed).
std::string serialize(const TransformLog& log);
TransformLog parse_log(std::string_view json, const std::string& what);

}  // namespace schedlab::plugin
