// schedlab/runtime/sanitizer: an emulation sanitizer for generated kernels,
// in the spirit of compute-sanitizer's racecheck, memcheck, initcheck and
// synccheck, built on the CPU backend's access trace (access_trace.h).
//
// Owns: the Sanitizer observer and its findings. docs/sanitizer.md explains
// each check and how to read a report.
// May depend on: schedlab/runtime (access_trace.h).
// Invariants: a finding is a property of the kernel's execution on the
// emulator (which runs every thread), never a guess: a clean kernel has no
// findings (the lowering matrix runs sanitized in the test suite). Findings
// of the same kind at the same pair of sites fold into one, with a count.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "schedlab/runtime/access_trace.h"

namespace schedlab::runtime {

/// One problem the sanitizer found.
struct SanitizerFinding {
  enum class Kind {
    ThreadRace,        ///< two threads of a block, one Shared or Global element, one
                       ///< barrier interval, at least one writes
    BlockRace,         ///< two blocks, one Global element, at least one writes
    OutOfBounds,       ///< an access outside its buffer (or the dynamic shared memory)
    Uninitialized,     ///< a read of an element nobody (Local: this thread) wrote
    DivergentBarrier,  ///< threads of a block at different barriers, or some exited
    PendingCopyRead,   ///< a read of Shared bytes whose cp.async has not landed (no
                       ///< wait_group of the issuing thread completed it)
    StageOverwrite,    ///< a cp.async issued into Shared bytes another thread read in
                       ///< the same barrier interval (a stage still being read)
    DivergentWarp,     ///< lanes of a warp at different warp-collective instructions
                       ///< (ldmatrix, mma.sync), or some of them exited
    GridBarrierExit,   ///< blocks wait at a grid barrier (sl_grid_sync) that a block
                       ///< exited before reaching (a deadlock on the GPU)
  };
  /// One of the accesses (or barrier waits) involved.
  struct Access {
    CpuDim3 block{}, thread{};
    int site = -1;          ///< TraceSite id; a barrier wait: BarrierEvent::kExited/kNoSite
    int line = 0;           ///< line of the generated unit
    std::string text;       ///< that line, trimmed
    bool is_write = false;
  };
  Kind kind = Kind::ThreadRace;
  std::string kernel;       ///< TraceKernel::name
  std::string tensor;       ///< "T3 (m)"; empty for a barrier
  MemorySpace space = MemorySpace::Global;
  int64_t element = 0;      ///< element index in the buffer (first of a vector access)
  int64_t elements = 0;     ///< the buffer's elements (OutOfBounds)
  Access first;             ///< the earlier access, or the one at fault
  Access second;            ///< the other one (races, barriers)
  bool has_second = false;
  /// DivergentWarp: the warp's lanes by what they execute, "lanes 0-15 at
  /// mma.sync.m16n8k16 (line 12 `...`), lanes 16-31 at ldmatrix.x1 (line 9 `...`)".
  std::string lanes;
  uint64_t count = 1;       ///< occurrences folded into this finding
  /// The whole report, e.g. "shared-memory race in kernel softmax: T4
  /// (x_smem) element 3 written by thread (3,0,0) of block (0,0,0) at line
  /// 251 `...` and read by thread (0,0,0) of block (0,0,0) at line 260 `...`
  /// in the same barrier interval (no __syncthreads between them)".
  std::string message() const;
};
/// "thread-race", "block-race", "out-of-bounds", "uninitialized", "divergent-barrier",
/// "pending-copy-read", "stage-overwrite", "divergent-warp", "grid-barrier-exit".
const char* finding_kind_name(SanitizerFinding::Kind k);

/// The sanitizer: attach it to a traced launch (Backend::launch_traced, or
/// runtime::execute with ExecuteOptions::sanitizer), then read findings().
/// One launch at a time; on_launch_begin clears the previous launch's state
/// but keeps its findings, so several launches (segments) accumulate.
class Sanitizer final : public AccessObserver {
 public:
  /// At most `max_findings` distinct findings are kept; later ones only count.
  explicit Sanitizer(size_t max_findings = 64) : max_findings_(max_findings) {}

  const std::vector<SanitizerFinding>& findings() const { return findings_; }
  /// Occurrences of findings beyond max_findings (not kept).
  uint64_t dropped() const { return dropped_; }
  /// Every finding's message, one per line, "" when clean.
  std::string report() const;

  void on_launch_begin(const TraceKernel& kernel) override;
  void on_block_begin(const BlockEvent& block) override;
  void on_access(const AccessEvent& access) override;
  void on_declare(const AccessEvent& decl) override;
  void on_barrier(const BarrierEvent& barrier) override;
  void on_async_issue(const AccessEvent& copy) override;
  void on_warp_divergence(const WarpDivergenceEvent& warp) override;
  /// Grid barriers: a suspended block keeps its Shared and Local shadows; a
  /// grid barrier orders every Global access before it before every one
  /// after it (the touchers are forgotten, not the definedness).
  void on_block_suspend(const BlockEvent& block) override;
  void on_block_resume(const BlockEvent& block) override;
  void on_grid_barrier(const GridBarrierEvent& barrier) override;

 private:
  /// Who last touched an element (block -1: nobody).
  struct Toucher {
    int32_t block = -1;
    int16_t thread = 0;
    int16_t site = 0;
    uint32_t epoch = 0;
  };
  /// The shadow of one Global or Shared element.
  struct Cell {
    Toucher writer;        ///< the last write
    Toucher reader;        ///< the last read
    Toucher other_reader;  ///< a read by a block other than reader's, or in reader's interval
                           ///< by another thread (block -1: none)
    Toucher pending;       ///< the cp.async issued into it and not landed (block -1: none)
    bool initialized = false;
  };
  struct BufferShadow {
    std::vector<Cell> cells;             ///< Global, Shared
    std::vector<std::vector<bool>> local;  ///< Local: per thread, written bits
  };

  /// `rewrite`: a store of the value the element holds (never a conflict).
  void check_race(const AccessEvent& e, const TraceBuffer& b, int64_t element, Cell& c,
                  bool rewrite);
  /// Whether the finding (kind, buffer, site a, site b) is a repeat (counted
  /// here) or beyond max_findings (dropped); false: the caller add()s it.
  bool repeat(SanitizerFinding::Kind k, int buffer, int a, int b);
  void add(SanitizerFinding f, int buffer, int a, int b);
  SanitizerFinding::Access access_of(const Toucher& t, bool is_write) const;
  SanitizerFinding::Access access_of(const AccessEvent& e) const;
  SanitizerFinding finding(SanitizerFinding::Kind k, const AccessEvent& e, int64_t element) const;

  const TraceKernel* kernel_ = nullptr;
  std::vector<BufferShadow> shadow_;  ///< by buffer id
  /// Blocks stopped at a grid barrier: their Shared and Local shadows.
  std::map<int64_t, std::vector<BufferShadow>> suspended_;
  size_t max_findings_;
  uint64_t dropped_ = 0;
  std::vector<SanitizerFinding> findings_;
  std::map<std::tuple<int, int, int, int>, size_t> seen_;  ///< (kind, buffer, sites) -> finding
  std::vector<std::string> line_text_;  ///< by site: its line of the unit, for reports
};

}  // namespace schedlab::runtime
