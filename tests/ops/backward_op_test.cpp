// InferExpandBackward (the reduce target for an expand's gradient) and CheckRepeatBackward (the
// gradient's shape must be the repeat's output): accepted cases and every error with its message.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ops/array_ops.h"
#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

using V = std::vector<int64_t>;

TEST(InferExpandBackwardTest, TargetRightAlignsTheInputShape) {
  EXPECT_EQ(InferExpandBackward(Shape({4, 3, 5, 2}), Shape({4, 3, 1, 2})).vec(), (V{4, 3, 1, 2}));
  EXPECT_EQ(InferExpandBackward(Shape({2, 1, 2, 4, 3, 5}), Shape({1, 4, 3, 5})).vec(),
            (V{1, 1, 1, 4, 3, 5}));
  EXPECT_EQ(InferExpandBackward(Shape({3}), Shape()).vec(), (V{1}));
  EXPECT_EQ(InferExpandBackward(Shape(), Shape()).vec(), (V{}));
  EXPECT_EQ(InferExpandBackward(Shape({2, 0}), Shape({1})).vec(), (V{1, 1}));
  EXPECT_EQ(InferExpandBackward(Shape({2, 3}), Shape({2, 3})).vec(), (V{2, 3}));
}

TEST(InferExpandBackwardTest, AcceptsEveryExpandOutput) {
  // Whatever InferExpand produces, its backward accepts with the input's shape as the target.
  std::mt19937_64 rng(9);
  for (int iter = 0; iter < 1000; ++iter) {
    const size_t k = rng() % 5;
    V in(k), sizes;
    for (int64_t& d : in) d = static_cast<int64_t>(rng() % 3);
    const size_t lead = rng() % 3;
    for (size_t i = 0; i < lead; ++i) sizes.push_back(static_cast<int64_t>(rng() % 3));
    for (int64_t d : in) sizes.push_back(d == 1 ? static_cast<int64_t>(rng() % 4) : d);
    const Shape dy = InferExpand(Shape(in), Strides(Contiguous(in)), sizes, 4).shape;
    V want(lead, 1);
    want.insert(want.end(), in.begin(), in.end());
    ASSERT_EQ(InferExpandBackward(dy, Shape(in)).vec(), want) << Str(in) << " -> " << dy;
  }
}

TEST(InferExpandBackwardTest, InputWithMoreDimsThanGradient) {
  ExpectInvalid(
      [] {
        InferExpandBackward(Shape({3}), Shape({2, 3}));
      },
      {"expand_backward", "(2,3)", "(3)", "more dims"});
}

TEST(InferExpandBackwardTest, SizeMismatch) {
  ExpectInvalid(
      [] {
        InferExpandBackward(Shape({4, 3}), Shape({2, 3}));
      },
      {"expand_backward", "(2,3)", "(4,3)", "size 2", "input dim 0", "gradient size 4"});
  ExpectInvalid(
      [] {
        InferExpandBackward(Shape({5, 2}), Shape({3}));
      },
      {"expand_backward", "(3)", "(5,2)", "size 3", "gradient size 2"});
}

TEST(InferExpandBackwardTest, NegativeInputSize) {
  ExpectInvalid(
      [] {
        InferExpandBackward(Shape({4, 3}), Shape({-1, 3}));
      },
      {"expand_backward", "negative size -1", "dim 0"});
}

TEST(CheckRepeatBackwardTest, AcceptsTheRepeatOutputShape) {
  EXPECT_NO_THROW(
      CheckRepeatBackward(Shape({2, 1, 8, 4, 3, 5}), Shape({4, 1, 3, 5}), {2, 1, 2, 4, 1, 1}));
  EXPECT_NO_THROW(CheckRepeatBackward(Shape({0, 1}), Shape({3, 1}), {0, 1}));
  EXPECT_NO_THROW(CheckRepeatBackward(Shape(), Shape(), {}));
  EXPECT_NO_THROW(CheckRepeatBackward(Shape({3}), Shape(), {3}));
}

TEST(CheckRepeatBackwardTest, GradientShapeMismatch) {
  ExpectInvalid(
      [] {
        CheckRepeatBackward(Shape({4, 5}), Shape({2, 3}), {2, 2});
      },
      {"repeat_backward", "(4,5)", "(2,3)", "(2,2)", "(4,6)"});
  ExpectInvalid(
      [] {
        CheckRepeatBackward(Shape({4, 6}), Shape({2, 3}), {1, 2, 2});
      },
      {"repeat_backward", "(4,6)", "(1,4,6)"});
}

TEST(CheckRepeatBackwardTest, NegativeInputSize) {
  ExpectInvalid(
      [] {
        CheckRepeatBackward(Shape({4, 6}), Shape({2, -3}), {2, 2});
      },
      {"repeat_backward", "input_shape", "-3"});
}

TEST(CheckRepeatBackwardTest, BadRepeats) {
  // The repeats are checked with repeat's own rules; the message names the repeats and values.
  ExpectInvalid(
      [] {
        CheckRepeatBackward(Shape({4, 6}), Shape({2, 3}), {2, -2});
      },
      {"repeat", "-2", "(2,-2)"});
  ExpectInvalid(
      [] {
        CheckRepeatBackward(Shape({4, 6}), Shape({2, 3}), {2});
      },
      {"repeat", "(1)", "(2)"});
}

}  // namespace
}  // namespace ofl::ops::testing
