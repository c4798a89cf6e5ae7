// Elementwise ops on global tensors: binary ops (with broadcasting), where, the unary family, casts
// and number operands give, for every SBP of every input, the logical value the same op gives on
// the whole tensors locally, with the output SBP of ops/sbp_rules.h's ElementwiseSignature; inputs
// that are not all global over one placement are refused on every rank alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

// Logical values 1..7 (Logical) shifted by `shift`: two inputs of one shape differ.
std::vector<float> Values(const Shape& shape, float shift) {
  std::vector<float> v = Logical<float>(shape);
  for (float& x : v) x += shift;
  return v;
}

using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

// For every SBP of a (shape sa) and of b (shape sb): op on the global tensors == op on the whole
// tensors (as float32), and the output is global over the placement.
void CheckBinary(const char* name, const Shape& sa, const Shape& sb, const Binary& op,
                 const Placement& p) {
  const std::vector<float> va = Values(sa, 0), vb = Values(sb, 1);
  const std::vector<float> want =
      op(tensor<float>(va, sa, Device("cpu")), tensor<float>(vb, sb, Device("cpu")))
          .to(DType::kFloat32)
          .to_vector<float>();
  for (const Sbp& s : AllSbps(sa)) {
    for (const Sbp& t : AllSbps(sb)) {
      SCOPED_TRACE(std::string(name) + " of " + sa.str() + " " + s.str() + " and " + sb.str() +
                   " " + t.str() + " over " + p.str());
      const Tensor y = op(GlobalOf(va, sa, s, p), GlobalOf(vb, sb, t, p));
      ASSERT_TRUE(y.is_global());
      EXPECT_EQ(y.placement(), p);
      if (!p.contains(rank())) continue;
      ExpectClose(y.to(DType::kFloat32).to_vector<float>(), want);
    }
  }
}

const std::vector<std::pair<const char*, Binary>>& BinaryOps() {
  static const std::vector<std::pair<const char*, Binary>> ops = {
      {"add", [](const Tensor& a, const Tensor& b) { return a + b; }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a - b; }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a * b; }},
      {"div", [](const Tensor& a, const Tensor& b) { return a / b; }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return maximum(a, b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return pow(a, b * 0.25); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return gt(a, b); }},
      {"where", [](const Tensor& a, const Tensor& b) { return where(gt(a, 3.0), a, b); }},
  };
  return ops;
}

TEST(GlobalElementwiseTest, BinaryOpsGiveTheLocalValueForEverySbpPair) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {Shape({5, 3}), Shape({5, 3})},     // same shapes
      {Shape({5, 3}), Shape({3})},        // a bias
      {Shape({2, 1, 3}), Shape({4, 1})},  // both broadcast
  };
  for (const auto& [name, op] : BinaryOps()) {
    for (const auto& [sa, sb] : shapes) CheckBinary(name, sa, sb, op, World());
  }
}

TEST(GlobalElementwiseTest, OutputSbpsFollowTheCheapestSignature) {
  const Placement p = World();
  const Shape s({6, 4});
  const std::vector<float> v = Values(s, 0);
  const Tensor s0 = GlobalOf(v, s, Sbp::split(0), p), s1 = GlobalOf(v, s, Sbp::split(1), p);
  const Tensor b = GlobalOf(v, s, Sbp::broadcast(), p), ps = GlobalOf(v, s, Sbp::partial_sum(), p);
  const Tensor bias = GlobalOf(Values(Shape({4}), 0), Shape({4}), Sbp::broadcast(), p);
  EXPECT_EQ((s0 + s0).sbp(), Sbp::split(0));
  EXPECT_EQ((s0 + b).sbp(), Sbp::split(0));     // B is sliced locally
  EXPECT_EQ((b * s1).sbp(), Sbp::split(1));     // whichever input splits
  EXPECT_EQ((s0 + bias).sbp(), Sbp::split(0));  // data parallel: a batch split and a bias
  EXPECT_EQ((ps + ps).sbp(), Sbp::partial_sum());
  EXPECT_EQ((ps - b).sbp(), Sbp::partial_sum());  // B boxed to P locally
  EXPECT_EQ((ps * b).sbp(), Sbp::partial_sum());
  EXPECT_EQ((b * ps).sbp(), Sbp::partial_sum());
  EXPECT_EQ((ps / b).sbp(), Sbp::partial_sum());
  EXPECT_EQ((ps * 3.0).sbp(), Sbp::partial_sum());
  EXPECT_EQ((ps + 3.0).sbp(), Sbp::partial_sum());
  EXPECT_EQ((-ps).sbp(), Sbp::partial_sum());
  EXPECT_EQ((b / ps).sbp(), Sbp::broadcast());     // not linear in the divisor
  EXPECT_EQ((ps * ps).sbp(), Sbp::partial_sum());  // one factor reduced
  EXPECT_EQ(maximum(ps, b).sbp(), Sbp::broadcast());
  EXPECT_EQ(ps.exp().sbp(), Sbp::broadcast());
  EXPECT_EQ(s1.exp().sbp(), Sbp::split(1));
  EXPECT_EQ(s0.to(DType::kFloat64).sbp(), Sbp::split(0));
  EXPECT_EQ((s0 + s1).placement(), p);
}

TEST(GlobalElementwiseTest, UnaryOpsCastsAndNumbersGiveTheLocalValueForEverySbp) {
  using Unary = std::function<Tensor(const Tensor&)>;
  const std::vector<std::pair<const char*, Unary>> ops = {
      {"neg", [](const Tensor& x) { return -x; }},
      {"exp", [](const Tensor& x) { return (x * 0.1).exp(); }},
      {"relu", [](const Tensor& x) { return (x - 4.0).relu(); }},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }},
      {"cast", [](const Tensor& x) { return x.to(DType::kFloat64); }},
      {"clamp", [](const Tensor& x) { return clamp(x, 2.0, 5.0); }},
      {"pow_scalar", [](const Tensor& x) { return pow(x, 2.0); }},
      {"numbers", [](const Tensor& x) { return 2.0 - x / 4.0 + x * 3.0; }},
      {"int_cast", [](const Tensor& x) { return x.to(DType::kInt32) + 1; }},
      {"logical_not", [](const Tensor& x) { return logical_not(gt(x, 3.0)); }},
  };
  const Shape shape({5, 3});
  const std::vector<float> v = Values(shape, 0);
  for (const auto& [name, op] : ops) {
    const std::vector<float> want =
        op(tensor<float>(v, shape, Device("cpu"))).to(DType::kFloat32).to_vector<float>();
    for (const Sbp& s : AllSbps(shape)) {
      SCOPED_TRACE(std::string(name) + " of " + s.str());
      const Tensor y = op(GlobalOf(v, shape, s, World()));
      ASSERT_TRUE(y.is_global());
      ExpectClose(y.to(DType::kFloat32).to_vector<float>(), want);
      if (s.is_split()) EXPECT_EQ(y.sbp(), s);
    }
  }
}

TEST(GlobalElementwiseTest, PlacementsOfPartOfTheWorldAndSim) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  // Rank 0 alone: the other ranks hold empty shards and compute nothing.
  const Placement first("cpu", {0});
  CheckBinary("add", Shape({5, 3}), Shape({3}), BinaryOps()[0].second, first);
  // Ranks 1.. on sim devices: the same values.
  std::vector<int> rest;
  for (int r = 1; r < world_size(); ++r) rest.push_back(r);
  CheckBinary("mul", Shape({5, 3}), Shape({5, 3}), BinaryOps()[2].second, Placement("sim", rest));
}

TEST(GlobalElementwiseTest, InputsNotGlobalOverOnePlacementAreRefusedOnEveryRank) {
  const Shape shape({4, 3});
  const std::vector<float> v = Values(shape, 0);
  const Tensor g = GlobalOf(v, shape, Sbp::split(0), World());
  const Tensor local = tensor<float>(v, shape, Device("cpu"));
  ExpectInvalid([&] { (void)(g + local); },
                {"add: input 1 is a local tensor but input 0 is global over", "to_global"});
  ExpectInvalid([&] { (void)where(gt(local, 2.0), g, g); },
                {"where: input 0 is a local tensor but input 1 is global over"});
  const Tensor on_sim = GlobalOf(v, shape, Sbp::broadcast(), Placement("sim", World().ranks()));
  ExpectInvalid([&] { (void)maximum(g, on_sim); },
                {"maximum: input 1 is global over", "but input 0 over", "box one"});
  // The runtime goes on: the next global op works on every rank.
  EXPECT_EQ((g + g).to_vector<float>(),
            (tensor<float>(v, shape, Device("cpu")) * 2.0).to_vector<float>());
}

}  // namespace
}  // namespace ofl::testing
