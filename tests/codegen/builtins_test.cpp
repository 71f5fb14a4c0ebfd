// The CUDA printer's spelling of the typed built-ins and tensor sizes
// (kir::Builtin, kir::TensorDim): a hand-built kernel that reads every kind,
// its text, and its values when the CPU backend runs it (the CPU runtime
// defines threadIdx, blockIdx, blockDim and gridDim).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "cpu_test_util.h"
#include "schedlab/codegen/cuda_printer.h"
#include "schedlab/model/device.h"
#include "schedlab/runtime/cpu_backend.h"

namespace schedlab::codegen {
namespace {

using kir::Expr;
using kir::ExprP;
using P = ir::ParallelType;
using ::testing::HasSubstr;

ExprP c(int64_t v) {
  return Expr::integer(v);
}

kir::Buffer* add_param(kir::Kernel& k, const char* name, kir::Param::Source source) {
  auto b = std::make_unique<kir::Buffer>();
  b->name = name;
  b->dtype = ir::DataType::I64;
  b->memory = ir::MemoryType::Global;
  b->is_param = true;
  b->rank = 1;
  k.params.push_back({source, 0, nullptr, b.get()});
  k.buffers.push_back(std::move(b));
  return k.buffers.back().get();
}

/// out[g] = g + 1000 gridDim.x + 10^5 (in.size[0] >> 2) + 10^7 (in.size[0] / 3)
/// + 10^9 in.stride[0], g = blockIdx.x * blockDim.x + threadIdx.x, for g
/// below out.size[0].
kir::Kernel builtins_kernel() {
  kir::Kernel k;
  k.index_bits = 64;
  const kir::Buffer* in = add_param(k, "T0", kir::Param::Source::Input);
  const kir::Buffer* out = add_param(k, "T1", kir::Param::Source::Output);
  const ExprP g =
      Expr::launch_index(P::BIDx) * Expr::launch_extent(P::TIDx) + Expr::launch_index(P::TIDx);
  const ExprP value =
      g + Expr::launch_extent(P::BIDx) * c(1000) + Expr::tensor_size(in, 0, 4) * c(100000) +
      Expr::tensor_size(in, 0, 3) * c(10000000) + Expr::tensor_stride(in, 0) * c(1000000000);
  k.body = kir::Block::make();
  auto guard = kir::If::make(g < Expr::tensor_size(out, 0));
  guard->then_body.push_back(kir::Store::make(out, g, value));
  k.body->body.push_back(std::move(guard));
  return k;
}

TEST(CudaBuiltins, EachBuiltinAndSizeHasItsCudaSpelling) {
  const std::string text = print_kernel(builtins_kernel());
  EXPECT_THAT(text, HasSubstr("  const sl_index_t sl_tx = threadIdx.x;\n"));
  EXPECT_THAT(text, HasSubstr("  const sl_index_t sl_bx = blockIdx.x;\n"));
  EXPECT_THAT(text, HasSubstr("((sl_bx * ((sl_index_t)blockDim.x)) + sl_tx)"));
  EXPECT_THAT(text, HasSubstr("(gridDim.x * 1000)"));
  EXPECT_THAT(text, HasSubstr("((T0.size[0] >> 2) * 100000)"));
  EXPECT_THAT(text, HasSubstr("((T0.size[0] / 3) * 10000000)"));
  EXPECT_THAT(text, HasSubstr("(T0.stride[0] * 1000000000)"));
  EXPECT_THAT(text, HasSubstr(" < T1.size[0])"));
  // Only the indices read are loaded: no sl_ty, sl_by.
  EXPECT_THAT(text, ::testing::Not(HasSubstr("sl_ty")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("sl_by")));
}

TEST(CudaBuiltins, TheCpuBackendRunsThemWithTheLaunchsValues) {
  runtime::testing::TempDir cache;
  auto be = runtime::make_cpu_backend(model::model_device_properties(), cache.path());
  const kir::Kernel k = builtins_kernel();
  runtime::KernelSource src;
  src.source = print_cuda(k);
  src.index_bits = k.index_bits;
  auto compiled = be->compile(src);
  const int64_t n = 10;  // 3 blocks of 4 threads: two threads past the end
  runtime::testing::Buffer<int64_t> din(*be, std::vector<int64_t>(12, 0)), dout(*be, n);
  runtime::LaunchDims dims;
  dims.grid = {3, 1, 1};
  dims.block = {4, 1, 1};
  be->launch(*compiled, dims,
             {din.arg(ir::DataType::I64, {12}, {1}), dout.arg(ir::DataType::I64, {n}, {1})});
  const std::vector<int64_t> got = dout.read();
  for (int64_t g = 0; g < n; ++g)
    EXPECT_EQ(got[static_cast<size_t>(g)],
              g + 3 * 1000 + 3 * 100000 + 4 * int64_t{10000000} + int64_t{1000000000})
        << "element " << g;
}

}  // namespace
}  // namespace schedlab::codegen
