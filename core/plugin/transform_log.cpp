// The transform log: see schedlab/plugin/transform_log.h.
#include "schedlab/plugin/transform_log.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <utility>

#include "schedlab/frontend/schedule_script.h"
#include "schedlab/sched/sched.h"

namespace schedlab::plugin {
namespace {

using Op = Transform::Op;
using ir::TensorView;

constexpr std::pair<Op, std::string_view> kOps[] = {
    {Op::Split, "split"},
    {Op::Merge, "merge"},
    {Op::Reorder, "reorder"},
    {Op::Parallelize, "parallelize"},
    {Op::SetLoopTransform, "set_loop_transform"},
    {Op::SetMemoryType, "set_memory_type"},
    {Op::PadShared, "pad_shared"},
    {Op::Swizzle, "swizzle"},
    {Op::CacheAfter, "cache_after"},
    {Op::CacheBefore, "cache_before"},
    {Op::CacheFork, "cache_fork"},
    {Op::Recompute, "recompute"},
    {Op::Rfactor, "rfactor"},
    {Op::PropagateTransformation, "propagate_transformation"},
    {Op::ParallelizeAllLike, "parallelize_all_like"},
    {Op::InlineAt, "inline_at"},
    {Op::InlineSelectedAt, "inline_selected_at"},
    {Op::InlineMost, "inline_most"},
    {Op::ApplyScript, "apply_schedule_script"},
    {Op::CircularBuffer, "circular_buffer"},
    {Op::FuseMma, "fuse_mma"},
    {Op::MmaTile, "mma_tile"},
    {Op::GridPersistent, "grid_persistent"},
    {Op::PropagateReshape, "propagate_reshape"},
};

/// Reads a step's arguments, each checked: a log is data from another
/// process, so a short or out-of-range one is an error, never a crash.
class Args {
 public:
  Args(ir::Fusion& f, const Transform& t) : t_(t), all_(f.tensors()) {}
  TensorView* tensor(size_t k) const {
    user_assert(k < t_.tensors.size())
        << op_name(t_.op) << ": expected a tensor argument " << k << ", the step has "
        << t_.tensors.size();
    return at(t_.tensors[k]);
  }
  std::vector<TensorView*> tensors_from(size_t k) const {
    std::vector<TensorView*> r;
    for (size_t i = k; i < t_.tensors.size(); ++i) r.push_back(at(t_.tensors[i]));
    return r;
  }
  int64_t num(size_t k) const {
    user_assert(k < t_.ints.size()) << op_name(t_.op) << ": expected an integer argument " << k
                                    << ", the step has " << t_.ints.size();
    return t_.ints[k];
  }
  int axis(size_t k) const {
    const int64_t v = num(k);
    user_assert(v >= INT32_MIN && v <= INT32_MAX)
        << op_name(t_.op) << ": axis " << v << " is out of range";
    return static_cast<int>(v);
  }
  template <typename E>
  E enumerator(int64_t v, E last, const char* type) const {
    user_assert(v >= 0 && v <= static_cast<int64_t>(last))
        << op_name(t_.op) << ": " << v << " is not a " << type;
    return static_cast<E>(v);
  }
  template <typename E>
  E enumerator_at(size_t k, E last, const char* type) const {
    return enumerator(num(k), last, type);
  }

 private:
  TensorView* at(int64_t i) const {
    user_assert(i >= 0 && static_cast<size_t>(i) < all_.size())
        << op_name(t_.op) << ": tensor index " << i << " is out of range (the fusion has "
        << all_.size() << " tensors)";
    return all_[static_cast<size_t>(i)];
  }
  const Transform& t_;
  std::vector<TensorView*> all_;
};

std::vector<std::string> apply_script(ir::Fusion& f, const Transform& t) {
  // Parse everything first: a syntax error anywhere applies nothing.
  frontend::ParsedSchedule parsed = frontend::parse_schedule(t.text, t.path);
  frontend::ScheduleParams params = frontend::parse_schedule_args(t.text2, "args");
  // A name the script never mentions is a typo, not a harmless extra.
  auto known = frontend::schedule_placeholders(parsed);
  for (const auto& [name, value] : params) {
    if (std::any_of(known.begin(), known.end(), [&](const auto& p) { return p.name == name; }))
      continue;
    std::string names;
    for (const auto& p : known) names += (names.empty() ? "" : ", ") + p.name;
    user_error << "args: '" << name << "' is not a placeholder of schedule script '" << t.path
               << "' (its placeholders: " << (names.empty() ? "none" : names) << ")";
  }
  return frontend::apply_parsed_schedule(parsed, f, params);
}

}  // namespace

std::string_view op_name(Transform::Op op) {
  for (const auto& [o, name] : kOps)
    if (o == op) return name;
  return "?";
}

TensorView* apply(ir::Fusion& f, const Transform& t, std::vector<std::string>* script_log) {
  const Args a(f, t);
  switch (t.op) {
    case Op::Split:
      a.tensor(0)->split(a.axis(0), a.num(1), a.num(2) != 0);
      return nullptr;
    case Op::Merge:
      a.tensor(0)->merge(a.axis(0), a.axis(1));
      return nullptr;
    case Op::Reorder: {
      user_assert(t.ints.size() % 2 == 0) << "reorder: expected (old, new) pairs, found "
                                          << t.ints.size() << " integers";
      std::vector<std::pair<int, int>> old2new;
      for (size_t i = 0; i < t.ints.size(); i += 2) old2new.emplace_back(a.axis(i), a.axis(i + 1));
      a.tensor(0)->reorder(old2new);
      return nullptr;
    }
    case Op::Parallelize:
      a.tensor(0)->parallelize(a.axis(0), a.enumerator_at(1, ir::ParallelType::TIDz,
                                                          "parallel type"));
      return nullptr;
    case Op::SetLoopTransform:
      a.tensor(0)->parallelize(a.axis(0), a.enumerator_at(1, ir::LoopTransform::Bulk,
                                                          "loop transform"));
      return nullptr;
    case Op::SetMemoryType:
      sched::set_memory_type(a.tensor(0),
                             a.enumerator_at(0, ir::MemoryType::Global, "memory type"));
      return nullptr;
    case Op::PadShared:
      sched::pad_shared(a.tensor(0), a.num(0));
      return nullptr;
    case Op::Swizzle:
      // ABI 1.10's swizzle_bytes records the unit; a 1.3 step has none (4).
      sched::swizzle(a.tensor(0), a.num(0), t.ints.size() > 1 ? a.num(1) : 4);
      return nullptr;
    case Op::CircularBuffer:
      sched::circular_buffer(a.tensor(0), a.num(0), a.num(1));
      return nullptr;
    case Op::FuseMma:
      sched::fuse_mma(a.tensor(0));
      return nullptr;
    case Op::MmaTile:
      sched::mma_tile(a.tensor(0));
      return nullptr;
    case Op::GridPersistent:
      sched::grid_persistent(a.tensor(0));
      return nullptr;
    case Op::PropagateReshape:
      sched::propagate_reshape(f);
      return nullptr;
    case Op::CacheAfter:
      return sched::cache_after(a.tensor(0),
                                a.enumerator_at(0, ir::LoadStoreOpType::Tma, "load/store op"),
                                a.enumerator_at(1, ir::CacheOp::Global, "cache op"));
    case Op::CacheBefore:
      return sched::cache_before(a.tensor(0));
    case Op::CacheFork:
      return sched::cache_fork(a.tensor(0));
    case Op::Recompute:
      return sched::recompute(a.tensor(0), a.tensors_from(1));
    case Op::Rfactor: {
      std::vector<int> axes;
      for (size_t i = 0; i < t.ints.size(); ++i) axes.push_back(a.axis(i));
      return sched::rfactor(a.tensor(0), axes);
    }
    case Op::PropagateTransformation:
      sched::propagate_transformation(a.tensor(0), a.tensors_from(1));
      return nullptr;
    case Op::ParallelizeAllLike: {
      const int64_t n_types = a.num(1);
      user_assert(n_types >= 0 && static_cast<size_t>(n_types) + 2 <= t.ints.size())
          << "parallelize_all_like: " << n_types << " types do not fit in " << t.ints.size()
          << " integers";
      std::set<ir::ParallelType> types;
      std::set<ir::LoopTransform> transforms;
      for (size_t i = 2; i < t.ints.size(); ++i) {
        if (i < 2 + static_cast<size_t>(n_types))
          types.insert(a.enumerator(t.ints[i], ir::ParallelType::TIDz, "parallel type"));
        else
          transforms.insert(a.enumerator(t.ints[i], ir::LoopTransform::Bulk, "loop transform"));
      }
      sched::parallelize_all_like(a.tensor(0), a.axis(0), a.tensors_from(1), types, transforms);
      return nullptr;
    }
    case Op::InlineAt:
      sched::inline_at(a.tensor(0), a.axis(0), a.num(1) != 0);
      return nullptr;
    case Op::InlineSelectedAt:
      sched::inline_selected_at(a.tensors_from(1), a.tensor(0), a.axis(0));
      return nullptr;
    case Op::InlineMost:
      sched::inline_most(f, a.tensors_from(0));
      return nullptr;
    case Op::ApplyScript: {
      std::vector<std::string> lines = apply_script(f, t);
      if (script_log) script_log->insert(script_log->end(), lines.begin(), lines.end());
      return nullptr;
    }
  }
  user_error << "transform log: unknown step kind " << static_cast<int>(t.op);
}

void replay(ir::Fusion& f, const TransformLog& log) {
  for (size_t i = 0; i < log.size(); ++i) {
    try {
      apply(f, log[i]);
    } catch (const UserError& e) {
      user_error << "replaying the schedule of fusion '" << f.name() << "': step " << i + 1
                 << " (" << op_name(log[i].op) << "): " << e.what();
    }
  }
}

std::string serialize(const TransformLog& log) {
  nlohmann::json steps = nlohmann::json::array();
  for (const Transform& t : log) {
    nlohmann::json s = {{"op", op_name(t.op)}, {"t", t.tensors}, {"i", t.ints}};
    if (t.op == Op::ApplyScript) {
      s["text"] = t.text;
      s["args"] = t.text2;
      s["path"] = t.path;
    }
    steps.push_back(std::move(s));
  }
  return steps.dump();
}

TransformLog parse_log(std::string_view json, const std::string& what) {
  TransformLog log;
  try {
    const nlohmann::json steps = nlohmann::json::parse(json);
    user_assert(steps.is_array()) << what << ": expected a JSON array of steps";
    for (const nlohmann::json& s : steps) {
      Transform t;
      const std::string op = s.at("op").get<std::string>();
      auto it = std::find_if(std::begin(kOps), std::end(kOps),
                             [&](const auto& o) { return o.second == op; });
      user_assert(it != std::end(kOps)) << what << ": unknown step '" << op << "'";
      t.op = it->first;
      t.tensors = s.at("t").get<std::vector<int64_t>>();
      t.ints = s.at("i").get<std::vector<int64_t>>();
      if (t.op == Op::ApplyScript) {
        t.text = s.at("text").get<std::string>();
        t.text2 = s.at("args").get<std::string>();
        t.path = s.at("path").get<std::string>();
      }
      log.push_back(std::move(t));
    }
  } catch (const nlohmann::json::exception& e) {
    user_error << what << ": malformed transform log: " << e.what();
  }
  return log;
}

}  // namespace schedlab::plugin
