// Host-side latency of the steps a user waits on before any kernel exists:
// parsing a fusion definition, verifying it, printing it, and evaluating the
// reference. Figures go to docs/perf.md with the command that produced them.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "schedlab/ref/evaluator.h"

namespace {

std::string read_fusion(const std::string& name) {
  std::ifstream in(std::string(SCHEDLAB_CONFIG_DIR) + "/fusions/" + name + ".yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_ParseFusion(benchmark::State& state, const std::string& name) {
  std::string text = read_fusion(name);
  for (auto _ : state) {
    auto def = schedlab::frontend::parse_fusion_text(text, name + ".yaml");
    benchmark::DoNotOptimize(def.fusion.get());
  }
}

void BM_VerifyAndPrint(benchmark::State& state, const std::string& name) {
  auto def = schedlab::frontend::parse_fusion_text(read_fusion(name), name + ".yaml");
  for (auto _ : state) {
    schedlab::ir::verify(*def.fusion);
    std::string s = schedlab::ir::print_math(*def.fusion);
    benchmark::DoNotOptimize(s.data());
  }
}

void BM_ReferenceEval(benchmark::State& state, const std::string& name) {
  auto def = schedlab::frontend::parse_fusion_text(read_fusion(name), name + ".yaml");
  int64_t k = state.range(0);
  schedlab::ir::SizeBindings sizes{{"N", 64}, {"K", k}};
  auto inputs = schedlab::ref::make_inputs(*def.fusion, sizes, 1, def.input_ranges);
  int64_t elems = 0;
  for (const auto& t : inputs) elems += t.numel();
  for (auto _ : state) {
    auto out = schedlab::ref::evaluate(*def.fusion, inputs, sizes);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * elems);
}

}  // namespace

BENCHMARK_CAPTURE(BM_ParseFusion, softmax, std::string("softmax"));
BENCHMARK_CAPTURE(BM_ParseFusion, layernorm, std::string("layernorm"));
BENCHMARK_CAPTURE(BM_VerifyAndPrint, layernorm, std::string("layernorm"));
BENCHMARK_CAPTURE(BM_ReferenceEval, softmax, std::string("softmax"))->Arg(1024)->Arg(16384);

BENCHMARK_MAIN();
