// Autograd end to end on the test device (cpu, sim:0, sim:1): recording, backward through every
// op, leaves' accumulation, retain_grad, autograd::grad, grad mode, version counters, the freeing
// of saved tensors, and every error of oneflow_lite/autograd.h and tensor.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F(const std::vector<float>& v, const Dims& shape) {
  return ofl::tensor<float>(v, Shape(shape), TestDevice());
}
Tensor D(const std::vector<double>& v, const Dims& shape) {
  return ofl::tensor<double>(v, Shape(shape), TestDevice());
}
Tensor Leaf(const std::vector<float>& v, const Dims& shape) {
  Tensor t = F(v, shape);
  t.requires_grad_();
  return t;
}
std::vector<float> Iota(int64_t n, float start = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}
std::vector<float> Grad(const Tensor& t) { return t.grad().to_vector<float>(); }

TEST(AutogradTest, LeavesAndRecordedOutputs) {
  Tensor x = F({1, 2, 3}, {3});
  EXPECT_FALSE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.grad_fn_name(), "");
  EXPECT_FALSE(x.grad().defined());
  x.requires_grad_();
  EXPECT_TRUE(x.requires_grad());
  Tensor y = x.expand({2, 3});
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(y.grad_fn_name(), "ExpandBackward");
  EXPECT_EQ((x * x).grad_fn_name(), "MulBackward");
  EXPECT_EQ(x.sum().grad_fn_name(), "SumBackward");
  // An op on inputs that need no grad records nothing.
  Tensor c = F({1, 2, 3}, {3});
  EXPECT_TRUE((c + c).is_leaf());
  EXPECT_FALSE((c + c).requires_grad());
  x.requires_grad_(false);
  EXPECT_FALSE(x.requires_grad());
}

TEST(AutogradTest, RequiresGradErrors) {
  Tensor i = ofl::tensor<int32_t>({1, 2}, Shape({2}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { i.requires_grad_(); }, {"requires_grad_", "int32"});
  Tensor b = ofl::tensor<bool>({true}, Shape({1}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { b.requires_grad_(); }, {"requires_grad_", "bool"});
  Tensor x = Leaf({1, 2}, {2});
  Tensor y = x * 2.0;
  ExpectThrowWith<InvalidArgument>([&] { y.requires_grad_(false); },
                                   {"requires_grad_", "leaves", "MulBackward"});
  ExpectThrowWith<InvalidArgument>([&] { Tensor().requires_grad_(); }, {"undefined"});
  ExpectRuntimeWorks();
}

TEST(AutogradTest, ExpandBackwardSumsOverTheBroadcastDims) {
  Tensor x = Leaf(Iota(12), {4, 1, 3});
  Tensor y = x.expand({2, 4, 5, 3});
  y.sum().backward();
  EXPECT_EQ(Grad(x), std::vector<float>(12, 10.0f));
  EXPECT_EQ(x.grad().shape(), Shape({4, 1, 3}));
}

TEST(AutogradTest, ViewOpsGiveTheirGradients) {
  // z = x.permute(1,0).reshape(6).narrow(0,1,4) with a weighted gradient.
  Tensor x = Leaf(Iota(6), {2, 3});
  Tensor z = x.permute({1, 0}).reshape({6}).narrow(0, 1, 4);
  z.backward(F({10, 20, 30, 40}, {4}));
  // permute(1,0) of (2,3) in order: x00 x10 x01 x11 x02 x12; narrow(1,4): x10 x01 x11 x02.
  EXPECT_EQ(Grad(x), (std::vector<float>{0, 20, 40, 10, 30, 0}));
}

TEST(AutogradTest, RepeatContiguousAndToGiveTheirGradients) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor y = x.repeat({3, 2}).contiguous();  // (3, 4): each x element appears 6 times
  y.sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{6, 6}));
  Tensor p = Leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  p.permute({1, 0}).contiguous().backward(F(Iota(6), {3, 2}));
  EXPECT_EQ(Grad(p), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  Tensor q = Leaf({1, 2}, {2});
  Tensor moved = q.to(Device("cpu")).to(TestDevice());
  moved.backward(F({5, 7}, {2}));
  EXPECT_EQ(Grad(q), (std::vector<float>{5, 7}));
  EXPECT_EQ(q.grad().device(), TestDevice());
}

TEST(AutogradTest, BackwardOfTheBackwardOps) {
  Tensor dy = Leaf(Iota(6), {2, 3});
  Tensor dx = ofl::expand_backward(dy, Shape({3}));
  EXPECT_EQ(dx.grad_fn_name(), "ExpandBackwardBackward");
  dx.backward(F({1, 2, 3}, {3}));
  EXPECT_EQ(Grad(dy), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  Tensor r = Leaf(Iota(4), {4});
  ofl::repeat_backward(r, Shape({2}), {2}).backward(F({1, 2}, {2}));
  EXPECT_EQ(Grad(r), (std::vector<float>{1, 2, 1, 2}));
}

TEST(AutogradTest, ArithmeticGradientsWithBroadcasting) {
  Tensor a = Leaf({1, 2, 3}, {3});  // broadcast over rows
  Tensor b = Leaf({2, 4}, {2, 1});  // broadcast over columns
  Tensor y = (a * b + a / b - b).sum();
  y.backward();
  // dy/da[j] = sum_i (b_i + 1/b_i) = 2 + .5 + 4 + .25; dy/db[i] = sum_j (a_j - a_j/b_i^2 - 1).
  EXPECT_EQ(Grad(a), (std::vector<float>{6.75f, 6.75f, 6.75f}));
  EXPECT_EQ(Grad(b), (std::vector<float>{6 - 6 / 4.0f - 3, 6 - 6 / 16.0f - 3}));
  Tensor s = Leaf({3}, {});
  Tensor t = 1.0 - s * 2.0 + (-s) / 4.0;
  t.backward();
  EXPECT_EQ(Grad(s), (std::vector<float>{-2.25f}));
}

TEST(AutogradTest, SumOverDimsKeepdimAndNegativeDims) {
  Tensor x = Leaf(Iota(24), {2, 3, 4});
  Tensor s = x.sum({-1, 0}, /*keepdim=*/true);
  EXPECT_EQ(s.shape(), Shape({1, 3, 1}));
  EXPECT_EQ(s.to_vector<float>(), (std::vector<float>{1 + 2 + 3 + 4 + 13 + 14 + 15 + 16,
                                                      5 + 6 + 7 + 8 + 17 + 18 + 19 + 20,
                                                      9 + 10 + 11 + 12 + 21 + 22 + 23 + 24}));
  s.backward(F({1, 2, 3}, {1, 3, 1}));
  std::vector<float> expect;
  for (int i = 0; i < 2; ++i) {
    for (float v : {1.0f, 2.0f, 3.0f}) expect.insert(expect.end(), 4, v);
  }
  EXPECT_EQ(Grad(x), expect);
  Tensor d = x.sum({1});
  EXPECT_EQ(d.shape(), Shape({2, 4}));
  ExpectThrowWith<InvalidArgument>([&] { x.sum({0, -3}); }, {"sum", "dim 0", "more than once"});
  ExpectThrowWith<InvalidArgument>([&] { x.sum({3}); }, {"sum", "dim 3", "out of range"});
  // A bool (or integer) tensor sums in int64, as torch.sum.
  EXPECT_EQ(ofl::tensor<bool>({true, true}, Shape({2}), TestDevice()).sum().to_vector<int64_t>(),
            (std::vector<int64_t>{2}));
  EXPECT_EQ(x.sum().shape(), Shape(std::vector<int64_t>{}));
  EXPECT_EQ(x.sum().to_vector<float>(), (std::vector<float>{300}));
}

TEST(AutogradTest, BackwardErrors) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor y = x * 2.0;
  ExpectThrowWith<InvalidArgument>([&] { y.backward(); },
                                   {"backward",
                                    "grad can be implicitly created only for scalar "
                                    "outputs",
                                    "(2)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        y.backward(F({1, 2, 3}, {3}));
      },
      {"backward", "(3)", "(2)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        y.backward(D({1, 2}, {2}));
      },
      {"backward", "float64", "float32"});
  Tensor c = F({1}, {1});
  ExpectThrowWith<InvalidArgument>([&] { c.backward(); }, {"backward", "does not require grad"});
  ExpectRuntimeWorks();
}

TEST(AutogradTest, ASecondBackwardNeedsRetainGraph) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{4, 8}));  // 2x, twice
  ExpectThrowWith<Error>([&] { y.backward(); },
                         {"backward", "second time", "MulBackward", "retain_graph=true"});
  ExpectRuntimeWorks();
}

TEST(AutogradTest, LeavesAccumulateAndTheFirstGradientIsACopy) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor g = F({3, 4}, {2});
  x.reshape({2}).backward(g);  // the reshape's backward hands g on unchanged
  {
    NoGradGuard no_grad;
    g.fill_(100);  // the program changes its gradient tensor: x.grad must not see it
  }
  EXPECT_EQ(Grad(x), (std::vector<float>{3, 4}));
  x.reshape({2}).backward(F({1, 1}, {2}));
  EXPECT_EQ(Grad(x), (std::vector<float>{4, 5}));
  x.set_grad(Tensor());
  EXPECT_FALSE(x.grad().defined());
  ExpectThrowWith<InvalidArgument>(
      [&] {
        x.set_grad(F({1, 2, 3}, {3}));
      },
      {"set_grad", "(3)", "(2)"});
}

TEST(AutogradTest, LeavesThatGetTheSameGradientDoNotShareIt) {
  // add's backward hands g to both operands: each leaf's .grad must be its own tensor.
  Tensor a = Leaf({1, 2}, {2});
  Tensor b = Leaf({3, 4}, {2});
  (a + b).sum().backward();
  {
    NoGradGuard no_grad;
    a.grad().fill_(7);
  }
  EXPECT_EQ(Grad(a), (std::vector<float>{7, 7}));
  EXPECT_EQ(Grad(b), (std::vector<float>{1, 1}));
  Tensor x = Leaf({1, 2}, {2});
  (x + x).sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{2, 2}));
}

TEST(AutogradTest, FanInGradientsAreSummed) {
  Tensor x = Leaf({1, 2, 3}, {3});
  Tensor a = x * 2.0;
  Tensor y = (a + a * a + x).sum();  // dy/dx = 2 + 2 * (2x) * 2 + 1
  y.backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{3 + 8, 3 + 16, 3 + 24}));
}

TEST(AutogradTest, RetainGradKeepsANonLeafsGradient) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor h = x * 3.0;
  Tensor kept = x * 3.0;
  kept.retain_grad();
  (h * kept).sum().backward();
  EXPECT_FALSE(h.grad().defined());
  EXPECT_EQ(kept.grad().to_vector<float>(), (std::vector<float>{3, 6}));
  ExpectThrowWith<InvalidArgument>([&] { F({1}, {1}).retain_grad(); },
                                   {"retain_grad", "does not require grad"});
}

TEST(AutogradTest, AutogradGradReturnsGradientsWithoutAccumulating) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor w = Leaf({3, 4}, {2});
  Tensor unused = Leaf({1}, {1});
  Tensor h = x * w;
  Tensor y = h.sum();
  std::vector<Tensor> g = autograd::grad({y}, {x, h}, {}, /*retain_graph=*/true);
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(g[1].to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
  ExpectThrowWith<InvalidArgument>([&] { autograd::grad({y}, {unused}, {}, true); },
                                   {"autograd::grad", "input 0", "allow_unused"});
  std::vector<Tensor> u = autograd::grad({y}, {unused, w}, {}, false, /*allow_unused=*/true);
  EXPECT_FALSE(u[0].defined());
  EXPECT_EQ(u[1].to_vector<float>(), (std::vector<float>{1, 2}));
  ExpectThrowWith<InvalidArgument>([&] { autograd::grad({y}, {F({1}, {1})}); },
                                   {"autograd::grad", "input 0", "does not require grad"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        autograd::grad({y}, {x}, {F({1}, {}), F({1}, {})});
      },
      {"autograd::grad", "2 grad_outputs for 1 outputs"});
}

TEST(AutogradTest, NoGradGuardStopsRecordingAndNests) {
  Tensor x = Leaf({1, 2}, {2});
  EXPECT_TRUE(is_grad_enabled());
  {
    NoGradGuard outer;
    EXPECT_FALSE(is_grad_enabled());
    {
      NoGradGuard inner;
      EXPECT_FALSE((x * 2.0).requires_grad());
    }
    EXPECT_FALSE(is_grad_enabled());
    Tensor y = x.expand({2, 2});
    EXPECT_FALSE(y.requires_grad());
    EXPECT_TRUE(y.is_leaf());
  }
  EXPECT_TRUE(is_grad_enabled());
  EXPECT_TRUE((x * 2.0).requires_grad());
}

TEST(AutogradTest, SetGradEnabledRecordsInsideANoGradGuardUntilTheGuardRestoresTheMode) {
  Tensor x = Leaf({1, 2}, {2});
  {
    NoGradGuard guard;
    set_grad_enabled(true);
    EXPECT_TRUE(is_grad_enabled());
    EXPECT_TRUE((x * 2.0).requires_grad());
    set_grad_enabled(false);
    EXPECT_FALSE((x * 2.0).requires_grad());
    set_grad_enabled(true);
  }
  EXPECT_TRUE(is_grad_enabled());  // the guard restored the mode it found
  set_grad_enabled(false);
  { NoGradGuard guard; }
  EXPECT_FALSE(is_grad_enabled());
  EXPECT_FALSE((x * 2.0).requires_grad());
  set_grad_enabled(true);
  EXPECT_TRUE((x * 2.0).requires_grad());
}

TEST(AutogradTest, InPlaceOpsBumpTheVersionAndAreRefusedOnALeafThatRequiresGrad) {
  Tensor x = F({1, 2}, {2});
  EXPECT_EQ(x.version(), 0);
  x.add_(F({1, 1}, {2}));
  Tensor view = x.narrow(0, 1, 1);
  view.mul_(10);
  EXPECT_EQ(x.version(), 2);  // the storage's counter, shared by its views
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 30}));
  Tensor d = x.detach();
  d.zero_();
  EXPECT_EQ(x.version(), 3);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 0}));

  Tensor w = Leaf({1, 2}, {2});
  ExpectThrowWith<InvalidArgument>([&] { w.fill_(0); },
                                   {"fill_", "leaf", "requires grad", "NoGradGuard"});
  ExpectThrowWith<InvalidArgument>([&] { w.add_(x); },
                                   {"add_", "leaf that requires grad", "in-place operation"});
  EXPECT_EQ(w.version(), 0);  // refused before anything was queued
  {
    NoGradGuard step;
    w.sub_(F({1, 1}, {2}));
  }
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{0, 1}));
  EXPECT_EQ(w.version(), 1);
  ExpectRuntimeWorks();
}

TEST(AutogradTest, ABackwardFindsASavedTensorChangedInPlace) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor w = F({3, 4}, {2});
  Tensor y = (x * w).sum();
  w.add_(F({1, 1}, {2}));
  ExpectThrowWith<Error>([&] { y.backward(); },
                         {"modified by an in-place operation", "input 1 of MulBackward",
                          "version 1", "expected version 0"});
  ExpectRuntimeWorks();
}

TEST(AutogradTest, InPlaceOpsOnViewsBroadcastAndCopyAcrossDevices) {
  Tensor x = ofl::zeros(Shape({2, 3}), DType::kFloat32, TestDevice());
  x.narrow(1, 1, 2).copy_(F({7, 8}, {2}));  // broadcast over rows
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 7, 8, 0, 7, 8}));
  Tensor host = ofl::tensor<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3}), Device("cpu"));
  x.copy_(host.permute({1, 0}).contiguous().permute({1, 0}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  x.add_(F({10}, {}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{11, 12, 13, 14, 15, 16}));
  ExpectThrowWith<InvalidArgument>(
      [&] {
        x.add_(F({1, 2}, {2}));
      },
      {"add_", "(2)", "(2,3)", "cannot broadcast"});
  // copy_ converts the source's dtype (float64 into float32 here), as PyTorch's.
  EXPECT_EQ(F({0, 0}, {2}).copy_(D({1.5}, {1})).to_vector<float>(), (std::vector<float>{1.5, 1.5}));
  if (!EnvSet("OFL_DISABLE_VIEW")) {  // (which makes expand a copy)
    ExpectThrowWith<InvalidArgument>([&] { F({1}, {1}).expand({3}).fill_(1); },
                                     {"fill_", "expanded view", "stride 0"});
  }
  EXPECT_EQ(ofl::ones(Shape({2}), DType::kInt64, TestDevice()).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(ofl::full(Shape({2}), 2.5, DType::kFloat64, TestDevice()).to_vector<double>(),
            (std::vector<double>{2.5, 2.5}));
}

TEST(AutogradTest, ArithmeticErrors) {
  Tensor f = F({1, 2, 3}, {3});
  // Operands of different dtypes promote (TypePromotionTest); shapes must still broadcast.
  ExpectThrowWith<InvalidArgument>(
      [&] {
        f* F({1, 2}, {2});
      },
      {"mul", "(3)", "(2)", "do not broadcast"});
  Tensor i = ofl::tensor<int32_t>({1, 2}, Shape({2}), TestDevice());
  Tensor b = ofl::tensor<bool>({true}, Shape({1}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { b + b; }, {"add", "bool"});
  EXPECT_EQ((i * i - i).to_vector<int32_t>(), (std::vector<int32_t>{0, 2}));
  if (TestDevice() != Device("cpu")) {
    Tensor c = ofl::tensor<float>({1, 2, 3}, Shape({3}), Device("cpu"));
    ExpectThrowWith<InvalidArgument>([&] { f + c; }, {"add", "different devices"});
  }
  ExpectRuntimeWorks();
}

TEST(AutogradTest, SavedTensorsAreFreedByBackwardAndByDroppingTheGraph) {
  const Device dev = TestDevice();
  ofl::sync();
  const int64_t base = ofl::memory_stats(dev).allocated_bytes;
  Tensor x = ofl::full(Shape({1 << 16}), 1.0, DType::kFloat32, dev);
  x.requires_grad_();
  {
    Tensor w = ofl::full(Shape({1 << 16}), 2.0, DType::kFloat32, dev);
    Tensor y = (x * w).sum();  // the node saves x and w
    w = Tensor();
    ofl::sync();
    const int64_t with_graph = ofl::memory_stats(dev).allocated_bytes;
    EXPECT_GE(with_graph - base, 2 * (int64_t{1} << 18));  // x and the saved w
    y.backward();
    x.set_grad(Tensor());
    ofl::sync();
    // w was only held by the graph: freed now, though y (and its node) still lives.
    EXPECT_LE(ofl::memory_stats(dev).allocated_bytes - base, (int64_t{1} << 18) + 4096);
  }
  {
    Tensor w = ofl::full(Shape({1 << 16}), 2.0, DType::kFloat32, dev);
    Tensor y = x * w;
    w = Tensor();
    y = Tensor();  // the graph, dropped without backward
    ofl::sync();
    EXPECT_LE(ofl::memory_stats(dev).allocated_bytes - base, (int64_t{1} << 18) + 4096);
  }
}

}  // namespace
}  // namespace ofl::testing
