// Device meshes and DIDx sharding (docs/multi-device.md).
//
// A fusion runs on one 1-D device mesh: rank i of the mesh runs on device
// devices[i] (one MPI rank per device). A tensor is either replicated (every
// rank holds all of it) or sharded on one logical axis: that axis is split
// outer by the mesh size, the outer part bound to DIDx, so rank r holds the
// r-th contiguous chunk of extent E / D (E must be a multiple of D).
//
// Sharding is declared on the unscheduled fusion (nvFuser's
// multidevice_schedule comes before segmentation too): by the fusion text's
// `mesh:` and `shard:` keys, or by ir::set_device_mesh / shard / replicate.
// Tensors nobody declared take their sharding from their producers
// (lower::plan_communication propagates it); where a declared sharding
// differs from what the producers give, the plan inserts a communication.
// Schedules of the local fusions never see DIDx: the plan hands each
// scheduler a fusion over local extents.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace schedlab::ir {

class Fusion;
class TensorView;

struct DeviceMesh {
  std::vector<int> devices;  ///< rank i runs on device devices[i]
  int size() const { return static_cast<int>(devices.size()); }
  bool operator==(const DeviceMesh& o) const { return devices == o.devices; }
  /// "[0, 1, 2, 3]"
  std::string str() const;
  /// [0, 1, ..., n-1]: what `--mesh N` and a sweep's `mesh: N` mean.
  static DeviceMesh of_size(int n);
};

/// A tensor's declared layout over the mesh: `axis` is a logical axis
/// index (Reduction axes counted, as TensorView::logical()) that is sharded,
/// or kReplicated.
struct Sharding {
  static constexpr int kReplicated = -1;
  int axis = kReplicated;
  bool sharded() const { return axis != kReplicated; }
  bool operator==(const Sharding& o) const { return axis == o.axis; }
};

/// The fusion's mesh, if it has one (a fusion without one runs on one rank).
const std::optional<DeviceMesh>& device_mesh(const Fusion& f);
/// Sets the fusion's mesh (nvFuser's setDeviceMesh takes a tensor; one mesh
/// per fusion here, so `tv` only has to belong to `f`). user_error naming
/// the tensor when a different mesh was already set, or when the mesh is
/// empty or names a device twice.
void set_device_mesh(Fusion& f, const DeviceMesh& mesh);
/// Declares `tv` sharded on logical axis `axis` (negative counts from the
/// end). user_error naming the tensor and axis: out of range, a Reduction or
/// Broadcast axis, or no mesh set on the fusion.
void shard(TensorView* tv, int axis);
/// Declares `tv` replicated (an allgather where its producer is sharded).
void replicate(TensorView* tv);
/// The declaration, if any (undeclared tensors are propagated by the plan).
std::optional<Sharding> declared_sharding(const TensorView* tv);

}  // namespace schedlab::ir
