// The built-in ops through call_op (extension.h), each on its own definition's form: a view
// (expand, narrow), a composition of ops (repeat_backward), one kernel call (reduce_sum_to), and
// the errors their attrs can carry when they come through call_op rather than the C++ API.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor Values(const std::vector<float>& v, const Shape& shape) {
  return ofl::tensor<float>(v, shape, TestDevice());
}

TEST(BuiltinCallOpTest, ViewOpsReturnViewsOfTheirInput) {
  const Tensor x = Values({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const Tensor n = call_op("narrow", {x}, {1, 1, 2})[0];
  EXPECT_EQ(n.shape(), Shape({2, 2}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_EQ(n.to_vector<float>(), (std::vector<float>{2, 3, 5, 6}));
  const Tensor p = call_op("permute", {x}, {1, 0})[0];
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // contiguous of a contiguous tensor is the tensor itself; of a permuted one, a copy.
  EXPECT_EQ(call_op("contiguous", {x})[0].impl(), x.impl());
  const Tensor c = call_op("contiguous", {p})[0];
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // A reshape that no stride can express copies, then views the copy.
  EXPECT_EQ(call_op("reshape", {p}, {6})[0].to_vector<float>(),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(BuiltinCallOpTest, ReduceSumToSumsIntoTheTargetAndDtype) {
  const Tensor x = Values({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const auto f32 = static_cast<int64_t>(DType::kFloat32);
  EXPECT_EQ(call_op("reduce_sum_to", {x}, {f32, 1, 3})[0].to_vector<float>(),
            (std::vector<float>{5, 7, 9}));
  EXPECT_EQ(call_op("reduce_sum_to", {x}, {f32, 2, 1})[0].to_vector<float>(),
            (std::vector<float>{6, 15}));
  // float16 summed into float32: 2049 halves of 1 give 2049, which float16 cannot hold.
  const Tensor h = ofl::full(Shape({2049}), 1.0, DType::kFloat16, TestDevice());
  EXPECT_EQ(call_op("reduce_sum_to", {h}, {f32, 1})[0].to_vector<float>(),
            (std::vector<float>{2049}));
}

TEST(BuiltinCallOpTest, RepeatBackwardIsComposedAndNamedForItself) {
  const Tensor dy = Values({1, 2, 3, 4, 5, 6}, Shape({1, 6}));
  // attrs {k, input_shape..., repeats...}: input (3) repeated {1, 2}.
  const Tensor dx = call_op("repeat_backward", {dy}, {1, 3, 1, 2})[0];
  EXPECT_EQ(dx.shape(), Shape({3}));
  EXPECT_EQ(dx.to_vector<float>(), (std::vector<float>{5, 7, 9}));
}

TEST(BuiltinCallOpTest, RepeatBackwardOfAnEmptyGradientWithAHugeDim) {
  // Found by program_fuzz: the composed form views dy as (max, 1, 6, 0, 0), whose sizes overflow
  // int64 when multiplied before the 0 is reached.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Tensor dy = ofl::empty(Shape({kMax, 1, 6, 0}), DType::kFloat32, TestDevice());
  const Tensor dx = ofl::repeat_backward(dy, Shape({kMax, 1, 6, 0}), {1, 1, 1, 0});
  EXPECT_EQ(dx.shape(), Shape({kMax, 1, 6, 0}));
  EXPECT_TRUE(dx.to_vector<float>().empty());
}

TEST(BuiltinCallOpTest, BadAttrsNameTheOpAndTheValues) {
  const Tensor x = Values({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const auto f32 = static_cast<int64_t>(DType::kFloat32);
  const auto f64 = static_cast<int64_t>(DType::kFloat64);
  ExpectThrowWith<InvalidArgument>([&] { call_op("narrow", {x}, {0}); },
                                   {"narrow", "{dim, start, length}", "got 1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("clone", {x}, {1, 2});
      },
      {"clone", "no attrs", "got 2"});
  Tensor t = x.clone();
  ExpectThrowWith<InvalidArgument>([&] { call_op("fill_", {t}, {}); },
                                   {"fill_", "one or two attrs", "got 0"});
  EXPECT_EQ(t.version(), 0);  // refused before anything was queued
  ExpectThrowWith<InvalidArgument>([&] { call_op("to", {x}, {0}); },
                                   {"to", "{device type, index}", "got {0}"});
  ExpectThrowWith<InvalidArgument>([&] { call_op("reduce_sum_to", {x}, {}); },
                                   {"reduce_sum_to", "{dtype, target...}", "no attrs"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {99, 1, 3});
      },
      {"reduce_sum_to", "dtype", "got 99"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {f64, 1, 3});
      },
      {"reduce_sum_to", "float32", "float64"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {f32, 3});
      },
      {"reduce_sum_to", "target has 1 dims", "(2,3)", "2"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {f32, 2, 2});
      },
      {"reduce_sum_to", "target dim 1 is 2", "size 3"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("repeat_backward", {x}, {5, 3});
      },
      {"repeat_backward", "{k, input_shape", "k 5"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("repeat_backward", {x}, {1, 3, 1, 1});
      },
      {"repeat_backward", "(2,3)", "(1,3)"});
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
