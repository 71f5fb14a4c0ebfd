// The emulation sanitizer (sanitizer.h): shadow state per element and the
// five checks over the access trace.
//
// Shadow. A Global or Shared element remembers its last writer, its last
// reader, and one other reader (of another block, or another thread of the
// reader's barrier interval), each as (block, thread, site, epoch), and
// whether it holds a defined value. A Local array keeps, per thread, which
// elements the thread wrote since the array was declared. Global shadow
// lives for the launch (inputs start defined, outputs and workspaces not);
// Shared shadow is reset at every block (shared memory starts undefined).
#include "schedlab/runtime/sanitizer.h"

#include <bit>
#include <algorithm>
#include <cstring>
#include <functional>
#include <sstream>

namespace schedlab::runtime {

namespace {

using Kind = SanitizerFinding::Kind;

std::string str(const CpuDim3& d) {
  return "(" + std::to_string(d.x) + "," + std::to_string(d.y) + "," + std::to_string(d.z) + ")";
}

CpuDim3 unflatten(int64_t linear, const std::array<int64_t, 3>& extent) {
  return {static_cast<unsigned>(linear % extent[0]),
          static_cast<unsigned>(linear / extent[0] % extent[1]),
          static_cast<unsigned>(linear / (extent[0] * extent[1]))};
}

std::string where(const SanitizerFinding::Access& a) {
  std::string s = "at line " + std::to_string(a.line);
  if (!a.text.empty()) s += " `" + a.text + "`";
  return s;
}

}  // namespace

const char* finding_kind_name(Kind k) {
  switch (k) {
    case Kind::ThreadRace: return "thread-race";
    case Kind::BlockRace: return "block-race";
    case Kind::OutOfBounds: return "out-of-bounds";
    case Kind::Uninitialized: return "uninitialized";
    case Kind::DivergentBarrier: return "divergent-barrier";
    case Kind::PendingCopyRead: return "pending-copy-read";
    case Kind::StageOverwrite: return "stage-overwrite";
    case Kind::DivergentWarp: return "divergent-warp";
    case Kind::GridBarrierExit: return "grid-barrier-exit";
  }
  return "?";
}

std::string SanitizerFinding::message() const {
  std::ostringstream os;
  const char* rw1 = first.is_write ? "written" : "read";
  const char* rw2 = second.is_write ? "written" : "read";
  const std::string elem = tensor + " element " + std::to_string(element);
  switch (kind) {
    case Kind::ThreadRace:
      os << memory_space_name(space) << "-memory race between threads in kernel " << kernel
         << ": " << elem << " " << rw1 << " by thread " << str(first.thread) << " of block "
         << str(first.block) << " " << where(first) << " and " << rw2 << " by thread "
         << str(second.thread) << " " << where(second)
         << " in the same barrier interval (no __syncthreads between them)";
      break;
    case Kind::BlockRace:
      os << "global-memory race between blocks in kernel " << kernel << ": " << elem << " " << rw1
         << " by block " << str(first.block) << " thread " << str(first.thread) << " "
         << where(first) << " and " << rw2 << " by block " << str(second.block) << " thread "
         << str(second.thread) << " " << where(second)
         << " (blocks are not ordered; only the grid-reduction protocol orders them)";
      break;
    case Kind::OutOfBounds:
      os << "out-of-bounds " << memory_space_name(space) << " " << (first.is_write ? "write" : "read")
         << " in kernel " << kernel << ": " << elem << " of " << elements << " by thread "
         << str(first.thread) << " of block " << str(first.block) << " " << where(first);
      break;
    case Kind::Uninitialized:
      os << "uninitialized " << memory_space_name(space) << " read in kernel " << kernel << ": "
         << elem << " read by thread " << str(first.thread) << " of block " << str(first.block)
         << " " << where(first) << ", but "
         << (space == MemorySpace::Local ? "this thread never wrote it since its declaration"
             : space == MemorySpace::Shared ? "no thread of the block wrote it"
                                            : "it is not an input and nothing wrote it");
      break;
    case Kind::DivergentBarrier:
      os << "divergent barrier in kernel " << kernel << ": in block " << str(first.block)
         << ", thread " << str(first.thread) << " waits " << where(first) << " while thread "
         << str(second.thread)
         << (second.site == BarrierEvent::kExited ? " has exited" : " waits " + where(second));
      break;
    case Kind::PendingCopyRead:
      os << "read of a pending cp.async in kernel " << kernel << ": " << elem << " read by thread "
         << str(second.thread) << " of block " << str(second.block) << " " << where(second)
         << " before the cp.async of thread " << str(first.thread) << " " << where(first)
         << " into it has landed: a cp.async.wait_group of the issuing thread (then a "
            "__syncthreads) is missing between the copy and the read, or the wait leaves the "
            "copy's group pending";
      break;
    case Kind::StageOverwrite:
      os << "write to a stage still being read in kernel " << kernel << ": " << elem
         << " read by thread " << str(first.thread) << " of block " << str(first.block) << " "
         << where(first) << " and overwritten by the cp.async of thread " << str(second.thread)
         << " " << where(second)
         << " issued in the same barrier interval (the copy may land before or after the "
            "read): the copy into the stage needs a __syncthreads after the reads (a circular "
            "buffer's end-of-iteration barrier), or a prefetch distance that does not reach the "
            "stage being read";
      break;
    case Kind::DivergentWarp:
      os << "divergent warp in kernel " << kernel << ": in block " << str(first.block)
         << ", warp of thread " << str(first.thread) << ": " << lanes
         << "; every lane of a warp must execute the same warp-collective instruction";
      break;
    case Kind::GridBarrierExit:
      os << "grid barrier deadlock in kernel " << kernel << ": block " << str(first.block)
         << " (thread " << str(first.thread) << ") waits at the grid barrier"
         << (first.line > 0 ? " " + where(first) : std::string()) << " while block "
         << str(second.block) << " has exited" << lanes
         << "; every block of the grid must reach each grid barrier (sl_grid_sync), or the "
            "waiting blocks are never released";
      break;
  }
  if (count > 1) os << " (" << count - 1 << " more like it)";
  return os.str();
}

std::string Sanitizer::report() const {
  std::string r;
  for (const auto& f : findings_) r += f.message() + "\n";
  if (dropped_ > 0) r += std::to_string(dropped_) + " more findings not kept\n";
  return r;
}

void Sanitizer::on_launch_begin(const TraceKernel& kernel) {
  kernel_ = &kernel;
  suspended_.clear();
  // The keys of earlier launches' findings name their sites, not these.
  seen_.clear();
  line_text_.clear();
  for (const TraceSite& s : kernel.sites) line_text_.push_back(kernel.line_text(s.line));
  shadow_.assign(kernel.buffers.size(), {});
  for (size_t i = 0; i < kernel.buffers.size(); ++i) {
    const TraceBuffer& b = kernel.buffers[i];
    if (b.space != MemorySpace::Global) continue;
    Cell init;
    init.initialized = b.initialized;
    shadow_[i].cells.assign(static_cast<size_t>(b.elements), init);
  }
}

void Sanitizer::on_block_begin(const BlockEvent&) {
  const auto& d = kernel_->dims.block;
  const auto threads = static_cast<size_t>(d[0] * d[1] * d[2]);
  for (size_t i = 0; i < kernel_->buffers.size(); ++i) {
    const TraceBuffer& b = kernel_->buffers[i];
    if (b.space == MemorySpace::Shared)
      shadow_[i].cells.assign(static_cast<size_t>(b.elements), Cell{});
    else if (b.space == MemorySpace::Local)
      shadow_[i].local.assign(threads, {});
  }
}

SanitizerFinding::Access Sanitizer::access_of(const Toucher& t, bool is_write) const {
  SanitizerFinding::Access a;
  a.block = unflatten(t.block, kernel_->dims.grid);
  a.thread = unflatten(t.thread, kernel_->dims.block);
  a.site = t.site;
  a.line = kernel_->sites[static_cast<size_t>(t.site)].line;
  a.text = line_text_[static_cast<size_t>(a.site)];
  a.is_write = is_write;
  return a;
}

SanitizerFinding::Access Sanitizer::access_of(const AccessEvent& e) const {
  SanitizerFinding::Access a;
  a.block = e.block;
  a.thread = e.thread;
  a.site = e.site;
  a.line = kernel_->sites[static_cast<size_t>(e.site)].line;
  a.text = line_text_[static_cast<size_t>(a.site)];
  a.is_write = e.is_write;
  return a;
}

SanitizerFinding Sanitizer::finding(Kind k, const AccessEvent& e, int64_t element) const {
  const TraceBuffer& b = kernel_->buffers[static_cast<size_t>(e.buffer)];
  SanitizerFinding f;
  f.kind = k;
  f.kernel = kernel_->name;
  f.tensor = b.label;
  f.space = b.space;
  f.element = element;
  f.elements = b.elements;
  f.first = access_of(e);
  return f;
}

bool Sanitizer::repeat(Kind k, int buffer, int a, int b) {
  auto it = seen_.find({static_cast<int>(k), buffer, a, b});
  if (it != seen_.end()) {
    ++findings_[it->second].count;
    return true;
  }
  if (findings_.size() < max_findings_) return false;
  ++dropped_;
  return true;
}

void Sanitizer::add(SanitizerFinding f, int buffer, int a, int b) {
  seen_.emplace(std::make_tuple(static_cast<int>(f.kind), buffer, a, b), findings_.size());
  findings_.push_back(std::move(f));
}

void Sanitizer::check_race(const AccessEvent& e, const TraceBuffer& b, int64_t element, Cell& c,
                           bool rewrite) {
  const auto block = static_cast<int32_t>(e.block_linear);
  const auto thread = static_cast<int16_t>(e.thread_linear);
  const auto epoch = static_cast<uint32_t>(e.epoch);
  const bool global = b.space == MemorySpace::Global;
  auto conflict = [&](const Toucher& t, bool t_writes) {
    if (t.block < 0) return false;
    Kind k;
    if (t.block != block) {
      if (!global) return false;  // Shared shadow is per block; never here
      k = Kind::BlockRace;
    } else if (t.epoch == epoch && t.thread != thread) {
      k = Kind::ThreadRace;
    } else {
      return false;
    }
    if (repeat(k, e.buffer, t.site, e.site)) return true;
    SanitizerFinding f = finding(k, e, element);
    f.second = f.first;
    f.first = access_of(t, t_writes);
    f.has_second = true;
    add(std::move(f), e.buffer, t.site, e.site);
    return true;
  };
  if (!rewrite && !conflict(c.writer, true) && e.is_write)
    if (!conflict(c.reader, false)) conflict(c.other_reader, false);
  const Toucher me{block, thread, static_cast<int16_t>(e.site), epoch};
  if (e.is_write) {
    c.writer = me;
    c.initialized = true;
    return;
  }
  const Toucher& r = c.reader;
  if (r.block >= 0 && (r.block != block || (r.epoch == epoch && r.thread != thread)))
    c.other_reader = r;
  c.reader = me;
}

void Sanitizer::on_access(const AccessEvent& e) {
  const TraceBuffer& b = kernel_->buffers[static_cast<size_t>(e.buffer)];
  // Element sizes are powers of two: shifts, not two 64-bit divisions per
  // access (a third of the sanitized run's time). >> of a negative offset
  // floors, as the element index of an access below the buffer must.
  const int shift = std::countr_zero(static_cast<unsigned>(b.elem_bytes));
  const int64_t first = e.offset >> shift;
  if (!e.in_bounds) {
    if (!repeat(Kind::OutOfBounds, e.buffer, e.site, -1))
      add(finding(Kind::OutOfBounds, e, first), e.buffer, e.site, -1);
    return;
  }
  BufferShadow& sh = shadow_[static_cast<size_t>(e.buffer)];
  const int64_t n = e.bytes >> shift;
  if (b.space == MemorySpace::Local) {
    std::vector<bool>& bits = sh.local[static_cast<size_t>(e.thread_linear)];
    if (bits.empty()) return;  // no SL_LOCAL seen (hand-written code): nothing to check
    for (int64_t i = first; i < first + n; ++i) {
      if (e.is_write) {
        bits[static_cast<size_t>(i)] = true;
      } else if (!bits[static_cast<size_t>(i)]) {
        if (!repeat(Kind::Uninitialized, e.buffer, e.site, -1))
          add(finding(Kind::Uninitialized, e, i), e.buffer, e.site, -1);
      }
    }
    return;
  }
  for (int64_t i = first; i < first + n; ++i) {
    Cell& c = sh.cells[static_cast<size_t>(i)];
    if (c.pending.block >= 0) {
      if (!e.is_write) {
        // The bytes a cp.async has yet to write: whatever the read finds is
        // not the copy's (the copy explains an uninitialized read too). A
        // copy another thread issued in this barrier interval overwrites what
        // the read expects (no wait orders another thread's read): a stage
        // still being read. Otherwise the wait before the read is missing.
        const bool overwrite =
            c.pending.thread != e.thread_linear && c.pending.epoch == static_cast<uint32_t>(e.epoch);
        if (overwrite && !repeat(Kind::StageOverwrite, e.buffer, e.site, c.pending.site)) {
          SanitizerFinding f = finding(Kind::StageOverwrite, e, i);
          f.second = access_of(c.pending, true);
          f.has_second = true;
          add(std::move(f), e.buffer, e.site, c.pending.site);
        } else if (!overwrite && !repeat(Kind::PendingCopyRead, e.buffer, c.pending.site, e.site)) {
          SanitizerFinding f = finding(Kind::PendingCopyRead, e, i);
          f.second = f.first;
          f.first = access_of(c.pending, true);
          f.has_second = true;
          add(std::move(f), e.buffer, c.pending.site, e.site);
        }
        check_race(e, b, i, c, false);
        continue;
      }
      // The landing of the copy: its issuing thread writes at its site.
      if (e.site == c.pending.site && e.thread_linear == c.pending.thread) c.pending = Toucher{};
    }
    if (!e.is_write && !c.initialized && !repeat(Kind::Uninitialized, e.buffer, e.site, -1))
      add(finding(Kind::Uninitialized, e, i), e.buffer, e.site, -1);
    // A store of the value the element already holds changes nothing another
    // thread or block can see (every thread of a row storing its block
    // reduction's result): no race, whoever stored it first.
    const int64_t at = (i - first) * b.elem_bytes;
    const bool rewrite = e.is_write && e.value != nullptr && c.initialized &&
                         std::memcmp(static_cast<const char*>(e.value) + at,
                                     static_cast<const char*>(e.address) + at,
                                     static_cast<size_t>(b.elem_bytes)) == 0;
    check_race(e, b, i, c, rewrite);
  }
}

void Sanitizer::on_async_issue(const AccessEvent& e) {
  const TraceBuffer& b = kernel_->buffers[static_cast<size_t>(e.buffer)];
  // An out-of-bounds destination is reported when the copy lands (on_access).
  if (!e.in_bounds || b.space != MemorySpace::Shared) return;
  const int shift = std::countr_zero(static_cast<unsigned>(b.elem_bytes));
  const int64_t first = e.offset >> shift, n = e.bytes >> shift;
  BufferShadow& sh = shadow_[static_cast<size_t>(e.buffer)];
  const Toucher me{static_cast<int32_t>(e.block_linear), static_cast<int16_t>(e.thread_linear),
                   static_cast<int16_t>(e.site), static_cast<uint32_t>(e.epoch)};
  for (int64_t i = first; i < first + n; ++i) {
    Cell& c = sh.cells[static_cast<size_t>(i)];
    // The copy may land any time until its wait: a read of another thread in
    // this barrier interval may see it or not.
    for (const Toucher* r : {&c.reader, &c.other_reader}) {
      if (r->block != me.block || r->epoch != me.epoch || r->thread == me.thread) continue;
      if (!repeat(Kind::StageOverwrite, e.buffer, r->site, e.site)) {
        SanitizerFinding f = finding(Kind::StageOverwrite, e, i);
        f.second = f.first;
        f.first = access_of(*r, false);
        f.has_second = true;
        add(std::move(f), e.buffer, r->site, e.site);
      }
      break;
    }
    c.pending = me;
  }
}

void Sanitizer::on_warp_divergence(const WarpDivergenceEvent& w) {
  // Runs of consecutive lanes at one (instruction, line).
  struct Run {
    int from, to, line;
    std::string instruction;
  };
  std::vector<Run> runs;
  for (int l = 0; l < static_cast<int>(w.lanes.size()); ++l) {
    const auto& lane = w.lanes[static_cast<size_t>(l)];
    if (!runs.empty() && runs.back().line == lane.line &&
        runs.back().instruction == lane.instruction)
      runs.back().to = l;
    else
      runs.push_back({l, l, lane.line, lane.instruction});
  }
  if (runs.size() < 2) return;
  // One finding per pair of lines (the first two runs'), however often; the
  // scheduler's reports (no lines) per pair of instructions.
  const auto key = [](const Run& r) {
    return r.line > 0 ? r.line : -1 - static_cast<int>(std::hash<std::string>{}(r.instruction) % 100000);
  };
  const int a = key(runs[0]), b = key(runs[1]);
  if (repeat(Kind::DivergentWarp, -1, a, b)) return;
  auto access = [&](const Run& r) {
    SanitizerFinding::Access x;
    x.block = w.block;
    x.thread = unflatten(w.first_thread + r.from, kernel_->dims.block);
    x.line = r.line;
    x.text = kernel_->line_text(r.line);
    return x;
  };
  SanitizerFinding f;
  f.kind = Kind::DivergentWarp;
  f.kernel = kernel_->name;
  f.first = access(runs[0]);
  f.second = access(runs[1]);
  f.has_second = true;
  for (const Run& r : runs) {
    if (!f.lanes.empty()) f.lanes += ", ";
    f.lanes += (r.from == r.to ? "lane " + std::to_string(r.from)
                               : "lanes " + std::to_string(r.from) + "-" + std::to_string(r.to)) +
               " at " + r.instruction +
               (r.line > 0 ? " (line " + std::to_string(r.line) + ")" : std::string());
  }
  add(std::move(f), -1, a, b);
}

void Sanitizer::on_declare(const AccessEvent& d) {
  const TraceBuffer& b = kernel_->buffers[static_cast<size_t>(d.buffer)];
  if (b.space != MemorySpace::Local) return;
  shadow_[static_cast<size_t>(d.buffer)].local[static_cast<size_t>(d.thread_linear)].assign(
      static_cast<size_t>(b.elements), false);
}

void Sanitizer::on_block_suspend(const BlockEvent& b) {
  std::vector<BufferShadow>& kept = suspended_[b.block_linear];
  kept.assign(shadow_.size(), {});
  for (size_t i = 0; i < kernel_->buffers.size(); ++i)
    if (kernel_->buffers[i].space != MemorySpace::Global) kept[i] = std::move(shadow_[i]);
}

void Sanitizer::on_block_resume(const BlockEvent& b) {
  auto it = suspended_.find(b.block_linear);
  if (it == suspended_.end()) return;
  for (size_t i = 0; i < kernel_->buffers.size(); ++i)
    if (kernel_->buffers[i].space != MemorySpace::Global) shadow_[i] = std::move(it->second[i]);
  suspended_.erase(it);
}

void Sanitizer::on_grid_barrier(const GridBarrierEvent& e) {
  // Every block's accesses before the barrier happen before any after it.
  for (size_t i = 0; i < kernel_->buffers.size(); ++i) {
    if (kernel_->buffers[i].space != MemorySpace::Global) continue;
    for (Cell& c : shadow_[i].cells) {
      c.writer = c.reader = c.other_reader = Toucher{};
    }
  }
  if (e.exited == 0 || repeat(Kind::GridBarrierExit, -1, e.site, -1)) return;
  SanitizerFinding f;
  f.kind = Kind::GridBarrierExit;
  f.kernel = kernel_->name;
  f.first.block = e.waiting_block;
  f.first.site = e.site;
  if (e.site >= 0) {
    f.first.line = kernel_->sites[static_cast<size_t>(e.site)].line;
    f.first.text = line_text_[static_cast<size_t>(e.site)];
  }
  f.second.block = e.exited_block;
  f.second.site = BarrierEvent::kExited;
  f.has_second = true;
  f.lanes = " (" + std::to_string(e.waiting) + " blocks wait, " + std::to_string(e.exited) +
            " exited)";
  add(std::move(f), -1, e.site, -1);
}

void Sanitizer::on_barrier(const BarrierEvent& e) {
  const std::vector<int>& sites = *e.sites;
  size_t a = 0;
  while (a < sites.size() && sites[a] == BarrierEvent::kExited) ++a;
  if (a == sites.size()) return;
  size_t c = 0;
  while (c < sites.size() && sites[c] == sites[a]) ++c;
  if (c == sites.size()) return;
  if (repeat(Kind::DivergentBarrier, -1, sites[a], sites[c])) return;
  auto waiter = [&](size_t t) {
    SanitizerFinding::Access w;
    w.block = e.block;
    w.thread = unflatten(static_cast<int64_t>(t), kernel_->dims.block);
    w.site = sites[t];
    if (w.site >= 0) {
      w.line = kernel_->sites[static_cast<size_t>(w.site)].line;
      w.text = line_text_[static_cast<size_t>(w.site)];
    } else if (sites[t] == BarrierEvent::kNoSite) {
      w.text = "__syncthreads()";
    }
    return w;
  };
  SanitizerFinding f;
  f.kind = Kind::DivergentBarrier;
  f.kernel = kernel_->name;
  f.first = waiter(a);
  f.second = waiter(c);
  f.has_second = true;
  add(std::move(f), -1, sites[a], sites[c]);
}

}  // namespace schedlab::runtime
