// softmax, log_softmax and the losses through the public API, on the test device: values against
// sums written here (every dim, 0-dim and empty inputs, large values), the gradients' known
// forms, nll_loss and cross_entropy with weights, ignore_index, label smoothing and class
// probabilities, one_hot, index_select, the reductions, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "oneflow_lite/autograd.h"
#include "oneflow_lite/random.h"
#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F64(const std::vector<double>& v, const Shape& shape) {
  return tensor<double>(v, shape, TestDevice());
}

void ExpectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "element " << i;
}

TEST(SoftmaxTest, ValuesAlongEachDim) {
  const std::vector<double> v = {1, 2, 3, 1000, 1001, 999};
  const Tensor x = F64(v, Shape({2, 3}));
  const double s0 = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const double s1 = std::exp(0.0) + std::exp(1.0) + std::exp(-1.0);
  ExpectNear(softmax(x, 1).to_vector<double>(),
             {std::exp(1.0) / s0, std::exp(2.0) / s0, std::exp(3.0) / s0, 1 / s1,
              std::exp(1.0) / s1, std::exp(-1.0) / s1});
  ExpectNear(x.log_softmax(-1).to_vector<double>(),
             {1 - std::log(s0), 2 - std::log(s0), 3 - std::log(s0), -std::log(s1), 1 - std::log(s1),
              -1 - std::log(s1)});
  // Along dim 0 every column has 1000 - k against k: the small one gets ~0.
  const std::vector<double> col = softmax(x, 0).to_vector<double>();
  EXPECT_NEAR(col[0], 0.0, 1e-300);
  EXPECT_NEAR(col[3], 1.0, 1e-15);
  EXPECT_EQ(softmax(F64({5}, Shape({})), 0).to_vector<double>(), (std::vector<double>{1}));
  EXPECT_EQ(log_softmax(F64({5}, Shape({})), -1).to_vector<double>(), (std::vector<double>{0}));
  EXPECT_EQ(softmax(F64({}, Shape({2, 0})), 1).shape(), Shape({2, 0}));
  const Tensor f = x.to(DType::kFloat32).softmax(1);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
}

TEST(SoftmaxTest, GradientsHaveTheirKnownForms) {
  Tensor x = F64({0.5, -1, 2, 0.25}, Shape({2, 2})).requires_grad_();
  const Tensor g = F64({1, 2, 3, 4}, Shape({2, 2}));
  const Tensor y = softmax(x, 1);
  y.backward(g);
  const std::vector<double> yv = y.to_vector<double>(), gv = g.to_vector<double>();
  std::vector<double> want(4);
  for (int r = 0; r < 2; ++r) {
    const double dot = gv[2 * r] * yv[2 * r] + gv[2 * r + 1] * yv[2 * r + 1];
    for (int c = 0; c < 2; ++c) want[2 * r + c] = yv[2 * r + c] * (gv[2 * r + c] - dot);
  }
  ExpectNear(x.grad().to_vector<double>(), want);
  Tensor z = F64({0.5, -1, 2, 0.25}, Shape({2, 2})).requires_grad_();
  log_softmax(z, 0).sum().backward();  // g = 1: 1 - 2 * softmax along dim 0
  const std::vector<double> p = softmax(z.detach(), 0).to_vector<double>();
  ExpectNear(z.grad().to_vector<double>(),
             {1 - 2 * p[0], 1 - 2 * p[1], 1 - 2 * p[2], 1 - 2 * p[3]});
}

TEST(SoftmaxTest, ErrorsNameTheOpAndTheValues) {
  const Tensor x = F64({1, 2, 3, 4}, Shape({2, 2}));
  ExpectThrowWith<InvalidArgument>([&] { softmax(x, 2); },
                                   {"softmax: dim 2 is out of range for a 2-dim tensor"});
  ExpectThrowWith<InvalidArgument>([&] { log_softmax(x.to(DType::kInt64), 0); },
                                   {"log_softmax: dtype int64 is not supported (a float dtype is"});
  EXPECT_EQ(softmax(x, 0).shape(), Shape({2, 2}));  // still working
}

TEST(MseLossTest, ReductionsAndGradient) {
  Tensor x = F64({1, 2, 3, 4}, Shape({2, 2})).requires_grad_();
  const Tensor t = F64({0, 2, 5, 1}, Shape({2, 2}));
  EXPECT_EQ(mse_loss(x, t, "none").to_vector<double>(), (std::vector<double>{1, 0, 4, 9}));
  EXPECT_EQ(mse_loss(x, t, "sum").to_vector<double>(), (std::vector<double>{14}));
  const Tensor mean = mse_loss(x, t);
  EXPECT_EQ(mean.shape(), Shape({}));
  EXPECT_EQ(mean.to_vector<double>(), (std::vector<double>{3.5}));
  mean.backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0.5, 0, -1, 1.5}));
  // The target broadcasts, as in PyTorch (which warns).
  EXPECT_EQ(mse_loss(x.detach(), F64({1}, Shape({1})), "sum").to_vector<double>(),
            (std::vector<double>{14}));
  ExpectThrowWith<InvalidArgument>(
      [&] { mse_loss(x, t, "avg"); },
      {"mse_loss: reduction 'avg' is not one of 'none', 'mean', 'sum'"});
}

// -log_softmax(x)[target] by hand, for row r of a (rows, classes) float64 vector.
double Nll(const std::vector<double>& x, int64_t classes, int64_t r, int64_t target) {
  double m = x[r * classes];
  for (int64_t c = 0; c < classes; ++c) m = std::max(m, x[r * classes + c]);
  double s = 0;
  for (int64_t c = 0; c < classes; ++c) s += std::exp(x[r * classes + c] - m);
  return -(x[r * classes + target] - m - std::log(s));
}

TEST(ClassLossTest, NllAndCrossEntropyWithWeightsAndIgnoreIndex) {
  const std::vector<double> xv = {0.5, -1, 2, 0.25, 1, 1, -3, 0.5, 0};
  const Tensor x = F64(xv, Shape({3, 3}));
  const Tensor t = tensor<int64_t>({2, 0, -100}, Shape({3}), TestDevice());
  const Tensor w = F64({1, 2, 3}, Shape({3}));
  const double l0 = Nll(xv, 3, 0, 2), l1 = Nll(xv, 3, 1, 0);
  ExpectNear(cross_entropy(x, t, Tensor(), "none").to_vector<double>(), {l0, l1, 0});
  ExpectNear(cross_entropy(x, t).to_vector<double>(), {(l0 + l1) / 2});
  ExpectNear(cross_entropy(x, t, w, "sum").to_vector<double>(), {3 * l0 + 1 * l1});
  ExpectNear(cross_entropy(x, t, w).to_vector<double>(), {(3 * l0 + l1) / 4});
  ExpectNear(nll_loss(log_softmax(x, 1), t, w).to_vector<double>(), {(3 * l0 + l1) / 4});
  // nll_loss of raw scores: -x[target].
  ExpectNear(nll_loss(x, t, Tensor(), "none").to_vector<double>(), {-2, -0.25, 0});
  // A (C) input with a 0-dim target, and a (N, C, d) input.
  ExpectNear(
      cross_entropy(F64({0.5, -1, 2}, Shape({3})), tensor<int64_t>({2}, Shape({}), TestDevice()))
          .to_vector<double>(),
      {l0});
  const Tensor x3 = x.reshape({1, 3, 3});
  ExpectNear(
      cross_entropy(x3, tensor<int64_t>({0, 1, 2}, Shape({1, 3}), TestDevice()), Tensor(), "none")
          .to_vector<double>(),
      {-(0.5 - std::log(std::exp(0.5) + std::exp(0.25) + std::exp(-3))),
       -(1 - std::log(std::exp(-1) + std::exp(1) + std::exp(0.5))),
       -(0 - std::log(std::exp(2) + std::exp(1) + std::exp(0)))});
  // Every target ignored: the mean is 0 / 0, NaN, as PyTorch's.
  EXPECT_TRUE(
      std::isnan(cross_entropy(x, tensor<int64_t>({-100, -100, -100}, Shape({3}), TestDevice()))
                     .to_vector<double>()[0]));
}

TEST(ClassLossTest, LabelSmoothingAndClassProbabilities) {
  const std::vector<double> xv = {0.5, -1, 2, 0.25, 1, 1};
  const Tensor x = F64(xv, Shape({2, 3}));
  const Tensor t = tensor<int64_t>({2, 0}, Shape({2}), TestDevice());
  const double e = 0.3;
  double want = 0;
  for (int64_t r = 0; r < 2; ++r) {
    const int64_t target = r == 0 ? 2 : 0;
    double smooth = 0;
    for (int64_t c = 0; c < 3; ++c) smooth += Nll(xv, 3, r, c);
    want += (1 - e) * Nll(xv, 3, r, target) + e / 3 * smooth;
  }
  ExpectNear(cross_entropy(x, t, Tensor(), "mean", -100, e).to_vector<double>(), {want / 2});
  // Class probabilities: one-hot probabilities give the index loss.
  const Tensor p = one_hot(t, 3).to(DType::kFloat64);
  ExpectNear(cross_entropy(x, p).to_vector<double>(), cross_entropy(x, t).to_vector<double>());
  ExpectNear(cross_entropy(x, p, Tensor(), "mean", -100, e).to_vector<double>(), {want / 2});
}

TEST(ClassLossTest, GradientOfCrossEntropyIsSoftmaxMinusOneHot) {
  Tensor x = F64({0.5, -1, 2, 0.25, 1, 1}, Shape({2, 3})).requires_grad_();
  const Tensor t = tensor<int64_t>({2, 0}, Shape({2}), TestDevice());
  cross_entropy(x, t, Tensor(), "sum").backward();
  const std::vector<double> p = softmax(x.detach(), 1).to_vector<double>();
  ExpectNear(x.grad().to_vector<double>(), {p[0], p[1], p[2] - 1, p[3] - 1, p[4], p[5]});
}

// The fused cross_entropy (2-dim logits, class indices, mean or sum) against the composition a
// weight of ones takes: values, gradients, strided logits, ignored rows, float32, and a second
// derivative through create_graph.
TEST(ClassLossTest, FusedCrossEntropyMatchesTheComposedOne) {
  manual_seed(3);
  for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
    const double tol = dtype == DType::kFloat64 ? 1e-12 : 2e-6;
    const Tensor base = randn(Shape({11, 37}), dtype, TestDevice());
    for (bool strided : {false, true}) {
      Tensor x = (strided ? base.permute({1, 0}) : base.permute({1, 0}).contiguous()).detach();
      x.requires_grad_();
      Tensor xc = x.detach().contiguous().requires_grad_();
      std::vector<int64_t> tv(37);
      for (int64_t i = 0; i < 37; ++i) tv[static_cast<size_t>(i)] = i % 5 == 0 ? -100 : i % 11;
      const Tensor t = tensor<int64_t>(tv, Shape({37}), TestDevice());
      const Tensor ones_w = ones(Shape({11}), dtype, TestDevice());
      for (const char* r : {"mean", "sum"}) {
        SCOPED_TRACE(std::string(r) + " " + to_string(dtype) + (strided ? " strided" : ""));
        x.set_grad(Tensor());
        xc.set_grad(Tensor());
        const Tensor fused = cross_entropy(x, t, Tensor(), r);
        const Tensor composed = cross_entropy(xc, t, ones_w, r);
        EXPECT_EQ(fused.dtype(), dtype);
        EXPECT_EQ(fused.dim(), 0);
        const double a = fused.to(DType::kFloat64).to_vector<double>()[0];
        const double b = composed.to(DType::kFloat64).to_vector<double>()[0];
        EXPECT_NEAR(a, b, tol * std::abs(b));
        (fused * 3.0).backward();
        (composed * 3.0).backward();
        const std::vector<double> ga =
            x.grad().to(DType::kFloat64).contiguous().to_vector<double>();
        const std::vector<double> gb = xc.grad().to(DType::kFloat64).to_vector<double>();
        for (size_t i = 0; i < ga.size(); ++i) EXPECT_NEAR(ga[i], gb[i], tol) << "element " << i;
      }
    }
  }
  // A second derivative: d/dx of sum(grad^2), through the recorded backward.
  Tensor x = randn(Shape({4, 3}), DType::kFloat64, TestDevice()).requires_grad_();
  Tensor xc = x.detach().requires_grad_();
  const Tensor t = tensor<int64_t>({0, 2, -100, 1}, Shape({4}), TestDevice());
  const Tensor ones_w = ones(Shape({3}), DType::kFloat64, TestDevice());
  const Tensor ga = autograd::grad({cross_entropy(x, t)}, {x}, {}, false, false, true)[0];
  const Tensor gb = autograd::grad({cross_entropy(xc, t, ones_w)}, {xc}, {}, false, false, true)[0];
  (ga * ga).sum().backward();
  (gb * gb).sum().backward();
  ExpectNear(x.grad().to_vector<double>(), xc.grad().to_vector<double>());
  // Every row ignored: NaN for the mean, 0 for the sum; an empty batch as PyTorch's.
  const Tensor none = tensor<int64_t>({-100, -100, -100, -100}, Shape({4}), TestDevice());
  EXPECT_TRUE(std::isnan(cross_entropy(x, none).to_vector<double>()[0]));
  EXPECT_EQ(cross_entropy(x, none, Tensor(), "sum").to_vector<double>()[0], 0.0);
}

TEST(ClassLossTest, OneHotAndIndexSelect) {
  const Tensor t = tensor<int64_t>({2, 0, 1}, Shape({3}), TestDevice());
  const Tensor h = one_hot(t);
  EXPECT_EQ(h.shape(), Shape({3, 3}));
  EXPECT_EQ(h.dtype(), DType::kInt64);
  EXPECT_EQ(h.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 1, 1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(one_hot(t, 5).shape(), Shape({3, 5}));
  EXPECT_EQ(one_hot(tensor<int64_t>({}, Shape({0}), TestDevice()), 4).shape(), Shape({0, 4}));
  const Tensor x = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const Tensor idx = tensor<int64_t>({2, 0, 2}, Shape({3}), TestDevice());
  EXPECT_EQ(index_select(x, 1, idx).to_vector<double>(), (std::vector<double>{3, 1, 3, 6, 4, 6}));
  EXPECT_EQ(x.index_select(0, tensor<int64_t>({1}, Shape({1}), TestDevice())).to_vector<double>(),
            (std::vector<double>{4, 5, 6}));
  Tensor g = F64({1, 2, 3}, Shape({3})).requires_grad_();
  index_select(g, 0, idx).sum().backward();
  EXPECT_EQ(g.grad().to_vector<double>(), (std::vector<double>{1, 0, 2}));
}

TEST(ClassLossTest, ErrorsNameTheOpAndTheValues) {
  const Tensor x = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const Tensor t = tensor<int64_t>({0, 1}, Shape({2}), TestDevice());
  ExpectThrowWith<InvalidArgument>(
      [&] {
        cross_entropy(x, tensor<int32_t>({0, 1}, Shape({2}), TestDevice()));
      },
      {"cross_entropy: target dtype int32 is not int64"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        nll_loss(x, tensor<int64_t>({0, 1, 2}, Shape({3}), TestDevice()));
      },
      {"nll_loss: target shape (3) does not match input shape (2,3) (expected (2))"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        cross_entropy(x, t, F64({1, 2}, Shape({2})));
      },
      {"cross_entropy: weight shape (2) is not (3) (one per class)"});
  ExpectThrowWith<InvalidArgument>([&] { cross_entropy(x, t, Tensor(), "avg"); },
                                   {"cross_entropy: reduction 'avg' is not one of"});
  ExpectThrowWith<InvalidArgument>([&] { cross_entropy(x, t, Tensor(), "mean", -100, 1.5); },
                                   {"cross_entropy: label_smoothing must be between 0.0 and 1.0"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        cross_entropy(x, F64({1, 0}, Shape({2})));
      },
      {"cross_entropy: a float target (class probabilities) must "
       "have the input's shape (2,3), got (2)"});
  ExpectThrowWith<InvalidArgument>([&] { nll_loss(x.to(DType::kInt64), t); },
                                   {"nll_loss: input dtype int64 is not supported"});
  ExpectThrowWith<InvalidArgument>(
      [&] { one_hot(tensor<int64_t>({-1}, Shape({1}), TestDevice())); },
      {"one_hot: class values must be non-negative, got -1"});
  ExpectThrowWith<InvalidArgument>([&] { one_hot(t, 1); },
                                   {"one_hot: class value 1 is not below num_classes 1"});
  ExpectThrowWith<InvalidArgument>([&] { one_hot(t.to(DType::kInt32)); },
                                   {"one_hot: dtype int32 is not supported"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        index_select(x, 0, tensor<int64_t>({0}, Shape({1, 1}), TestDevice()));
      },
      {"index_select: index must have 1 dim (or none), got shape (1,1)"});
  ExpectThrowWith<InvalidArgument>([&] { one_hot(t, -2); },
                                   {"one_hot: num_classes must be -1 (inferred) or at least 0, "
                                    "got -2"});
  ExpectThrowWith<InvalidArgument>(
      [&] { one_hot(tensor<int64_t>({}, Shape({0}), TestDevice())); },
      {"one_hot: cannot infer the number of classes of an empty tensor; give num_classes"});
  ExpectThrowWith<InvalidArgument>(
      [&] { index_select(x, 0, tensor<int32_t>({0}, Shape({1}), TestDevice())); },
      {"index_select: index dtype int32 is not int64"});
  const Tensor scalar = F64({1}, Shape({}));
  const Tensor scalar_target = tensor<int64_t>({0}, Shape({}), TestDevice());
  ExpectThrowWith<InvalidArgument>([&] { cross_entropy(scalar, scalar_target); },
                                   {"cross_entropy: input must have a class dim, got a 0-dim "
                                    "tensor"});
  ExpectThrowWith<InvalidArgument>([&] { nll_loss(scalar, scalar_target); },
                                   {"nll_loss: input must have a class dim, got a 0-dim tensor"});
  // A class index out of range fails the loss's value, not the runtime (as gather's index).
  if (TestDevice().type() != DeviceType::kCUDA) {
    ExpectThrowWith<Error>(
        [&] {
          cross_entropy(x, tensor<int64_t>({0, 3}, Shape({2}), TestDevice())).to_vector<double>();
        },
        {"cross_entropy: target 3 (row 1) is out of bounds for 3 classes"});
    try {
      ofl::sync();  // at most the error reported above, never a new one
    } catch (const Error&) {
    }
    ExpectRuntimeWorks();
  }
  EXPECT_EQ(cross_entropy(x, t, Tensor(), "none").shape(), Shape({2}));
}

}  // namespace
}  // namespace ofl::testing
