#include "schedlab/ir/mesh.h"

#include <set>

#include "schedlab/base/error.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::ir {

std::string DeviceMesh::str() const {
  std::string s = "[";
  for (size_t i = 0; i < devices.size(); ++i) s += (i ? ", " : "") + std::to_string(devices[i]);
  return s + "]";
}

DeviceMesh DeviceMesh::of_size(int n) {
  user_assert(n >= 1) << "a device mesh needs at least one device, found size " << n;
  DeviceMesh m;
  for (int i = 0; i < n; ++i) m.devices.push_back(i);
  return m;
}

const std::optional<DeviceMesh>& device_mesh(const Fusion& f) {
  return f.mesh_;
}

void set_device_mesh(Fusion& f, const DeviceMesh& mesh) {
  user_assert(!mesh.devices.empty()) << "fusion '" << f.name()
                                     << "': expected a device mesh of at least one device, "
                                        "found an empty one";
  std::set<int> seen;
  for (int d : mesh.devices) {
    user_assert(d >= 0) << "fusion '" << f.name() << "': device mesh " << mesh.str()
                        << " names device " << d << "; expected non-negative device numbers";
    user_assert(seen.insert(d).second)
        << "fusion '" << f.name() << "': device mesh " << mesh.str() << " names device " << d
        << " twice; expected distinct devices";
  }
  user_assert(!f.mesh_ || *f.mesh_ == mesh)
      << "fusion '" << f.name() << "' already has device mesh " << f.mesh_->str()
      << "; expected one mesh per fusion, found a second, " << mesh.str();
  f.mesh_ = mesh;
}

namespace {

Fusion& owner(const TensorView* tv) {
  internal_assert(tv && tv->fusion()) << "sharding a tensor with no fusion";
  return *tv->fusion();
}

}  // namespace

void shard(TensorView* tv, int axis) {
  Fusion& f = owner(tv);
  user_assert(f.mesh_) << "shard: " << tv->describe() << " axis " << axis
                       << ": the fusion has no device mesh; expected set_device_mesh (`mesh:`) "
                          "before sharding";
  int n = tv->nlogical();
  user_assert(axis >= -n && axis < n)
      << "shard: axis " << axis << " is out of range for " << tv->describe() << " of rank " << n
      << "; expected an axis in [" << -n << ", " << n - 1 << "]";
  int a = axis < 0 ? axis + n : axis;
  const IterDomain* id = tv->logical()[static_cast<size_t>(a)];
  user_assert(!id->is_reduction() && !id->is_broadcast())
      << "shard: axis " << a << " of " << tv->describe() << " is a "
      << (id->is_reduction() ? "Reduction" : "Broadcast") << " axis (" << id->str()
      << "); expected an Iteration axis";
  f.shardings_[tv->number()] = Sharding{a};
}

void replicate(TensorView* tv) {
  owner(tv).shardings_[tv->number()] = Sharding{};
}

std::optional<Sharding> declared_sharding(const TensorView* tv) {
  const Fusion& f = owner(tv);
  auto it = f.shardings_.find(tv->number());
  if (it == f.shardings_.end()) return std::nullopt;
  return it->second;
}

}  // namespace schedlab::ir
