// The schedule-script primitives: each decodes its arguments (Args) and
// calls the ir/sched function it names. docs/schedule-scripts.md documents
// them; adding one here is all a new primitive needs in the front end.
#include "schedule_args.h"
#include "schedlab/sched/sched.h"

namespace schedlab::frontend::script {

namespace {

// Each apply reads its arguments into locals first, in parameter order, so
// that the first bad argument is the one reported.
const std::vector<Primitive> kPrimitives = {
    {"split",
     {{"tv"}, {"axis"}, {"factor"}, {"inner_split", "true"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int axis = a.axis(1);
       int64_t factor = a.integer(2);
       tv->split(axis, factor, a.flag(3, true));
       return nullptr;
     }},
    {"merge",
     {{"tv"}, {"axis_o"}, {"axis_i", "axis_o+1"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int o = a.axis(1);
       if (a.given(2))
         tv->merge(o, a.axis(2));
       else
         tv->merge(o);
       return nullptr;
     }},
    {"reorder",
     {{"tv"}, {"old2new"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       tv->reorder(a.old2new(1));
       return nullptr;
     }},
    {"parallelize",
     {{"tv"}, {"axis"}, {"type"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int axis = a.axis(1);
       std::visit([&](auto t) { tv->parallelize(axis, t); }, a.binding(2));
       return nullptr;
     }},
    {"set_memory_type",
     {{"tv"}, {"memory"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       sched::set_memory_type(tv, a.choice(1, kMemoryTypes, "a memory type", MemoryType::Local));
       return nullptr;
     }},
    {"pad_shared",
     {{"tv"}, {"elements"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       sched::pad_shared(tv, a.integer(1));
       return nullptr;
     }},
    {"swizzle",
     {{"tv"}, {"width", "32"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       sched::swizzle(tv, a.given(1) ? a.integer(1) : sched::kMaxSwizzleWidth);
       return nullptr;
     }},
    {"cache_after",
     {{"tv"}, {"op", "Set"}, {"cache_op", "Unspecified"}},
     true,
     [](Args& a, ir::Fusion&) {
       TensorView* tv = a.tensor(0);
       auto op = a.choice(1, kLoadStoreOps, "a LoadStoreOpType", LoadStoreOpType::Set);
       auto cache = a.choice(2, kCacheOps, "a CacheOp", CacheOp::Unspecified);
       return sched::cache_after(tv, op, cache);
     }},
    {"cache_before",
     {{"tv"}},
     true,
     [](Args& a, ir::Fusion&) { return sched::cache_before(a.tensor(0)); }},
    {"cache_fork",
     {{"tv"}},
     true,
     [](Args& a, ir::Fusion&) { return sched::cache_fork(a.tensor(0)); }},
    {"rfactor",
     {{"tv"}, {"axes"}},
     true,
     [](Args& a, ir::Fusion&) {
       TensorView* tv = a.tensor(0);
       return sched::rfactor(tv, a.ints(1));
     }},
    {"propagate_transformation",
     {{"reference"}, {"selected", "[]"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* ref = a.tensor(0);
       sched::propagate_transformation(ref, a.tensors(1));
       return nullptr;
     }},
    {"parallelize_all_like",
     {{"reference"},
      {"pos", "-1"},
      {"selected", "[]"},
      {"types", "[]"},
      {"transforms", "[Unroll, Unswitch]"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* ref = a.tensor(0);
       int pos = a.given(1) ? a.axis(1) : -1;
       auto selected = a.tensors(2);
       auto types = a.choice_set(3, kParallelTypes, "a ParallelType", {});
       auto transforms = a.choice_set(4, kLoopTransforms, "a LoopTransform",
                                      {LoopTransform::Unroll, LoopTransform::Unswitch});
       sched::parallelize_all_like(ref, pos, selected, types, transforms);
       return nullptr;
     }},
    {"inline_at",
     {{"tv"}, {"pos"}, {"best_effort", "false"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       TensorView* tv = a.tensor(0);
       int pos = a.axis(1);
       sched::inline_at(tv, pos, a.flag(2, false));
       return nullptr;
     }},
    {"inline_selected_at",
     {{"selected"}, {"reference"}, {"pos"}},
     false,
     [](Args& a, ir::Fusion&) -> TensorView* {
       auto selected = a.tensors(0);
       TensorView* ref = a.tensor(1);
       sched::inline_selected_at(selected, ref, a.axis(2));
       return nullptr;
     }},
    {"inline_most",
     {{"selected", "[]"}},
     false,
     [](Args& a, ir::Fusion& f) -> TensorView* {
       sched::inline_most(f, a.tensors(0));
       return nullptr;
     }},
};

}  // namespace

const std::vector<Primitive>& primitives() { return kPrimitives; }

}  // namespace schedlab::frontend::script
