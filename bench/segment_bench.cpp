// Long chains through the host (issue 16): the segmenter, and segmenting
// plus scheduling, lowering and CUDA printing with the built-in plugins, at
// 250 to 4,000 statements. Each used to be quadratic or worse in the chain's
// length; Google Benchmark's complexity fit (BigO) says what they are now.
// Figures go to docs/perf.md with the command that produced them.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "schedlab/base/install_paths.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/lower/lower.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/segment/segment.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace {

using namespace schedlab;

/// As scripts/gen-chain: `n` statements on one input; with `mixed`, every
/// 8th subtracts its operand's row sum (so no one scheduler takes it all).
frontend::FusionDefinition chain(int n, bool mixed) {
  std::string text = "fusion: chain\ninputs:\n  x: {dtype: f32, shape: [N, K]}\nbody: |\n";
  std::string prev = "x";
  for (int i = 1; i <= n; ++i) {
    const std::string t = "t" + std::to_string(i);
    if (mixed && i % 8 == 0)
      text += "  " + t + " = " + prev + " - sum(" + prev + ", axis=1, keepdim=true)\n";
    else
      text += "  " + t + " = " + prev + (i % 2 ? " * 0.5\n" : " + 1\n");
    prev = t;
  }
  return frontend::parse_fusion_text(text + "outputs: [" + prev + "]\n", "chain.yaml");
}

void chain_lengths(benchmark::internal::Benchmark* b) {
  for (int n : {250, 500, 1000, 2000, 4000}) b->Arg(n);
}

int reductions(const ir::Fusion& f) {
  int r = 0;
  for (const ir::Expr* e : f.exprs()) r += e->is<ir::ReductionOp>();
  return r;
}

/// The segment tests' fake schedulers (tests/segment/segment_test_util.h):
/// the segmenter's own cost, with schedulers that answer in O(fusion).
std::vector<segment::Scheduler> fake_schedulers() {
  return {{"one_reduction",
           [](ir::Fusion& f, const ir::SizeBindings&) {
             for (const ir::Expr* e : f.exprs())
               if (e->is<ir::ReductionOp>() && !e->out()->uses().empty())
                 return segment::Verdict{false, "read"};
             return segment::Verdict{reductions(f) == 1, "count"};
           }},
          {"no_reduction", [](ir::Fusion& f, const ir::SizeBindings&) {
             return segment::Verdict{reductions(f) == 0, "reduction"};
           }}};
}

void BM_SegmentMixedChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto def = chain(n, /*mixed=*/true);
  const auto schedulers = fake_schedulers();
  for (auto _ : state) {
    auto s = segment::segment(*def.fusion, {{"N", 64}, {"K", 64}}, schedulers);
    benchmark::DoNotOptimize(s.segments.size());
  }
  state.SetComplexityN(n);
}
BENCHMARK(BM_SegmentMixedChain)->Apply(chain_lengths)->Unit(benchmark::kMillisecond)->Complexity();

/// The built-in plugins: the pointwise chain is one offer, so this is
/// their can_schedule on a long fusion.
void BM_SegmentPointwiseChainBuiltins(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto def = chain(n, /*mixed=*/false);
  plugin::Registry registry({plugin::builtin_plugin_dir()});
  const auto schedulers = sweep::plugin_schedulers(sweep::segmenter_plugins(registry), {});
  for (auto _ : state) {
    auto s = segment::segment(*def.fusion, {{"N", 64}, {"K", 64}}, schedulers);
    benchmark::DoNotOptimize(s.segments.size());
  }
  state.SetComplexityN(n);
}
BENCHMARK(BM_SegmentPointwiseChainBuiltins)
    ->Apply(chain_lengths)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

/// Segment, schedule with the built-in plugins, lower and print CUDA: what
/// `schedlab exec` does before compiling.
void BM_ScheduleLowerPointwiseChain(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  plugin::Registry registry({plugin::builtin_plugin_dir()});
  const auto plugins = sweep::segmenter_plugins(registry);
  sweep::BoundFusion bf{"chain.yaml", chain(n, /*mixed=*/false), {{"N", 64}, {"K", 64}}};
  for (auto _ : state) {
    auto sf = sweep::segment_and_schedule(bf, plugins, {});
    for (const segment::SegmentedGroup& seg : sf.segmentation.segments) {
      auto k = lower::lower(*seg.fusion.fusion);
      std::string src = codegen::print_cuda(k);
      benchmark::DoNotOptimize(src.data());
    }
  }
  state.SetComplexityN(n);
}
BENCHMARK(BM_ScheduleLowerPointwiseChain)
    ->Apply(chain_lengths)
    ->Unit(benchmark::kMillisecond)
    ->Complexity();

}  // namespace

BENCHMARK_MAIN();
