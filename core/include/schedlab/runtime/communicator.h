// Collectives between the ranks of a device mesh (docs/multi-device.md):
// one interface, a one-rank implementation, and MPI (Open MPI from Debian,
// find_package(MPI)). One process per rank; rank i runs on device i of the
// mesh. Values travel as ref::HostTensor (host staging on every backend);
// NCCL on device buffers is the CUDA path's later step (docs/multi-device.md
// says what is missing).
//
// Owns: the collectives' semantics (order of ranks, rounding to the dtype),
// which launcher started this process, MPI's init and finalize.
// May depend on: base, ir, ref (HostTensor and its slicing).
// Invariants:
//   - Every collective is called by every rank in the same order (SPMD);
//     the pieces of a sharded axis are in rank order.
//   - A reduction combines the ranks' values in f64, in rank order, and
//     rounds once to the tensor's dtype, so every rank gets identical bits.
//   - MPI_Init runs only in a process a launcher started (or that asked for
//     more than one rank); a plain `schedlab exec` never touches MPI.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/ir/ir.h"
#include "schedlab/ref/tensor.h"

namespace schedlab::runtime {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "self", "mpi", "nccl".
  virtual std::string name() const = 0;

  /// Every rank's `t` (same shape and dtype on every rank) combined
  /// elementwise by `op`; every rank gets the result.
  virtual void allreduce(ref::HostTensor& t, ir::ReductionOpType op) = 0;
  /// The ranks' pieces concatenated along data axis `axis`, in rank order,
  /// on every rank.
  virtual ref::HostTensor allgather(const ref::HostTensor& piece, int axis) = 0;
  /// The elementwise reduction of every rank's `t`, cut along `axis` into
  /// size() chunks; rank r gets chunk r.
  virtual ref::HostTensor reduce_scatter(const ref::HostTensor& t, int axis,
                                         ir::ReductionOpType op) = 0;
  /// allgather, but only rank 0 gets the result (others: an empty tensor).
  virtual ref::HostTensor gather_to_root(const ref::HostTensor& piece, int axis) = 0;
  /// The largest `v` over the ranks, on every rank (the slowest rank's time).
  virtual double max_over_ranks(double v) = 0;
  /// True on every rank when `ok` is true on every rank.
  virtual bool all(bool ok) = 0;
};

/// A mesh of one: collectives are identities.
std::unique_ptr<Communicator> make_self_communicator();
/// MPI_COMM_WORLD (MPI_Init on first call; MPI_Finalize at exit).
std::unique_ptr<Communicator> make_mpi_communicator();
/// NCCL over the ranks of MPI_COMM_WORLD (docs/multi-device.md, NCCL):
/// libnccl.so.2 (or $SCHEDLAB_NCCL_LIBRARY) dlopen'd, rank r on CUDA device
/// devices[r] mod the visible count (devices empty: r), the unique id
/// broadcast from rank 0 through MPI. Allreduce, allgather and reduce-scatter
/// go through NCCL on device buffers; gather_to_root, max_over_ranks, all,
/// tensors that carry error bounds, bool tensors and allgathers of unequal
/// pieces through MPI. Returns nullptr on every rank alike, the reason in
/// *why, when on any rank the library, a symbol, the device or
/// ncclCommInitRank fails. A failing NCCL call is a user_error naming the
/// call and ncclGetErrorString's text.
std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<int>& devices = {},
                                                     std::string* why = nullptr);
/// The communicator of this process: no launcher, self; under a launcher,
/// NCCL when `cuda_backend` and make_nccl_communicator succeeds, else MPI
/// (a CUDA run says why on stderr in one line, on rank 0). With
/// `cuda_backend` it starts the driver: narrow CUDA_VISIBLE_DEVICES first.
std::unique_ptr<Communicator> make_communicator(bool cuda_backend,
                                                const std::vector<int>& devices = {});

/// The world size a launcher gave this process (mpirun: OMPI_COMM_WORLD_SIZE
/// or PMI_SIZE; srun: SLURM_NTASKS with SLURM_PROCID), or nullopt when no
/// launcher started it.
std::optional<int> launcher_world_size();

/// What launcher_command decides by, read from this process by
/// launch_environment() (a parameter so that tests can vary it).
struct LaunchEnvironment {
  bool root = false;          ///< geteuid() == 0: mpirun needs --allow-run-as-root
  bool in_slurm_job = false;  ///< SLURM_JOB_ID is set: srun starts the ranks
  std::string mpirun;         ///< the mpirun of the MPI found at configure time, else "mpirun"
};
LaunchEnvironment launch_environment();

/// The command that starts `n` ranks of `argv` (this program and its
/// arguments): `mpirun -n N --oversubscribe` (with --allow-run-as-root as
/// root, and the shared-memory transports only, `--mca btl self,vader`, so it
/// works without a network), or `srun --mpi=pmix -n N` inside a Slurm
/// allocation.
std::vector<std::string> launcher_command(int n, const std::vector<std::string>& argv,
                                          const LaunchEnvironment& env);
std::vector<std::string> launcher_command(int n, const std::vector<std::string>& argv);

}  // namespace schedlab::runtime
