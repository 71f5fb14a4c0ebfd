// Helpers shared by the lowering tests: fusion files, one backend per test
// process with its kernel cache in the build tree, NVRTC checks of every
// distinct generated source, and a run-and-compare against the reference.
//
// The backend is the CPU one, or, in a test executable compiled with
// SCHEDLAB_TEST_BACKEND_CUDA (the *_gpu_test executables, CTest label gpu),
// the CUDA backend on device 0; there every test (fixture BackendTest)
// skips when no device answers (runtime::cuda_available() is false).
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/model/device.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/ref/inputs.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sched/sched.h"
#include "test_support.h"

namespace schedlab::lower::testing {

using test_support::named;
using test_support::user_error_of;

/// configs/fusions/<name>.yaml.
inline frontend::FusionDefinition load(const std::string& name) {
  return test_support::load_config_fusion(name);
}

/// Whether this executable runs its kernels on the CUDA backend.
#ifdef SCHEDLAB_TEST_BACKEND_CUDA
inline constexpr bool kCudaTestBackend = true;
#else
inline constexpr bool kCudaTestBackend = false;
#endif

/// The kernel cache of the CPU backend lives in the build tree: the key
/// hashes the whole unit (shim, compiler and flags included) and files are
/// renamed into place, so processes that ctest runs side by side share it
/// safely, and a rerun compiles nothing. NVRTC saves rejected units there too.
inline std::string kernel_cache_dir() {
  return std::string(SCHEDLAB_BINARY_DIR) + "/tests/lower/kernel-cache";
}

/// The CPU backend of this process (the tests that only ever run on it).
inline runtime::Backend& cpu_backend() {
  static std::unique_ptr<runtime::Backend> backend =
      runtime::make_cpu_backend(model::model_device_properties(), kernel_cache_dir());
  return *backend;
}

/// The backend every test of this process shares: the CPU backend, or the
/// CUDA backend (kCudaTestBackend). The CUDA one caches CUBINs under
/// $SCHEDLAB_CACHE_DIR when set (a device bundle, away from the build tree),
/// else under kernel-cache-cuda in the build tree.
inline runtime::Backend& test_backend() {
  if (!kCudaTestBackend) return cpu_backend();
  static std::unique_ptr<runtime::Backend> backend = [] {
    const char* env = std::getenv("SCHEDLAB_CACHE_DIR");
    return runtime::make_cuda_backend(
        env != nullptr && *env != '\0' ? std::string() : kernel_cache_dir() + "-cuda");
  }();
  return *backend;
}

/// The fixture of every test that uses test_backend(): in a CUDA test
/// executable its SetUp skips the test when no device answers (GoogleTest
/// reports it SKIPPED with the reason, and so does CTest).
class BackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kCudaTestBackend) return;
    std::string why;
    if (!runtime::cuda_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  }
};

/// BackendTest for TEST_P suites.
template <typename T>
class BackendTestWithParam : public BackendTest, public ::testing::WithParamInterface<T> {};

/// The unit of a lowered kernel, as runtime::prepare makes it.
inline runtime::KernelSource source_of(const kir::Kernel& k) {
  runtime::KernelSource src;
  src.source = codegen::print_cuda(k);
  src.index_bits = k.index_bits;
  src.has_barrier = k.has_barrier;
  return src;
}

/// Compiles src with NVRTC for sm_90 once per distinct source in this
/// process. NVRTC needs no GPU; a rejection is a codegen bug, reported with
/// the whole unit (NVRTC also saves it in the kernel cache directory).
inline void expect_nvrtc_accepts(const runtime::KernelSource& src) {
  static std::set<std::string> done;
  if (!done.insert(src.hash()).second) return;
  try {
    std::string log;
    runtime::nvrtc_compile(src, "sm_90", &log, kernel_cache_dir());
  } catch (const UserError& e) {
    ADD_FAILURE() << "NVRTC rejected generated code: " << e.what() << "\n--- source ---\n"
                  << src.source;
  }
}

/// The tolerance for output `out` (reference value `want`, computed from
/// `inputs`); the default is validation's, the reference's error bound.
using ToleranceFn =
    std::function<ref::Tolerance(const ir::TensorView* out, const ref::HostTensor& want,
                                 const std::vector<ref::HostTensor>& inputs)>;

inline ref::Tolerance dtype_tolerance(const ir::TensorView* out, const ref::HostTensor&,
                                      const std::vector<ref::HostTensor>&) {
  return ref::Tolerance::error_bound(out->dtype());
}

/// Runs a prepared kernel on test_backend() at `sizes` and compares every
/// output with the reference evaluation of `plain` (the unscheduled copy).
/// Returns an empty string on success, else a description of the first
/// failure.
inline std::string run_and_compare(const frontend::FusionDefinition& plain,
                                   const runtime::PreparedKernel& p,
                                   runtime::CompiledKernel& compiled, const ir::SizeBindings& sizes,
                                   uint64_t seed = 7,
                                   const ToleranceFn& tolerance = dtype_tolerance) {
  auto inputs = ref::make_inputs(*plain.fusion, sizes, seed, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, sizes);
  auto got = runtime::execute(test_backend(), compiled, p, inputs, sizes);
  if (got.size() != want.size())
    return "got " + std::to_string(got.size()) + " outputs, expected " +
           std::to_string(want.size());
  std::string why;
  for (size_t i = 0; i < want.size(); ++i) {
    const ir::TensorView* out = plain.fusion->outputs()[i];
    auto c = ref::compare(got[i], want[i], tolerance(out, want[i], inputs));
    if (!c.ok)
      why += "output " + std::to_string(i) + " (" + out->describe() +
             "): " + std::to_string(c.mismatches) + " mismatches, first " + c.first_mismatch + "\n";
  }
  return why;
}

inline std::string sizes_str(const ir::SizeBindings& sizes) {
  std::string s;
  for (const auto& [k, v] : sizes) s += (s.empty() ? "" : ",") + k + "=" + std::to_string(v);
  return s;
}

/// Lowers the scheduled `def` at `sizes`; a failure prints the schedule and
/// is rethrown. SCHEDLAB_DUMP_KERNELS=1 prints every kernel.
inline runtime::PreparedKernel prepare_or_report(const frontend::FusionDefinition& def,
                                                 const ir::SizeBindings& sizes,
                                                 const runtime::KernelOptions& options = {}) {
  runtime::PreparedKernel p;
  try {
    p = runtime::prepare(*def.fusion, sizes, {}, options);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "lowering failed: " << e.what() << "\n--- scheduled fusion ---\n"
                  << sched::print_scheduled_fusion(*def.fusion);
    throw;
  }
  if (std::getenv("SCHEDLAB_DUMP_KERNELS"))
    std::printf("%s%s", sched::print_scheduled_fusion(*def.fusion).c_str(),
                codegen::print_kernel(p.kernel).c_str());
  return p;
}

/// A kernel lowered and run traced (the sanitizer on) on the CPU backend.
struct Traced {
  runtime::PreparedKernel kernel;
  runtime::SanitizedRun sanitized;
  std::string mismatch;  ///< "" when every output matches the reference
};

/// Lowers the scheduled `def` at `sizes` (`plant` may edit the kernel IR
/// before it is printed, the test hook), runs it traced on cpu_backend() as
/// kernel `name` on the inputs of seed `seed`, and compares every output with
/// the reference of `plain`.
inline Traced run_traced(const frontend::FusionDefinition& def,
                         const frontend::FusionDefinition& plain, const ir::SizeBindings& sizes,
                         const std::string& name, uint64_t seed,
                         const std::function<void(kir::Kernel&)>& plant = {}) {
  Traced r{prepare_or_report(def, sizes), {}, ""};
  if (plant) {
    plant(r.kernel.kernel);
    codegen::PrintedUnit unit = codegen::print_unit(r.kernel.kernel);
    r.kernel.source.source = unit.text;
    r.kernel.sites = unit.sites;
  }
  auto inputs = ref::make_inputs(*plain.fusion, sizes, seed, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, sizes);
  r.sanitized = runtime::execute_sanitized(cpu_backend(), r.kernel, inputs, sizes, name);
  for (size_t i = 0; i < want.size(); ++i) {
    auto c = ref::compare(r.sanitized.outputs[i], want[i],
                          ref::Tolerance::error_bound(plain.fusion->outputs()[i]->dtype()));
    if (!c.ok) r.mismatch += c.first_mismatch + "\n";
  }
  return r;
}

/// Schedules a fusion in place.
using Schedule = std::function<void(ir::Fusion&)>;

/// Propagates ref's loop structure and bindings to every tensor (reduction
/// axes included) and inlines as much as possible.
inline void propagate_and_inline(ir::Fusion& f, ir::TensorView* ref) {
  sched::propagate_transformation(ref);
  sched::parallelize_all_like(ref);
  sched::inline_most(f);
}

/// One size binding of a check: run and compare, "" on success.
using RunFn = std::function<std::string(
    const frontend::FusionDefinition& plain, const runtime::PreparedKernel& p,
    runtime::CompiledKernel& compiled, const ir::SizeBindings& sizes)>;

/// Compiles `p` once on test_backend() and runs it at every size binding
/// against the reference of `plain`; a failure prints the schedule and the
/// kernel. A kernel with its sizes compiled in (the default) runs at its own
/// sizes; at the others, `def` is lowered again for each.
inline void expect_matches_at(const frontend::FusionDefinition& def,
                              const frontend::FusionDefinition& plain,
                              const runtime::PreparedKernel& p,
                              const std::vector<ir::SizeBindings>& all_sizes, const RunFn& run) {
  auto compiled = test_backend().compile(p.source);
  for (const ir::SizeBindings& sizes : all_sizes) {
    std::string why;
    runtime::PreparedKernel own;
    const runtime::PreparedKernel* at = &p;
    try {
      std::shared_ptr<runtime::CompiledKernel> c = compiled;
      bool same = true;
      for (const auto& [name, v] : p.kernel.specialized)
        same = same && sizes.count(name) && sizes.at(name) == v;
      // A dynamic kernel that assumes a multiple of 16 these sizes break:
      // one prepared here, dynamic too.
      bool multiples = true;
      for (const auto& [name, d] : p.kernel.divisible)
        multiples = multiples && sizes.count(name) && sizes.at(name) % d == 0;
      if (!multiples) {
        own = runtime::prepare(*def.fusion, sizes, {},
                               runtime::KernelOptions{true, p.kernel.fast_math});
        at = &own;
        c = test_backend().compile(own.source);
      } else if (!same) {
        own = runtime::prepare(*def.fusion, sizes);
        at = &own;
        c = test_backend().compile(own.source);
      }
      why = run(plain, *at, *c, sizes);
    } catch (const std::exception& e) {
      why = std::string("error: ") + e.what();
    }
    EXPECT_EQ(why, "") << "at " << sizes_str(sizes) << "\n--- scheduled fusion ---\n"
                       << sched::print_scheduled_fusion(*def.fusion) << "--- kernel ---\n"
                       << codegen::print_kernel(at->kernel);
  }
}

}  // namespace schedlab::lower::testing
