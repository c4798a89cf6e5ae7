// InferPermute and InferNarrow: shapes, strides and offsets of the views (negative dims and starts
// wrap), and every argument error with its message.
#include <gtest/gtest.h>

#include <vector>

#include "ops/array_ops.h"
#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

using V = std::vector<int64_t>;

TEST(InferPermuteTest, PermutesShapeAndStrides) {
  const ViewGeometry g = InferPermute(Shape({2, 3, 4}), {12, 4, 1}, {2, 0, 1});
  EXPECT_EQ(g.shape.vec(), (V{4, 2, 3}));
  EXPECT_EQ(g.stride, (V{1, 12, 4}));
  EXPECT_EQ(g.offset_delta, 0);
}

TEST(InferPermuteTest, NegativeDimsWrap) {
  const ViewGeometry g = InferPermute(Shape({2, 3, 4}), {12, 4, 1}, {-1, 0, -2});
  EXPECT_EQ(g.shape.vec(), (V{4, 2, 3}));
  EXPECT_EQ(g.stride, (V{1, 12, 4}));
}

TEST(InferPermuteTest, NonContiguousInputAndIdentity) {
  const ViewGeometry g = InferPermute(Shape({4, 2}), {5, 1}, {1, 0});
  EXPECT_EQ(g.shape.vec(), (V{2, 4}));
  EXPECT_EQ(g.stride, (V{1, 5}));
  const ViewGeometry id = InferPermute(Shape({4, 2}), {5, 1}, {0, 1});
  EXPECT_EQ(id.shape.vec(), (V{4, 2}));
  EXPECT_EQ(id.stride, (V{5, 1}));
}

TEST(InferPermuteTest, ZeroDim) {
  const ViewGeometry g = InferPermute(Shape(), {}, {});
  EXPECT_EQ(g.shape.ndim(), 0);
  EXPECT_EQ(g.stride.ndim(), 0);
}

TEST(InferPermuteTest, TwentyFiveDimsReversed) {
  V shape(25, 1), stride(25), dims(25);
  shape[0] = 2;
  shape[24] = 3;
  for (int i = 0; i < 25; ++i) {
    stride[i] = 100 + i;
    dims[i] = 24 - i;
  }
  const ViewGeometry g = InferPermute(Shape(shape), Strides(stride), dims);
  for (int i = 0; i < 25; ++i) {
    EXPECT_EQ(g.shape[i], shape[24 - i]);
    EXPECT_EQ(g.stride[i], stride[24 - i]);
  }
}

TEST(InferPermuteTest, RepeatedDim) {
  ExpectInvalid(
      [] {
        InferPermute(Shape({2, 3, 4}), {12, 4, 1}, {0, 0, 1});
      },
      {"permute", "dim 0", "more than once", "(0,0,1)"});
  // -3 and 0 name the same dim.
  ExpectInvalid(
      [] {
        InferPermute(Shape({2, 3, 4}), {12, 4, 1}, {0, 1, -3});
      },
      {"permute", "-3", "more than once", "(0,1,-3)"});
}

TEST(InferPermuteTest, OutOfRangeDim) {
  ExpectInvalid(
      [] {
        InferPermute(Shape({2, 3, 4}), {12, 4, 1}, {0, 1, 3});
      },
      {"permute", "dim 3", "out of range", "[-3, 2]"});
  ExpectInvalid(
      [] {
        InferPermute(Shape({2, 3, 4}), {12, 4, 1}, {-4, 0, 1});
      },
      {"permute", "dim -4", "[-3, 2]"});
}

TEST(InferPermuteTest, WrongNumberOfDims) {
  ExpectInvalid(
      [] {
        InferPermute(Shape({2, 3, 4}), {12, 4, 1}, {0, 1});
      },
      {"permute", "(2)", "(3)", "(0,1)", "(2,3,4)"});
  ExpectInvalid([] { InferPermute(Shape(), {}, {0}); }, {"permute", "(1)", "(0)"});
}

TEST(InferNarrowTest, NarrowsOneDim) {
  const ViewGeometry g = InferNarrow(Shape({4, 5}), {5, 1}, 1, 2, 3);
  EXPECT_EQ(g.shape.vec(), (V{4, 3}));
  EXPECT_EQ(g.stride, (V{5, 1}));
  EXPECT_EQ(g.offset_delta, 2);
  const ViewGeometry h = InferNarrow(Shape({4, 5}), {5, 1}, 0, 1, 2);
  EXPECT_EQ(h.shape.vec(), (V{2, 5}));
  EXPECT_EQ(h.offset_delta, 5);
}

TEST(InferNarrowTest, OffsetUsesTheInputStride) {
  // A permuted (5,4) view of a (4,5) tensor: dim 0 has stride 1, dim 1 stride 5.
  const ViewGeometry g = InferNarrow(Shape({5, 4}), {1, 5}, 1, 3, 1);
  EXPECT_EQ(g.shape.vec(), (V{5, 1}));
  EXPECT_EQ(g.stride, (V{1, 5}));
  EXPECT_EQ(g.offset_delta, 15);
}

TEST(InferNarrowTest, NegativeDimAndStartWrap) {
  const ViewGeometry g = InferNarrow(Shape({4, 5}), {5, 1}, -1, -2, 2);
  EXPECT_EQ(g.shape.vec(), (V{4, 2}));
  EXPECT_EQ(g.offset_delta, 3);
  const ViewGeometry h = InferNarrow(Shape({4, 5}), {5, 1}, -2, -4, 4);
  EXPECT_EQ(h.shape.vec(), (V{4, 5}));
  EXPECT_EQ(h.offset_delta, 0);
}

TEST(InferNarrowTest, EmptyResults) {
  EXPECT_EQ(InferNarrow(Shape({4, 5}), {5, 1}, 1, 2, 0).shape.vec(), (V{4, 0}));
  // start == size is allowed with length 0.
  const ViewGeometry g = InferNarrow(Shape({4, 5}), {5, 1}, 1, 5, 0);
  EXPECT_EQ(g.shape.vec(), (V{4, 0}));
  EXPECT_EQ(InferNarrow(Shape({0, 3}), {3, 1}, 0, 0, 0).shape.vec(), (V{0, 3}));
}

TEST(InferNarrowTest, StartOutOfRange) {
  ExpectInvalid(
      [] {
        InferNarrow(Shape({4, 5}), {5, 1}, 1, 6, 0);
      },
      {"narrow", "start 6", "[-5, 5]", "dim 1", "size 5"});
  ExpectInvalid(
      [] {
        InferNarrow(Shape({4, 5}), {5, 1}, 1, -6, 1);
      },
      {"narrow", "start -6", "[-5, 5]"});
}

TEST(InferNarrowTest, LengthOutOfRange) {
  ExpectInvalid(
      [] {
        InferNarrow(Shape({4, 5}), {5, 1}, 1, 3, 3);
      },
      {"narrow", "start (3)", "length (3)", "(5)", "dim 1", "(4,5)"});
  ExpectInvalid(
      [] {
        InferNarrow(Shape({4, 5}), {5, 1}, 0, 1, -1);
      },
      {"narrow", "length (-1)", "dim 0"});
  ExpectInvalid(
      [] {
        InferNarrow(Shape({4, 5}), {5, 1}, 1, -1, 2);
      },
      {"narrow", "start (4)", "length (2)", "(5)"});
}

TEST(InferNarrowTest, DimOutOfRange) {
  ExpectInvalid(
      [] {
        InferNarrow(Shape({4, 5}), {5, 1}, 2, 0, 1);
      },
      {"narrow", "dim 2", "[-2, 1]"});
  ExpectInvalid(
      [] {
        InferNarrow(Shape({4, 5}), {5, 1}, -3, 0, 1);
      },
      {"narrow", "dim -3", "[-2, 1]"});
}

TEST(InferNarrowTest, ZeroDimTensor) {
  ExpectInvalid([] { InferNarrow(Shape(), {}, 0, 0, 1); }, {"narrow", "0-dim"});
}

}  // namespace
}  // namespace ofl::ops::testing
