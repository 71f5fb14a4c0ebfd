// The schedule-script primitives and queries: each decodes its arguments
// (Args) and calls the ir/sched function it names. docs/schedule-scripts.md documents
// them; adding one here is all a new primitive needs in the front end.
#include "schedule_primitives.h"

#include <algorithm>

#include "schedlab/ir/reshape.h"
#include "schedlab/sched/sched.h"

namespace schedlab::frontend::script {

namespace {

// Each apply reads its arguments into locals first, in parameter order, so
// that the first bad argument is the one reported.
const std::vector<Primitive> kPrimitives = {
    {"split",
     {{"tv"}, {"axis"}, {"factor"}, {"inner_split", "true"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       int axis = a.axis(1);
       int64_t factor = a.integer(2);
       tv->split(axis, factor, a.flag(3, true));
       return {};
     }},
    {"merge",
     {{"tv"}, {"axis_o"}, {"axis_i", "axis_o+1"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       int o = a.axis(1);
       if (a.given(2))
         tv->merge(o, a.axis(2));
       else
         tv->merge(o);
       return {};
     }},
    {"reorder",
     {{"tv"}, {"old2new"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       tv->reorder(a.old2new(1));
       return {};
     }},
    {"parallelize",
     {{"tv"}, {"axis"}, {"type"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       int axis = a.axis(1);
       std::visit([&](auto t) { tv->parallelize(axis, t); }, a.binding(2));
       return {};
     }},
    {"set_memory_type",
     {{"tv"}, {"memory"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       sched::set_memory_type(tv, a.choice(1, kMemoryTypes, "a memory type", MemoryType::Local));
       return {};
     }},
    {"pad_shared",
     {{"tv"}, {"elements"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       sched::pad_shared(tv, a.integer(1));
       return {};
     }},
    {"swizzle",
     {{"tv"}, {"width", "32"}, {"bytes", "4"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       const int64_t bytes = a.given(2) ? a.integer(2) : 4;
       sched::swizzle(tv, a.given(1) ? a.integer(1) : (bytes == 16 ? 8 : sched::kMaxSwizzleWidth),
                      bytes);
       return {};
     }},
    {"grid_persistent",
     {{"tv"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       sched::grid_persistent(a.tensor(0));
       return {};
     }},
    {"circular_buffer",
     {{"tv"}, {"stages"}, {"prefetch", "stages - 1"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       const int64_t stages = a.integer(1);
       sched::circular_buffer(tv, stages, a.given(2) ? a.integer(2) : stages - 1);
       return {};
     }},
    {"cache_after",
     {{"tv"}, {"op", "Set"}, {"cache_op", "Unspecified"}},
     Returns::NewTensor,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       auto op = a.choice(1, kLoadStoreOps, "a LoadStoreOpType", LoadStoreOpType::Set);
       auto cache = a.choice(2, kCacheOps, "a CacheOp", CacheOp::Unspecified);
       return sched::cache_after(tv, op, cache);
     }},
    {"cache_before",
     {{"tv"}},
     Returns::NewTensor,
     [](Args& a, ir::Fusion&) -> Object { return sched::cache_before(a.tensor(0)); }},
    {"cache_fork",
     {{"tv"}},
     Returns::NewTensor,
     [](Args& a, ir::Fusion&) -> Object { return sched::cache_fork(a.tensor(0)); }},
    {"recompute",
     {{"tv"}, {"consumers", "[]"}},
     Returns::NewTensor,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       return sched::recompute(tv, a.tensors(1));
     }},
    {"fuse_mma",
     {{"tv"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       sched::fuse_mma(a.tensor(0));
       return {};
     }},
    {"mma_tile",
     {{"tv"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       sched::mma_tile(a.tensor(0));
       return {};
     }},
    {"rfactor",
     {{"tv"}, {"axes"}},
     Returns::NewTensor,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       return sched::rfactor(tv, a.ints(1));
     }},
    {"propagate_transformation",
     {{"reference"}, {"selected", "[]"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* ref = a.tensor(0);
       sched::propagate_transformation(ref, a.tensors(1));
       return {};
     }},
    {"propagate_reshape",
     {},
     Returns::Nothing,
     [](Args&, ir::Fusion& f) -> Object {
       sched::propagate_reshape(f);
       return {};
     }},
    {"parallelize_all_like",
     {{"reference"},
      {"pos", "-1"},
      {"selected", "[]"},
      {"types", "[]"},
      {"transforms", "[Unroll, Unswitch]"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* ref = a.tensor(0);
       int pos = a.given(1) ? a.axis(1) : -1;
       auto selected = a.tensors(2);
       auto types = a.choice_set(3, kParallelTypes, "a ParallelType", {});
       auto transforms = a.choice_set(4, kLoopTransforms, "a LoopTransform",
                                      {LoopTransform::Unroll, LoopTransform::Unswitch});
       sched::parallelize_all_like(ref, pos, selected, types, transforms);
       return {};
     }},
    {"inline_at",
     {{"tv"}, {"pos"}, {"best_effort", "false"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       TensorView* tv = a.tensor(0);
       int pos = a.axis(1);
       sched::inline_at(tv, pos, a.flag(2, false));
       return {};
     }},
    {"inline_selected_at",
     {{"selected"}, {"reference"}, {"pos"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion&) -> Object {
       auto selected = a.tensors(0);
       TensorView* ref = a.tensor(1);
       sched::inline_selected_at(selected, ref, a.axis(2));
       return {};
     }},
    {"inline_most",
     {{"selected", "[]"}},
     Returns::Nothing,
     [](Args& a, ir::Fusion& f) -> Object {
       sched::inline_most(f, a.tensors(0));
       return {};
     }},
    // Queries (sched/queries.h): they change nothing and return what they
    // find, for a statement to bind and later lines to index.
    {"get_reduction_tvs",
     {},
     Returns::Query,
     [](Args&, ir::Fusion& f) -> Object { return Object::list(sched::get_reduction_tvs(f)); }},
    {"all_tvs_except",
     {{"except"}},
     Returns::Query,
     [](Args& a, ir::Fusion& f) -> Object {
       return Object::list(sched::all_tvs_except(f, a.tensors(0)));
     }},
    {"find_reference_for",
     {},
     Returns::Query,
     [](Args&, ir::Fusion& f) -> Object {
       TensorView* ref = sched::find_reference_for(f);
       // Null only for a fusion with no output and no reduction, which no
       // fusion text and no segment is.
       internal_assert(ref != nullptr) << "find_reference_for: no reference in a fusion with "
                                       << f.outputs().size() << " outputs";
       return ref;
     }},
    {"get_view_ops",
     {},
     Returns::Query,
     [](Args&, ir::Fusion& f) -> Object {
       std::vector<TensorView*> outs;
       for (const ir::ViewOp* v : ir::view_ops(f)) outs.push_back(v->out());
       return Object::list(outs);
     }},
    {"statement_sort",
     {},
     Returns::Query,
     [](Args&, ir::Fusion& f) -> Object { return Object::list(sched::statement_sort(f)); }},
    {"dependency_check",
     {{"tv"}, {"among", "[]"}},
     Returns::Query,
     [](Args& a, ir::Fusion& f) -> Object {
       TensorView* tv = a.tensor(0);
       auto among = a.tensors(1);
       std::vector<TensorView*> r;
       for (TensorView* t : sched::statement_sort(f))
         if ((among.empty() || std::find(among.begin(), among.end(), t) != among.end()) &&
             sched::is_dependency_of(t, tv))
           r.push_back(t);
       return Object::list(r);
     }},
    {"group_inputs_outputs_by_inner_dim",
     {},
     Returns::Query,
     [](Args&, ir::Fusion& f) -> Object {
       return Object::list(sched::group_inputs_outputs_by_inner_dim(f));
     }},
};

}  // namespace

const std::vector<Primitive>& primitives() { return kPrimitives; }

}  // namespace schedlab::frontend::script
