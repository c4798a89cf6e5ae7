// Autograd of global tensors: backward() through global ops, boxing, to_global and to_local gives
// every leaf the gradient the same computation gives on the whole tensors locally, with the leaf's
// placement and SBP (a partial_sum leaf's broadcast); the data-parallel weight gradient is reduced
// across the ranks by the SBP rules alone; the ways the ranks could disagree are refused on every
// rank alike.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

std::vector<float> Values(const Shape& shape, float scale, float shift) {
  std::vector<float> v = Logical<float>(shape);
  for (float& x : v) x = x * scale + shift;
  return v;
}

Sbp GradSbpOf(const Sbp& s) { return s.is_partial_sum() ? Sbp::broadcast() : s; }

// A loss of three leaves x (6,4), w (5,4), b (5) touching every family with a global signature:
// linear, unary, binary with broadcasting, a number, softmax, a reduction, mean.
Tensor Loss(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y) {
  const Tensor h = linear(x, w, b).tanh() * 2.0 + (x.sum({1}, true) * 0.1).exp();
  const Tensor p = softmax(h, 1);
  return (p * y).sum() + (h * h).mean() - b.sum() * 0.5;
}

TEST(GlobalAutogradTest, GradientsMatchTheLocalComputationForEverySignature) {
  const Shape sx({6, 4}), sw({5, 4}), sb({5}), sy({6, 5});
  const std::vector<float> vx = Values(sx, 0.1f, -0.3f), vw = Values(sw, -0.05f, 0.2f),
                           vb = Values(sb, 0.3f, -1.0f), vy = Values(sy, 0.2f, 0.0f);
  Tensor lx = tensor<float>(vx, sx, Device("cpu")).requires_grad_();
  Tensor lw = tensor<float>(vw, sw, Device("cpu")).requires_grad_();
  Tensor lb = tensor<float>(vb, sb, Device("cpu")).requires_grad_();
  const Tensor local_loss = Loss(lx, lw, lb, tensor<float>(vy, sy, Device("cpu")));
  local_loss.backward();
  const Sbp kB = Sbp::broadcast(), kP = Sbp::partial_sum(), s0 = Sbp::split(0), s1 = Sbp::split(1);
  const std::vector<std::vector<Sbp>> layouts = {
      {s0, kB, kB},  // data parallel
      {kB, s0, s0},  // column parallel
      {s1, s1, kB},  // row parallel
      {kB, kB, kB}, {kP, s1, kP}, {s1, kB, s0},
  };
  for (const std::vector<Sbp>& l : layouts) {
    SCOPED_TRACE("x " + l[0].str() + ", w " + l[1].str() + ", b " + l[2].str());
    Tensor x = GlobalOf(vx, sx, l[0]).requires_grad_();
    Tensor w = GlobalOf(vw, sw, l[1]).requires_grad_();
    Tensor b = GlobalOf(vb, sb, l[2]).requires_grad_();
    const Tensor loss = Loss(x, w, b, GlobalOf(vy, sy, s0));
    ASSERT_TRUE(loss.is_global());
    EXPECT_NEAR(loss.to_vector<float>()[0], local_loss.to_vector<float>()[0], 1e-4);
    loss.backward();
    for (const auto& [leaf, local, sbp] :
         {std::make_tuple(x, lx, l[0]), std::make_tuple(w, lw, l[1]),
          std::make_tuple(b, lb, l[2])}) {
      const Tensor g = leaf.grad();
      ASSERT_TRUE(g.defined());
      ASSERT_TRUE(g.is_global());
      EXPECT_EQ(g.placement(), World());
      EXPECT_EQ(g.sbp(), GradSbpOf(sbp));
      ExpectClose(g.to_vector<float>(), local.grad().to_vector<float>(), 1e-4, 1e-5);
    }
  }
}

TEST(GlobalAutogradTest, DataParallelWeightGradientsAreReducedByTheSbpRules) {
  // Each rank holds its batch shard; the broadcast weight's gradient arrives as a partial sum
  // (S(1) x S(0) -> P in the backward's mm) and becomes the leaf's broadcast .grad.
  const Shape sx({8, 3}), sw({3, 2});
  const std::vector<float> vx = Values(sx, 0.5f, 0.0f), vw = Values(sw, 0.25f, 0.0f);
  Tensor w = GlobalOf(vw, sw, Sbp::broadcast()).requires_grad_();
  const Tensor x = GlobalOf(vx, sx, Sbp::split(0));
  const Tensor y = mm(x, w);
  EXPECT_EQ(y.sbp(), Sbp::split(0));
  (y * y).sum().backward();
  Tensor lw = tensor<float>(vw, sw, Device("cpu")).requires_grad_();
  const Tensor ly = mm(tensor<float>(vx, sx, Device("cpu")), lw);
  (ly * ly).sum().backward();
  EXPECT_EQ(w.grad().sbp(), Sbp::broadcast());
  ExpectClose(w.grad().to_local().to_vector<float>(), lw.grad().to_vector<float>(), 1e-4, 1e-5);
  // A second backward accumulates into the same .grad.
  const Tensor y2 = mm(x, w);
  (y2 * y2).sum().backward();
  std::vector<float> twice = lw.grad().to_vector<float>();
  for (float& v : twice) v *= 2;
  ExpectClose(w.grad().to_vector<float>(), twice, 1e-4, 1e-5);
}

TEST(GlobalAutogradTest, ConversionsAndBoxingPassTheGradientBack) {
  const Placement p = World();
  const Shape shape({5, 3});
  const std::vector<float> v = Values(shape, 1.0f, 0.0f);
  // Local shards that require grad, made global: each rank gets the gradient of its own shard.
  const ops::SplitRange r = ops::BalancedSplit(5, p.size(), p.index_of(rank()));
  Tensor piece = LocalPiece<float>(v, shape, Sbp::split(0), p.index_of(rank()), p.size());
  piece.requires_grad_();
  const Tensor g = piece.to_global(p, Sbp::split(0));
  ASSERT_TRUE(g.requires_grad());
  (g.to_global(p, Sbp::broadcast()) * g).sum().backward();  // d/dx of x * x through a boxing
  std::vector<float> want = Slice(v, shape, 0, r.start, r.size);
  for (float& x : want) x *= 2;
  ExpectClose(piece.grad().to_vector<float>(), want, 1e-4, 1e-5);
  // A broadcast local tensor gets the whole gradient.
  Tensor whole = tensor<float>(v, shape, Device("cpu")).requires_grad_();
  (whole.to_global(p, Sbp::broadcast()) * 3.0).sum().backward();
  ExpectClose(whole.grad().to_vector<float>(), std::vector<float>(v.size(), 3.0f), 1e-4, 1e-5);
  // to_local: the local gradients are the shards of the input's SBP.
  Tensor leaf = GlobalOf(v, shape, Sbp::split(1)).requires_grad_();
  (leaf.to_local() * 4.0).sum().backward();
  EXPECT_EQ(leaf.grad().sbp(), Sbp::split(1));
  ExpectClose(leaf.grad().to_vector<float>(), std::vector<float>(v.size(), 4.0f), 1e-4, 1e-5);
  // A partial_sum leaf's gradient is broadcast: every shard of the sum gets all of it.
  Tensor partial = GlobalOf(v, shape, Sbp::partial_sum()).requires_grad_();
  (partial * partial).sum().backward();
  EXPECT_EQ(partial.grad().sbp(), Sbp::broadcast());
  want = v;
  for (float& x : want) x *= 2;
  ExpectClose(partial.grad().to_vector<float>(), want, 1e-4, 1e-5);
  // detach() of a global tensor stays global, without history.
  const Tensor d = g.detach();
  EXPECT_TRUE(d.is_global());
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.sbp(), Sbp::split(0));
}

TEST(GlobalAutogradTest, WaysTheRanksCouldDisagreeAreRefusedOnEveryRank) {
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks";
  const Placement p = World();
  // Only rank 0's tensor requires grad: every rank refuses the conversion alike.
  Tensor leaf = tensor<float>({1, 2, 3}, Shape({3}), Device("cpu"));
  if (rank() == 0) leaf.requires_grad_();
  ExpectInvalid([&] { (void)leaf.to_global(p, Sbp::broadcast()); },
                {"to_global", "require grad on rank(s) 0 but not on rank(s) 1"});
  {
    NoGradGuard no_grad;  // converting under the guard is allowed
    EXPECT_EQ(leaf.to_global(p, Sbp::broadcast()).to_vector<float>(),
              (std::vector<float>{1, 2, 3}));
  }
  // Uneven shards that require grad: their gradients could not be the balanced shards.
  Tensor uneven = tensor<float>(std::vector<float>(rank() == 0 ? 3 : 1, 1.0f),
                                Shape({rank() == 0 ? 3 : 1}), Device("cpu"))
                      .requires_grad_();
  ExpectInvalid([&] { (void)uneven.to_global(p, Sbp::split(0)); },
                {"to_global", "require grad", "not the balanced split", "rank 0: 3"});
  // A gradient that is local for a global output, and the next call still works.
  Tensor x = GlobalOf({1, 2, 3}, Shape({3}), Sbp::broadcast()).requires_grad_();
  const Tensor y = x * 2.0;
  ExpectInvalid(
      [&] {
        y.backward(tensor<float>({1, 1, 1}, Shape({3}), Device("cpu")));
      },
      {"backward", "the gradient is local but the output is global over"});
  y.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 2, 2}));
  // The *_like functions of a global tensor are global over its placement; a device is refused.
  ExpectInvalid([&] { (void)zeros_like(x, std::nullopt, Device("cpu")); },
                {"zeros_like: device cpu:0 given for a global tensor over", "to_local()"});
  const Tensor ones = ones_like(GlobalOf({1, 2, 3, 4}, Shape({2, 2}), Sbp::partial_sum()));
  EXPECT_EQ(ones.sbp(), Sbp::broadcast());
  EXPECT_EQ(ones.to_vector<float>(), (std::vector<float>{1, 1, 1, 1}));
  const Tensor zeros = zeros_like(GlobalOf({1, 2, 3, 4}, Shape({2, 2}), Sbp::split(1)));
  EXPECT_EQ(zeros.sbp(), Sbp::split(1));
  EXPECT_EQ(zeros.to_vector<float>(), (std::vector<float>{0, 0, 0, 0}));
}

}  // namespace
}  // namespace ofl::testing
