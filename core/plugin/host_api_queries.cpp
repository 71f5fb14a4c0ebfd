// The host API table's queries (host_api.h): the segment (name, tensors,
// sizes, device), a tensor (info, axes, producers and consumers, its
// definition's operands), the relations between tensors, and the debug
// prints. Each entry checks its arguments (host_api_args.h) and reads the
// ir/sched function it names.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "host_api_args.h"
#include "schedlab/ir/fusion.h"
#include "schedlab/sched/sched.h"

namespace schedlab::plugin {
namespace {

using namespace host_args;

std::string op_name(const ir::Expr* e) {
  if (e == nullptr) return "";
  if (const auto* u = e->as<ir::UnaryOp>()) return std::string(ir::unary_op_name(u->op()));
  if (const auto* b = e->as<ir::BinaryOp>()) return std::string(ir::binary_op_name(b->op()));
  if (const auto* r = e->as<ir::ReductionOp>()) return std::string(ir::reduction_op_name(r->op()));
  return e->op_name();
}

// ---- segment queries

int32_t api_segment_name(SchedlabSegment* s, const char** name) {
  return guard([&] {
    check_out(name, "segment_name", "name");
    *name = keep(s, segment(s, "segment_name").fusion->name());
  });
}

int32_t api_segment_tensors(SchedlabSegment* s, int32_t which, SchedlabTensor** items,
                            int32_t capacity, int32_t* count) {
  return guard([&] {
    const ir::Fusion& f = *segment(s, "segment_tensors").fusion;
    switch (which) {
      case SCHEDLAB_TENSORS_ALL:
        return fill(f.tensors(), items, capacity, count, "segment_tensors");
      case SCHEDLAB_TENSORS_INPUTS:
        return fill(f.inputs(), items, capacity, count, "segment_tensors");
      case SCHEDLAB_TENSORS_OUTPUTS:
        return fill(f.outputs(), items, capacity, count, "segment_tensors");
      default:
        abi_error("segment_tensors", "unknown SchedlabTensorSet " + std::to_string(which));
    }
  });
}

int32_t api_segment_size(SchedlabSegment* s, const char* name, int64_t* value) {
  return guard([&] {
    const HostSegment& seg = segment(s, "segment_size");
    if (name == nullptr) abi_error("segment_size", "name is null");
    check_out(value, "segment_size", "value");
    auto it = seg.sizes.find(name);
    if (it == seg.sizes.end()) {
      std::string known;
      for (const auto& [k, v] : seg.sizes) known += (known.empty() ? "" : ", ") + k;
      user_error << "segment '" << seg.fusion->name() << "' has no size named '" << name
                 << "' (its sizes: " << (known.empty() ? "none" : known) << ")";
    }
    *value = it->second;
  });
}

int32_t api_offered_by_segmenter(SchedlabSegment* s, int32_t* out) {
  return guard([&] {
    check_out(out, "offered_by_segmenter", "out");
    *out = segment(s, "offered_by_segmenter").from_segmenter ? 1 : 0;
  });
}

int32_t api_device_properties(SchedlabSegment* s, SchedlabDeviceProperties* out) {
  return guard([&] {
    const HostSegment& seg = segment(s, "device_properties");
    const runtime::DeviceProperties& d = seg.device;
    SchedlabDeviceProperties p{};
    p.is_model = d.is_model ? 1 : 0;
    p.name = keep(s, d.name);
    p.arch = keep(s, d.arch);
    p.cc_major = d.cc_major;
    p.cc_minor = d.cc_minor;
    p.sm_count = d.sm_count;
    p.warp_size = d.warp_size;
    p.max_threads_per_block = d.max_threads_per_block;
    p.max_threads_per_sm = d.max_threads_per_sm;
    p.registers_per_block = d.registers_per_block;
    p.registers_per_sm = d.registers_per_sm;
    p.shared_bytes_per_block = d.shared_bytes_per_block;
    p.shared_bytes_per_block_optin = d.shared_bytes_per_block_optin;
    p.shared_bytes_per_sm = d.shared_bytes_per_sm;
    p.l2_bytes = d.l2_bytes;
    p.global_memory_bytes = d.global_memory_bytes;
    p.peak_bandwidth_bytes_per_s = d.peak_bandwidth_bytes_per_s;
    write_out(out, p, "device_properties");
  });
}

int32_t api_tensor_info(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensorInfo* out) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_info");
    const ir::Fusion& f = *s->segment->fusion;
    SchedlabTensorInfo i{};
    i.number = tv->number();
    i.name = keep(s, tv->user_name());
    i.dtype = static_cast<int32_t>(tv->dtype());
    i.op_kind = tv->definition() == nullptr ? SCHEDLAB_OP_NONE
                                            : static_cast<int32_t>(tv->definition()->kind()) + 1;
    i.op_name = keep(s, op_name(tv->definition()));
    i.memory_type = static_cast<int32_t>(tv->memory_type());
    i.is_input = f.is_input(tv) ? 1 : 0;
    i.is_output = f.is_output(tv) ? 1 : 0;
    i.nlogical = tv->nlogical();
    i.nloop = tv->nloop();
    i.nroot = static_cast<int32_t>(tv->root().size());
    i.compute_at_pos = tv->compute_at_pos();
    i.has_reduction = tv->has_reduction() ? 1 : 0;
    write_out(out, i, "tensor_info");
  });
}

int32_t api_tensor_axis(SchedlabSegment* s, SchedlabTensor* t, int32_t domain, int32_t index,
                        SchedlabAxisInfo* out) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_axis");
    const std::vector<ir::IterDomain*>* ids = nullptr;
    switch (domain) {
      case SCHEDLAB_DOMAIN_LOGICAL:
        ids = &tv->logical();
        break;
      case SCHEDLAB_DOMAIN_LOOP:
        ids = &tv->loop();
        break;
      case SCHEDLAB_DOMAIN_ROOT:
        ids = &tv->root();
        break;
      default:
        abi_error("tensor_axis", "unknown SchedlabDomain " + std::to_string(domain));
    }
    int32_t n = static_cast<int32_t>(ids->size());
    int32_t at = index < 0 ? index + n : index;
    user_assert(at >= 0 && at < n) << "tensor_axis: axis " << index << " is out of range for "
                                   << tv->describe() << ", which has " << n << " axes";
    const ir::IterDomain* id = (*ids)[static_cast<size_t>(at)];
    SchedlabAxisInfo a{};
    a.id = id->id();
    a.iter_type = static_cast<int32_t>(id->iter_type());
    a.parallel_type = static_cast<int32_t>(id->parallel_type());
    a.loop_transform = static_cast<int32_t>(id->loop_transform());
    a.extent = id->extent().evaluate(s->segment->sizes).value_or(-1);
    a.extent_expr = keep(s, id->extent().str());
    write_out(out, a, "tensor_axis");
  });
}

int32_t api_tensor_producers(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor** items,
                             int32_t capacity, int32_t* count) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_producers");
    std::vector<TensorView*> r;
    if (tv->definition() != nullptr)
      for (ir::Val* v : tv->definition()->inputs())
        if (auto* p = v->as<TensorView>();
            p != nullptr && std::find(r.begin(), r.end(), p) == r.end())
          r.push_back(p);
    fill(r, items, capacity, count, "tensor_producers");
  });
}

int32_t api_tensor_consumers(SchedlabSegment* s, SchedlabTensor* t, SchedlabTensor** items,
                             int32_t capacity, int32_t* count) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "tensor_consumers");
    std::vector<TensorView*> r;
    for (ir::Expr* e : tv->uses())
      if (std::find(r.begin(), r.end(), e->out()) == r.end()) r.push_back(e->out());
    fill(r, items, capacity, count, "tensor_consumers");
  });
}

// ---- a tensor's definition (ABI 1.7)

/// t's definition, or null for an input (checked: t belongs to s).
const ir::Expr* definition_of(SchedlabSegment* s, SchedlabTensor* t, const char* fn) {
  return tensor(s, t, fn)->definition();
}

int32_t api_tensor_definition(SchedlabSegment* s, SchedlabTensor* t, SchedlabDefinition* out) {
  return guard([&] {
    const ir::Expr* e = definition_of(s, t, "tensor_definition");
    SchedlabDefinition d{};
    d.op_kind = e == nullptr ? SCHEDLAB_OP_NONE : static_cast<int32_t>(e->kind()) + 1;
    std::vector<int32_t> axes;
    if (e != nullptr) {
      d.noperands = static_cast<int32_t>(e->inputs().size());
      if (const auto* ls = e->as<ir::LoadStoreOp>()) {
        d.load_store_op = static_cast<int32_t>(ls->op());
        d.cache_op = static_cast<int32_t>(ls->cache_op());
      } else if (const auto* p = e->as<ir::PermuteOp>()) {
        axes.assign(p->new2old().begin(), p->new2old().end());
      } else if (const auto* b = e->as<ir::BroadcastOp>()) {
        for (bool is_new : b->is_broadcast_dim()) axes.push_back(is_new ? 1 : 0);
      }
    }
    d.naxes = static_cast<int32_t>(axes.size());
    if (!axes.empty()) {
      s->arrays.push_back(std::move(axes));
      d.axes = s->arrays.back().data();
    }
    write_out(out, d, "tensor_definition");
  });
}

int32_t api_tensor_operand(SchedlabSegment* s, SchedlabTensor* t, int32_t index,
                           SchedlabOperand* out) {
  return guard([&] {
    const ir::Expr* e = definition_of(s, t, "tensor_operand");
    const int32_t n = e == nullptr ? 0 : static_cast<int32_t>(e->inputs().size());
    user_assert(index >= 0 && index < n)
        << "tensor_operand: operand " << index << " is out of range for "
        << reinterpret_cast<TensorView*>(t)->describe() << ", whose definition has " << n
        << " operands";
    ir::Val* v = e->inputs()[static_cast<size_t>(index)];
    SchedlabOperand o{};
    o.dtype = static_cast<int32_t>(v->dtype());
    o.text = keep(s, v->str());
    if (auto* tv = v->as<TensorView>()) {
      o.kind = SCHEDLAB_OPERAND_TENSOR;
      o.tensor = handle(tv);
    } else if (const auto* c = v->as<ir::Scalar>(); c != nullptr && c->is_size()) {
      o.kind = SCHEDLAB_OPERAND_SIZE;
      o.value = c->evaluate(s->segment->sizes).value_or(std::numeric_limits<double>::quiet_NaN());
    } else {
      o.kind = SCHEDLAB_OPERAND_CONSTANT;
      o.value = v->as<ir::Scalar>()->value();
    }
    write_out(out, o, "tensor_operand");
  });
}

// ---- queries

int32_t api_max_inline_position(SchedlabSegment* s, SchedlabTensor* t, int32_t* pos) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "max_inline_position");
    check_out(pos, "max_inline_position", "pos");
    *pos = sched::max_inline_position(tv);
  });
}

int32_t api_get_reduction_tvs(SchedlabSegment* s, SchedlabTensor** items, int32_t capacity,
                              int32_t* count) {
  return guard([&] {
    fill(sched::get_reduction_tvs(*segment(s, "get_reduction_tvs").fusion), items, capacity, count,
         "get_reduction_tvs");
  });
}

int32_t api_find_reference(SchedlabSegment* s, SchedlabTensor** out) {
  return guard([&] {
    const ir::Fusion& f = *segment(s, "find_reference").fusion;
    check_out(out, "find_reference");
    *out = handle(sched::find_reference_for(f));
  });
}

int32_t api_group_inputs_outputs_by_inner_dim(SchedlabSegment* s, SchedlabTensor** items,
                                              int32_t* groups, int32_t capacity, int32_t* count) {
  constexpr const char* fn = "group_inputs_outputs_by_inner_dim";
  return guard([&] {
    auto gs = sched::group_inputs_outputs_by_inner_dim(*segment(s, fn).fusion);
    std::vector<TensorView*> flat;
    std::vector<int32_t> ids;
    for (size_t g = 0; g < gs.size(); ++g)
      for (TensorView* tv : gs[g]) {
        flat.push_back(tv);
        ids.push_back(static_cast<int32_t>(g));
      }
    if (capacity > 0 && groups == nullptr) abi_error(fn, "groups is null with a positive capacity");
    fill(flat, items, capacity, count, fn);
    for (size_t i = 0; i < std::min(ids.size(), static_cast<size_t>(std::max(capacity, 0))); ++i)
      groups[i] = ids[i];
  });
}

int32_t api_is_dependency_of(SchedlabSegment* s, SchedlabTensor* v, SchedlabTensor* of,
                             int32_t* result) {
  return guard([&] {
    TensorView* a = tensor(s, v, "is_dependency_of", "v");
    TensorView* b = tensor(s, of, "is_dependency_of", "of");
    check_out(result, "is_dependency_of", "result");
    *result = sched::is_dependency_of(a, b) ? 1 : 0;
  });
}

int32_t api_vals_between(SchedlabSegment* s, SchedlabTensor* const* from, int32_t n_from,
                         SchedlabTensor* const* to, int32_t n_to, SchedlabTensor** items,
                         int32_t capacity, int32_t* count) {
  return guard([&] {
    auto f = tensors(s, from, n_from, "vals_between", "from");
    auto t = tensors(s, to, n_to, "vals_between", "to");
    fill(sched::vals_between(f, t), items, capacity, count, "vals_between");
  });
}

int32_t api_axes_mapped(SchedlabSegment* s, SchedlabTensor* a, int32_t a_axis, SchedlabTensor* b,
                        int32_t b_axis, int32_t exact, int32_t* result) {
  return guard([&] {
    TensorView* ta = tensor(s, a, "_axes_mapped", "a");
    TensorView* tb = tensor(s, b, "_axes_mapped", "b");
    check_out(result, "_axes_mapped", "result");
    const ir::Fusion& f = *s->segment->fusion;
    const size_t m = exact != 0 ? 0 : 1;
    if (!s->loop_maps[m] || s->loop_maps_ids[m] != f.iter_domains().size()) {
      s->loop_maps[m] = std::make_unique<sched::LoopMap>(
          f, exact != 0 ? sched::LoopMap::Mode::Exact : sched::LoopMap::Mode::Permissive);
      s->loop_maps_ids[m] = f.iter_domains().size();
    }
    *result = s->loop_maps[m]->mapped(ta->axis(a_axis), tb->axis(b_axis)) ? 1 : 0;
  });
}

// ---- debug printing

int32_t api_print_tensor(SchedlabSegment* s, SchedlabTensor* t, const char** text) {
  return guard([&] {
    TensorView* tv = tensor(s, t, "print_tensor");
    check_out(text, "print_tensor", "text");
    *text = keep(s, sched::print_tensor(tv));
  });
}

int32_t api_print_scheduled_fusion(SchedlabSegment* s, const char** text) {
  return guard([&] {
    const ir::Fusion& f = *segment(s, "print_scheduled_fusion").fusion;
    check_out(text, "print_scheduled_fusion", "text");
    *text = keep(s, sched::print_scheduled_fusion(f));
  });
}

}  // namespace

void add_query_entries(SchedlabHostApi& t) {
  t.segment_name = &api_segment_name;
  t.segment_tensors = &api_segment_tensors;
  t.segment_size = &api_segment_size;
  t.device_properties = &api_device_properties;
  t.tensor_info = &api_tensor_info;
  t.tensor_axis = &api_tensor_axis;
  t.tensor_producers = &api_tensor_producers;
  t.tensor_consumers = &api_tensor_consumers;
  t.max_inline_position = &api_max_inline_position;
  t.get_reduction_tvs = &api_get_reduction_tvs;
  t.find_reference = &api_find_reference;
  t.group_inputs_outputs_by_inner_dim = &api_group_inputs_outputs_by_inner_dim;
  t.is_dependency_of = &api_is_dependency_of;
  t.vals_between = &api_vals_between;
  t.print_tensor = &api_print_tensor;
  t.print_scheduled_fusion = &api_print_scheduled_fusion;
  t._axes_mapped = &api_axes_mapped;
  t.offered_by_segmenter = &api_offered_by_segmenter;
  t.tensor_definition = &api_tensor_definition;
  t.tensor_operand = &api_tensor_operand;
}

}  // namespace schedlab::plugin
