// The standard fusion library (configs/fusions/*.yaml) against independent
// NumPy fixtures (tests/fixtures/ref/*.json, written by
// tests/fixtures/gen_fixtures.py).
//
// For each fixture: parse the YAML with the frontend, generate the inputs with
// ref::make_inputs and require them to equal the fixture's bit for bit (this
// checks the deterministic generator), evaluate with ref::evaluate and compare
// every output to the fixture within a tight double-vs-double tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/dtype.h"
#include "schedlab/ref/evaluator.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using schedlab::ref::HostTensor;

constexpr double kRelTol = 1e-9;
constexpr double kAbsTol = 1e-12;
constexpr int kMaxReported = 5;  // mismatching elements reported per tensor

fs::path source_dir() { return fs::path(SCHEDLAB_SOURCE_DIR); }
fs::path fixture_dir() { return source_dir() / "tests" / "fixtures" / "ref"; }
fs::path fusion_dir() { return source_dir() / "configs" / "fusions"; }

/// Stems of the files with extension `ext` in `dir`, sorted.
std::vector<std::string> stems(const fs::path& dir, const std::string& ext) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ext) {
      out.push_back(entry.path().stem().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> fixture_names() { return stems(fixture_dir(), ".json"); }

json read_json(const fs::path& p) {
  std::ifstream in(p);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  return json::parse(in);
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

std::vector<int64_t> json_shape(const json& t) { return t.at("shape").get<std::vector<int64_t>>(); }
std::vector<double> json_data(const json& t) { return t.at("data").get<std::vector<double>>(); }

/// Inputs must match bit for bit: same dtype, shape and values.
void expect_input_equal(const HostTensor& got, const json& want, const std::string& what) {
  const std::string want_dtype = want.at("dtype").get<std::string>();
  EXPECT_EQ(std::string(schedlab::ir::dtype_name(got.dtype)), want_dtype) << what << ": dtype";
  const auto shape = json_shape(want);
  ASSERT_EQ(got.shape, shape) << what << ": shape " << shape_str(got.shape) << ", fixture "
                              << shape_str(shape);
  const auto data = json_data(want);
  ASSERT_EQ(got.data.size(), data.size()) << what << ": element count";
  int bad = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    if (got.data[i] != data[i] && bad++ < kMaxReported) {
      ADD_FAILURE() << what << ": element " << i << " is " << got.data[i] << ", fixture "
                    << data[i] << " (exact match required)";
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << data.size() << " elements differ";
}

/// Outputs must match within |got - want| <= kAbsTol + kRelTol * |want|.
void expect_output_close(const HostTensor& got, const json& want, const std::string& what) {
  if (want.contains("dtype")) {
    EXPECT_EQ(std::string(schedlab::ir::dtype_name(got.dtype)), want.at("dtype").get<std::string>())
        << what << ": dtype";
  }
  const auto shape = json_shape(want);
  ASSERT_EQ(got.shape, shape) << what << ": shape " << shape_str(got.shape) << ", fixture "
                              << shape_str(shape);
  const auto data = json_data(want);
  ASSERT_EQ(got.data.size(), data.size()) << what << ": element count";
  int bad = 0;
  for (size_t i = 0; i < data.size(); ++i) {
    const double g = got.data[i];
    const double w = data[i];
    const bool ok = std::isfinite(g) && std::abs(g - w) <= kAbsTol + kRelTol * std::abs(w);
    if (!ok && bad++ < kMaxReported) {
      ADD_FAILURE() << what << ": element " << i << " is " << g << ", fixture " << w
                    << " (diff " << std::abs(g - w) << ")";
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << data.size() << " elements out of tolerance";
}

class StdlibFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(StdlibFixture, MatchesNumPy) {
  const std::string name = GetParam();
  const json fx = read_json(fixture_dir() / (name + ".json"));
  ASSERT_EQ(fx.at("fusion").get<std::string>(), name) << "fixture file name and `fusion` differ";
  const fs::path yaml = fusion_dir() / (name + ".yaml");
  ASSERT_TRUE(fs::exists(yaml)) << "no fusion definition " << yaml.string() << " for fixture "
                                << name;

  try {
    const auto def = schedlab::frontend::load_fusion_file(yaml.string());
    ASSERT_NE(def.fusion, nullptr);
    EXPECT_EQ(def.fusion->name(), name);

    schedlab::ir::SizeBindings sizes;
    for (const auto& [k, v] : fx.at("sizes").items()) sizes[k] = v.get<int64_t>();
    // The fixture sizes are the YAML's defaults.
    EXPECT_EQ(def.default_sizes, sizes) << "YAML `sizes:` and the fixture's sizes differ";
    const auto seed = fx.at("seed").get<uint64_t>();

    // Inputs: the generator must reproduce the fixture exactly.
    const json& fx_inputs = fx.at("inputs");
    ASSERT_EQ(def.fusion->inputs().size(), fx_inputs.size()) << "number of inputs";
    const auto inputs = schedlab::ref::make_inputs(*def.fusion, sizes, seed, def.input_ranges);
    ASSERT_EQ(inputs.size(), fx_inputs.size()) << "make_inputs returned the wrong count";
    for (size_t i = 0; i < inputs.size(); ++i) {
      expect_input_equal(inputs[i], fx_inputs[i],
                         name + " input " + std::to_string(i) + " (" +
                             fx_inputs[i].at("name").get<std::string>() + ")");
    }

    // Outputs: evaluate on the generated inputs, compare with NumPy's.
    const json& fx_outputs = fx.at("outputs");
    ASSERT_EQ(def.fusion->outputs().size(), fx_outputs.size()) << "number of outputs";
    const auto outputs = schedlab::ref::evaluate(*def.fusion, inputs, sizes);
    ASSERT_EQ(outputs.size(), fx_outputs.size()) << "evaluate returned the wrong count";
    for (size_t i = 0; i < outputs.size(); ++i) {
      expect_output_close(outputs[i], fx_outputs[i],
                          name + " output " + std::to_string(i) + " (" +
                              fx_outputs[i].at("name").get<std::string>() + ")");
    }
  } catch (const std::exception& e) {
    FAIL() << name << ": " << e.what();
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StdlibFixture, ::testing::ValuesIn(fixture_names()), param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StdlibFixture);

// The library cannot grow untested: every fusion has a fixture, every
// fixture a fusion, and the library holds at least 12 fusions.
TEST(StdlibFixtures, EveryFusionHasAFixture) {
  const auto fusions = stems(fusion_dir(), ".yaml");
  const auto fixtures = fixture_names();
  EXPECT_GE(fusions.size(), 12u) << "configs/fusions holds too few fusions";
  const std::set<std::string> have(fixtures.begin(), fixtures.end());
  const std::set<std::string> defined(fusions.begin(), fusions.end());
  for (const auto& f : fusions) {
    EXPECT_TRUE(have.count(f)) << "configs/fusions/" << f
                               << ".yaml has no fixture tests/fixtures/ref/" << f
                               << ".json (add it to tests/fixtures/gen_fixtures.py and rerun it)";
  }
  for (const auto& f : fixtures) {
    EXPECT_TRUE(defined.count(f)) << "fixture tests/fixtures/ref/" << f
                                  << ".json has no configs/fusions/" << f << ".yaml";
  }
}

}  // namespace
