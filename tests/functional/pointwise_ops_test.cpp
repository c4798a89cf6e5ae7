// The pointwise ops through the public API, on the test device: comparisons (functions, operators,
// numbers on either side) giving bool tensors compared in the promoted type, maximum/minimum (NaN,
// promotion, the tie gradient), where (broadcasting of all three, promotion, numbers, gradients),
// clamp and its one-bound forms (dtype rules, inclusive-bound gradient), the logical and bitwise
// ops and their operators, that bool results leave the graph, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor F64(const std::vector<double>& v, const Shape& shape) {
  return tensor<double>(v, shape, TestDevice());
}
Tensor I32(const std::vector<int32_t>& v) {
  return tensor<int32_t>(v, Shape({static_cast<int64_t>(v.size())}), TestDevice());
}
Tensor Bools(const std::vector<bool>& v) {
  return tensor<bool>(v, Shape({static_cast<int64_t>(v.size())}), TestDevice());
}

void ExpectInvalidArgument(const std::function<void()>& fn, const std::string& piece) {
  ExpectThrowWith<InvalidArgument>(fn, {piece});
}

TEST(PointwiseOpsTest, ComparisonsGiveBoolTensorsWithBroadcasting) {
  Tensor a = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  Tensor b = F64({2, 2, 2}, Shape({3}));
  struct Case {
    const char* name;
    Tensor got;
    std::vector<bool> want;
  };
  const std::vector<Case> cases = {
      {"eq", eq(a, b), {false, true, false, false, false, false}},
      {"ne", ne(a, b), {true, false, true, true, true, true}},
      {"lt", lt(a, b), {true, false, false, false, false, false}},
      {"le", a <= b, {true, true, false, false, false, false}},
      {"gt", a > b, {false, false, true, true, true, true}},
      {"ge", a.ge(b), {false, true, true, true, true, true}},
      {"number", a == 4, {false, false, false, true, false, false}},
      {"number left", 3 < a, {false, false, false, true, true, true}},
      {"number left <=", 3 <= a, {false, false, true, true, true, true}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.got.dtype(), DType::kBool);
    EXPECT_EQ(c.got.shape(), Shape({2, 3}));
    EXPECT_EQ(c.got.to_vector<bool>(), c.want);
  }
  // NaN compares unequal to everything, itself included.
  Tensor n = F64({kNaN, 1}, Shape({2}));
  EXPECT_EQ((n == n).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ((n != n).to_vector<bool>(), (std::vector<bool>{true, false}));
  EXPECT_EQ((n < 2).to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(PointwiseOpsTest, ComparisonsCompareInThePromotedType) {
  // int32 against 2.5: compared in float32, not with 2.5 truncated to 2.
  Tensor i = I32({1, 2, 3});
  EXPECT_EQ((i < 2.5).to_vector<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ((i == 2.0).to_vector<bool>(), (std::vector<bool>{false, true, false}));
  // int32 against a float64 tensor, int64 against int32, bool against int.
  EXPECT_EQ(eq(i, F64({1.0, 2.5, 3.0}, Shape({3}))).to_vector<bool>(),
            (std::vector<bool>{true, false, true}));
  Tensor big = tensor<int64_t>({int64_t{1} << 40, 2, -1}, Shape({3}), TestDevice());
  EXPECT_EQ((big > i).to_vector<bool>(), (std::vector<bool>{true, false, false}));
  EXPECT_EQ((Bools({true, false, true}) == I32({1, 0, 2})).to_vector<bool>(),
            (std::vector<bool>{true, true, false}));
  // A number the tensor's dtype cannot hold is refused, as in arithmetic.
  Tensor u = tensor<uint8_t>({1}, Shape({1}), TestDevice());
  ExpectInvalidArgument([&] { u == 300; }, "eq: value 300 cannot be converted to type uint8");
}

TEST(PointwiseOpsTest, BoolResultsLeaveTheGraph) {
  Tensor x = F64({-1, 2}, Shape({2})).requires_grad_();
  Tensor m = x > 0;
  EXPECT_FALSE(m.requires_grad());
  EXPECT_TRUE(m.is_leaf());
  EXPECT_FALSE(logical_not(x).requires_grad());
}

TEST(PointwiseOpsTest, MaximumAndMinimum) {
  Tensor a = F64({1, 5, kNaN, -2}, Shape({4}));
  Tensor b = F64({3, 4, 0, kNaN}, Shape({4}));
  const std::vector<double> mx = maximum(a, b).to_vector<double>();
  EXPECT_EQ(mx[0], 3);
  EXPECT_EQ(mx[1], 5);
  EXPECT_TRUE(std::isnan(mx[2]));
  EXPECT_TRUE(std::isnan(mx[3]));
  const std::vector<double> mn = a.minimum(b).to_vector<double>();
  EXPECT_EQ(mn[0], 1);
  EXPECT_EQ(mn[1], 4);
  EXPECT_TRUE(std::isnan(mn[2]) && std::isnan(mn[3]));
  // Promotion: int32 with float32 computes in float32; integers stay integers.
  Tensor f = tensor<float>({1.5f, 1.5f, 1.5f}, Shape({3}), TestDevice());
  EXPECT_EQ(maximum(I32({1, 2, 3}), f).dtype(), DType::kFloat32);
  EXPECT_EQ(maximum(I32({1, 2, 3}), f).to_vector<float>(), (std::vector<float>{1.5f, 2, 3}));
  EXPECT_EQ(minimum(I32({-7, 2, 3}), I32({0, 0, 9})).to_vector<int32_t>(),
            (std::vector<int32_t>{-7, 0, 3}));
  EXPECT_EQ(maximum(Bools({true, false}), Bools({false, false})).to_vector<bool>(),
            (std::vector<bool>{true, false}));
}

TEST(PointwiseOpsTest, MaximumSplitsTheGradientOnTies) {
  Tensor a = F64({1, 2, 3}, Shape({3})).requires_grad_();
  Tensor b = F64({2}, Shape({1})).requires_grad_();
  maximum(a, b).sum().backward();
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{1.5}));  // 1 + 0.5, summed
  Tensor c = F64({1, 2, 3}, Shape({3})).requires_grad_();
  minimum(c, c).sum().backward();
  EXPECT_EQ(c.grad().to_vector<double>(), (std::vector<double>{1, 1, 1}));
}

TEST(PointwiseOpsTest, WhereBroadcastsPromotesAndRoutesGradients) {
  Tensor c = Bools({true, false, true});
  Tensor x = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3})).requires_grad_();
  Tensor y = F64({-1}, Shape({1})).requires_grad_();
  Tensor w = where(c, x, y);
  EXPECT_EQ(w.shape(), Shape({2, 3}));
  EXPECT_EQ(w.to_vector<double>(), (std::vector<double>{1, -1, 3, 4, -1, 6}));
  w.sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{2}));
  // int32 and float32 give float32; a number is a wrapped number beside the condition's partner.
  Tensor wi = where(c, I32({1, 2, 3}), tensor<float>({0.5f}, Shape({1}), TestDevice()));
  EXPECT_EQ(wi.dtype(), DType::kFloat32);
  EXPECT_EQ(wi.to_vector<float>(), (std::vector<float>{1, 0.5f, 3}));
  Tensor wn = where(c, I32({1, 2, 3}), wrapped_number("where", 9, I32({0})));
  EXPECT_EQ(wn.dtype(), DType::kInt32);
  EXPECT_EQ(wn.to_vector<int32_t>(), (std::vector<int32_t>{1, 9, 3}));
  // A condition from a comparison, on a strided view.
  Tensor v = F64({-3, 1, -2, 4}, Shape({2, 2})).permute({1, 0});
  EXPECT_EQ(where(v > 0, v, zeros(Shape({}), DType::kFloat64, TestDevice())).to_vector<double>(),
            (std::vector<double>{0, 0, 1, 4}));
}

TEST(PointwiseOpsTest, ClampAndItsOneBoundForms) {
  Tensor x = F64({-2, -0.5, 0.5, 2, kNaN}, Shape({5}));
  const std::vector<double> c = clamp(x, -1, 1).to_vector<double>();
  EXPECT_EQ(std::vector<double>(c.begin(), c.begin() + 4), (std::vector<double>{-1, -0.5, 0.5, 1}));
  EXPECT_TRUE(std::isnan(c[4]));
  EXPECT_EQ(clamp_min(x, 0).to_vector<double>()[1], 0);
  EXPECT_EQ(x.clamp_max(0).to_vector<double>()[3], 0);
  EXPECT_EQ(clamp(x, 2, 1).to_vector<double>()[0], 1);  // min > max gives max
  // Integers stay integers with whole bounds, and become float32 with a fractional one.
  Tensor i = I32({-5, 0, 5});
  EXPECT_EQ(clamp(i, -2, 3).dtype(), DType::kInt32);
  EXPECT_EQ(clamp(i, -2, 3).to_vector<int32_t>(), (std::vector<int32_t>{-2, 0, 3}));
  EXPECT_EQ(clamp_max(i, 2.5).dtype(), DType::kFloat32);
  EXPECT_EQ(clamp_max(i, 2.5).to_vector<float>(), (std::vector<float>{-5, 0, 2.5f}));
  // The gradient passes where min <= x <= max, both bounds included.
  Tensor g = F64({-2, -1, 0, 1, 2}, Shape({5})).requires_grad_();
  clamp(g, -1, 1).sum().backward();
  EXPECT_EQ(g.grad().to_vector<double>(), (std::vector<double>{0, 1, 1, 1, 0}));
}

TEST(PointwiseOpsTest, LogicalAndBitwiseOps) {
  Tensor p = Bools({true, true, false, false});
  Tensor q = Bools({true, false, true, false});
  EXPECT_EQ((p & q).to_vector<bool>(), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ((p | q).to_vector<bool>(), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ((p ^ q).to_vector<bool>(), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ((~p).to_vector<bool>(), (std::vector<bool>{false, false, true, true}));
  Tensor i = I32({12, -1, 0, 5});
  Tensor j = I32({10, 7, 3, 5});
  EXPECT_EQ((i & j).to_vector<int32_t>(), (std::vector<int32_t>{8, 7, 0, 5}));
  EXPECT_EQ((i | j).to_vector<int32_t>(), (std::vector<int32_t>{14, -1, 3, 5}));
  EXPECT_EQ((i ^ j).to_vector<int32_t>(), (std::vector<int32_t>{6, -8, 3, 0}));
  EXPECT_EQ((~i).to_vector<int32_t>(), (std::vector<int32_t>{-13, 0, -1, -6}));
  // bool with int promotes to the int.
  EXPECT_EQ((p & i).dtype(), DType::kInt32);
  EXPECT_EQ((p & i).to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0, 0}));
  // The logical ops take any dtype (NaN is true) and give bool.
  Tensor f = F64({0, kNaN, 2, 0}, Shape({4}));
  EXPECT_EQ(logical_and(f, i).to_vector<bool>(), (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(logical_or(f, i).to_vector<bool>(), (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(logical_xor(f, q).to_vector<bool>(), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(f.logical_not().to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
}

TEST(PointwiseOpsTest, BadInputsNameTheOpAndTheValues) {
  Tensor f = F64({1, 2}, Shape({2}));
  Tensor b = Bools({true, false});
  ExpectInvalidArgument(
      [&] { f& f; }, "bitwise_and: dtype float64 is not supported (an integer or bool dtype is)");
  ExpectInvalidArgument(
      [&] { ~f; }, "bitwise_not: dtype float64 is not supported (an integer or bool dtype is)");
  ExpectInvalidArgument([&] { where(f, f, f); },
                        "where: the condition's dtype is float64; expected bool");
  ExpectInvalidArgument([&] { clamp(b, 0, 1); },
                        "clamp: dtype bool is not supported (an integer or float dtype is)");
  Tensor u = tensor<uint8_t>({1}, Shape({1}), TestDevice());
  ExpectInvalidArgument([&] { clamp_min(u, 300); },
                        "clamp_min: min 300 cannot be converted to type uint8 without overflow");
  ExpectInvalidArgument([&] { eq(f, F64({1, 2, 3}, Shape({3}))); }, "eq:");
  ExpectInvalidArgument([&] { maximum(Tensor(), f); }, "undefined");
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
