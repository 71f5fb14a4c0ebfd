// ---- schedlab CPU trace (core/runtime/cpu_trace.cuh) ----
// Appended to the CPU shim when a unit is compiled with KernelSource::trace
// (SCHEDLAB_TRACE): the runtime header's access macros call the host for
// every access site instead of touching memory directly. The host returns
// the address to use (a scratch area for an access out of its buffer), so a
// kernel that the sanitizer flags runs on without corrupting memory.
// `value`: the bytes a store writes (null: a read). `write`: 0 a read, 1 a
// write, 2 the issue of a cp.async (mma.cuh: its bytes land at a wait_group,
// reported then as a write; cpu_trace.h's kTraceAsyncIssue).
template <typename T, typename I>
inline T* sl_cpu_at(int site, T* base, I i, int n, int write, const void* value) {
  const long long offset = (long long)i * (long long)sizeof(T);
  return static_cast<T*>(sl_cpu_access(site, base, offset, n * (int)sizeof(T), write, value));
}
// A store converts its value as `base[i] = v` would, then writes it.
template <typename T, typename I, typename V>
inline void sl_cpu_store(int site, T* base, I i, const V& v) {
  const T value = v;
  *sl_cpu_at(site, base, i, 1, 1, &value) = value;
}
// A vector store is reported by the copy, which knows the bytes it writes
// (its source, read first): the sanitizer then sees a store of the values an
// element already holds as the harmless rewrite it is, as for SL_ST.
template <typename T, typename I>
struct SlTracedVectorStore {
  int site;
  T* base;
  I i;
  int n;
};
template <typename T, typename I>
inline SlTracedVectorStore<T, I> sl_cpu_vector_store(int site, T* base, I i, int n) {
  return {site, base, i, n};
}
template <typename T, int N, typename I>
inline void sl_vec_copy(SlTracedVectorStore<T, I> dst, const T* src) {
  // The runtime header's sl_vec_copy comes later in the unit: copy here.
  __builtin_memcpy(sl_cpu_at(dst.site, dst.base, dst.i, dst.n, 1, src), src, sizeof(T) * N);
}
#define SL_LD(site, base, i) (*sl_cpu_at((site), (base), (i), 1, 0, nullptr))
#define SL_ST(site, base, i, v) sl_cpu_store((site), (base), (i), (v))
#define SL_VLD(site, base, i, n) sl_cpu_at((site), (base), (i), (n), 0, nullptr)
#define SL_VST(site, base, i, n) sl_cpu_vector_store((site), (base), (i), (n))
#define SL_LOCAL(site, name) sl_cpu_declare((site), (name), (int)sizeof(name))
#define SL_SYNC(site) (sl_cpu_barrier_site(site), __syncthreads())
// ---- end of schedlab CPU trace ----
// The generated unit follows: its lines are numbered from 1 again, so that
// __builtin_LINE() in it (mma.cuh's collectives) is a line of the unit, as
// TraceSite::line and the sanitizer's reports count them.
#line 1
