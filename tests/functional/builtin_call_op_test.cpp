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
  const Tensor n = call_op("narrow", {x}, {{"dim", 1}, {"start", 1}, {"length", 2}})[0];
  EXPECT_EQ(n.shape(), Shape({2, 2}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_EQ(n.to_vector<float>(), (std::vector<float>{2, 3, 5, 6}));
  const Tensor p = call_op("permute", {x}, {{"dims", {1, 0}}})[0];
  EXPECT_EQ(p.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // contiguous of a contiguous tensor is the tensor itself; of a permuted one, a copy.
  EXPECT_EQ(call_op("contiguous", {x})[0].impl(), x.impl());
  const Tensor c = call_op("contiguous", {p})[0];
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // A reshape that no stride can express copies, then views the copy.
  EXPECT_EQ(call_op("reshape", {p}, {{"shape", {6}}})[0].to_vector<float>(),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(BuiltinCallOpTest, ReduceSumToSumsIntoTheTargetAndDtype) {
  const Tensor x = Values({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const DType f32 = DType::kFloat32;
  EXPECT_EQ(
      call_op("reduce_sum_to", {x}, {{"dtype", f32}, {"target", {1, 3}}})[0].to_vector<float>(),
      (std::vector<float>{5, 7, 9}));
  // In any order; a Shape for the shape.
  EXPECT_EQ(call_op("reduce_sum_to", {x}, {{"target", Shape({2, 1})}, {"dtype", f32}})[0]
                .to_vector<float>(),
            (std::vector<float>{6, 15}));
  // float16 summed into float32: 2049 halves of 1 give 2049, which float16 cannot hold.
  const Tensor h = ofl::full(Shape({2049}), 1.0, DType::kFloat16, TestDevice());
  EXPECT_EQ(call_op("reduce_sum_to", {h}, {{"dtype", f32}, {"target", {1}}})[0].to_vector<float>(),
            (std::vector<float>{2049}));
}

TEST(BuiltinCallOpTest, RepeatBackwardIsComposedAndNamedForItself) {
  const Tensor dy = Values({1, 2, 3, 4, 5, 6}, Shape({1, 6}));
  // input (3) repeated {1, 2}.
  const Tensor dx =
      call_op("repeat_backward", {dy}, {{"input_shape", Shape({3})}, {"repeats", {1, 2}}})[0];
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
  const DType f32 = DType::kFloat32;
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("narrow", {x}, {{"dim", 0}});
      },
      {"narrow", "'start' (int) is missing", "dim (int), start (int), length (int)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("clone", {x}, {{"dim", 1}});
      },
      {"clone", "no attribute 'dim'", "none"});
  Tensor t = x.clone();
  ExpectThrowWith<InvalidArgument>([&] { call_op("fill_", {t}); },
                                   {"fill_", "'value' (scalar) is missing"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("fill_", {t}, {{"value", "one"}});
      },
      {"fill_", "'value' is a scalar", "the string 'one'"});
  EXPECT_EQ(t.version(), 0);  // refused before anything was queued
  call_op("fill_", {t}, {{"value", 7}});
  EXPECT_EQ(t.to_vector<float>(), std::vector<float>(6, 7.0f));
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("to", {x}, {{"device", 0}});
      },
      {"to", "'device' is a string", "the int 0"});
  ExpectThrowWith<InvalidArgument>([&] { call_op("reduce_sum_to", {x}); },
                                   {"reduce_sum_to", "'dtype' (dtype) is missing"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {{"dtype", static_cast<DType>(99)}, {"target", {1, 3}}});
      },
      {"reduce_sum_to", "'dtype' is a dtype", "no dtype (99)"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {{"dtype", DType::kFloat64}, {"target", {1, 3}}});
      },
      {"reduce_sum_to", "float32", "float64"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {{"dtype", f32}, {"target", {3}}});
      },
      {"reduce_sum_to", "target has 1 dims", "(2,3)", "2"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("reduce_sum_to", {x}, {{"dtype", f32}, {"target", {2, 2}}});
      },
      {"reduce_sum_to", "target dim 1 is 2", "size 3"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("repeat_backward", {x}, {{"input_shape", {-1, 3}}, {"repeats", {1, 1}}});
      },
      {"repeat_backward", "input_shape", "-1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("repeat_backward", {x}, {{"input_shape", {1, 3}}, {"repeats", {1, 1}}});
      },
      {"repeat_backward", "(2,3)", "(1,3)"});
  ExpectRuntimeWorks();
}

// The fused linear and cross-entropy ops check their operands themselves when called directly
// (ofl::linear and ofl::cross_entropy take them only for the shapes they fit).
TEST(BuiltinCallOpTest, FusedLinearAndCrossEntropyRefuseOperandsThatDoNotFit) {
  const Tensor x = Values({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const Tensor w = Values({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  const Tensor b = Values({1, 2}, Shape({2}));
  EXPECT_EQ(call_op("linear", {x, w, b})[0].shape(), Shape({2, 2}));
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("linear", {x, w, Values({1, 2, 3}, Shape({3}))});
      },
      {"linear: input (2,3) float32, weight (2,3) float32 and bias (3) float32 do not make a "
       "linear layer"});
  const Tensor t = ofl::tensor<int64_t>({0, 2}, Shape({2}), TestDevice());
  const NamedAttrs attrs = {{"ignore_index", -100}, {"mean", true}};
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("cross_entropy", {b, t}, attrs);
      },
      {"cross_entropy: the logits must be 2-dim of a float dtype, got (2) float32"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("cross_entropy", {x, ofl::tensor<int32_t>({0, 2}, Shape({2}), TestDevice())},
                attrs);
      },
      {"cross_entropy: the target must be int64 of shape (2), got (2) int32"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        call_op("cross_entropy_backward", {x, t, b}, attrs);
      },
      {"cross_entropy_backward: the gradient must be 0-dim float32, got (2) float32"});
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
