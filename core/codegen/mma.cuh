// ---- schedlab tensor-core runtime (core/codegen/mma.cuh) ----
// Appended after the runtime header by the units that use it, and only by
// them (codegen::mma_header()); docs/tensor-cores.md has the facts behind it.
//  * sl_ldmatrix<TRANS>(uint32_t (&r)[N], row): ldmatrix.sync.aligned.m8n8
//    .xN{.trans}.shared.b16, N = 1, 2 or 4. Lane 8i + j passes the address of
//    row j of matrix i (16 bytes of shared memory); lanes >= 8N pass any
//    address, which is not read. Lane l receives in r[i] the elements (l / 4,
//    2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of matrix i, the first in the low
//    16 bits; with TRANS, the elements (2 (l % 4), l / 4) and (2 (l % 4) + 1,
//    l / 4).
//  * sl_mma_m16n8k16<T>(d, a, b, c): mma.sync.aligned.m16n8k16.row.col.f32.T.T
//    .f32, T = sl_bfloat16 or sl_half; a: 4 registers of A (16x16), b: 2 of B
//    (16x8), c and d: 4 floats of C and D (16x8), in the PTX ISA's fragment
//    layouts (docs/tensor-cores.md). d may alias c.
//  * sl_cp_async<BYTES, CG>(site, base, i, src, src_bytes): cp.async.{ca,cg}
//    .shared.global of BYTES (4, 8, 16; .cg: 16 only) to &base[i] in shared
//    memory from src in global memory, of which src_bytes (0..BYTES) are read
//    and the rest is zero-filled. `site`: the access site of the shared write
//    (SL_SITE), for the CPU backend's trace.
//  * sl_cp_async_commit(), sl_cp_async_wait<N>() (all but the newest N
//    committed groups of this thread complete), sl_cp_async_wait_all().
// Every lane of the warp must execute the same ldmatrix / mma.sync.
template <typename A, typename B> struct SlSame { static constexpr bool value = false; };
template <typename A> struct SlSame<A, A> { static constexpr bool value = true; };
template <typename T> struct SlMmaOperand {
  static_assert(SlSame<T, sl_bfloat16>::value || SlSame<T, sl_half>::value,
                "mma.sync m16n8k16 takes sl_bfloat16 or sl_half operands");
  static constexpr bool bf16 = SlSame<T, sl_bfloat16>::value;
};
// Two b16 elements in one register, `lo` in the low 16 bits (an mma operand
// register holds its fragment's elements 2i and 2i + 1 so).
template <typename T>
SL_FN uint32_t sl_pack_b16(T lo, T hi) { return uint32_t(lo.bits) | (uint32_t(hi.bits) << 16); }
#ifndef SCHEDLAB_CPU
SL_FN uint32_t sl_smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
template <bool TRANS, int N>
SL_FN void sl_ldmatrix(uint32_t (&r)[N], const void* row) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix loads 1, 2 or 4 matrices");
  const uint32_t a = sl_smem_addr(row);
  if constexpr (N == 1 && !TRANS) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0]) : "r"(a) : "memory");
  } else if constexpr (N == 1) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0]) : "r"(a) : "memory");
  } else if constexpr (N == 2 && !TRANS) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");
  } else if constexpr (N == 2) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(a) : "memory");
  } else if constexpr (!TRANS) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a) : "memory");
  }
}
template <typename T>
SL_FN void sl_mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                           const float (&c)[4]) {
  if constexpr (SlMmaOperand<T>::bf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
          "f"(c[1]), "f"(c[2]), "f"(c[3]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),
          "f"(c[1]), "f"(c[2]), "f"(c[3]));
  }
}
template <int BYTES, bool CG, typename T, typename I>
SL_FN void sl_cp_async(int site, T* base, I i, const void* src, int src_bytes) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  static_assert(!CG || BYTES == 16, "cp.async.cg copies 16 bytes");
  (void)site;
  const uint32_t d = sl_smem_addr(base + i);
  const uint64_t s = uint64_t(__cvta_generic_to_global(src));
  if constexpr (CG) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(d), "l"(s), "r"(src_bytes) : "memory");
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n"
                 :: "r"(d), "l"(s), "n"(BYTES), "r"(src_bytes) : "memory");
  }
}
SL_FN void sl_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
SL_FN void sl_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" :: "n"(N) : "memory");
}
SL_FN void sl_cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }
#else
// The CPU emulation, under the same names. The instructions are warp
// collectives: each lane publishes what it contributes (a row address, its
// registers) in its slot of the block's state, the warp meets at a warp
// exchange (__syncwarp, so the fiber scheduler reports lanes that exited or
// wait elsewhere as a deadlock), every lane takes what the PTX ISA's layout
// gives it from the others' slots, and the warp meets again before any lane
// may reuse its slot. A lane that meets the others at a different
// collective instruction (another kind or another line) is a divergent warp:
// the kernel stops with SlCpuKernelError, as it does for a cp.async misuse.
//
// cp.async: the source is read when the copy is issued; the bytes land in
// shared memory when a wait_group of the issuing thread completes the copy's
// group, never before (a read in between sees the old contents, as the GPU
// may). Pending copies live in per-thread lists of the block's state. A
// collective read here of bytes whose copy has not landed is the missing-wait
// bug: in a traced unit it is handed to the access trace as the copy's write
// by its issuing thread, now (the sanitizer then reports the race between the
// copy and the read); otherwise the kernel stops with SlCpuKernelError. A
// traced unit reports a landing copy as a write at its site.
#include <exception>
struct SlCpuKernelError : std::exception {
  char text[400];
  const char* what() const noexcept override { return text; }
};
struct SlCpAsyncCopy {
  char* dst;
  const void* base;    // the trace's buffer base and byte offset of dst
  long long offset;
  int site;
  unsigned group;      // 0: not committed yet
  int bytes;
  unsigned char data[16];
};
enum : int { kSlMaxThreads = 1024, kSlMaxPendingCopies = 64 };
enum SlCollective : int { kSlLdmatrix = 1, kSlMma = 2 };
// The emulation's state of the block this worker runs (one block at a time,
// its fibers on this OS thread): reset when another block (or launch) starts.
struct SlTensorCoreBlock {
  dim3 block = {~0u, ~0u, ~0u};
  char* smem = nullptr;
  SlCpAsyncCopy* copies = nullptr;  // [thread][kSlMaxPendingCopies], allocated on first use
  long long pending = 0;            // copies not landed, all threads
  int count[kSlMaxThreads];         // per thread: its pending copies (issue order)
  unsigned committed[kSlMaxThreads];  // per thread: groups committed so far
  const void* slot[kSlMaxThreads];  // per thread: what it contributes to a collective
  int slot_kind[kSlMaxThreads];     // SlCollective * 16 + matrices (or 0 for mma)
  int slot_line[kSlMaxThreads];
  ~SlTensorCoreBlock() { ::operator delete(copies); }
};
static thread_local SlTensorCoreBlock sl_tc;
inline unsigned sl_tc_thread() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
inline SlTensorCoreBlock& sl_tc_block() {
  SlTensorCoreBlock& s = sl_tc;
  if (s.smem != sl_cpu_state.smem || s.block.x != blockIdx.x || s.block.y != blockIdx.y ||
      s.block.z != blockIdx.z) {
    s.block = blockIdx;
    s.smem = sl_cpu_state.smem;
    s.pending = 0;
    __builtin_memset(s.count, 0, sizeof s.count);
    __builtin_memset(s.committed, 0, sizeof s.committed);
  }
  return s;
}
[[noreturn]] inline void sl_tc_fail(const char* what) {
  SlCpuKernelError e;
  __builtin_snprintf(e.text, sizeof e.text, "%s (thread (%u,%u,%u) of block (%u,%u,%u))", what,
                     threadIdx.x, threadIdx.y, threadIdx.z, blockIdx.x, blockIdx.y, blockIdx.z);
  throw e;
}
inline const char* sl_tc_kind_name(int kind) {
  switch (kind) {
    case kSlLdmatrix * 16 + 1: return "ldmatrix.x1";
    case kSlLdmatrix * 16 + 2: return "ldmatrix.x2";
    case kSlLdmatrix * 16 + 4: return "ldmatrix.x4";
    case kSlLdmatrix * 16 + 1 + 8: return "ldmatrix.x1.trans";
    case kSlLdmatrix * 16 + 2 + 8: return "ldmatrix.x2.trans";
    case kSlLdmatrix * 16 + 4 + 8: return "ldmatrix.x4.trans";
    case 0: return "no collective (exited, or elsewhere)";
    default: return "mma.sync.m16n8k16";
  }
}
// The bytes [p, p + n) of shared memory are read by a collective: a copy
// still pending there is the missing-wait bug (see above).
inline void sl_tc_check_pending(SlTensorCoreBlock& s, const void* p, int n, int kind) {
  if (s.pending == 0) return;
  const char* lo = static_cast<const char*>(p);
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  for (unsigned u = 0; u < threads; ++u) {
    for (int j = 0; j < s.count[u]; ++j) {
      const SlCpAsyncCopy& c = s.copies[u * kSlMaxPendingCopies + j];
      if (c.dst + c.bytes <= lo || lo + n <= c.dst) continue;
#ifdef SCHEDLAB_TRACE
      (void)kind;
      const dim3 me = threadIdx;
      sl_cpu_state.thread_idx = {u % blockDim.x, u / blockDim.x % blockDim.y,
                                 u / (blockDim.x * blockDim.y)};
      sl_cpu_access(c.site, c.base, c.offset, c.bytes, 1, nullptr);
      sl_cpu_state.thread_idx = me;
#else
      char what[240];
      __builtin_snprintf(what, sizeof what,
                         "%s reads shared memory that a cp.async of thread %u has not landed "
                         "(shared byte %ld): a cp.async.wait_group is missing before the read",
                         sl_tc_kind_name(kind), u, (long)(c.dst - sl_cpu_state.smem));
      sl_tc_fail(what);
#endif
    }
  }
}
// Publishes this lane's contribution and meets the warp; returns the warp's
// slots (lane 0 first). The caller calls sl_tc_leave() when it has read them.
inline const void* const* sl_tc_meet(int kind, int line, const void* mine) {
  SlTensorCoreBlock& s = sl_tc_block();
  const unsigned t = sl_tc_thread(), w = t - t % 32u;
  s.slot[t] = mine;
  s.slot_kind[t] = kind;
  s.slot_line[t] = line;
  __syncwarp(0xffffffffu);
  for (unsigned l = w; l < w + 32u; ++l) {
    if (s.slot_kind[l] == kind && s.slot_line[l] == line) continue;
#ifdef SCHEDLAB_TRACE
    // Traced: a sanitizer finding (lane 0 reports the warp's lines and
    // instructions: cpu_trace.h's kTraceWarpDivergence), and every lane,
    // which sees the same slots, goes on without the exchange (its result
    // registers are left as they were).
    if (t == w) {
      const char* names[32];
      for (unsigned u = 0; u < 32u; ++u) names[u] = sl_tc_kind_name(s.slot_kind[w + u]);
      (void)sl_cpu_access(-1, s.slot_line + w, (long long)w, 32, 3, names);
    }
    return nullptr;
#endif
    char what[240];
    __builtin_snprintf(what, sizeof what,
                       "divergent warp: lane %u executes %s at line %d while lane %u executes "
                       "%s at line %d; every lane of a warp must execute the same one",
                       t % 32u, sl_tc_kind_name(kind), line, l % 32u,
                       sl_tc_kind_name(s.slot_kind[l]), s.slot_line[l]);
    sl_tc_fail(what);
  }
  return s.slot + w;
}
inline void sl_tc_leave() {
  __syncwarp(0xffffffffu);
  // Every lane has read the slots: this lane is at no collective until its
  // next one (a lane that exits is then told apart from one at this one).
  sl_tc.slot_kind[sl_tc_thread()] = 0;
}
inline uint32_t sl_tc_b16(const void* row, unsigned element) {
  uint16_t v;
  __builtin_memcpy(&v, static_cast<const char*>(row) + 2 * element, 2);
  return v;
}
template <bool TRANS, int N>
inline void sl_ldmatrix(uint32_t (&r)[N], const void* row, int line = __builtin_LINE()) {
  static_assert(N == 1 || N == 2 || N == 4, "ldmatrix loads 1, 2 or 4 matrices");
  const int kind = kSlLdmatrix * 16 + N + (TRANS ? 8 : 0);
  const unsigned lane = sl_tc_thread() % 32u;
  if (lane < 8u * N) sl_tc_check_pending(sl_tc_block(), row, 16, kind);
  const void* const* rows = sl_tc_meet(kind, line, row);
  if (rows == nullptr) return sl_tc_leave();  // a divergent warp, reported (traced only)
  uint32_t out[N];
  for (int i = 0; i < N; ++i) {
    const void* const* m = rows + 8 * i;  // the row addresses of matrix i
    if (!TRANS)
      out[i] = sl_tc_b16(m[lane / 4u], 2u * (lane % 4u)) |
               sl_tc_b16(m[lane / 4u], 2u * (lane % 4u) + 1u) << 16;
    else
      out[i] = sl_tc_b16(m[2u * (lane % 4u)], lane / 4u) |
               sl_tc_b16(m[2u * (lane % 4u) + 1u], lane / 4u) << 16;
  }
  sl_tc_leave();
  for (int i = 0; i < N; ++i) r[i] = out[i];
}
template <typename T>
inline float sl_tc_elem(uint32_t reg, unsigned half) {
  return sl_to_float(T{uint16_t(half ? reg >> 16 : reg & 0xffffu)});
}
// D = A B + C. Accumulation order (chosen; the PTX ISA does not define the
// hardware's internal order or intermediate rounding bit for bit, and
// published measurements show it is not IEEE round-to-nearest): each product
// a(m,k) b(k,n) is exact (two 8- or 11-bit significands; fmaf rounds once),
// and d(m,n) = fl(... fl(fl(c(m,n) + a(m,0) b(0,n)) + a(m,1) b(1,n)) ...
// + a(m,15) b(15,n)): k ascending from C, one f32 round-to-nearest-even per
// step. It is the order of a scalar f32 loop over k, so results can be
// checked bit for bit against one, and it is the same on every run.
template <typename T>
inline void sl_mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                            const float (&c)[4], int line = __builtin_LINE()) {
  (void)SlMmaOperand<T>::bf16;  // instantiates its check of T
  struct Regs { uint32_t a[4], b[2]; } mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
  const unsigned lane = sl_tc_thread() % 32u, g = lane / 4u, tig = lane % 4u;
  const void* const* regs = sl_tc_meet(kSlMma * 16, line, &mine);
  if (regs == nullptr) return sl_tc_leave();  // a divergent warp, reported (traced only)
  float out[4];
  for (unsigned i = 0; i < 4u; ++i) {
    const unsigned m = g + 8u * (i / 2u), n = 2u * tig + (i & 1u);
    float acc = c[i];
    for (unsigned k = 0; k < 16u; ++k) {
      // A: lane 4 (m % 8) + (k % 8) / 2 holds a(m,k) as element e of its a0..a7.
      const unsigned ea = (k & 1u) + 2u * (m / 8u) + 4u * (k / 8u);
      const Regs* ra = static_cast<const Regs*>(regs[4u * (m % 8u) + (k % 8u) / 2u]);
      // B: lane 4 n + (k % 8) / 2 holds b(k,n) as element e of its b0..b3.
      const unsigned eb = (k & 1u) + 2u * (k / 8u);
      const Regs* rb = static_cast<const Regs*>(regs[4u * n + (k % 8u) / 2u]);
      acc = fmaf(sl_tc_elem<T>(ra->a[ea / 2u], ea & 1u), sl_tc_elem<T>(rb->b[eb / 2u], eb & 1u),
                 acc);
    }
    out[i] = acc;
  }
  sl_tc_leave();
  for (int i = 0; i < 4; ++i) d[i] = out[i];
}
template <int BYTES, bool CG, typename T, typename I>
inline void sl_cp_async(int site, T* base, I i, const void* src, int src_bytes) {
  static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
  static_assert(!CG || BYTES == 16, "cp.async.cg copies 16 bytes");
  if (src_bytes < 0 || src_bytes > BYTES) sl_tc_fail("cp.async: src-size outside [0, cp-size]");
  SlTensorCoreBlock& s = sl_tc_block();
  if (s.copies == nullptr)
    s.copies = static_cast<SlCpAsyncCopy*>(
        ::operator new(sizeof(SlCpAsyncCopy) * kSlMaxThreads * kSlMaxPendingCopies));
  const unsigned t = sl_tc_thread();
  if (s.count[t] == kSlMaxPendingCopies)
    sl_tc_fail("cp.async: more copies pending in one thread than the CPU emulation keeps (64)");
  SlCpAsyncCopy& c = s.copies[t * kSlMaxPendingCopies + s.count[t]++];
  c.dst = reinterpret_cast<char*>(base + i);
  c.base = base;
  c.offset = (long long)i * (long long)sizeof(T);
  c.site = site;
  c.group = 0;
  c.bytes = BYTES;
  __builtin_memset(c.data, 0, sizeof c.data);
  __builtin_memcpy(c.data, src, (unsigned)src_bytes);
  ++s.pending;
#ifdef SCHEDLAB_TRACE
  // The destination is traced at issue (the sanitizer's pending bytes: a
  // read before the landing, a copy into bytes other threads still read).
  (void)sl_cpu_access(site, base, c.offset, BYTES, 2, nullptr);
#endif
}
inline void sl_cp_async_commit() {
  SlTensorCoreBlock& s = sl_tc_block();
  const unsigned t = sl_tc_thread(), g = ++s.committed[t];
  for (int j = s.count[t] - 1; j >= 0 && s.copies[t * kSlMaxPendingCopies + j].group == 0; --j)
    s.copies[t * kSlMaxPendingCopies + j].group = g;
}
// Lands, in issue order, this thread's copies of the groups older than its
// newest n committed ones.
inline void sl_cp_async_land(unsigned n) {
  SlTensorCoreBlock& s = sl_tc_block();
  const unsigned t = sl_tc_thread();
  SlCpAsyncCopy* mine = s.copies + t * kSlMaxPendingCopies;
  int landed = 0;
  while (landed < s.count[t] && mine[landed].group != 0 &&
         mine[landed].group + n <= s.committed[t]) {
    SlCpAsyncCopy& c = mine[landed++];
#ifdef SCHEDLAB_TRACE
    void* at = sl_cpu_access(c.site, c.base, c.offset, c.bytes, 1, c.data);
#else
    void* at = c.dst;
#endif
    __builtin_memcpy(at, c.data, (unsigned)c.bytes);
  }
  for (int j = landed; j < s.count[t]; ++j) mine[j - landed] = mine[j];
  s.count[t] -= landed;
  s.pending -= landed;
}
template <int N>
inline void sl_cp_async_wait() {
  static_assert(N >= 0, "cp.async.wait_group N needs N >= 0");
  if (sl_tc.copies != nullptr) sl_cp_async_land(unsigned(N));
}
inline void sl_cp_async_wait_all() {
  sl_cp_async_commit();
  sl_cp_async_wait<0>();
}
#endif
// ---- end of schedlab tensor-core runtime ----
