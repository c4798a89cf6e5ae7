// Random numbers and filled tensors on global tensors: rand / randn with a placement and an SBP,
// rand_like / randn_like, bernoulli and dropout of global tensors hold the numbers the same local
// calls draw from the same seed, whatever the SBP and the rank count (every rank draws the whole
// tensor and keeps its shard, advancing its generator alike); zeros / ones / full with a placement
// hold their value under every SBP (partial_sum: on the first rank).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

TEST(GlobalRandomTest, GlobalDrawsEqualTheLocalDrawsForEverySbp) {
  const Shape shape({5, 3});
  for (const Sbp& sbp : {Sbp::broadcast(), Sbp::split(0), Sbp::split(1)}) {
    SCOPED_TRACE(sbp.str());
    manual_seed(11);
    const std::vector<float> want_u = rand(shape).to_vector<float>();
    const std::vector<float> want_n = randn(shape).to_vector<float>();
    const std::vector<float> after = rand(Shape({2})).to_vector<float>();
    manual_seed(11);
    const Tensor u = rand(shape, DType::kFloat32, World(), sbp);
    const Tensor n = randn(shape, DType::kFloat32, World(), sbp);
    EXPECT_EQ(u.sbp(), sbp);
    EXPECT_EQ(u.to_vector<float>(), want_u);
    EXPECT_EQ(n.to_vector<float>(), want_n);
    // The generator advanced as the local calls advance it.
    EXPECT_EQ(rand(Shape({2})).to_vector<float>(), after);
  }
}

TEST(GlobalRandomTest, DropoutAndBernoulliOfGlobalTensorsEqualTheLocalOnes) {
  const Shape shape({6, 4});
  const std::vector<float> v = Logical<float>(shape);
  const Tensor local = tensor<float>(v, shape, Device("cpu"));
  manual_seed(3);
  const std::vector<float> want_drop = dropout(local, 0.5).to_vector<float>();
  const std::vector<float> want_bern = bernoulli(local, 0.25).to_vector<float>();
  for (const Sbp& sbp : AllSbps(shape)) {
    SCOPED_TRACE(sbp.str());
    const Placement p = World();
    const Tensor g =
        LocalPiece<float>(v, shape, sbp, p.index_of(rank()), p.size()).to_global(p, sbp);
    manual_seed(3);
    const Tensor d = dropout(g, 0.5);
    EXPECT_TRUE(d.is_global());
    EXPECT_EQ(d.to_vector<float>(), want_drop);
    EXPECT_EQ(bernoulli(g, 0.25).to_vector<float>(), want_bern);
  }
}

TEST(GlobalRandomTest, FilledTensorsAndBadCalls) {
  const Placement p = World();
  for (const Sbp& sbp : AllSbps(Shape({3, 2}))) {
    SCOPED_TRACE(sbp.str());
    EXPECT_EQ(zeros(Shape({3, 2}), DType::kFloat32, p, sbp).to_vector<float>(),
              std::vector<float>(6, 0.0f));
    EXPECT_EQ(ones(Shape({3, 2}), DType::kFloat64, p, sbp).to_vector<double>(),
              std::vector<double>(6, 1.0));
    const Tensor f = full(Shape({3, 2}), 2.5, DType::kFloat32, p, sbp);
    EXPECT_EQ(f.sbp(), sbp);
    EXPECT_EQ(f.to_vector<float>(), std::vector<float>(6, 2.5f));
  }
  ExpectInvalid([&] { (void)randn(Shape({2}), DType::kFloat32, p, Sbp::partial_sum()); },
                {"randn", "partial_sum", "broadcast or split"});
  ExpectInvalid([&] { (void)rand(Shape({2}), DType::kInt32, p, Sbp::broadcast()); },
                {"rand: dtype int32 is not supported"});
  ExpectInvalid([&] { (void)zeros(Shape({2}), DType::kFloat32, p, Sbp::split(1)); },
                {"zeros", "S(1)", "(2)"});
  // In step afterwards.
  EXPECT_EQ(ones(Shape({2}), DType::kFloat32, p, Sbp::split(0)).sum().to_vector<float>(),
            (std::vector<float>{2}));
}

}  // namespace
}  // namespace ofl::testing
