// The backward engine's rules that PyTorch users rely on without thinking of them: a root named
// twice counts twice, autograd::grad runs only the part of the graph between its outputs and
// inputs, an op saves only what its wanted gradients read, .grad never holds its own tensor's
// graph, a leaf that stopped requiring grad gets no gradient, and threads sharing a leaf
// accumulate into it safely. On the test device (cpu, sim:0, sim:1).
#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F(const std::vector<float>& v, const Dims& shape) {
  return ofl::tensor<float>(v, Shape(shape), TestDevice());
}
Tensor Leaf(const std::vector<float>& v, const Dims& shape) {
  Tensor t = F(v, shape);
  t.requires_grad_();
  return t;
}

TEST(AutogradEngineTest, TheSameOutputTwiceSumsBothGradients) {
  Tensor x = Leaf({1, 2, 3}, {3});
  Tensor y = x * x;  // dy/dx = 2x
  std::vector<Tensor> g = autograd::grad({y, y}, {x}, {F({1, 1, 1}, {3}), F({1, 1, 1}, {3})},
                                         /*retain_graph=*/true);
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{4, 8, 12}));
  // A scalar output twice, with implicit gradients.
  Tensor s = (x * x).sum();
  g = autograd::grad({s, s}, {x});
  ASSERT_TRUE(g[0].defined());
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{4, 8, 12}));
  // contiguous() of a contiguous tensor is the tensor itself: the same root again.
  Tensor z = (x * x).sum();
  g = autograd::grad({z, z.contiguous()}, {x});
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{4, 8, 12}));
  // And backward() through an output and one computed from it.
  Tensor w = Leaf({1, 2}, {2});
  Tensor a = w * 3.0;
  Tensor b = a * 2.0;
  g = autograd::grad({a.sum(), b.sum()}, {w});
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{9, 9}));
}

TEST(AutogradEngineTest, GradRunsOnlyThePartOfTheGraphBetweenOutputsAndInputs) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor h = x * x;  // MulBackward saves x: freed only if its node runs
  Tensor y = (h * 3.0).sum();
  std::vector<Tensor> g = autograd::grad({y}, {h});
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{3, 3}));
  EXPECT_FALSE(x.grad().defined());
  // h's own node did not run, so its saved tensors are still there.
  h.sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 4}));

  // A saved tensor changed in place in a part of the graph grad does not need is not its concern.
  Tensor a = Leaf({1, 2}, {2});
  Tensor c = F({5, 6}, {2});
  Tensor unrelated = a * c;  // saves c
  Tensor k = a * 2.0;
  Tensor out = (k + unrelated).sum();
  {
    NoGradGuard step;
    c.add_(F({1, 1}, {2}));
  }
  g = autograd::grad({out}, {k});
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{1, 1}));
  // The full backward still finds it.
  ExpectThrowWith<Error>([&] { out.backward(); }, {"modified by an in-place operation"});
  ExpectRuntimeWorks();
}

TEST(AutogradEngineTest, MulAndDivSaveOnlyWhatTheWantedGradientsRead) {
  // Only w requires grad: its gradient reads x, not w, so changing w (an optimizer step) before
  // backward is fine.
  Tensor w = Leaf({1, 2}, {2});
  Tensor x = F({3, 4}, {2});
  Tensor y = (w * x).sum();
  {
    NoGradGuard step;
    w.sub_(F({1, 1}, {2}));
  }
  y.backward();
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{3, 4}));
  // The same with w on the right, and for div (a / b: a's gradient reads b only).
  Tensor v = Leaf({1, 2}, {2});
  Tensor y2 = (x * v).sum() + (v / x).sum();
  {
    NoGradGuard step;
    v.add_(F({10, 10}, {2}));
  }
  y2.backward();
  EXPECT_EQ(v.grad().to_vector<float>(), (std::vector<float>{3 + 1.0f / 3, 4 + 0.25f}));
  // The operand a wanted gradient reads is still checked.
  Tensor a = Leaf({1, 2}, {2});
  Tensor b = F({2, 4}, {2});
  Tensor q = (a / b).sum();
  b.add_(F({1, 1}, {2}));
  ExpectThrowWith<Error>([&] { q.backward(); },
                         {"modified by an in-place operation", "DivBackward"});
  // div's divisor gradient reads both.
  Tensor n = F({1, 2}, {2});
  Tensor d = Leaf({2, 4}, {2});
  Tensor r = (n / d).sum();
  n.add_(F({1, 1}, {2}));
  ExpectThrowWith<Error>([&] { r.backward(); }, {"modified by an in-place operation"});
  ExpectRuntimeWorks();
}

TEST(AutogradEngineTest, AGradIsNeverTheTensorItselfAndNeverHoldsAGraph) {
  Tensor w = Leaf({1, 2}, {2});
  ExpectThrowWith<InvalidArgument>([&] { w.set_grad(w); }, {"set_grad", "its own gradient"});
  Tensor same = w;  // another handle of the same tensor
  ExpectThrowWith<InvalidArgument>([&] { w.set_grad(same); }, {"set_grad", "its own gradient"});
  EXPECT_FALSE(w.grad().defined());
  // A gradient with history is kept detached, so w does not hold its own graph.
  std::weak_ptr<TensorImpl> alive;
  {
    Tensor v = Leaf({1, 2}, {2});
    alive = v.impl();
    v.set_grad(v * 2.0);
    EXPECT_FALSE(v.grad().requires_grad());
    EXPECT_TRUE(v.grad().is_leaf());
    EXPECT_EQ(v.grad().to_vector<float>(), (std::vector<float>{2, 4}));
  }
  EXPECT_TRUE(alive.expired()) << "the tensor keeps itself alive through its .grad";
  // A gradient without history is kept as it is (the same tensor).
  Tensor g = F({5, 6}, {2});
  w.set_grad(g);
  EXPECT_EQ(w.grad().impl(), g.impl());
}

TEST(AutogradEngineTest, ALeafThatStoppedRequiringGradGetsNoGradient) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor k = Leaf({3, 4}, {2});
  Tensor y = (x * k).sum();
  x.requires_grad_(false);
  y.backward();
  EXPECT_FALSE(x.grad().defined());
  EXPECT_EQ(k.grad().to_vector<float>(), (std::vector<float>{1, 2}));
}

TEST(AutogradEngineTest, ThreadsSharingALeafAccumulateEveryGradient) {
  Tensor w = Leaf({1, 2, 3, 4}, {4});
  constexpr int kThreads = 4, kSteps = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&w, t] {
      Tensor k = F({1, 1, 1, 1}, {4}) * static_cast<double>(t + 1);
      for (int i = 0; i < kSteps; ++i) {
        (w * k).sum().backward();
        (void)w.grad();  // a concurrent read of the field the others write
      }
    });
  }
  for (std::thread& th : threads) th.join();
  // Each thread adds (t + 1) per step: kSteps * (1 + 2 + 3 + 4).
  const float expect = kSteps * 10.0f;
  EXPECT_EQ(w.grad().to_vector<float>(), (std::vector<float>{expect, expect, expect, expect}));
}

}  // namespace
}  // namespace ofl::testing
