// The communicator over NCCL (docs/multi-device.md, NCCL): libnccl.so.2
// dlopen'd as the driver is, host tensors staged to device buffers through
// the driver (DeviceBuffers, cuda_backend.h), MPI beside it for the unique
// id, the shape checks and everything NCCL has no call for.
//
// Every decision that picks NCCL or MPI for a collective is made from the
// headers every rank exchanged first, so every rank picks alike (a rank on
// NCCL while another is on MPI would hang both). A mismatch between ranks
// goes to MPI, which raises the same error on every rank.
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include "nccl_api.h"
#include "schedlab/base/error.h"
#include "schedlab/ir/dtype.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/runtime/communicator.h"
#include "schedlab/runtime/cuda_backend.h"

namespace schedlab::runtime {
namespace {

/// The entry points of one loaded libnccl; `unusable` says why it cannot be
/// used (empty when it can).
struct Nccl {
  nccl::GetErrorStringFn get_error_string = nullptr;
  nccl::GetUniqueIdFn get_unique_id = nullptr;
  nccl::CommInitRankFn comm_init_rank = nullptr;
  nccl::CommDestroyFn comm_destroy = nullptr;
  nccl::CommDestroyFn comm_abort = nullptr;  ///< optional: local, waits for no peer
  nccl::AllReduceFn all_reduce = nullptr;
  nccl::AllGatherFn all_gather = nullptr;
  nccl::ReduceScatterFn reduce_scatter = nullptr;
  std::string unusable;
};

/// libnccl.so.2, or the library $SCHEDLAB_NCCL_LIBRARY names. Never
/// dlclose'd (dlopen counts references; communicators may live until exit).
Nccl load_nccl() {
  Nccl n;
  const char* env = std::getenv("SCHEDLAB_NCCL_LIBRARY");
  const std::string name = env != nullptr && *env != '\0' ? env : "libnccl.so.2";
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    n.unusable = name + " not found" + (e != nullptr ? ": " + std::string(e) : "");
    return n;
  }
  auto resolve = [&](auto& f, const char* symbol) {
    f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(dlsym(lib, symbol));
    if (f == nullptr && n.unusable.empty())
      n.unusable = fmt::format("{} lacks {} (NCCL older than 2.x?)", name, symbol);
  };
  resolve(n.get_error_string, "ncclGetErrorString");
  resolve(n.get_unique_id, "ncclGetUniqueId");
  resolve(n.comm_init_rank, "ncclCommInitRank");
  resolve(n.comm_destroy, "ncclCommDestroy");
  resolve(n.all_reduce, "ncclAllReduce");
  resolve(n.all_gather, "ncclAllGather");
  resolve(n.reduce_scatter, "ncclReduceScatter");
  n.comm_abort = reinterpret_cast<nccl::CommDestroyFn>(dlsym(lib, "ncclCommAbort"));
  return n;
}

/// "ncclInvalidUsage: <NCCL's text>" style: the result's number and
/// ncclGetErrorString's text.
std::string error_text(const Nccl& n, nccl::Result r) {
  const char* text = n.get_error_string != nullptr ? n.get_error_string(r) : nullptr;
  return fmt::format("ncclResult_t {} ({})", static_cast<int>(r),
                     text != nullptr ? text : "no description");
}

void check(const Nccl& n, nccl::Result r, const char* call) {
  user_assert(r == nccl::kSuccess) << "nccl: " << call << " failed: " << error_text(n, r);
}

/// The type a dtype travels in: the half types as f32 (exact), so that a
/// reduction rounds once to the half type, as MPI's does; none for bool.
std::optional<nccl::DataType> wire_type(ir::DataType t) {
  switch (t) {
    case ir::DataType::F16:
    case ir::DataType::BF16:
    case ir::DataType::F32:
      return nccl::kFloat32;
    case ir::DataType::F64:
      return nccl::kFloat64;
    case ir::DataType::I32:
      return nccl::kInt32;
    case ir::DataType::I64:
      return nccl::kInt64;
    case ir::DataType::Bool:
      return std::nullopt;
  }
  return std::nullopt;
}

size_t wire_bytes(nccl::DataType t) {
  return t == nccl::kFloat32 || t == nccl::kInt32 ? 4 : 8;
}

nccl::RedOp red_op(ir::ReductionOpType op) {
  switch (op) {
    case ir::ReductionOpType::Sum:
      return nccl::kSum;
    case ir::ReductionOpType::Prod:
      return nccl::kProd;
    case ir::ReductionOpType::Max:
      return nccl::kMax;
    case ir::ReductionOpType::Min:
      return nccl::kMin;
  }
  return nccl::kSum;
}

template <typename T>
void put(std::vector<char>& out, size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}
template <typename T>
T get(const std::vector<char>& in, size_t i) {
  T v;
  std::memcpy(&v, in.data() + i * sizeof(T), sizeof(T));
  return v;
}

std::vector<char> pack(const std::vector<double>& v, nccl::DataType t) {
  std::vector<char> out(v.size() * wire_bytes(t));
  for (size_t i = 0; i < v.size(); ++i) {
    switch (t) {
      case nccl::kFloat32:
        put(out, i, static_cast<float>(v[i]));
        break;
      case nccl::kFloat64:
        put(out, i, v[i]);
        break;
      case nccl::kInt32:
        put(out, i, static_cast<int32_t>(v[i]));
        break;
      default:
        put(out, i, static_cast<int64_t>(v[i]));
        break;
    }
  }
  return out;
}

/// The values of `bytes` as `dtype` holds them: a half type rounded once
/// from the f32 it travelled in.
std::vector<double> unpack(const std::vector<char>& bytes, nccl::DataType t, ir::DataType dtype) {
  std::vector<double> out(bytes.size() / wire_bytes(t));
  for (size_t i = 0; i < out.size(); ++i) {
    switch (t) {
      case nccl::kFloat32:
        out[i] = get<float>(bytes, i);
        break;
      case nccl::kFloat64:
        out[i] = get<double>(bytes, i);
        break;
      case nccl::kInt32:
        out[i] = get<int32_t>(bytes, i);
        break;
      default:
        out[i] = static_cast<double>(get<int64_t>(bytes, i));
        break;
    }
    if (ir::is_half(dtype)) out[i] = ir::round_to_dtype(out[i], dtype);
  }
  return out;
}

/// A device buffer, freed however the collective ends.
class Buffer {
 public:
  Buffer(DeviceBuffers& b, size_t bytes) : b_(b), p_(b.alloc(bytes)) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    try {
      b_.free(p_);
    } catch (const std::exception&) {  // a failed free must not mask the error
    }
  }
  void* get() const { return p_; }

 private:
  DeviceBuffers& b_;
  void* p_;
};

/// Axes the header exchange carries; a tensor of more axes goes through MPI.
constexpr int kHeaderAxes = 8;

/// One rank's tensor as the others see it before any data moves.
struct Header {
  int dtype = 0;
  bool has_error = false;
  int ndim = 0;
  std::vector<int64_t> shape;  ///< the first kHeaderAxes extents
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Nccl lib, std::unique_ptr<Communicator> mpi,
                   std::unique_ptr<DeviceBuffers> buffers, nccl::Comm comm)
      : lib_(std::move(lib)), mpi_(std::move(mpi)), buffers_(std::move(buffers)), comm_(comm) {}
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  ~NcclCommunicator() override {
    try {
      buffers_->make_current();
    } catch (const std::exception&) {
    }
    lib_.comm_destroy(comm_);
  }

  int rank() const override { return mpi_->rank(); }
  int size() const override { return mpi_->size(); }
  std::string name() const override { return "nccl"; }

  void allreduce(ref::HostTensor& t, ir::ReductionOpType op) override {
    const std::optional<nccl::DataType> wire = on_nccl(t, true);
    if (!wire) return mpi_->allreduce(t, op);
    const size_t n = t.data.size();
    const std::vector<char> out = run(
        "ncclAllReduce", pack(t.data, *wire), n * wire_bytes(*wire), [&](const void* s, void* r) {
          return lib_.all_reduce(s, r, n, *wire, red_op(op), comm_, nullptr);
        });
    t.data = unpack(out, *wire, t.dtype);
  }

  ref::HostTensor allgather(const ref::HostTensor& piece, int axis) override {
    const std::optional<nccl::DataType> wire =
        on_nccl(piece, axis >= 0 && axis < static_cast<int>(piece.shape.size()));
    if (!wire) return mpi_->allgather(piece, axis);
    const size_t n = piece.data.size();
    const std::vector<char> out = run(
        "ncclAllGather", pack(piece.data, *wire), n * size() * wire_bytes(*wire),
        [&](const void* s, void* r) { return lib_.all_gather(s, r, n, *wire, comm_, nullptr); });
    const std::vector<double> all = unpack(out, *wire, piece.dtype);
    std::vector<ref::HostTensor> pieces(static_cast<size_t>(size()));
    for (size_t r = 0; r < pieces.size(); ++r) {
      pieces[r] = ref::HostTensor{piece.dtype, piece.shape, {}};
      pieces[r].data.assign(all.begin() + static_cast<ptrdiff_t>(r * n),
                            all.begin() + static_cast<ptrdiff_t>((r + 1) * n));
    }
    return ref::concat_axis(pieces, axis);
  }

  ref::HostTensor reduce_scatter(const ref::HostTensor& t, int axis,
                                 ir::ReductionOpType op) override {
    // An axis out of range or not a multiple of the ranks: MPI's error.
    const std::optional<nccl::DataType> wire =
        on_nccl(t, axis >= 0 && axis < static_cast<int>(t.shape.size()) &&
                       t.shape[static_cast<size_t>(axis)] % size() == 0);
    if (!wire) return mpi_->reduce_scatter(t, axis, op);
    // NCCL hands rank r the r-th contiguous chunk: lay the chunks of `axis`
    // out one after the other.
    std::vector<double> send;
    send.reserve(t.data.size());
    ref::HostTensor mine;
    for (int s = 0; s < size(); ++s) {
      ref::HostTensor c = ref::slice_axis(t, axis, s, size());
      send.insert(send.end(), c.data.begin(), c.data.end());
      if (s == rank()) mine = std::move(c);
    }
    const size_t n = mine.data.size();
    const std::vector<char> out = run(
        "ncclReduceScatter", pack(send, *wire), n * wire_bytes(*wire), [&](const void* s, void* r) {
          return lib_.reduce_scatter(s, r, n, *wire, red_op(op), comm_, nullptr);
        });
    mine.data = unpack(out, *wire, t.dtype);
    return mine;
  }

  ref::HostTensor gather_to_root(const ref::HostTensor& piece, int axis) override {
    return mpi_->gather_to_root(piece, axis);
  }
  double max_over_ranks(double v) override { return mpi_->max_over_ranks(v); }
  bool all(bool ok) override { return mpi_->all(ok); }

 private:
  /// The type `t` travels in through NCCL, or nullopt when this collective
  /// goes through MPI (which raises the errors): on any rank a tensor with
  /// error bounds, of bool, of more than kHeaderAxes axes, whose values do
  /// not fill its shape, of another dtype or shape than rank 0's (an
  /// allgather's pieces too: NCCL gathers equal counts), or where the
  /// collective's own condition `fits` fails (the axis). Every rank decides
  /// from the same headers.
  std::optional<nccl::DataType> on_nccl(const ref::HostTensor& t, bool fits) {
    // [dtype, has error bounds, fits, number of axes, extents padded with -1]
    const int w = 4 + kHeaderAxes;
    ref::HostTensor mine{ir::DataType::F64, {1, w}, std::vector<double>(w, -1.0)};
    mine.data[0] = static_cast<double>(static_cast<int>(t.dtype));
    mine.data[1] = t.error.empty() ? 0 : 1;
    mine.data[2] = fits && t.data.size() == static_cast<size_t>(t.numel()) ? 1 : 0;
    mine.data[3] = static_cast<double>(t.shape.size());
    for (size_t i = 0; i < t.shape.size() && i < kHeaderAxes; ++i)
      mine.data[4 + i] = static_cast<double>(t.shape[i]);
    const ref::HostTensor all = mpi_->allgather(mine, 0);
    bool ok = true;
    for (int r = 0; r < size() && ok; ++r) {
      const double* h = all.data.data() + static_cast<ptrdiff_t>(r) * w;
      ok = h[1] == 0 && h[2] == 1 && h[3] <= kHeaderAxes &&
           std::equal(h, h + w, all.data.data(), [](double a, double b) { return a == b; });
    }
    return ok ? wire_type(t.dtype) : std::nullopt;
  }

  /// `send` to the device, `call` on it into a buffer of `recv_bytes`, the
  /// result back.
  template <typename F>
  std::vector<char> run(const char* call, const std::vector<char>& send, size_t recv_bytes, F&& f) {
    Buffer s(*buffers_, send.size()), r(*buffers_, recv_bytes);
    buffers_->copy_to_device(s.get(), send.data(), send.size());
    buffers_->make_current();
    check(lib_, f(s.get(), r.get()), call);
    buffers_->synchronize();
    std::vector<char> out(recv_bytes);
    buffers_->copy_to_host(out.data(), r.get(), recv_bytes);
    return out;
  }

  Nccl lib_;
  std::unique_ptr<Communicator> mpi_;
  std::unique_ptr<DeviceBuffers> buffers_;
  nccl::Comm comm_;
};

}  // namespace

std::unique_ptr<Communicator> make_nccl_communicator(const std::vector<int>& devices,
                                                     std::string* why) {
  std::unique_ptr<Communicator> mpi = make_mpi_communicator();
  const int rank = mpi->rank(), size = mpi->size();
  std::string reason;
  // Every step is agreed on by every rank before the next, so that a rank
  // without NCCL never leaves the others waiting in a collective.
  auto agree = [&](const char* what) {
    if (mpi->all(reason.empty())) return true;
    if (reason.empty()) reason = fmt::format("another rank failed {}", what);
    if (why != nullptr) *why = fmt::format("rank {}: {}", rank, reason);
    return false;
  };
  Nccl lib = load_nccl();
  reason = lib.unusable;
  std::unique_ptr<DeviceBuffers> buffers;
  if (reason.empty()) {
    const int count = cuda_device_count();
    const int wanted = static_cast<size_t>(rank) < devices.size() ? devices[rank] : rank;
    try {
      user_assert(count > 0) << "no CUDA device";
      buffers = make_cuda_device_buffers(wanted % count);
    } catch (const std::exception& e) {
      reason = e.what();
    }
  }
  if (!agree("to load NCCL or reach its device")) return nullptr;

  // Rank 0's id to every rank, with its result: [result, 128 bytes].
  nccl::UniqueId id{};
  nccl::Result made = nccl::kSuccess;
  if (rank == 0) made = lib.get_unique_id(&id);
  ref::HostTensor mine{ir::DataType::F64,
                       {1, 1 + static_cast<int64_t>(nccl::kUniqueIdBytes)},
                       std::vector<double>(1 + nccl::kUniqueIdBytes, 0.0)};
  mine.data[0] = static_cast<double>(static_cast<int>(made));
  for (size_t i = 0; i < nccl::kUniqueIdBytes; ++i)
    mine.data[1 + i] = static_cast<unsigned char>(id.internal[i]);
  const ref::HostTensor all = mpi->allgather(mine, 0);
  if (all.data[0] != 0) {
    reason = "ncclGetUniqueId failed on rank 0: " +
             error_text(lib, static_cast<nccl::Result>(static_cast<int>(all.data[0])));
    if (why != nullptr) *why = reason;
    return nullptr;
  }
  for (size_t i = 0; i < nccl::kUniqueIdBytes; ++i)
    id.internal[i] = static_cast<char>(static_cast<unsigned char>(all.data[1 + i]));

  nccl::Comm comm = nullptr;
  try {
    buffers->make_current();
    const nccl::Result r = lib.comm_init_rank(&comm, size, id, rank);
    if (r != nccl::kSuccess) {
      reason = "ncclCommInitRank failed: " + error_text(lib, r);
      comm = nullptr;
    }
  } catch (const std::exception& e) {
    reason = e.what();
  }
  if (!agree("ncclCommInitRank")) {
    if (comm != nullptr) (lib.comm_abort != nullptr ? lib.comm_abort : lib.comm_destroy)(comm);
    return nullptr;
  }
  return std::make_unique<NcclCommunicator>(std::move(lib), std::move(mpi), std::move(buffers),
                                            comm);
}

std::unique_ptr<Communicator> make_communicator(bool cuda_backend,
                                                const std::vector<int>& devices) {
  if (!launcher_world_size()) return make_self_communicator();
  if (!cuda_backend) return make_mpi_communicator();
  std::string why;
  if (std::unique_ptr<Communicator> c = make_nccl_communicator(devices, &why)) return c;
  std::unique_ptr<Communicator> mpi = make_mpi_communicator();
  if (mpi->rank() == 0)
    std::fprintf(stderr, "note: collectives go through MPI, not NCCL: %s\n", why.c_str());
  return mpi;
}

}  // namespace schedlab::runtime
