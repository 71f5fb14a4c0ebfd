// normalization/normalization.h: what the normalization plugin's files
// share (normalization.cpp has the design): the segment's Analysis, the
// paths (Path) and one split's Config with what it costs, and the functions
// of each path. analysis.cpp reads the segment; heuristic.cpp costs a split
// and chooses one; shared_path.cpp and multi_pass.cpp hold what is proper
// to those two paths; normalization.cpp is the plugin.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedlab/plugin_api/device.hpp"
#include "schedlab/plugin_api/rules.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"

namespace normalization {

namespace pa = schedlab::plugin_api;
using pa::rules::kMaxPersist;
using pa::rules::kMaxRegistersPerThread;
using pa::rules::kMaxRowThreads;
using pa::rules::kMaxVectorBytes;
using pa::rules::kReduceWorkspaceBytes;
using pa::rules::kRegisterOverhead;
using pa::rules::kTargetThreads;
using pa::rules::kWarp;

/// Registers the registers path leaves free under persistence=auto, when the
/// shared path fits instead and keeps every buffer: near the limit ptxas
/// spills (rmsnorm at N=16384 with 512 threads, K=40960, estimated 112 of 128
/// registers: 232 B of stack; layernorm at K=24576: 176 B), where the shared
/// path, conflict-free, predicts the same time with none (docs/perf.md, stop
/// 31). Not when the shared path would recompute: softmax_bf16's second exp
/// makes it issue-bound (56 % of the bandwidth at K=24576, against 89 %).
inline constexpr int64_t kRegisterHeadroom = 24;
/// The schema's maximum: vectors per thread per pass on the multi-pass path.
inline constexpr int64_t kMaxSerialPersist = 65536;
/// Smallest persist the heuristic picks while a row still spans a warp
/// (4-byte elements and wider; see min_persist for narrower ones).
inline constexpr int64_t kMinPersist = 2;

/// What the plugin learns about a segment before scheduling it.
struct Analysis {
  std::string reject;                    ///< non-empty: why the plugin cannot schedule it
  pa::TensorView ref;                    ///< the reference reduction
  std::vector<int> iter_axes, red_axes;  ///< logical positions in ref
  int64_t I = 1, R = 1;                  ///< rows and row length
  int64_t inner_extent = 1;              ///< the innermost reduced axis (vectors never cross it)
  int64_t full_rank = 0;                 ///< iteration axes of a full (unreduced) tensor
  std::vector<pa::TensorView> full_inputs, full_outputs;  ///< cacheable at full rank
  /// Tensors read both before and after a reduction (inputs: through their cache).
  std::vector<pa::TensorView> persistent;
  /// What stays persistent once the intermediates are recomputed
  /// (recompute_intermediates): the full inputs the persistent tensors are
  /// computed from (x, for softmax's e and the bf16 fusions' f32 cast of x).
  std::vector<pa::TensorView> persistent_inputs;
  int64_t widest = 1;  ///< bytes of the widest full-rank input or output
};

/// Registers one persistent element of `tv` takes.
int64_t registers_per_element(const pa::TensorView& tv);
/// The segment's Analysis; Analysis::reject says why it cannot be scheduled.
Analysis analyze(pa::Segment& seg);
/// `a` as the schedule sees it once the intermediates are recomputed: only
/// the inputs they come from persist.
Analysis with_recompute(Analysis a);

/// Where a row's persistent buffers live (the `persistence` parameter).
enum class Path {
  Registers,  ///< every buffer in registers (Local, persist * vector per thread)
  Shared,     ///< buffers in Shared memory, in order, while they fit; the rest in registers
  MultiPass,  ///< no buffer: inputs re-read, intermediates recomputed by each pass
  Grid,       ///< few long rows: each over `blocks` blocks, in registers, grid allreduces
};

/// The `persistence` parameter's name of a path.
const char* path_name(Path p);

/// One choice of the split, and what it costs.
struct Config {
  Path path = Path::Registers;
  int64_t vector = 1, persist = 1, rows = 1;
  bool cache_inputs = true;
  /// Shared path: the intermediates are recomputed by each pass and only the
  /// inputs' caches persist (with_recompute), as their own f32 buffers do not fit.
  bool recompute = false;
  std::vector<bool> in_shared;  ///< per Analysis::persistent: its buffer is Shared
  int64_t blocks = 1;           ///< grid path: blocks per row (BIDx), ceilDiv(R / vector,
                                ///< row_threads * persist)
  int64_t row_threads = 0;      ///< ceilDiv(R / vector, persist), at these sizes (grid
                                ///< path: grid_threads(), per block)
  int64_t threads = 0;          ///< per block, whole warps
  int64_t registers = 0;        ///< per thread: buffers plus overhead
  int64_t allowed = 0;          ///< per thread at this block size
  int64_t shared_bytes = 0;     ///< the Shared buffers of a block
  int64_t shared_allowed = 0;   ///< the device's limit less the block-reduction workspace
  bool fits_registers() const { return registers <= allowed; }
  bool fits_shared() const { return shared_bytes <= shared_allowed; }
  bool fits() const { return fits_registers() && fits_shared(); }
};

// ---- heuristic.cpp: what a split costs, and the heuristic's choice

/// Whether persistent tensor `t` keeps a buffer across the reductions: an
/// input only through its cache; nothing on the multi-pass path.
bool buffered(const pa::TensorView& t, const Config& c);
/// Shared memory one block may use: the opt-in limit (dynamic shared memory).
int64_t shared_limit(const pa::DeviceProperties& d);
/// Fills in what `c` costs at the segment's sizes on device `d`.
Config cost(const Analysis& a, const pa::DeviceProperties& d, Config c);
/// Rows per block: towards kTargetThreads, while every SM still gets a block.
int64_t choose_rows(const Analysis& a, const pa::DeviceProperties& d, int64_t row_threads);
/// The heuristic's split for one path (see normalization.cpp); persist = 0
/// when no split of that path fits. `divide`: then a persist that divides the row.
Config heuristic_for(const Analysis& a, const pa::DeviceProperties& d, Path path,
                     bool divide = true);
/// Whether `c` leaves kRegisterHeadroom registers free (any path but
/// registers does).
bool roomy(const Config& c);
/// The first path that fits: registers (while roomy, when shared memory fits
/// every buffer instead), then shared memory, then multi-pass; the grid path
/// instead when that starves the device and the rows split over blocks.
Config heuristic(const Analysis& a, const pa::DeviceProperties& d);
/// heuristic() without the grid path: a row in one block.
Config heuristic_in_block(const Analysis& a, const pa::DeviceProperties& d);
/// Why no split of `path` fits: the row, its buffers, and the device's limit.
std::string too_long(const Analysis& a, const pa::DeviceProperties& d, Path path);
/// Non-empty (the reason) when `c` is the multi-pass path and its rows are
/// too few to keep the device's loads in flight (heuristic.cpp says more).
std::string starved(const Analysis& a, const pa::DeviceProperties& d, const Config& c);

// ---- shared_path.cpp

/// Whether a vector of `t` under `c` is wider than one access (16 bytes).
bool wider_than_an_access(const Config& c, const pa::TensorView& t);
/// The shared path's cost: the persistent buffers placed in Shared memory
/// while they fit, else the intermediates recomputed (shared_path.cpp).
Config cost_shared(const Analysis& a, const pa::DeviceProperties& d, Config c);
/// The shared path's vector copies of its Shared buffers (shared_path.cpp).
void stage_shared_buffers(const Analysis& a, const Config& c,
                          std::vector<pa::TensorView>& persistent,
                          std::vector<pa::TensorView>& vectorized);

// ---- grid_path.cpp

/// The grid path's threads per block: kMaxRowThreads (or the device's limit).
int64_t grid_threads(const pa::DeviceProperties& d);
/// The grid path's split: the least persist whose blocks (at grid_threads()
/// each) fit one per SM over the rows and whose registers fit; persist = 0
/// when none does (fewer than 2 blocks per row, or the registers).
Config grid_split(const Analysis& a, const pa::DeviceProperties& d);
/// Why grid_split found nothing.
std::string grid_refusal(const Analysis& a, const pa::DeviceProperties& d);

// ---- multi_pass.cpp

/// The multi-pass path's split: persist = 0 when even it does not fit.
Config multi_pass_split(const Analysis& a, const pa::DeviceProperties& d);
/// Recomputes each persistent intermediate for its readers after the
/// reduction it feeds (multi_pass.cpp); whether anything was.
bool recompute_intermediates(pa::Segment& seg, const Analysis& a);
/// Why the persistent intermediates cannot be recomputed (empty: they can):
/// a view among the tensors a recompute would copy, whose copy the
/// reference's transforms would not reach (propagation crosses a view from
/// its output to its input only).
std::string recompute_refusal(const Analysis& a);

}  // namespace normalization
