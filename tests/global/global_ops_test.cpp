// The array ops on global tensors, for every input SBP: expand (OneFlow's article example among
// them), repeat, reshape, contiguous and the backward of expand and repeat give the logical value
// the same op gives on the whole tensor locally, with the output SBP the rules promise; a split on
// a dim expand broadcasts is an error on every rank.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "ops/sbp_rules.h"

namespace ofl::testing {
namespace {

// For every SBP of an input of `shape`: op on the global tensor == op on the whole tensor, and the
// output SBP is `want_sbp(in_sbp)` (nullopt: the op must throw InvalidArgument naming `op_name`).
void CheckOp(const char* op_name, const Shape& shape,
             const std::function<Tensor(const Tensor&)>& op,
             const std::function<std::optional<Sbp>(const Sbp&)>& want_sbp) {
  const std::vector<float> logical = Logical<float>(shape);
  const std::vector<float> want =
      op(tensor<float>(logical, shape, Device("cpu"))).to_vector<float>();
  for (const Sbp& sbp : AllSbps(shape)) {
    SCOPED_TRACE(std::string(op_name) + " on " + shape.str() + " " + sbp.str());
    const Tensor x = GlobalOf(logical, shape, sbp);
    const std::optional<Sbp> out_sbp = want_sbp(sbp);
    if (!out_sbp) {
      ExpectInvalid([&] { (void)op(x); }, {op_name});
      continue;
    }
    const Tensor y = op(x);
    ASSERT_TRUE(y.is_global());
    EXPECT_EQ(y.sbp(), *out_sbp);
    EXPECT_EQ(y.placement(), World());
    EXPECT_EQ(y.to_vector<float>(), want);
  }
}

TEST(GlobalOpsTest, ExpandOfTheArticleExample) {
  // Logical (4,3,1,2) expanded to (2,4,3,4,2): a split on a kept dim moves by the new leading dim;
  // the size-1 dim that becomes 4 cannot be split.
  CheckOp(
      "expand", Shape({4, 3, 1, 2}),
      [](const Tensor& x) {
        return x.expand({2, 4, 3, 4, 2});
      },
      [](const Sbp& s) -> std::optional<Sbp> {
        if (s.is_split() && s.axis() == 2) return std::nullopt;
        return s.is_split() ? Sbp::split(s.axis() + 1) : s;
      });
}

TEST(GlobalOpsTest, ExpandShardsAreLocalViewsWithPhysicalSizes) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Shape shape({4, 3, 1, 2});
  const Tensor x = GlobalOf(Logical<float>(shape), shape, Sbp::split(3));
  const Tensor y = x.expand({2, 4, 3, 4, 2});
  const Placement p = World();
  const int me = p.index_of(rank());
  EXPECT_EQ(y.to_local().shape(),
            ops::PhysicalShape(Shape({2, 4, 3, 4, 2}), Sbp::split(4), p.size(), me));
  // A view: it shares the shard's storage.
  EXPECT_EQ(y.to_local().impl()->storage(), x.to_local().impl()->storage());
  EXPECT_EQ(y.contiguous().sbp(), Sbp::split(4));
}

TEST(GlobalOpsTest, RepeatPassesASplitOnAnUnrepeatedDimAndBoxesOtherwise) {
  const Shape shape({5, 3});
  CheckOp(
      "repeat", shape,
      [](const Tensor& x) {
        return x.repeat({1, 2});
      },
      [](const Sbp& s) -> std::optional<Sbp> {
        return s.is_split() && s.axis() == 1 ? Sbp::broadcast() : s;
      });
  CheckOp(
      "repeat", shape,
      [](const Tensor& x) {
        return x.repeat({2, 2, 1});
      },
      [](const Sbp& s) -> std::optional<Sbp> {
        if (s.is_split()) return s.axis() == 1 ? Sbp::split(2) : Sbp::broadcast();
        return s;
      });
}

TEST(GlobalOpsTest, ReshapeKeepsASplitThatMapsToAnOutputDim) {
  const Shape shape({6, 4});
  CheckOp(
      "reshape", shape,
      [](const Tensor& x) {
        return x.reshape({6, 2, 2});
      },
      [](const Sbp& s) -> std::optional<Sbp> {
        return s.is_split() && s.axis() == 1 ? Sbp::broadcast() : s;
      });
  CheckOp(
      "reshape", shape, [](const Tensor& x) { return x.reshape({24}); },
      [](const Sbp& s) -> std::optional<Sbp> { return s.is_split() ? Sbp::broadcast() : s; });
}

TEST(GlobalOpsTest, ExpandBackwardGivesSplitOrPartialSumGradients) {
  const Shape in({4, 1, 3});
  const Shape dy({2, 4, 5, 3});
  CheckOp(
      "expand_backward", dy, [&](const Tensor& g) { return expand_backward(g, in); },
      [](const Sbp& s) -> std::optional<Sbp> {
        if (!s.is_split()) return s;
        // Kept dims (1 and 3 of dy) map back; the new and the broadcast dim give P.
        if (s.axis() == 1 || s.axis() == 3) return Sbp::split(s.axis() - 1);
        return Sbp::partial_sum();
      });
}

TEST(GlobalOpsTest, RepeatBackwardSumsTheTilesOfEveryShard) {
  const Shape in({5, 3});
  const Shape dy({5, 6});
  CheckOp(
      "repeat_backward", dy,
      [&](const Tensor& g) {
        return repeat_backward(g, in, {1, 2});
      },
      [](const Sbp& s) -> std::optional<Sbp> {
        return s.is_split() && s.axis() == 1 ? Sbp::broadcast() : s;
      });
}

TEST(GlobalOpsTest, ASplitOnABroadcastDimNamesTheDimAndTheSizes) {
  const Shape shape({3, 1});
  const Tensor x = GlobalOf(Logical<float>(shape), shape, Sbp::split(1));
  ExpectInvalid([&] { (void)x.expand({3, 5}); }, {"expand", "1", "5"});
  // Still usable after the error, on every rank.
  EXPECT_EQ(x.to_global(World(), Sbp::broadcast()).expand({3, 5}).to_vector<float>().size(), 15u);
}

}  // namespace
}  // namespace ofl::testing
