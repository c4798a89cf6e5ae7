// Numbers given to ops (ofl::Scalar) on the test device (cpu, sim:0, sim:1): integers reach
// integer tensors exactly through full, fill_ and the arithmetic ops, a value the dtype cannot
// hold is refused at the call naming the op, the value and the dtype (as PyTorch's "value cannot
// be converted to type ... without overflow"), and the ops that build on a number name themselves
// (neg, zeros, ones).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

constexpr int64_t kTwo53 = int64_t{1} << 53;
constexpr int64_t kTwo62 = int64_t{1} << 62;

Tensor Longs(const std::vector<int64_t>& v) {
  return ofl::tensor<int64_t>(v, Shape({static_cast<int64_t>(v.size())}), TestDevice());
}

TEST(ScalarOperandTest, IntegersReachInt64TensorsExactly) {
  const Device dev = TestDevice();
  EXPECT_EQ(ofl::full(Shape({2}), kTwo62 + 1, DType::kInt64, dev).to_vector<int64_t>(),
            (std::vector<int64_t>{kTwo62 + 1, kTwo62 + 1}));
  EXPECT_EQ(ofl::full(Shape({1}), INT64_MIN, DType::kInt64, dev).to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MIN}));
  EXPECT_EQ((Longs({0, 1}) + (kTwo53 + 1)).to_vector<int64_t>(),
            (std::vector<int64_t>{kTwo53 + 1, kTwo53 + 2}));
  EXPECT_EQ(((kTwo53 + 1) - Longs({0, 1})).to_vector<int64_t>(),
            (std::vector<int64_t>{kTwo53 + 1, kTwo53}));
  EXPECT_EQ((Longs({3}) * (kTwo62 + 1)).to_vector<int64_t>(),
            (std::vector<int64_t>{
                static_cast<int64_t>(3 * static_cast<uint64_t>(kTwo62 + 1))}));  // wraps
  Tensor t = Longs({0, 0});
  t.fill_(INT64_MAX);
  EXPECT_EQ(t.to_vector<int64_t>(), (std::vector<int64_t>{INT64_MAX, INT64_MAX}));
  t.sub_(kTwo62 + 1);
  EXPECT_EQ(t.to_vector<int64_t>(),
            (std::vector<int64_t>{INT64_MAX - kTwo62 - 1, INT64_MAX - kTwo62 - 1}));
  EXPECT_EQ(ofl::full(Shape({1}), INT32_MIN, DType::kInt32, dev).to_vector<int32_t>(),
            (std::vector<int32_t>{INT32_MIN}));
  EXPECT_EQ(ofl::full(Shape({1}), uint64_t{UINT64_MAX}, DType::kFloat32, dev).to_vector<float>(),
            (std::vector<float>{std::ldexp(1.0f, 64)}));
}

TEST(ScalarOperandTest, NumbersFollowPyTorchsConversionsWhereTheDTypeHoldsThem) {
  const Device dev = TestDevice();
  // uint8 takes negative integers down to -255 as two's complement, as PyTorch.
  EXPECT_EQ(ofl::full(Shape({1}), -1, DType::kUInt8, dev).to_vector<uint8_t>(),
            (std::vector<uint8_t>{255}));
  EXPECT_EQ(ofl::full(Shape({1}), -255, DType::kUInt8, dev).to_vector<uint8_t>(),
            (std::vector<uint8_t>{1}));
  EXPECT_EQ(ofl::full(Shape({1}), 2.7, DType::kInt32, dev).to_vector<int32_t>(),
            (std::vector<int32_t>{2}));
  EXPECT_EQ(ofl::full(Shape({1}), -127.9, DType::kInt8, dev).to_vector<int8_t>(),
            (std::vector<int8_t>{-127}));
  EXPECT_EQ(ofl::full(Shape({2}), 5, DType::kBool, dev).to_vector<bool>(),
            (std::vector<bool>{true, true}));
  EXPECT_EQ(ofl::full(Shape({1}), std::nan(""), DType::kBool, dev).to_vector<bool>(),
            (std::vector<bool>{true}));
  EXPECT_EQ(ofl::full(Shape({1}), true, DType::kFloat32, dev).to_vector<float>(),
            (std::vector<float>{1}));
  // Floating dtypes round, to infinity beyond their range.
  EXPECT_EQ(ofl::full(Shape({1}), 1e300, DType::kFloat32, dev).to_vector<float>(),
            (std::vector<float>{std::numeric_limits<float>::infinity()}));
  // -uint8 wraps; -0.0 stays negative.
  const Tensor u = ofl::tensor<uint8_t>({1, 0}, Shape({2}), dev);
  EXPECT_EQ((-u).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 0}));
  EXPECT_TRUE(std::signbit((-ofl::zeros(Shape({1}), DType::kFloat32, dev)).to_vector<float>()[0]));
}

TEST(ScalarOperandTest, AValueTheDTypeCannotHoldIsRefusedNamingTheOpTheValueAndTheDType) {
  const Device dev = TestDevice();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  ExpectThrowWith<InvalidArgument>(
      [&] { ofl::full(Shape({2}), 300, DType::kUInt8, dev); },
      {"full: value 300 cannot be converted to type uint8 without overflow"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({2}), -256, DType::kUInt8, dev); },
                                   {"full", "value -256", "uint8"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({2}), -0.5, DType::kUInt8, dev); },
                                   {"full", "value -0.5", "uint8"});
  // A double's range is the dtype's own, before truncation (as PyTorch: -128.5 is no int8).
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({2}), -128.5, DType::kInt8, dev); },
                                   {"full", "value -128.5", "int8"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({2}), nan, DType::kInt32, dev); },
                                   {"full", "value nan", "int32", "without overflow"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({2}), -inf, DType::kInt64, dev); },
                                   {"full", "value -inf", "int64"});
  ExpectThrowWith<InvalidArgument>(
      [&] { ofl::full(Shape({2}), 9223372036854775808.0, DType::kInt64, dev); }, {"full", "int64"});
  ExpectThrowWith<InvalidArgument>(
      [&] { ofl::full(Shape({2}), uint64_t{1} << 63, DType::kInt64, dev); },
      {"full", "value 9223372036854775808", "int64"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({2}), 128, DType::kInt8, dev); },
                                   {"full", "value 128", "int8"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({2}), 1e10, DType::kInt32, dev); },
                                   {"full", "value 10000000000.0", "int32"});
  Tensor b = ofl::tensor<uint8_t>({7, 8}, Shape({2}), dev);
  ExpectThrowWith<InvalidArgument>([&] { b.fill_(300); }, {"fill_", "value 300", "uint8"});
  ExpectThrowWith<InvalidArgument>([&] { b + 300; }, {"add", "value 300", "uint8"});
  ExpectThrowWith<InvalidArgument>([&] { 1000 - b; }, {"sub", "value 1000", "uint8"});
  ExpectThrowWith<InvalidArgument>([&] { b.add_(256); }, {"add_", "value 256", "uint8"});
  ExpectThrowWith<InvalidArgument>([&] { b.mul_(-300); }, {"mul_", "value -300", "uint8"});
  EXPECT_EQ(b.to_vector<uint8_t>(), (std::vector<uint8_t>{7, 8}));
  Tensor i = Longs({1});
  ExpectThrowWith<InvalidArgument>([&] { i + (uint64_t{1} << 63); },
                                   {"add", "value 9223372036854775808", "int64"});
  ExpectThrowWith<InvalidArgument>([&] { i.fill_(nan); }, {"fill_", "value nan", "int64"});
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1}));
  ExpectRuntimeWorks();
}

TEST(ScalarOperandTest, OpsBuiltOnANumberNameThemselves) {
  const Device dev = TestDevice();
  const Tensor b = ofl::tensor<bool>({true}, Shape({1}), dev);
  ExpectThrowWith<InvalidArgument>([&] { -b; }, {"neg: negation", "bool tensor is not supported"});
  ExpectThrowWith<InvalidArgument>([&] { -Tensor(); }, {"neg", "undefined"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::zeros(Shape({-1}), DType::kFloat32, dev); },
                                   {"zeros", "-1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        ofl::ones(Shape({2, -3}), DType::kInt32, dev);
      },
      {"ones", "-3"});
  ExpectThrowWith<InvalidArgument>([&] { ofl::full(Shape({-2}), 1, DType::kInt32, dev); },
                                   {"full", "-2"});
  Tensor e = ofl::zeros(Shape({1}), DType::kFloat32, dev).expand({2});
  if (!EnvSet("OFL_DISABLE_VIEW")) {
    ExpectThrowWith<InvalidArgument>([&] { e.zero_(); }, {"zero_", "expanded view"});
  }
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
