// The communicator over MPI_COMM_WORLD (docs/multi-device.md, Ranks).
//
// Every collective first exchanges a small header (dtype, shape, whether an
// error bound travels) so that a rank whose tensor disagrees is an internal
// error on every rank, naming the ranks, instead of a hang or a wrong
// interleaving. Reductions never use MPI's reduction operators: the values
// travel as they are and each rank combines them itself, in f64 and in rank
// order, and rounds once to the dtype, so that every rank gets the same bits
// whatever MPI's reduction tree would have done.
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/ir/dtype.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/ir/printer.h"
#include "schedlab/runtime/communicator.h"

namespace schedlab::runtime {
namespace {

/// The process that called MPI_Init: a child forked after it (isolation)
/// inherits the atexit handler and must not finalize the parent's MPI.
pid_t g_init_pid = 0;

void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (::getpid() == g_init_pid && !finalized) MPI_Finalize();
}

/// MPI_Init once per process, MPI_Finalize when it exits (std::exit included:
/// the CLI ends through it). Leaves an MPI someone else initialised alone.
void ensure_mpi() {
  static std::once_flag once;
  std::call_once(once, [] {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) return;
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    g_init_pid = ::getpid();
    std::atexit(finalize_at_exit);
  });
}

int mpi_count(size_t n) {
  internal_assert(n <= static_cast<size_t>(std::numeric_limits<int>::max()))
      << "a collective of " << n << " values; MPI counts are int";
  return static_cast<int>(n);
}

/// One rank's tensor as the others see it before any data moves.
struct Header {
  ir::DataType dtype = ir::DataType::F64;
  std::vector<int64_t> shape;
  bool has_error = false;
  std::string str() const {
    return std::string(ir::dtype_name(dtype)) + " " + ir::shape_str(shape);
  }
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    ensure_mpi();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "mpi"; }

  void allreduce(ref::HostTensor& t, ir::ReductionOpType op) override {
    const std::vector<Header> h = headers(t, "allreduce");
    expect_same(h, -1, "allreduce");
    const size_t n = t.data.size();
    const std::vector<double> data = allgather_equal(t.data);
    std::vector<double> error;
    if (any_error(h)) error = allgather_equal(error_or_zeros(t));
    for (size_t i = 0; i < n; ++i) {
      combine(data, error, i, n, op, t.dtype, t.data[i], error.empty() ? nullptr : &t.error, i);
    }
    if (error.empty()) t.error.clear();
  }

  ref::HostTensor allgather(const ref::HostTensor& piece, int axis) override {
    const std::vector<Header> h = headers(piece, "allgather");
    expect_same(h, check_axis(piece, axis, "allgather"), "allgather");
    return ref::concat_axis(gather(piece, h, /*root=*/-1), axis);
  }

  ref::HostTensor gather_to_root(const ref::HostTensor& piece, int axis) override {
    const std::vector<Header> h = headers(piece, "gather_to_root");
    expect_same(h, check_axis(piece, axis, "gather_to_root"), "gather_to_root");
    std::vector<ref::HostTensor> pieces = gather(piece, h, /*root=*/0);
    if (rank_ != 0) return {};
    return ref::concat_axis(pieces, axis);
  }

  ref::HostTensor reduce_scatter(const ref::HostTensor& t, int axis,
                                 ir::ReductionOpType op) override {
    const std::vector<Header> h = headers(t, "reduce_scatter");
    expect_same(h, -1, "reduce_scatter");
    check_axis(t, axis, "reduce_scatter");
    internal_assert(t.shape[axis] % size_ == 0)
        << "reduce_scatter: axis " << axis << " of " << h[rank_].str() << " is not a multiple of "
        << size_ << " ranks";
    // Chunk s of every rank goes to rank s (MPI_Alltoall), values then error
    // bounds; rank r combines the chunks r it received, in rank order.
    const bool with_error = any_error(h);
    ref::HostTensor whole = t;
    if (with_error) whole.error = error_or_zeros(t);
    std::vector<double> send;
    ref::HostTensor mine;
    for (int s = 0; s < size_; ++s) {
      ref::HostTensor c = ref::slice_axis(whole, axis, s, size_);
      send.insert(send.end(), c.data.begin(), c.data.end());
      send.insert(send.end(), c.error.begin(), c.error.end());
      if (s == rank_) mine = std::move(c);
    }
    const size_t n = mine.data.size();
    const size_t block = with_error ? 2 * n : n;
    std::vector<double> recv(block * size_);
    MPI_Alltoall(send.data(), mpi_count(block), MPI_DOUBLE, recv.data(), mpi_count(block),
                 MPI_DOUBLE, MPI_COMM_WORLD);
    // As allgather_equal lays them out: every rank's values, then every
    // rank's error bounds.
    std::vector<double> data(n * size_), error(with_error ? n * size_ : 0);
    for (int r = 0; r < size_; ++r) {
      std::copy_n(recv.begin() + r * block, n, data.begin() + r * n);
      if (with_error) std::copy_n(recv.begin() + r * block + n, n, error.begin() + r * n);
    }
    for (size_t i = 0; i < n; ++i)
      combine(data, error, i, n, op, t.dtype, mine.data[i], with_error ? &mine.error : nullptr, i);
    return mine;
  }

  double max_over_ranks(double v) override {
    double out = v;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
  }

  bool all(bool ok) override {
    int in = ok ? 1 : 0, out = 0;
    MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return out != 0;
  }

 private:
  int check_axis(const ref::HostTensor& t, int axis, const char* what) const {
    internal_assert(axis >= 0 && axis < static_cast<int>(t.shape.size()))
        << what << " on rank " << rank_ << ": axis " << axis << " of a " << t.shape.size()
        << "-D tensor";
    return axis;
  }

  /// Every rank's header, in rank order. The rank (number of axes) travels
  /// first so that the shapes can be exchanged in one fixed-size call.
  std::vector<Header> headers(const ref::HostTensor& t, const char* what) const {
    internal_assert(t.data.size() == static_cast<size_t>(t.numel()) &&
                    (t.error.empty() || t.error.size() == t.data.size()))
        << what << " on rank " << rank_ << ": " << t.data.size() << " values and " << t.error.size()
        << " error bounds for shape " << ir::shape_str(t.shape);
    int64_t ndim = static_cast<int64_t>(t.shape.size()), max_ndim = 0;
    MPI_Allreduce(&ndim, &max_ndim, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    // dtype, has_error, ndim, then the extents padded with -1.
    std::vector<int64_t> mine(3 + max_ndim, -1);
    mine[0] = static_cast<int64_t>(t.dtype);
    mine[1] = t.error.empty() ? 0 : 1;
    mine[2] = ndim;
    std::copy(t.shape.begin(), t.shape.end(), mine.begin() + 3);
    const int w = mpi_count(mine.size());
    std::vector<int64_t> all(mine.size() * size_);
    MPI_Allgather(mine.data(), w, MPI_INT64_T, all.data(), w, MPI_INT64_T, MPI_COMM_WORLD);
    std::vector<Header> h(size_);
    for (int r = 0; r < size_; ++r) {
      const int64_t* p = all.data() + r * w;
      h[r].dtype = static_cast<ir::DataType>(p[0]);
      h[r].has_error = p[1] != 0;
      h[r].shape.assign(p + 3, p + 3 + p[2]);
    }
    return h;
  }

  /// Every rank's header has rank 0's dtype and shape (but on `axis`, when
  /// it is not -1); an internal error naming the first rank that differs,
  /// raised on every rank alike.
  static void expect_same(const std::vector<Header>& h, int axis, const char* what) {
    for (size_t r = 1; r < h.size(); ++r) {
      std::vector<int64_t> a = h[0].shape, b = h[r].shape;
      if (axis >= 0 && a.size() == b.size()) b[axis] = a[axis];
      internal_assert(h[r].dtype == h[0].dtype && a == b)
          << what << (axis >= 0 ? fmt::format(" along axis {}", axis) : std::string()) << ": rank "
          << r << " has " << h[r].str() << ", rank 0 has " << h[0].str()
          << "; expected the same dtype and shape on every rank"
          << (axis >= 0 ? " (but on the gathered axis)" : "");
    }
  }

  static bool any_error(const std::vector<Header>& h) {
    for (const Header& x : h)
      if (x.has_error) return true;
    return false;
  }

  static std::vector<double> error_or_zeros(const ref::HostTensor& t) {
    return t.error.empty() ? std::vector<double>(t.data.size(), 0.0) : t.error;
  }

  /// Every rank's `v` (the same length on every rank), in rank order.
  std::vector<double> allgather_equal(const std::vector<double>& v) const {
    std::vector<double> out(v.size() * size_);
    MPI_Allgather(v.data(), mpi_count(v.size()), MPI_DOUBLE, out.data(), mpi_count(v.size()),
                  MPI_DOUBLE, MPI_COMM_WORLD);
    return out;
  }

  /// Every rank's piece on every rank (root -1) or on `root` only (the others
  /// get none): values and, when any rank has one, error bounds.
  std::vector<ref::HostTensor> gather(const ref::HostTensor& piece, const std::vector<Header>& h,
                                      int root) const {
    const bool with_error = any_error(h);
    std::vector<int> counts(size_), displs(size_);
    size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      int64_t n = 1;
      for (int64_t e : h[r].shape) n *= e;
      counts[r] = mpi_count(n);
      displs[r] = mpi_count(total);
      total += n;
    }
    const bool receive = root < 0 || root == rank_;
    auto exchange = [&](const std::vector<double>& mine) {
      std::vector<double> all(receive ? total : 0);
      if (root < 0)
        MPI_Allgatherv(mine.data(), mpi_count(mine.size()), MPI_DOUBLE, all.data(), counts.data(),
                       displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
      else
        MPI_Gatherv(mine.data(), mpi_count(mine.size()), MPI_DOUBLE, all.data(), counts.data(),
                    displs.data(), MPI_DOUBLE, root, MPI_COMM_WORLD);
      return all;
    };
    const std::vector<double> data = exchange(piece.data);
    const std::vector<double> error =
        with_error ? exchange(error_or_zeros(piece)) : std::vector<double>{};
    std::vector<ref::HostTensor> pieces;
    if (!receive) return pieces;
    for (int r = 0; r < size_; ++r) {
      ref::HostTensor p{h[r].dtype, h[r].shape, {}};
      p.data.assign(data.begin() + displs[r], data.begin() + displs[r] + counts[r]);
      if (with_error)
        p.error.assign(error.begin() + displs[r], error.begin() + displs[r] + counts[r]);
      pieces.push_back(std::move(p));
    }
    return pieces;
  }

  /// Element i of the ranks' values (`data` holds size() runs of `n`, in rank
  /// order) combined by `op` in f64 in rank order and rounded once to
  /// `dtype`, into `out`; with error bounds (`error` laid out as `data`), the
  /// combined bound into (*out_error)[j]: the bounds of a sum add, of a max or
  /// min the largest counts, of a product each bound times the other factors
  /// (first order); plus the rounding this step adds.
  void combine(const std::vector<double>& data, const std::vector<double>& error, size_t i,
               size_t n, ir::ReductionOpType op, ir::DataType dtype, double& out,
               std::vector<double>* out_error, size_t j) const {
    double acc = data[i];
    for (int r = 1; r < size_; ++r) acc = ir::apply_reduction(op, acc, data[r * n + i]);
    out = ir::round_to_dtype(acc, dtype);
    if (out_error == nullptr || error.empty()) return;
    double e = 0;
    for (int r = 0; r < size_; ++r) {
      const double er = error[r * n + i];
      switch (op) {
        case ir::ReductionOpType::Sum:
          e += er;
          break;
        case ir::ReductionOpType::Max:
        case ir::ReductionOpType::Min:
          e = std::max(e, er);
          break;
        case ir::ReductionOpType::Prod: {
          double others = 1;
          for (int s = 0; s < size_; ++s)
            if (s != r) others *= std::fabs(data[s * n + i]);
          e += er * others;
          break;
        }
      }
    }
    if (out_error->size() != n) out_error->assign(n, 0.0);
    (*out_error)[j] = e + std::fabs(out - acc);
  }

  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator() {
  return std::make_unique<MpiCommunicator>();
}

}  // namespace schedlab::runtime
