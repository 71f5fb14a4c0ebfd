// Helpers for the script_plugin suites: segments of standard or fixture
// fusions, running a scheduled one against the reference, NVRTC, full error
// texts, and temporary script files.
//
// Kernels run on the CPU backend, or, in an executable compiled with
// SCHEDLAB_TEST_BACKEND_CUDA (script_plugin_gpu_test, CTest label gpu), on
// the CUDA backend of device 0; its fixtures skip without a device.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/host.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/runtime/executor.h"
#include "test_support.h"

namespace schedlab::plugin::sp_testing {

/// configs/fusions/<name>.yaml, or a fixture (tests/script_plugin/fixtures)
/// when `name` ends in .yaml.
inline frontend::FusionDefinition load(const std::string& name) {
  if (name.size() > 5 && name.substr(name.size() - 5) == ".yaml")
    return frontend::load_fusion_file(std::string(SP_FIXTURE_DIR) + "/" + name);
  return frontend::load_fusion_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/" + name +
                                    ".yaml");
}

/// A fusion and the plugin segment over it, at bound sizes.
struct Scheduled {
  std::string name;
  frontend::FusionDefinition def;
  HostSegment seg;
};

inline Scheduled segment_of(const std::string& fusion, const ir::SizeBindings& sizes) {
  Scheduled s{fusion, load(fusion), {}};
  s.seg.fusion = s.def.fusion.get();
  s.seg.sizes = frontend::bind_sizes(s.def, sizes);
  return s;
}

inline std::string cache_dir() {
  return std::string(SCHEDLAB_BINARY_DIR) + "/tests/script_plugin/kernel_cache";
}

#ifdef SCHEDLAB_TEST_BACKEND_CUDA
inline constexpr bool kCudaTestBackend = true;
#else
inline constexpr bool kCudaTestBackend = false;
#endif

/// The backend kernels run on (see the top); one per process.
inline runtime::Backend& test_backend() {
  static std::unique_ptr<runtime::Backend> backend =
      kCudaTestBackend ? runtime::make_cuda_backend(cache_dir() + "-cuda")
                       : runtime::make_cpu_backend(model::model_device_properties(), cache_dir());
  return *backend;
}

/// A fixture whose tests skip in a CUDA executable when no device answers.
template <typename Base = ::testing::Test>
class BackendTest : public Base {
 protected:
  void SetUp() override {
    if (!kCudaTestBackend) return;
    std::string why;
    if (!runtime::cuda_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
  }
};

/// Runs the scheduled fusion on test_backend() against the reference of an
/// unscheduled copy, with exec's reduction-aware tolerance; "" when every
/// output matches, else what went wrong.
inline std::string run_and_compare(const Scheduled& s) {
  auto plain = load(s.name);
  auto inputs = ref::make_inputs(*plain.fusion, s.seg.sizes, 7, plain.input_ranges);
  auto want = ref::evaluate(*plain.fusion, inputs, s.seg.sizes);
  auto prepared = runtime::prepare(*s.def.fusion, s.seg.sizes);
  runtime::Backend& backend = test_backend();
  auto compiled = backend.compile(prepared.source);
  auto got = runtime::execute(backend, *compiled, prepared, inputs, s.seg.sizes);
  if (got.size() != want.size()) return "wrong number of outputs";
  std::string r;
  for (size_t i = 0; i < got.size(); ++i) {
    auto c = ref::compare(got[i], want[i],
                          ref::Tolerance::error_bound(plain.fusion->outputs()[i]->dtype()));
    if (!c.ok) r += "output " + std::to_string(i) + " first mismatch at " + c.first_mismatch + "; ";
  }
  return r;
}

/// NVRTC's log when it refuses the scheduled fusion's CUDA source for sm_90; "" when it compiles.
inline std::string nvrtc_errors(const Scheduled& s) {
  auto prepared = runtime::prepare(*s.def.fusion, s.seg.sizes);
  std::string log;
  std::string image = runtime::nvrtc_compile(prepared.source, "sm_90", &log, cache_dir());
  return image.empty() ? "nvrtc: " + log : "";
}

/// The full what() of the UserError `fn` throws ("error: file:line:col: ...").
using ::schedlab::test_support::user_error_what_of;

/// A file with the given text in a fresh directory, both removed at the end.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text) {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "schedlab-script-test-XXXXXX").string();
    EXPECT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/" + name;
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, path_;
};

}  // namespace schedlab::plugin::sp_testing
