// The reductions beyond sum through the public API, on the test device: mean (float only, NaN of
// nothing), amax/amin over dim sets (NaN wins, the gradient split among ties, an empty reduced dim
// refused), max/min along a dim with int64 indices (the first among ties, the gradient to that
// element), argmax/argmin (dim None flattens), logsumexp (stable with large values, infinities,
// softmax gradient), and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "oneflow_lite/reductions.h"
#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor F64(const std::vector<double>& v, const Shape& shape) {
  return tensor<double>(v, shape, TestDevice());
}

void ExpectInvalidArgument(const std::function<void()>& fn, const std::string& piece) {
  ExpectThrowWith<InvalidArgument>(fn, {piece});
}

TEST(ReductionOpsTest, Mean) {
  Tensor x = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  EXPECT_EQ(x.mean().to_vector<double>(), (std::vector<double>{3.5}));
  EXPECT_EQ(x.mean({1}).to_vector<double>(), (std::vector<double>{2, 5}));
  EXPECT_EQ(mean(x, {0}, true).shape(), Shape({1, 3}));
  EXPECT_EQ(mean(x, {0}, true).to_vector<double>(), (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(x.to(DType::kFloat32).mean({-1}).dtype(), DType::kFloat32);
  EXPECT_TRUE(
      std::isnan(zeros(Shape({0}), DType::kFloat64, TestDevice()).mean().to_vector<double>()[0]));
  Tensor g = F64({1, 2, 3, 4}, Shape({2, 2})).requires_grad_();
  g.mean({0}).sum().backward();
  EXPECT_EQ(g.grad().to_vector<double>(), (std::vector<double>{0.5, 0.5, 0.5, 0.5}));
}

TEST(ReductionOpsTest, AmaxAndAmin) {
  Tensor x = F64({1, 7, 3, 4, -5, 6}, Shape({2, 3}));
  EXPECT_EQ(x.amax().to_vector<double>(), (std::vector<double>{7}));
  EXPECT_EQ(x.amin().to_vector<double>(), (std::vector<double>{-5}));
  EXPECT_EQ(amax(x, {0}).to_vector<double>(), (std::vector<double>{4, 7, 6}));
  EXPECT_EQ(amin(x, {1}, true).shape(), Shape({2, 1}));
  EXPECT_EQ(amin(x, {1}, true).to_vector<double>(), (std::vector<double>{1, -5}));
  EXPECT_EQ(amax(x, {0, 1}).shape(), Shape({}));
  EXPECT_TRUE(std::isnan(F64({1, kNaN, 3}, Shape({3})).amax().to_vector<double>()[0]));
  Tensor i = tensor<int32_t>({3, -9, 4}, Shape({3}), TestDevice());
  EXPECT_EQ(i.amax().dtype(), DType::kInt32);
  EXPECT_EQ(i.amin().to_vector<int32_t>(), (std::vector<int32_t>{-9}));
  // The gradient is split evenly among the elements equal to the result.
  Tensor g = F64({1, 3, 3, 2}, Shape({4})).requires_grad_();
  g.amax().backward();
  EXPECT_EQ(g.grad().to_vector<double>(), (std::vector<double>{0, 0.5, 0.5, 0}));
  ExpectInvalidArgument(
      [&] {
        amax(zeros(Shape({2, 0}), DType::kFloat32, TestDevice()), {1});
      },
      "amax: the input has no elements along dim 1 (shape (2,0))");
  ExpectInvalidArgument([&] { amax(x, {0, 0}); }, "amax: dim 0 appears more than once in dims");
  ExpectInvalidArgument([&] { amin(x, {2}); }, "amin: dim 2 is out of range for a 2-dim tensor");
}

TEST(ReductionOpsTest, MaxAlongADimGivesValuesAndTheFirstIndex) {
  Tensor x = F64({1, 7, 7, 4, kNaN, 6, 2, 2, 2}, Shape({3, 3}));
  auto [v, i] = x.max(1);
  EXPECT_EQ(v.shape(), Shape({3}));
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 1, 0}));  // ties: first; NaN wins
  const std::vector<double> values = v.to_vector<double>();
  EXPECT_EQ(values[0], 7);
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_EQ(values[2], 2);
  auto [mv, mi] = min(x, 0, /*keepdim=*/true);
  EXPECT_EQ(mv.shape(), Shape({1, 3}));
  EXPECT_EQ(mi.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2}));
  // A permuted view, and a 0-dim tensor.
  EXPECT_EQ(std::get<1>(x.permute({1, 0}).max(0)).to_vector<int64_t>(),
            (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(std::get<1>(F64({5}, Shape({})).max(0)).to_vector<int64_t>(),
            (std::vector<int64_t>{0}));
  EXPECT_EQ(x.max().dtype(), DType::kFloat64);
  // The gradient goes to the element at the index only.
  Tensor g = F64({3, 1, 3, 0, 5, 5}, Shape({2, 3})).requires_grad_();
  std::get<0>(g.max(1)).sum().backward();
  EXPECT_EQ(g.grad().to_vector<double>(), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  ExpectInvalidArgument([&] { x.max(3); }, "max_dim: dim 3 is out of range for a 2-dim tensor");
  ExpectInvalidArgument(
      [&] {
        zeros(Shape({0, 2}), DType::kFloat32, TestDevice()).min(0);
      },
      "min_dim: the input has no elements along dim 0");
}

TEST(ReductionOpsTest, ArgmaxAndArgmin) {
  Tensor x = F64({1, 9, 3, 9, -4, 6}, Shape({2, 3}));
  EXPECT_EQ(x.argmax().to_vector<int64_t>(), (std::vector<int64_t>{1}));
  EXPECT_EQ(x.argmax().shape(), Shape({}));
  EXPECT_EQ(argmin(x).to_vector<int64_t>(), (std::vector<int64_t>{4}));
  EXPECT_EQ(argmax(x, std::nullopt, true).shape(), Shape({1, 1}));
  EXPECT_EQ(argmax(x, 1).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(x.argmin(0, true).shape(), Shape({1, 3}));
  EXPECT_EQ(x.argmin(0, true).to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_FALSE(argmax(x.requires_grad_()).requires_grad());
}

TEST(ReductionOpsTest, Logsumexp) {
  Tensor x = F64({1, 2, 3, 1000, 1000, -kInf}, Shape({2, 3}));
  const std::vector<double> r = logsumexp(x, {1}).to_vector<double>();
  EXPECT_NEAR(r[0], std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)), 1e-12);
  EXPECT_NEAR(r[1], 1000 + std::log(2.0), 1e-9);  // no overflow
  EXPECT_EQ(F64({-kInf, -kInf}, Shape({2})).logsumexp().to_vector<double>()[0], -kInf);
  EXPECT_EQ(F64({kInf, 1}, Shape({2})).logsumexp().to_vector<double>()[0], kInf);
  EXPECT_EQ(logsumexp(x, {1}, true).shape(), Shape({2, 1}));
  Tensor i = tensor<int32_t>({0, 0}, Shape({2}), TestDevice());
  EXPECT_EQ(i.logsumexp().dtype(), DType::kFloat32);
  EXPECT_NEAR(i.logsumexp().to_vector<float>()[0], std::log(2.0f), 1e-6);
  // The gradient is the softmax.
  Tensor g = F64({0, std::log(3.0)}, Shape({2})).requires_grad_();
  g.logsumexp().backward();
  const std::vector<double> s = g.grad().to_vector<double>();
  EXPECT_NEAR(s[0], 0.25, 1e-12);
  EXPECT_NEAR(s[1], 0.75, 1e-12);
}

TEST(ReductionOpsTest, SumInADTypeCastsFirstAndReturnsThatDType) {
  // int8 values summed in int32: no wrap at int8's width, an int32 result.
  Tensor i8 = tensor<int8_t>({100, 100, 100, -1}, Shape({2, 2}), TestDevice());
  Tensor s = sum(i8, {}, false, DType::kInt32);
  EXPECT_EQ(s.dtype(), DType::kInt32);
  EXPECT_EQ(s.to_vector<int32_t>(), std::vector<int32_t>{299});
  EXPECT_EQ(sum(i8, {1}, true, DType::kInt32).to_vector<int32_t>(),
            (std::vector<int32_t>{200, 99}));
  EXPECT_EQ(sum(i8, {1}, true, DType::kInt32).shape(), Shape({2, 1}));
  // An int32 sum wraps at int32's width, as PyTorch's.
  Tensor big = tensor<int32_t>({2147483647, 1}, Shape({2}), TestDevice());
  EXPECT_EQ(sum(big, DType::kInt32).to_vector<int32_t>()[0], -2147483647 - 1);
  EXPECT_EQ(big.sum().to_vector<int64_t>()[0], 2147483648LL);  // int64 without a dtype
  // A float16 tensor summed in float32 (no overflow at float16's 65504), and its gradient.
  Tensor h = full(Shape({3}), 40000.0, DType::kFloat16, TestDevice()).requires_grad_();
  Tensor f = sum(h, DType::kFloat32);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.to_vector<float>()[0], 120000.0f);
  f.backward();
  EXPECT_EQ(h.grad().dtype(), DType::kFloat16);
  EXPECT_EQ(h.grad().to(DType::kFloat32).to_vector<float>(), (std::vector<float>{1, 1, 1}));
  // In bool the sum is whether any element is nonzero, as torch.sum(x, dtype=torch.bool).
  EXPECT_EQ(sum(i8, DType::kBool).to_vector<bool>(), std::vector<bool>{true});
  EXPECT_EQ(sum(zeros(Shape({3}), DType::kFloat32, TestDevice()), DType::kBool).to_vector<bool>(),
            std::vector<bool>{false});
  ExpectInvalidArgument([&] { sum(Tensor(), DType::kInt32); },
                        "sum: the input tensor is undefined");
  ExpectRuntimeWorks();
}

TEST(ReductionOpsTest, BadInputsNameTheOpAndTheValues) {
  Tensor i = tensor<int64_t>({1, 2}, Shape({2}), TestDevice());
  ExpectInvalidArgument([&] { i.mean(); }, "mean: dtype int64 is not supported (a float dtype is");
  ExpectInvalidArgument([&] { argmax(i, 1); }, "max_dim: dim 1 is out of range");
  ExpectInvalidArgument([&] { amax(Tensor()); }, "undefined");
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
