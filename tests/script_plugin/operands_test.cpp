// Plugin ABI 1.7: tensor_definition and tensor_operand through the C table,
// as a plugin calls them (a definition's operands in order, repeats and
// scalars kept; a Permute's order; a Broadcast's new axes; a copy's data
// path), and the C++ wrapper's operands()/definition()/permutation() on this
// host and, bound to a table cut at 1.6's size, on an older one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "host_api.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/plugin.h"
#include "schedlab/plugin.hpp"
#include "sp_test_util.h"

namespace schedlab::plugin {
namespace {

using ::testing::ElementsAre;

namespace pa = schedlab::plugin_api;

/// tests/script_plugin/fixtures/operands.yaml at N=3, K=5, with a C handle.
struct Operands {
  frontend::FusionDefinition def =
      frontend::load_fusion_file(std::string(SP_FIXTURE_DIR) + "/operands.yaml");
  HostSegment seg;
  SchedlabSegment ctx{};
  Operands() {
    seg.fusion = def.fusion.get();
    seg.sizes = frontend::bind_sizes(def, {{"N", 3}, {"K", 5}});
    ctx.segment = &seg;
  }
  /// The tensor the body names `name`.
  SchedlabTensor* t(const std::string& name) const {
    for (ir::TensorView* tv : def.fusion->tensors())
      if (tv->user_name() == name) return reinterpret_cast<SchedlabTensor*>(tv);
    ADD_FAILURE() << "no tensor named " << name;
    return nullptr;
  }
  SchedlabDefinition definition(const std::string& name) {
    SchedlabDefinition d{};
    d.struct_size = sizeof d;
    EXPECT_EQ(host_api()->tensor_definition(&ctx, t(name), &d), SCHEDLAB_OK)
        << host_api()->last_error();
    return d;
  }
  /// Each operand of `name`'s definition: "T0", "const f64(0.5)=0.5", "size K=5".
  std::vector<std::string> operands(const std::string& name) {
    std::vector<std::string> r;
    for (int32_t i = 0; i < definition(name).noperands; ++i) {
      SchedlabOperand o{};
      o.struct_size = sizeof o;
      EXPECT_EQ(host_api()->tensor_operand(&ctx, t(name), i, &o), SCHEDLAB_OK);
      EXPECT_EQ(o.struct_size, sizeof o);
      if (o.kind == SCHEDLAB_OPERAND_TENSOR) {
        EXPECT_EQ(std::string(o.text), reinterpret_cast<ir::TensorView*>(o.tensor)->str());
        r.push_back(std::string(o.text) + (o.tensor == t("x") ? "(x)" : ""));
      } else {
        EXPECT_EQ(o.tensor, nullptr);
        r.push_back(std::string(o.kind == SCHEDLAB_OPERAND_SIZE ? "size " : "const ") + o.text +
                    "=" + std::to_string(o.value) + " dtype " + std::to_string(o.dtype));
      }
    }
    return r;
  }
};

TEST(Abi17, OperandsKeepRepeatsAndScalarsInOrder) {
  Operands f;
  // x + x: x twice (tensor_producers says it once).
  EXPECT_THAT(f.operands("a"), ElementsAre("T0(x)", "T0(x)"));
  // x * 0.5: the constant, its f64 dtype and value.
  const std::string f64 = std::to_string(SCHEDLAB_DTYPE_F64),
                    i64 = std::to_string(SCHEDLAB_DTYPE_I64);
  EXPECT_THAT(f.operands("h"), ElementsAre("T0(x)", "const 0.5=0.500000 dtype " + f64));
  // where(m, h, 0): the condition first, the constant last.
  EXPECT_THAT(f.operands("w"), ElementsAre("T1", "T3", "const 0=0.000000 dtype " + i64));
  // w / K: the size at the segment's sizes.
  EXPECT_THAT(f.operands("k"), ElementsAre("T4", "size K=5.000000 dtype " + i64));
  EXPECT_THAT(f.operands("c"), ElementsAre("T5"));
  EXPECT_THAT(f.operands("x"), ElementsAre());
  SchedlabDefinition in = f.definition("x");
  EXPECT_EQ(in.op_kind, SCHEDLAB_OP_NONE);
  EXPECT_EQ(in.axes, nullptr);
  EXPECT_EQ(f.definition("w").op_kind, SCHEDLAB_OP_WHERE);
  EXPECT_EQ(f.definition("c").op_kind, SCHEDLAB_OP_CAST);
}

TEST(Abi17, APermuteCarriesItsOrderAndABroadcastItsNewAxes) {
  Operands f;
  SchedlabDefinition p = f.definition("p");
  EXPECT_EQ(p.op_kind, SCHEDLAB_OP_PERMUTE);
  ASSERT_EQ(p.naxes, 2);
  EXPECT_THAT(std::vector<int32_t>(p.axes, p.axes + p.naxes), ElementsAre(1, 0));
  SchedlabDefinition b = f.definition("b");
  EXPECT_EQ(b.op_kind, SCHEDLAB_OP_BROADCAST);
  ASSERT_EQ(b.naxes, 2);
  EXPECT_THAT(std::vector<int32_t>(b.axes, b.axes + b.naxes), ElementsAre(1, 0));
  EXPECT_EQ(f.definition("a").naxes, 0);
  // A cache copy says its data path and cache policy.
  SchedlabTensor* cache = nullptr;
  ASSERT_EQ(host_api()->cache_after(&f.ctx, f.t("x"), SCHEDLAB_CACHE_STREAMING, &cache),
            SCHEDLAB_OK);
  SchedlabDefinition c{};
  c.struct_size = sizeof c;
  ASSERT_EQ(host_api()->tensor_definition(&f.ctx, cache, &c), SCHEDLAB_OK);
  EXPECT_EQ(c.op_kind, SCHEDLAB_OP_LOAD_STORE);
  EXPECT_EQ(c.load_store_op, SCHEDLAB_LOAD_SET);
  EXPECT_EQ(c.cache_op, SCHEDLAB_CACHE_STREAMING);
}

TEST(Abi17, ArgumentsAreChecked) {
  Operands f;
  const SchedlabHostApi& api = *host_api();
  SchedlabOperand o{};
  o.struct_size = sizeof o;
  EXPECT_EQ(api.tensor_operand(&f.ctx, f.t("a"), 2, &o), SCHEDLAB_ERR_USER);
  EXPECT_STREQ(api.last_error(),
               "tensor_operand: operand 2 is out of range for T2 (a), whose definition has 2 "
               "operands");
  EXPECT_EQ(api.tensor_operand(&f.ctx, f.t("x"), 0, &o), SCHEDLAB_ERR_USER);
  EXPECT_EQ(api.tensor_operand(&f.ctx, f.t("a"), 0, nullptr), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api.last_error(), "tensor_operand: out is null");
  EXPECT_EQ(api.tensor_definition(nullptr, f.t("a"), nullptr), SCHEDLAB_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(api.last_error(), "tensor_definition: segment handle is null");
  // An older caller's smaller struct gets only the bytes it knows.
  SchedlabDefinition small{};
  small.struct_size = offsetof(SchedlabDefinition, load_store_op);
  small.cache_op = 77;
  ASSERT_EQ(api.tensor_definition(&f.ctx, f.t("a"), &small), SCHEDLAB_OK);
  EXPECT_EQ(small.struct_size, offsetof(SchedlabDefinition, load_store_op));
  EXPECT_EQ(small.noperands, 2);
  EXPECT_EQ(small.cache_op, 77);
}

/// The wrapper bound to `table` for the scope, then to the host's own again.
struct BoundTo {
  explicit BoundTo(const SchedlabHostApi& table) { pa::detail::bind_host(&table); }
  ~BoundTo() { pa::detail::bind_host(host_api()); }
};

TEST(Abi17, TheWrapperReadsOperandsAndFallsBackOnAnOlderHost) {
  Operands f;
  auto tv = [&](const std::string& name) { return pa::TensorView(&f.ctx, f.t(name)); };
  {
    BoundTo bound(*host_api());
    std::vector<pa::Operand> sq = tv("a").operands();
    ASSERT_EQ(sq.size(), 2u);
    EXPECT_EQ(sq[0].tensor, sq[1].tensor);
    EXPECT_EQ(sq[0].tensor, tv("x"));
    std::vector<pa::Operand> h = tv("h").operands();
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[1].kind, pa::Operand::Kind::Constant);
    EXPECT_FALSE(h[1].is_tensor());
    EXPECT_EQ(h[1].value, 0.5);
    EXPECT_EQ(h[1].dtype, pa::DataType::F64);
    EXPECT_EQ(tv("k").operands()[1].kind, pa::Operand::Kind::Size);
    EXPECT_THAT(tv("p").permutation(), ElementsAre(1, 0));
    EXPECT_THAT(tv("b").permutation(), ElementsAre());
    EXPECT_THAT(tv("b").definition().axes, ElementsAre(1, 0));
  }
  // A 1.6 host: its table ends at recompute.
  SchedlabHostApi old = *host_api();
  old.struct_size = offsetof(SchedlabHostApi, tensor_definition);
  old.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION_OF(1, 6);
  BoundTo bound(old);
  std::vector<pa::Operand> sq = tv("a").operands();
  ASSERT_EQ(sq.size(), 1u);  // what 1.6 can say: the distinct producers
  EXPECT_EQ(sq[0].tensor, tv("x"));
  EXPECT_EQ(sq[0].text, "T0");
  EXPECT_EQ(tv("h").operands().size(), 1u);
  EXPECT_THAT(tv("p").permutation(), ElementsAre());
  EXPECT_EQ(tv("p").definition().op_kind, pa::OpKind::Permute);
}

}  // namespace
}  // namespace schedlab::plugin
