// The schedule generator: random plausible schedule scripts
// (schedlab/fuzz/fuzz.h; the language is docs/schedule-scripts.md).
//
// The shape of a hand schedule, each step drawn at random:
//  1. caches: cache_after of an input (with any of the four CacheOp values)
//     and cache_before of an output, each left in Local or moved to Shared;
//  2. a reference tensor (a reduction when there is one, as nvFuser's
//     reduction schedulers pick, else an output) gets merges, splits (inner
//     and outer), a reorder, and maybe an rfactor of a split reduction axis;
//  3. its loop axes are bound to BIDx/BIDy/TIDx/TIDy, with Unroll, Unswitch
//     and (on a cache, a copy) Vectorize;
//  4. propagate_transformation and parallelize_all_like from the reference;
//  5. inline_most, inline_at at a position, or inline_selected_at.
// The generator tracks the reference's loop domain (each axis's kind and
// extent) so that most lines are legal, and lets some be illegal on purpose:
// a schedule that lowering must refuse is a test too (class `refused`).
//
// A contraction of bf16/f16 operands (a matmul case, matmul_gen.cpp) gets,
// in 85 % of cases, a tensor-core schedule instead (TensorCoreSchedule
// below, the matmul plugin's shape): fuse_mma, the CTA tile of wm x wn warps
// (TIDz, TIDy), each mi x ni m16n8k16 tiles, mma_tile, the operands Shared
// at the K step, the epilogue propagated and inlined; sometimes (a plain
// [M, K] x [K, N] matmul) the inputs copied by cp.async into 1 to 3 stages
// circular-buffered over the K loop (configs/schedules/matmul_mma_async.sched).
#include <algorithm>
#include <array>
#include <optional>
#include <sstream>

#include "schedlab/fuzz/fuzz.h"
#include "schedlab/ir/ir.h"

namespace schedlab::fuzz {

std::string GenSchedule::text() const {
  std::string r;
  for (const std::string& l : lines) r += l + "\n";
  return r;
}

namespace {

/// One loop axis of the reference as the generator believes it to be.
struct Axis {
  bool reduction = false;
  bool broadcast = false;
  int64_t extent = 1;
  bool inner_of_split = false;  ///< the inner output of a split (a Vectorize candidate)
};

class ScheduleGenerator {
 public:
  ScheduleGenerator(const ir::Fusion& f, const ir::SizeBindings& sizes, std::mt19937_64& rng)
      : f_(f),
        sizes_(sizes),
        rng_(rng),
        pad_rng_(std::mt19937_64(rng)()),
        swizzle_rng_(std::mt19937_64(rng)() + 1),
        cache_rng_(std::mt19937_64(rng)() + 2) {}

  GenSchedule run() {
    const ir::TensorView* ref = pick_reference();
    if (!ref) return std::move(s_);
    ref_ = name(ref);
    for (const ir::IterDomain* id : ref->loop())
      axes_.push_back({id->is_reduction(), id->is_broadcast(),
                       id->extent().evaluate(sizes_).value_or(1), false});
    caches();
    const int transforms = pick(4);
    for (int i = 0; i < transforms; ++i) transform();
    const bool rfactor_first = chance(0.5);
    if (rfactor_first) rfactor();
    bind();
    if (!rfactor_first) rfactor();
    if (chance(0.85)) add("propagate_transformation(" + ref_ + ")", "propagate_transformation");
    if (chance(0.85)) {
      if (chance(0.15))
        add("parallelize_all_like(" + ref_ + ", pos=" + std::to_string(pick(nloop() + 1)) + ")",
            "parallelize_all_like");
      else
        add("parallelize_all_like(" + ref_ + ")", "parallelize_all_like");
    }
    vectorize_cache();
    inline_step();
    return std::move(s_);
  }

 private:
  int pick(int n) { return n <= 0 ? 0 : std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& one_of(const std::vector<T>& v) {
    return v[static_cast<size_t>(pick(static_cast<int>(v.size())))];
  }
  int nloop() const { return static_cast<int>(axes_.size()); }

  void add(const std::string& line, const std::string& feature) {
    s_.lines.push_back(line);
    s_.features.insert(feature);
  }

  /// The script's name for t: its body name when unique, else T<n>.
  std::string name(const ir::TensorView* t) const {
    if (t->user_name().empty()) return t->str();
    int n = 0;
    for (const ir::TensorView* o : f_.tensors()) n += o->user_name() == t->user_name();
    return n == 1 ? t->user_name() : t->str();
  }

  const ir::TensorView* pick_reference() {
    std::vector<const ir::TensorView*> reductions, outputs;
    for (const ir::Expr* e : f_.exprs_for_outputs())
      if (e->is<ir::ReductionOp>()) reductions.push_back(e->out());
    for (const ir::TensorView* o : f_.outputs())
      if (!f_.is_input(o)) outputs.push_back(o);
    if (!reductions.empty() && (outputs.empty() || chance(0.7))) return one_of(reductions);
    if (outputs.empty()) return nullptr;
    return one_of(outputs);
  }

  void caches() {
    // An input nothing reads (a matmul case's unused epilogue input) has no cache.
    std::vector<const ir::TensorView*> ins;
    for (const ir::TensorView* i : f_.inputs())
      if (!i->uses().empty()) ins.push_back(i);
    if (chance(0.3) && !ins.empty()) {
      const std::string c = "c" + std::to_string(++caches_);
      add(c + " = cache_after(" + name(one_of(ins)) + cache_op() + ")", "cache_after");
      memory(c, "cache_after");
      after_caches_.push_back(c);
    }
    std::vector<const ir::TensorView*> outs;
    for (const ir::TensorView* o : f_.outputs())
      if (!f_.is_input(o)) outs.push_back(o);
    if (chance(0.2) && !outs.empty()) {
      const std::string c = "c" + std::to_string(++caches_);
      const std::string o = name(one_of(outs));
      add(c + " = cache_before(" + o + ")", "cache_before");
      memory(c, "cache_before");
      // The cache computes a reduction output; the output keeps only its
      // iteration axes. The cache, with the loop domain tracked, is the reference.
      if (o == ref_ && std::any_of(axes_.begin(), axes_.end(), [](const Axis& a) { return a.reduction; }))
        ref_ = c;
    }
  }
  /// The cache policy of an input's cache, each of the four values alike
  /// (feature cache_op_<Value>): ", cache_op=Global", or "" for Unspecified.
  std::string cache_op() {
    constexpr ir::CacheOp kOps[] = {ir::CacheOp::Unspecified, ir::CacheOp::AllLevels,
                                    ir::CacheOp::Global, ir::CacheOp::Streaming};
    const ir::CacheOp c = kOps[std::uniform_int_distribution<int>(0, 3)(cache_rng_)];
    if (c == ir::CacheOp::Unspecified) return "";
    const std::string v(ir::cache_op_name(c));
    s_.features.insert("cache_op_" + v);
    return ", cache_op=" + v;
  }
  void memory(const std::string& c, const std::string& what) {
    if (chance(0.45)) {
      add("set_memory_type(" + c + ", shared)", what + "_shared");
      // Padded rows (pad_shared), 1 to 4 elements: the odd ones misalign any
      // vector access to the buffer, which lowering must refuse.
      if (std::uniform_real_distribution<double>(0, 1)(pad_rng_) < 0.4) {
        const int64_t pad = std::uniform_int_distribution<int64_t>(1, 4)(pad_rng_);
        add("pad_shared(" + c + ", " + std::to_string(pad) + ")", "pad_shared");
      } else if (std::uniform_real_distribution<double>(0, 1)(swizzle_rng_) < 0.4) {
        // An XOR swizzle of width 2, 4 or 8: lowering refuses rows that are
        // not a multiple of it, buffers of one axis and vector copies.
        const int64_t width = int64_t{2} << std::uniform_int_distribution<int>(0, 2)(swizzle_rng_);
        add("swizzle(" + c + ", " + std::to_string(width) + ")", "swizzle");
      }
    } else {
      if (chance(0.3)) add("set_memory_type(" + c + ", local)", what + "_local");
      s_.features.insert(what + "_local");
    }
  }

  void transform() {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (u < 0.3 && nloop() >= 2) return merge();
    if (u < 0.85) return split();
    if (nloop() >= 2) return reorder();
  }

  void merge() {
    // Mostly axes of the same kind; a reduction with an iteration axis is refused.
    std::vector<int> same;
    for (int i = 0; i + 1 < nloop(); ++i)
      if (axes_[static_cast<size_t>(i)].reduction == axes_[static_cast<size_t>(i) + 1].reduction)
        same.push_back(i);
    const int i = !same.empty() && chance(0.9) ? one_of(same) : pick(nloop() - 1);
    Axis& a = axes_[static_cast<size_t>(i)];
    const Axis& b = axes_[static_cast<size_t>(i) + 1];
    a.extent *= b.extent;
    a.reduction = a.reduction || b.reduction;
    a.broadcast = a.broadcast && b.broadcast;
    a.inner_of_split = false;
    axes_.erase(axes_.begin() + i + 1);
    add("merge(" + ref_ + ", " + std::to_string(i) + ")", "merge");
  }

  void split() {
    if (nloop() == 0) return;
    const int i = pick(nloop());
    const int64_t factor = one_of<int64_t>({1, 2, 3, 4, 4, 8, 16, 32, 32, 64, 128, 256});
    const bool inner = chance(0.8);
    Axis a = axes_[static_cast<size_t>(i)];
    const int64_t rest = (a.extent + factor - 1) / factor;
    Axis outer = a, in = a;
    outer.extent = inner ? rest : factor;
    in.extent = inner ? factor : rest;
    outer.inner_of_split = false;
    in.inner_of_split = inner;
    axes_[static_cast<size_t>(i)] = outer;
    axes_.insert(axes_.begin() + i + 1, in);
    add("split(" + ref_ + ", " + std::to_string(i) + ", " + std::to_string(factor) +
            (inner ? "" : ", inner_split=false") + ")",
        inner ? "split" : "split_outer");
  }

  void reorder() {
    const int i = pick(nloop());
    int j = pick(nloop() - 1);
    if (j >= i) ++j;
    std::swap(axes_[static_cast<size_t>(i)], axes_[static_cast<size_t>(j)]);
    add("reorder(" + ref_ + ", {" + std::to_string(i) + ": " + std::to_string(j) + ", " +
            std::to_string(j) + ": " + std::to_string(i) + "})",
        "reorder");
  }

  /// rfactor of one of several reduction axes of a reduction reference.
  void rfactor() {
    std::vector<int> red;
    for (int i = 0; i < nloop(); ++i)
      if (axes_[static_cast<size_t>(i)].reduction) red.push_back(i);
    if (red.size() < 2 || !chance(0.4)) return;
    const int i = one_of(red);
    add("r" + std::to_string(++caches_) + " = rfactor(" + ref_ + ", [" + std::to_string(i) + "])",
        "rfactor");
    // The producer reduces axis i; the reference keeps its other axes.
    axes_.erase(axes_.begin() + i);
  }

  void bind() {
    std::vector<int> free;
    for (int i = 0; i < nloop(); ++i) free.push_back(i);
    auto take = [&](const std::function<bool(const Axis&)>& prefer) -> int {
      if (free.empty()) return -1;
      std::vector<int> good;
      for (int i : free)
        if (prefer(axes_[static_cast<size_t>(i)])) good.push_back(i);
      const int i = !good.empty() && chance(0.85) ? one_of(good) : one_of(free);
      free.erase(std::find(free.begin(), free.end(), i));
      return i;
    };
    auto bind_to = [&](int i, const std::string& type) {
      if (i >= 0) add("parallelize(" + ref_ + ", " + std::to_string(i) + ", " + type + ")", type);
    };
    if (chance(0.75)) bind_to(take([](const Axis& a) { return !a.reduction; }), "BIDx");
    if (chance(0.2)) bind_to(take([](const Axis& a) { return !a.reduction; }), "BIDy");
    if (chance(0.7))
      bind_to(take([](const Axis& a) { return a.inner_of_split && a.extent <= 1024; }), "TIDx");
    if (chance(0.15)) bind_to(take([](const Axis& a) { return a.extent <= 64; }), "TIDy");
    if (chance(0.15)) bind_to(take([](const Axis& a) { return a.extent <= 16; }), "Unroll");
    if (chance(0.1)) bind_to(take([](const Axis&) { return true; }), "Unswitch");
  }

  /// Vectorize applies to copies: the innermost axis of an input's cache,
  /// once propagation gave it the reference's loop structure.
  void vectorize_cache() {
    if (after_caches_.empty() || nloop() == 0 || !chance(0.5)) return;
    const Axis& last = axes_.back();
    if (!chance(last.inner_of_split && last.extent <= 8 ? 0.9 : 0.2)) return;
    add("parallelize(" + one_of(after_caches_) + ", " + std::to_string(nloop() - 1) +
            ", Vectorize)",
        "Vectorize");
  }

  /// Whether v comes from a broadcast through one-operand ops (casts, copies).
  static bool from_broadcast(const ir::Val* v) {
    for (const ir::Expr* d = v->definition(); d; d = d->inputs()[0]->definition()) {
      if (d->is<ir::BroadcastOp>()) return true;
      if (d->inputs().size() != 1) return false;
    }
    return false;
  }
  /// A contraction (matmul, linear): a sum of a product of broadcast operands.
  bool has_contraction() const {
    for (const ir::Expr* e : f_.exprs_for_outputs()) {
      const ir::Expr* m = e->is<ir::ReductionOp>() ? e->inputs()[0]->definition() : nullptr;
      if (m && m->is<ir::BinaryOp>() && m->as<ir::BinaryOp>()->op() == ir::BinaryOpType::Mul &&
          from_broadcast(m->inputs()[0]) && from_broadcast(m->inputs()[1]))
        return true;
    }
    return false;
  }

  void inline_step() {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
    // A contraction's broadcast operands left in their own loop nest hold a
    // broadcast axis bound to a thread or block dimension, which lowering
    // refuses (rule 2): for one, inline_most is likelier.
    if (u < (has_contraction() ? 0.85 : 0.6)) return add("inline_most()", "inline_most");
    std::vector<std::string> tvs;
    for (const ir::TensorView* t : f_.tensors())
      if (!f_.is_input(t)) tvs.push_back(name(t));
    tvs.insert(tvs.end(), after_caches_.begin(), after_caches_.end());
    if (tvs.empty()) return;
    if (u < 0.8) {
      add("inline_at(" + one_of(tvs) + ", " + std::to_string(pick(nloop() + 1)) +
              (chance(0.5) ? ", best_effort=true" : "") + ")",
          "inline_at");
    } else if (u < 0.92) {
      add("inline_selected_at([" + one_of(tvs) + "], " + ref_ + ", " +
              std::to_string(pick(nloop() + 1)) + ")",
          "inline_selected_at");
    }
  }

  const ir::Fusion& f_;
  const ir::SizeBindings& sizes_;
  std::mt19937_64& rng_;
  /// pad_shared's decisions, on a stream of their own (seeded from a copy of
  /// rng_, which it leaves untouched): adding them changed no other draw, so
  /// every case of a seed is the one it was, padding aside.
  std::mt19937_64 pad_rng_;
  /// swizzle's, likewise on their own stream (seeded apart from pad_rng_).
  std::mt19937_64 swizzle_rng_;
  /// cache_after's cache policies, likewise (seeded apart from both).
  std::mt19937_64 cache_rng_;
  GenSchedule s_;
  std::string ref_;
  std::vector<Axis> axes_;
  std::vector<std::string> after_caches_;
  int caches_ = 0;
};

/// The tensor-core schedule of a contraction (fuse_mma + mma_tile), drawn
/// on a stream of its own. The script names tensors as the parsed fusion
/// numbers them; fuse_mma's new operands (the broadcast of a half tensor
/// that an f32 cast fed) take the next numbers, which operand() predicts.
class TensorCoreSchedule {
 public:
  TensorCoreSchedule(const ir::Fusion& f, const ir::SizeBindings& sizes, std::mt19937_64& rng)
      : f_(f), sizes_(sizes), rng_(rng) {}

  /// The schedule, or nullopt when the fusion has no half contraction with
  /// an M and an N axis (or the draw says the generic schedule).
  std::optional<GenSchedule> run() {
    const ir::TensorView* sum = contraction();
    if (!sum || !chance(0.85)) return std::nullopt;
    // An epilogue reduction would get the tile's block bindings on its
    // reduced axes (a grid reduction read in the kernel, refused): the
    // generic schedule takes those.
    for (const ir::Expr* e : f_.exprs_for_outputs())
      if (e->is<ir::ReductionOp>() && e->out() != sum) return std::nullopt;
    const std::string t = sum->str();
    // The sum's axes: [batch..., M, rK, N] (matmul) or [batch..., M, N, rK] (linear).
    std::vector<int> kept, reduced;
    for (int i = 0; i < static_cast<int>(sum->logical().size()); ++i)
      (sum->logical()[static_cast<size_t>(i)]->is_reduction() ? reduced : kept).push_back(i);
    if (kept.size() < 2 || kept.size() > 3 || reduced.size() != 1) return std::nullopt;
    const int k = reduced[0];
    const int b = static_cast<int>(kept.size()) - 2;  // batch axes, outermost
    const int m = kept[static_cast<size_t>(b)], n = kept.back();
    // Operands: the half tensors fuse_mma will read, by name.
    const auto* mul = sum->definition()->inputs()[0]->definition();
    int next = static_cast<int>(f_.tensors().size());
    std::array<std::string, 2> op;
    std::array<bool, 2> input{};
    for (size_t i = 0; i < 2; ++i) {
      const ir::TensorView* o = operand(mul->inputs()[i]->as<ir::TensorView>());
      op[i] = o ? o->str() : "T" + std::to_string(next++);
      input[i] = o && f_.is_input(o);
    }
    const int wm = pick({1, 1, 2}), wn = pick({1, 2}), mi = pick({1, 2}), ni = pick({1, 2});
    const bool plain = plain_matmul(sum, m, k, n);
    const int stages = plain && chance(0.7) ? pick({1, 2, 3}) : 0;  // 0: no staged copies
    add("fuse_mma(" + t + ")", "fuse_mma");
    for (size_t i = 0; i < 2; ++i)
      if (input[i]) {
        // An input operand (linear's weight read as it is) is read through
        // a Shared copy, as the plugin does.
        add("o" + std::to_string(i) + " = cache_after(" + op[i] + ")", "cache_after");
        op[i] = "o" + std::to_string(i);
      }
    if (stages > 0) return async_tile(t, op, stages);
    add("reorder(" + t + ", {" + str(m) + ": " + str(b) + ", " + str(n) + ": " + str(b + 1) +
            ", " + str(k) + ": " + str(b + 2) + "})",
        "reorder");                                             // [B, M, N, rK]
    split(t, b + 2, 16);                                        // [B, M, N, rKo, k16]
    split(t, b + 1, wn * ni * 8);                               // [B, M, No, tn, rKo, k16]
    split(t, b + 2, 8);                                         // [B, M, No, tn8, n8, rKo, k16]
    split(t, b + 2, ni);                                        // [B, M, No, wn, ni, n8, ...]
    split(t, b, wm * mi * 16);                                  // [B, Mo, tm, No, ...]
    split(t, b + 1, 16);                                        // [B, Mo, tm16, m16, No, ...]
    split(t, b + 1, mi);                                        // [B, Mo, wm, mi, m16, No, ...]
    // [B, Mo, No, rKo, wm, wn, mi, ni, m16, n8, k16]
    add("reorder(" + t + ", {" + str(b + 4) + ": " + str(b + 1) + ", " + str(b + 8) + ": " +
            str(b + 2) + ", " + str(b + 1) + ": " + str(b + 3) + ", " + str(b + 5) + ": " +
            str(b + 4) + ", " + str(b + 2) + ": " + str(b + 5) + ", " + str(b + 3) + ": " +
            str(b + 7) + ", " + str(b + 7) + ": " + str(b + 8) + "})",
        "reorder");
    add("mma_tile(" + t + ")", "mma_tile");  // [B, Mo, No, rKo, wm, wn, mi, ni, lane, frag, k16]
    if (b > 0) bind(t, 0, "BIDz");
    bind(t, b, "BIDy");
    bind(t, b + 1, "BIDx");
    if (wm > 1) bind(t, b + 3, "TIDz");
    if (wn > 1) bind(t, b + 4, "TIDy");
    s_.features.insert("mma_warps_" + str(wm * wn));
    if (mi * ni > 1) s_.features.insert("mma_tiles_per_warp");
    add("propagate_transformation(" + t + ")", "propagate_transformation");
    add("parallelize_all_like(" + t + ")", "parallelize_all_like");
    for (const std::string& o : op) add("set_memory_type(" + o + ", shared)", "mma_operand_shared");
    add("inline_most()", "inline_most");
    for (const std::string& o : op) add("inline_at(" + o + ", " + str(b + 3) + ")", "inline_at");
    return std::move(s_);
  }

 private:
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int pick(const std::vector<int>& v) {
    return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng_)];
  }
  static std::string str(int64_t v) { return std::to_string(v); }
  void add(const std::string& line, const std::string& feature) {
    s_.lines.push_back(line);
    s_.features.insert(feature);
  }
  void split(const std::string& t, int axis, int64_t factor) {
    add("split(" + t + ", " + str(axis) + ", " + str(factor) + ")", "split");
  }
  void bind(const std::string& t, int axis, const std::string& type) {
    add("parallelize(" + t + ", " + str(axis) + ", " + type + ")", type);
  }

  /// The half tensor an exact f32 cast `t` reads, or nullptr.
  static const ir::TensorView* half_source(const ir::TensorView* t) {
    const ir::Expr* d = t ? t->definition() : nullptr;
    if (!d || !d->is<ir::CastOp>()) return nullptr;
    const auto* src = d->inputs()[0]->as<ir::TensorView>();
    return src && ir::is_half(src->dtype()) ? src : nullptr;
  }
  /// What fuse_mma reads for the factor t (sched/mma.cpp's mma_operand):
  /// the half tensor its cast reads, or nullptr for a broadcast of such a
  /// cast (fuse_mma makes that broadcast anew, numbered next).
  static const ir::TensorView* operand(const ir::TensorView* t) {
    if (const ir::TensorView* src = half_source(t)) return src;
    return nullptr;
  }
  /// Whether the factor t is one fuse_mma takes as a half operand.
  static bool half_factor(const ir::TensorView* t) {
    if (half_source(t)) return true;
    const auto* b = t && t->definition() ? t->definition()->as<ir::BroadcastOp>() : nullptr;
    return b && half_source(b->in());
  }

  /// The sum of a product of two half factors (a matmul or linear of bf16
  /// or f16 operands) that only the sum reads, or nullptr.
  const ir::TensorView* contraction() const {
    for (const ir::Expr* e : f_.exprs_for_outputs()) {
      const auto* r = e->as<ir::ReductionOp>();
      if (!r || r->op() != ir::ReductionOpType::Sum) continue;
      const ir::Expr* mul = r->in()->definition();
      if (!mul || !mul->is<ir::BinaryOp>() || mul->as<ir::BinaryOp>()->op() != ir::BinaryOpType::Mul)
        continue;
      const auto* a = mul->inputs()[0]->as<ir::TensorView>();
      const auto* b = mul->inputs()[1]->as<ir::TensorView>();
      if (half_factor(a) && half_factor(b) && f_.live_uses(r->in()).size() == 1 &&
          !f_.is_output(r->in()))
        return e->out();
    }
    return nullptr;
  }

  /// A matmul [M, rK, N] of inputs a [M, K] and b [K, N] read as they are
  /// (no batch, no transpose): the shape whose cp.async copies the
  /// example schedule configs/schedules/matmul_mma_async.sched lays out.
  bool plain_matmul(const ir::TensorView* sum, int m, int k, int n) const {
    if (sum->logical().size() != 3 || m != 0 || k != 1 || n != 2) return false;
    const ir::Expr* mul = sum->definition()->inputs()[0]->definition();
    for (size_t i = 0; i < 2; ++i) {
      const ir::TensorView* h = half_source(mul->inputs()[i]->as<ir::TensorView>());
      const auto* bc = h && h->definition() ? h->definition()->as<ir::BroadcastOp>() : nullptr;
      if (!bc || !f_.is_input(bc->in())) return false;
      operand_inputs_[i] = bc->in()->str();
    }
    return true;
  }

  /// configs/schedules/matmul_mma_async.sched's tile: one warp per block, a
  /// 16 x 8 tile, the K loop outermost, a's [16, 16] and b's [16, 8] tiles
  /// copied global -> Shared by cp.async (the widest of 16, 8 or 4 bytes that
  /// the contiguous extent, K for a and N for b, is a multiple of; a plain
  /// load otherwise, then at most 2 stages), `stages` deep.
  GenSchedule async_tile(const std::string& t, const std::array<std::string, 2>& op, int stages) {
    auto width = [&](const char* size) {
      const int64_t e = sizes_.count(size) ? sizes_.at(size) : 1;
      for (int64_t w : {8, 4, 2})
        if (e % w == 0) return w;
      return int64_t{1};
    };
    const int64_t aw = width("K"), bw = std::min<int64_t>(width("N"), 8);
    if ((aw == 1 || bw == 1) && stages > 2) stages = 2;
    const int64_t ak = 16 / aw, bn = 8 / bw;
    add("reorder(" + t + ", {2: 1, 1: 2})", "reorder");  // [M, N, rK]
    split(t, 2, aw);
    split(t, 2, ak);
    add("merge(" + t + ", 3)", "merge");  // [M, N, rKo, k16]
    split(t, 1, bw);
    split(t, 1, bn);
    add("merge(" + t + ", 2)", "merge");  // [M, No, n8, rKo, k16]
    split(t, 0, 16);                      // [Mo, m16, No, n8, rKo, k16]
    add("reorder(" + t + ", {0: 1, 1: 3, 2: 2, 3: 4, 4: 0})", "reorder");  // [rKo, Mo, No, m16, n8, k16]
    add("mma_tile(" + t + ")", "mma_tile");
    bind(t, 1, "BIDy");
    bind(t, 2, "BIDx");
    add("propagate_transformation(" + t + ")", "propagate_transformation");
    add("parallelize_all_like(" + t + ")", "parallelize_all_like");
    for (const std::string& o : op) add("set_memory_type(" + o + ", shared)", "mma_operand_shared");
    // a's tile [m16, k16] and b's [k16, n8]: 32 lanes x aw (bw) elements.
    const std::string a = operand_inputs_[0], b = operand_inputs_[1];
    // Each operand is staged in shared memory as c (cp.async when w > 1);
    // once laid out as [rows, lanes x w], its block axis follows the output's,
    // 32 lanes go to TIDx and w is vectorized.
    auto stage = [&](const std::string& c, const std::string& in, int64_t w) {
      add(c + " = cache_after(" + in + (w > 1 ? ", CpAsync" : "") + ")", "cp_async");
      add("set_memory_type(" + c + ", shared)", "cache_after_shared");
    };
    auto bind_lanes = [&](const std::string& c, const std::string& block, int64_t w) {
      split(c, 2, 32);
      bind(c, 1, block);
      bind(c, 3, "TIDx");
      if (w > 1) bind(c, 4, "Vectorize");
    };
    stage("ac", a, aw);
    split("ac", 1, aw);
    split("ac", 1, ak);
    split("ac", 0, 16);
    add("reorder(ac, {0: 1, 1: 2, 2: 0})", "reorder");
    add("merge(ac, 2)", "merge");
    bind_lanes("ac", "BIDy", aw);
    stage("bc", b, bw);
    split("bc", 1, bw);
    split("bc", 1, bn);
    split("bc", 0, aw);
    split("bc", 0, ak);
    add("merge(bc, 1)", "merge");
    add("reorder(bc, {1: 2, 2: 1})", "reorder");
    add("merge(bc, 2)", "merge");
    bind_lanes("bc", "BIDx", bw);
    add("inline_most()", "inline_most");
    add("inline_at(ac, 1)", "inline_at");
    add("inline_at(bc, 1)", "inline_at");
    for (const std::string& o : op) add("inline_at(" + o + ", 3)", "inline_at");
    if (stages > 1) {
      add("circular_buffer(ac, " + str(stages) + ")", "circular_buffer");
      add("circular_buffer(bc, " + str(stages) + ")", "circular_buffer");
    }
    s_.features.insert("mma_async_stages_" + str(stages));
    return std::move(s_);
  }

  const ir::Fusion& f_;
  const ir::SizeBindings& sizes_;
  std::mt19937_64& rng_;
  GenSchedule s_;
  mutable std::array<std::string, 2> operand_inputs_;
};

}  // namespace

GenSchedule generate_schedule(const ir::Fusion& f, const ir::SizeBindings& sizes,
                              std::mt19937_64& rng) {
  // The tensor-core draw on a stream of its own (seeded from a copy of rng,
  // which it leaves untouched): every case without one is the one it was.
  std::mt19937_64 mma_rng(std::mt19937_64(rng)() + 3);
  if (std::optional<GenSchedule> s = TensorCoreSchedule(f, sizes, mma_rng).run()) return *s;
  return ScheduleGenerator(f, sizes, rng).run();
}

}  // namespace schedlab::fuzz
