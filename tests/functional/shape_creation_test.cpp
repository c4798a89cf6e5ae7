// cat, stack, split, chunk, flatten, squeeze, unsqueeze, arange, linspace and the *_like functions
// through the public API on the test device: values against hand-worked ones (PyTorch's), views
// where PyTorch gives views, dtype promotion in cat, every dtype of arange and linspace, and the
// errors naming the function and the values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F64(const std::vector<double>& v, const Shape& shape) {
  return tensor<double>(v, shape, TestDevice());
}
Tensor I32(const std::vector<int32_t>& v, const Shape& shape) {
  return tensor<int32_t>(v, shape, TestDevice());
}

TEST(ShapeOpsTest, CatJoinsAlongADim) {
  const Tensor a = F64({1, 2, 3, 4}, Shape({2, 2}));
  const Tensor b = F64({5, 6}, Shape({2, 1}));
  const Tensor c = cat({a, b}, 1);
  EXPECT_EQ(c.shape(), Shape({2, 3}));
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{1, 2, 5, 3, 4, 6}));
  EXPECT_EQ(cat({a, a.permute({1, 0})}, 0).to_vector<double>(),
            (std::vector<double>{1, 2, 3, 4, 1, 3, 2, 4}));
  EXPECT_EQ(cat({a}, -1).to_vector<double>(), a.to_vector<double>());
  // A 1-dim input of size 0 is skipped whatever the others' shapes (PyTorch's legacy rule).
  EXPECT_EQ(cat({F64({}, Shape({0})), b, F64({}, Shape({0}))}, 0).shape(), Shape({2, 1}));
  EXPECT_EQ(cat({F64({}, Shape({0})), F64({}, Shape({0}))}).shape(), Shape({0}));
  EXPECT_EQ(cat({F64({}, Shape({2, 0})), b}, 1).to_vector<double>(), (std::vector<double>{5, 6}));
}

TEST(ShapeOpsTest, CatPromotesAndTakesAnyNumberOfTensors) {
  const Tensor c = cat({I32({1, 2}, Shape({2})), F64({0.5}, Shape({1}))});
  EXPECT_EQ(c.dtype(), DType::kFloat64);
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{1, 2, 0.5}));
  std::vector<Tensor> many;
  std::vector<int32_t> want;
  for (int32_t i = 0; i < 150; ++i) {
    many.push_back(I32({i, -i}, Shape({1, 2})));
    want.push_back(i);
    want.push_back(-i);
  }
  const Tensor all = cat(many, 0);
  EXPECT_EQ(all.shape(), Shape({150, 2}));
  EXPECT_EQ(all.to_vector<int32_t>(), want);
}

TEST(ShapeOpsTest, StackAddsADim) {
  const Tensor a = F64({1, 2}, Shape({2}));
  const Tensor b = F64({3, 4}, Shape({2}));
  EXPECT_EQ(stack({a, b}).shape(), Shape({2, 2}));
  EXPECT_EQ(stack({a, b}).to_vector<double>(), (std::vector<double>{1, 2, 3, 4}));
  EXPECT_EQ(stack({a, b}, 1).to_vector<double>(), (std::vector<double>{1, 3, 2, 4}));
  EXPECT_EQ(stack({a, b}, -1).shape(), Shape({2, 2}));
  EXPECT_EQ(stack({F64({7}, Shape({}))}).shape(), Shape({1}));
}

TEST(ShapeOpsTest, SplitAndChunkAreViews) {
  const Tensor x = F64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, Shape({2, 5}));
  const std::vector<Tensor> s = split(x, 2, 1);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].to_vector<double>(), (std::vector<double>{0, 1, 5, 6}));
  EXPECT_EQ(s[2].shape(), Shape({2, 1}));
  EXPECT_EQ(s[2].to_vector<double>(), (std::vector<double>{4, 9}));
  EXPECT_TRUE(SameStorage(s[1], x));
  const std::vector<Tensor> w = x.split_with_sizes({1, 4}, -1);
  EXPECT_EQ(w[1].to_vector<double>(), (std::vector<double>{1, 2, 3, 4, 6, 7, 8, 9}));
  // chunk: ceil(5 / 3) = 2 per chunk, so 3 chunks of 2, 2, 1; 6 chunks of 5 give 5 of 1.
  EXPECT_EQ(x.chunk(3, 1).size(), 3u);
  EXPECT_EQ(chunk(x, 6, 1).size(), 5u);
  EXPECT_EQ(chunk(x, 2).size(), 2u);
  EXPECT_EQ(chunk(F64({}, Shape({0, 3})), 4).size(), 4u);  // a dim of size 0: `chunks` empties
  EXPECT_EQ(split(F64({}, Shape({0})), 0).size(), 1u);
}

TEST(ShapeOpsTest, FlattenSqueezeUnsqueeze) {
  const Tensor x = F64({0, 1, 2, 3, 4, 5}, Shape({1, 2, 1, 3}));
  EXPECT_EQ(flatten(x).shape(), Shape({6}));
  EXPECT_EQ(x.flatten(1, 2).shape(), Shape({1, 2, 3}));
  EXPECT_EQ(x.flatten(-2).shape(), Shape({1, 2, 3}));
  EXPECT_EQ(flatten(F64({4}, Shape({}))).shape(), Shape({1}));
  EXPECT_TRUE(SameStorage(flatten(x), x));
  EXPECT_EQ(x.permute({3, 1, 0, 2}).flatten().to_vector<double>(),
            (std::vector<double>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(x.squeeze().shape(), Shape({2, 3}));
  EXPECT_EQ(squeeze(x, 2).shape(), Shape({1, 2, 3}));
  EXPECT_EQ(squeeze(x, 1).shape(), Shape({1, 2, 1, 3}));  // size 2: unchanged
  EXPECT_EQ(squeeze(F64({4}, Shape({})), 0).shape(), Shape({}));
  EXPECT_EQ(x.unsqueeze(4).shape(), Shape({1, 2, 1, 3, 1}));
  EXPECT_EQ(unsqueeze(x, -1).shape(), Shape({1, 2, 1, 3, 1}));
  EXPECT_EQ(unsqueeze(x, 0).shape(), Shape({1, 1, 2, 1, 3}));
  const Tensor t = x.squeeze().permute({1, 0});
  EXPECT_TRUE(SameStorage(t.unsqueeze(1), x));
  EXPECT_EQ(t.unsqueeze(1).to_vector<double>(), t.to_vector<double>());
}

TEST(CreationOpsTest, ArangeFollowsPyTorch) {
  const Tensor a = arange(5, std::nullopt, TestDevice());
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_EQ(a.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(10, 0, -3, std::nullopt, TestDevice()).to_vector<int64_t>(),
            (std::vector<int64_t>{10, 7, 4, 1}));
  const Tensor f = arange(0, 1, 0.25, std::nullopt, TestDevice());
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(arange(1.0, 2.0, 0.3, DType::kFloat64, TestDevice()).to_vector<double>(),
            (std::vector<double>{1.0, 1.0 + 0.3, 1.0 + 2 * 0.3, 1.0 + 3 * 0.3}));
  // An integer dtype computes in int64 from a truncated start and step, as PyTorch's.
  EXPECT_EQ(arange(0, 5, 1.5, DType::kInt32, TestDevice()).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(arange(3, 3, 1, std::nullopt, TestDevice()).numel(), 0);
  EXPECT_EQ(
      arange(int64_t{1} << 40, (int64_t{1} << 40) + 3, 1, std::nullopt, TestDevice())
          .to_vector<int64_t>(),
      (std::vector<int64_t>{int64_t{1} << 40, (int64_t{1} << 40) + 1, (int64_t{1} << 40) + 2}));
  for (DType d : {DType::kUInt8, DType::kInt8, DType::kInt16, DType::kFloat16, DType::kBFloat16}) {
    EXPECT_EQ(arange(4, d, TestDevice()).to(DType::kFloat64).to_vector<double>(),
              (std::vector<double>{0, 1, 2, 3}))
        << to_string(d);
  }
  const Tensor big = arange(0, 300000, 1, DType::kFloat32, TestDevice());
  const std::vector<float> v = big.to_vector<float>();
  for (size_t i = 0; i < v.size(); i += 997) ASSERT_EQ(v[i], static_cast<float>(i));
}

TEST(CreationOpsTest, LinspaceHitsBothEnds) {
  const Tensor l = linspace(0, 1, 5, std::nullopt, TestDevice());
  EXPECT_EQ(l.dtype(), DType::kFloat32);
  EXPECT_EQ(l.to_vector<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  const std::vector<double> d =
      linspace(-1, 0.3, 7, DType::kFloat64, TestDevice()).to_vector<double>();
  ASSERT_EQ(d.size(), 7u);
  EXPECT_EQ(d.front(), -1.0);
  EXPECT_EQ(d.back(), 0.3);
  const double step = (0.3 - -1.0) / 6;
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(d[i], i < 3 ? -1.0 + i * step : 0.3 - (6 - i) * step) << i;
  }
  EXPECT_EQ(linspace(2, 9, 1, std::nullopt, TestDevice()).to_vector<float>(),
            (std::vector<float>{2}));
  EXPECT_EQ(linspace(2, 9, 0, std::nullopt, TestDevice()).numel(), 0);
  EXPECT_EQ(linspace(0, 10, 4, DType::kInt64, TestDevice()).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 3, 6, 10}));
}

TEST(CreationOpsTest, LikeFunctionsTakeShapeDeviceAndDType) {
  const Tensor x = I32({1, 2, 3, 4, 5, 6}, Shape({2, 3})).permute({1, 0});
  const Tensor z = zeros_like(x);
  EXPECT_EQ(z.shape(), Shape({3, 2}));
  EXPECT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(z.device(), TestDevice());
  EXPECT_EQ(z.to_vector<int32_t>(), std::vector<int32_t>(6, 0));
  EXPECT_EQ(ones_like(x, DType::kFloat64).to_vector<double>(), std::vector<double>(6, 1.0));
  EXPECT_EQ(full_like(x, 7).to_vector<int32_t>(), std::vector<int32_t>(6, 7));
  EXPECT_EQ(empty_like(x, DType::kFloat16).shape(), Shape({3, 2}));
  EXPECT_EQ(empty_like(x).dtype(), DType::kInt32);
}

TEST(ShapeOpsTest, ErrorsNameTheFunctionAndTheValues) {
  const Tensor a = F64({1, 2, 3, 4}, Shape({2, 2}));
  ExpectThrowWith<InvalidArgument>([&] { cat({}); }, {"cat", "non-empty"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        cat({a, F64({1, 2, 3}, Shape({3}))});
      },
      {"cat", "same number of dims", "(2,2)", "(3)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        cat({a, F64({1, 2, 3}, Shape({1, 3}))}, 0);
      },
      {"cat", "expected size 2", "got size 3", "tensor 1", "dim 1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        cat({a, F64({1}, Shape({}))});
      },
      {"cat", "zero-dimensional", "position 1"});
  ExpectThrowWith<InvalidArgument>([&] { cat({a, a}, 2); }, {"cat", "dim 2", "out of range"});
  ExpectThrowWith<InvalidArgument>([&] { stack({}); }, {"stack", "non-empty"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        stack({a, F64({1, 2}, Shape({2}))});
      },
      {"stack", "(2,2) at entry 0", "(2) at entry 1"});
  ExpectThrowWith<InvalidArgument>([&] { stack({a}, 3); }, {"stack", "dim 3", "-3 to 2"});
  ExpectThrowWith<InvalidArgument>([&] { split(a, 0, 1); }, {"split", "split_size", "0"});
  ExpectThrowWith<InvalidArgument>([&] { split(F64({1}, Shape({})), 1); }, {"split", "0-dim"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        split_with_sizes(a, {1, 2}, 0);
      },
      {"split_with_sizes", "[1, 2]", "add up to 3", "size 2"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        split_with_sizes(a, {3, -1}, 0);
      },
      {"split_with_sizes", "non-negative", "[3, -1]"});
  ExpectThrowWith<InvalidArgument>([&] { chunk(a, 0); }, {"chunk", "chunks must be positive", "0"});
  ExpectThrowWith<InvalidArgument>([&] { flatten(a, 1, 0); },
                                   {"flatten", "start_dim 1", "end_dim 0"});
  ExpectThrowWith<InvalidArgument>([&] { squeeze(a, 2); }, {"squeeze", "dim 2", "out of range"});
  ExpectThrowWith<InvalidArgument>([&] { unsqueeze(a, -4); }, {"unsqueeze", "dim -4", "-3 to 2"});
  const Device other(TestDevice() == Device("cpu") ? "sim:0" : "cpu");
  ExpectThrowWith<InvalidArgument>(
      [&] {
        cat({a, F64({1, 2}, Shape({1, 2})).to(other)});
      },
      {"cat", "different devices"});
  ExpectRuntimeWorks();
}

TEST(CreationOpsTest, ErrorsNameTheFunctionAndTheValues) {
  ExpectThrowWith<InvalidArgument>([] { arange(0, 5, 0); }, {"arange", "step", "nonzero", "0"});
  ExpectThrowWith<InvalidArgument>([] { arange(5, 0, 1); }, {"arange", "5 -> 0", "sign of step 1"});
  ExpectThrowWith<InvalidArgument>([] { arange(0, INFINITY); }, {"arange", "unsupported range"});
  ExpectThrowWith<InvalidArgument>([] { arange(4, DType::kBool); }, {"arange", "bool"});
  ExpectThrowWith<InvalidArgument>([] { arange(0, 1, 1e-20); }, {"arange", "too many elements"});
  ExpectThrowWith<InvalidArgument>([] { linspace(0, 1, -1); }, {"linspace", "steps", "-1"});
  ExpectThrowWith<InvalidArgument>([] { full_like(tensor<uint8_t>({1}, Shape({1})), 300); },
                                   {"full_like", "300", "uint8"});
  ExpectThrowWith<InvalidArgument>([] { zeros_like(Tensor()); }, {"zeros_like", "undefined"});
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
