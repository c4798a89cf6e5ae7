// Matrix products on global tensors: mm, bmm, matmul (2-dim, a batch folded into the rows) and
// linear give, for every SBP of every input, the logical value the same call gives on the whole
// tensors locally, and the classic signatures keep their SBPs without boxing (S(0) x B -> S(0),
// B x S(1) -> S(1), S(1) x S(0) -> P; linear's data-, column- and row-parallel forms); permute
// moves a split with its dim.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

Tensor Global(const Shape& shape, const Sbp& sbp, float shift = 0) {
  std::vector<float> v = Logical<float>(shape);
  for (float& x : v) x += shift;
  return GlobalOf(v, shape, sbp);
}

Tensor Local(const Shape& shape, float shift = 0) {
  std::vector<float> v = Logical<float>(shape);
  for (float& x : v) x += shift;
  return tensor<float>(v, shape, Device("cpu"));
}

using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

void CheckEveryPair(const std::string& name, const Shape& sa, const Shape& sb, const Binary& op) {
  const std::vector<float> want = op(Local(sa), Local(sb, 1)).to_vector<float>();
  for (const Sbp& s : AllSbps(sa)) {
    for (const Sbp& t : AllSbps(sb)) {
      SCOPED_TRACE(name + " of " + sa.str() + " " + s.str() + " and " + sb.str() + " " + t.str());
      const Tensor y = op(Global(sa, s), Global(sb, t, 1));
      ASSERT_TRUE(y.is_global());
      ExpectClose(y.to_vector<float>(), want, 1e-5, 1e-5);
    }
  }
}

TEST(GlobalMatmulTest, ProductsGiveTheLocalValueForEverySbpPair) {
  CheckEveryPair("mm", Shape({5, 4}), Shape({4, 3}),
                 [](const Tensor& a, const Tensor& b) { return mm(a, b); });
  CheckEveryPair("bmm", Shape({3, 2, 4}), Shape({3, 4, 5}),
                 [](const Tensor& a, const Tensor& b) { return bmm(a, b); });
  CheckEveryPair("matmul folded", Shape({2, 3, 4}), Shape({4, 5}),
                 [](const Tensor& a, const Tensor& b) { return matmul(a, b); });
  CheckEveryPair("mm of a transposed view", Shape({4, 5}), Shape({4, 3}),
                 [](const Tensor& a, const Tensor& b) {
                   return mm(a.permute({1, 0}), b);
                 });
}

TEST(GlobalMatmulTest, LinearGivesTheLocalValueForEverySbp) {
  const Shape sx({6, 4}), sw({5, 4}), sb({5});
  const std::vector<float> want = linear(Local(sx), Local(sw, 1), Local(sb, 2)).to_vector<float>();
  for (const Sbp& s : AllSbps(sx)) {
    for (const Sbp& t : AllSbps(sw)) {
      for (const Sbp& u : AllSbps(sb)) {
        SCOPED_TRACE("linear of " + s.str() + " " + t.str() + " " + u.str());
        const Tensor y = linear(Global(sx, s), Global(sw, t, 1), Global(sb, u, 2));
        ExpectClose(y.to_vector<float>(), want, 1e-5, 1e-5);
      }
    }
  }
}

TEST(GlobalMatmulTest, TheClassicSignaturesNeedNoBoxing) {
  const Sbp kB = Sbp::broadcast(), kP = Sbp::partial_sum();
  const Shape sa({6, 4}), sb({4, 5});
  EXPECT_EQ(mm(Global(sa, Sbp::split(0)), Global(sb, kB)).sbp(), Sbp::split(0));
  EXPECT_EQ(mm(Global(sa, kB), Global(sb, Sbp::split(1))).sbp(), Sbp::split(1));
  EXPECT_EQ(mm(Global(sa, Sbp::split(1)), Global(sb, Sbp::split(0))).sbp(), kP);
  EXPECT_EQ(mm(Global(sa, kP), Global(sb, kB)).sbp(), kP);
  EXPECT_EQ(mm(Global(sa, kB), Global(sb, kB)).sbp(), kB);
  EXPECT_EQ(
      bmm(Global(Shape({2, 6, 4}), Sbp::split(0)), Global(Shape({2, 4, 5}), Sbp::split(0))).sbp(),
      Sbp::split(0));
  // linear: data parallel, Megatron's column-parallel and row-parallel layers.
  const Shape sx({6, 4}), sw({5, 4}), sbias({5});
  EXPECT_EQ(linear(Global(sx, Sbp::split(0)), Global(sw, kB), Global(sbias, kB)).sbp(),
            Sbp::split(0));
  EXPECT_EQ(linear(Global(sx, kB), Global(sw, Sbp::split(0)), Global(sbias, Sbp::split(0))).sbp(),
            Sbp::split(1));
  EXPECT_EQ(linear(Global(sx, Sbp::split(1)), Global(sw, Sbp::split(1)), Global(sbias, kB)).sbp(),
            kP);
  EXPECT_EQ(Global(Shape({2, 3, 4}), Sbp::split(2)).permute({2, 0, 1}).sbp(), Sbp::split(0));
}

TEST(GlobalMatmulTest, PermuteMovesASplitWithItsDim) {
  const Shape shape({2, 3, 4});
  const std::vector<float> want = Local(shape).permute({1, 2, 0}).contiguous().to_vector<float>();
  for (const Sbp& s : AllSbps(shape)) {
    SCOPED_TRACE(s.str());
    const Tensor y = Global(shape, s).permute({1, 2, 0});
    EXPECT_EQ(y.shape(), Shape({3, 4, 2}));
    if (s.is_split()) EXPECT_EQ(y.sbp(), Sbp::split(s.axis() == 0 ? 2 : s.axis() - 1));
    EXPECT_EQ(y.to_vector<float>(), want);
  }
}

}  // namespace
}  // namespace ofl::testing
