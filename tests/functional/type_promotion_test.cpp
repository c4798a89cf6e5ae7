// Type promotion by PyTorch's result_type rules, through the public API on the test device:
// promote_types and can_cast, tensor-tensor arithmetic of mixed dtypes (0-dim tensors join only
// when of a higher kind), numbers as "wrapped numbers", true division of integers, sums of
// integers in int64, the in-place ops' cast back to the tensor's dtype (and their refusal), copy_
// across dtypes, and the gradients of promoted operands in their own dtypes.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor T(const std::vector<double>& v, DType dtype, const Shape& shape = Shape()) {
  const Shape s = shape.ndim() == 0 && v.size() != 1
                      ? Shape({static_cast<int64_t>(v.size())})
                      : (shape.ndim() == 0 && v.size() == 1 ? Shape({1}) : shape);
  return ofl::tensor<double>(v, s, TestDevice()).to(dtype);
}
Tensor Scalar0(double v, DType dtype) {
  return ofl::full(Shape(std::vector<int64_t>{}), v, dtype, TestDevice());
}

TEST(TypePromotionTest, PromoteTypesAndCanCast) {
  EXPECT_EQ(promote_types(DType::kInt32, DType::kInt64), DType::kInt64);
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt8), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt32), DType::kInt32);
  EXPECT_EQ(promote_types(DType::kBool, DType::kUInt8), DType::kUInt8);
  EXPECT_EQ(promote_types(DType::kInt64, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kBFloat16, DType::kFloat64), DType::kFloat64);
  const DType all[] = {DType::kBool,    DType::kUInt8,  DType::kInt8,    DType::kInt16,
                       DType::kInt32,   DType::kInt64,  DType::kFloat16, DType::kBFloat16,
                       DType::kFloat32, DType::kFloat64};
  for (DType a : all) {
    for (DType b : all) {
      EXPECT_EQ(promote_types(a, b), promote_types(b, a)) << to_string(a) << " " << to_string(b);
      EXPECT_TRUE(can_cast(a, promote_types(a, b)) || a == DType::kBool)
          << to_string(a) << " " << to_string(b);
    }
  }
  EXPECT_FALSE(can_cast(DType::kFloat32, DType::kInt64));
  EXPECT_FALSE(can_cast(DType::kInt32, DType::kBool));
  EXPECT_TRUE(can_cast(DType::kInt64, DType::kInt8));
  EXPECT_TRUE(can_cast(DType::kFloat64, DType::kFloat16));
}

TEST(TypePromotionTest, TensorsOfDifferentDTypes) {
  const Tensor i32 = T({1, 2, 3}, DType::kInt32), i64 = T({10, 20, 30}, DType::kInt64);
  EXPECT_EQ((i32 + i64).dtype(), DType::kInt64);
  EXPECT_EQ((i32 + i64).to_vector<int64_t>(), (std::vector<int64_t>{11, 22, 33}));
  const Tensor f16 = T({0.5, 1.5, 2.5}, DType::kFloat16), f32 = T({1, 2, 3}, DType::kFloat32);
  EXPECT_EQ((f16 * f32).dtype(), DType::kFloat32);
  EXPECT_EQ((f16 * f32).to_vector<float>(), (std::vector<float>{0.5f, 3.0f, 7.5f}));
  EXPECT_EQ((T({1, 0, 1}, DType::kBool) + i32).dtype(), DType::kInt32);
  EXPECT_EQ((T({1, 2, 3}, DType::kUInt8) - T({1, 2, 3}, DType::kInt8)).dtype(), DType::kInt16);
  EXPECT_EQ((i32 + f16).dtype(), DType::kFloat16);
  // 0-dim tensors join only when of a higher kind; broadcasting as usual.
  EXPECT_EQ((i32 + Scalar0(5, DType::kInt64)).dtype(), DType::kInt32);
  EXPECT_EQ((i32 + Scalar0(0.5, DType::kFloat64)).dtype(), DType::kFloat64);
  EXPECT_EQ((f16 + Scalar0(0.5, DType::kFloat64)).dtype(), DType::kFloat16);
  EXPECT_EQ((Scalar0(2, DType::kInt64) * Scalar0(0.5, DType::kFloat16)).dtype(), DType::kFloat16);
  EXPECT_EQ((Scalar0(2, DType::kInt64) * Scalar0(3, DType::kInt32)).dtype(), DType::kInt64);
  const Tensor col = T({1, 2}, DType::kInt64, Shape({2, 1}));
  EXPECT_EQ((col * f32).shape(), Shape({2, 3}));
  EXPECT_EQ((col * f32).to_vector<float>(), (std::vector<float>{1, 2, 3, 2, 4, 6}));
}

TEST(TypePromotionTest, NumbersAreWrappedNumbers) {
  const Tensor i32 = T({1, 2, 3}, DType::kInt32);
  EXPECT_EQ((i32 + 5).dtype(), DType::kInt32);
  EXPECT_EQ((i32 + 2.5).dtype(), DType::kFloat32);
  EXPECT_EQ((i32 + 2.5).to_vector<float>(), (std::vector<float>{3.5f, 4.5f, 5.5f}));
  EXPECT_EQ((2.5 * i32).to_vector<float>(), (std::vector<float>{2.5f, 5.0f, 7.5f}));
  EXPECT_EQ((T({1, 2}, DType::kFloat16) + 2.5).dtype(), DType::kFloat16);
  EXPECT_EQ((T({1, 0}, DType::kBool) + 1).dtype(), DType::kInt64);
  EXPECT_EQ((T({1, 0}, DType::kBool) * 1.5).dtype(), DType::kFloat32);
  // A number the result dtype cannot hold is still refused, as PyTorch's.
  ExpectThrowWith<InvalidArgument>([&] { T({1}, DType::kUInt8) + 300; },
                                   {"add: value 300 cannot be converted to type uint8"});
}

TEST(TypePromotionTest, DivisionOfIntegersIsTrueDivision) {
  const Tensor a = T({7, -7, 1}, DType::kInt32), b = T({2, 2, 4}, DType::kInt64);
  EXPECT_EQ((a / b).dtype(), DType::kFloat32);
  EXPECT_EQ((a / b).to_vector<float>(), (std::vector<float>{3.5f, -3.5f, 0.25f}));
  EXPECT_EQ((a / 2).to_vector<float>(), (std::vector<float>{3.5f, -3.5f, 0.5f}));
  EXPECT_EQ((T({1, 0}, DType::kBool) / T({1, 1}, DType::kBool)).to_vector<float>(),
            (std::vector<float>{1.0f, 0.0f}));
  EXPECT_EQ((a / T({2, 2, 2}, DType::kFloat64)).dtype(), DType::kFloat64);
}

TEST(TypePromotionTest, SumsOfIntegersAndBoolAreInt64) {
  const int32_t big = std::numeric_limits<int32_t>::max();
  const Tensor i = ofl::tensor<int32_t>({big, big, big}, Shape({3}), TestDevice());
  EXPECT_EQ(i.sum().dtype(), DType::kInt64);
  EXPECT_EQ(i.sum().to_vector<int64_t>()[0], 3 * int64_t{big});
  EXPECT_EQ(ofl::tensor<bool>({true, false, true, true}, Shape({2, 2}), TestDevice())
                .sum({0})
                .to_vector<int64_t>(),
            (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(T({1, 2}, DType::kFloat16).sum().dtype(), DType::kFloat16);
}

TEST(TypePromotionTest, InPlaceOpsCastBackOrRefuse) {
  Tensor f = T({1, 2}, DType::kFloat32);
  f.add_(T({0.5, 0.25}, DType::kFloat64));
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{1.5f, 2.25f}));
  Tensor i = T({1, 2}, DType::kInt32);
  i.mul_(T({3, 4}, DType::kInt64));
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{3, 8}));
  f.div_(T({2, 4}, DType::kInt64));
  EXPECT_EQ(f.to_vector<float>(), (std::vector<float>{0.75f, 0.5625f}));
  ExpectThrowWith<InvalidArgument>(
      [&] {
        i.add_(T({0.5, 0.5}, DType::kFloat32));
      },
      {"add_: the result type float32 cannot be cast to the tensor's dtype int32",
       "the tensor is unchanged"});
  Tensor b = T({1, 0}, DType::kBool);
  ExpectThrowWith<InvalidArgument>([&] { b.sub_(i); },
                                   {"sub_: the result type int32 cannot be cast", "bool"});
  EXPECT_EQ(i.to_vector<int32_t>(), (std::vector<int32_t>{3, 8}));
  EXPECT_EQ(i.version(), 1);
  // copy_ converts any dtype, as PyTorch's (truncating toward zero into an integer).
  Tensor c = T({0, 0}, DType::kInt64);
  c.copy_(T({2.75, -1.5}, DType::kFloat32));
  EXPECT_EQ(c.to_vector<int64_t>(), (std::vector<int64_t>{2, -1}));
  ExpectRuntimeWorks();
}

TEST(TypePromotionTest, GradientsOfPromotedOperandsKeepTheirDTypes) {
  Tensor x = T({1.5, -2}, DType::kFloat32).requires_grad_();
  Tensor y = T({2, 3}, DType::kFloat64).requires_grad_();
  Tensor z = x * y;
  EXPECT_EQ(z.dtype(), DType::kFloat64);
  z.sum().backward();
  EXPECT_EQ(x.grad().dtype(), DType::kFloat32);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(y.grad().dtype(), DType::kFloat64);
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{1.5, -2}));
  // An integer operand takes no gradient; the float one gets its own.
  Tensor w = T({1, 2}, DType::kFloat16).requires_grad_();
  (w * T({3, 4}, DType::kInt64)).sum().backward();
  EXPECT_EQ(w.grad().dtype(), DType::kFloat16);
  EXPECT_EQ(w.grad().to(DType::kFloat32).to_vector<float>(), (std::vector<float>{3, 4}));
}

}  // namespace
}  // namespace ofl::testing
