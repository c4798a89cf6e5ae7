// CheckShape (rank, negative sizes, element and byte counts that overflow int64) and IsContiguous
// (PyTorch's rule: size-1 dims and empty tensors never break contiguity).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "ops/array_ops.h"
#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

using V = std::vector<int64_t>;

TEST(CheckShapeTest, ReturnsNumel) {
  EXPECT_EQ(CheckShape("op", "shape", V{2, 3, 4}, 4), 24);
  EXPECT_EQ(CheckShape("op", "shape", V{}, 8), 1);
  EXPECT_EQ(CheckShape("op", "shape", V{5, 0, 7}, 2), 0);
  EXPECT_EQ(CheckShape("op", "shape", Shape({6, 7}), 1), 42);
  EXPECT_EQ(CheckShape("op", "shape", V(25, 1), 1), 1);
}

TEST(CheckShapeTest, LargestCountsThatFit) {
  const int64_t max = INT64_MAX;
  EXPECT_EQ(CheckShape("op", "shape", V{max}, 1), max);
  EXPECT_EQ(CheckShape("op", "shape", V{max / 8}, 8), max / 8);
  EXPECT_EQ(CheckShape("op", "shape", V{int64_t{1} << 31, int64_t{1} << 31}, 1), int64_t{1} << 62);
}

TEST(CheckShapeTest, ZeroAnywhereMakesTheCountZero) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(CheckShape("op", "shape", V{big, big, 0}, 8), 0);
  EXPECT_EQ(CheckShape("op", "shape", V{0, big, big}, 8), 0);
}

TEST(CheckShapeTest, NegativeSize) {
  ExpectInvalid(
      [] {
        CheckShape("empty", "shape", V{2, -3}, 4);
      },
      {"empty", "shape", "(2,-3)", "negative size -3", "dim 1"});
}

TEST(CheckShapeTest, TooManyDims) {
  ExpectInvalid([] { CheckShape("empty", "shape", V(26, 1), 4); }, {"empty", "shape", "26", "25"});
}

TEST(CheckShapeTest, ElementCountOverflow) {
  const int64_t big = int64_t{1} << 40;
  ExpectInvalid(
      [&] {
        CheckShape("empty", "shape", V{big, big}, 1);
      },
      {"empty", "shape", Str({big, big}), "int64"});
  ExpectInvalid(
      [&] {
        CheckShape("op", "size", V{3, INT64_MAX / 2}, 1);
      },
      {"op", "size", Str({3, INT64_MAX / 2})});
}

TEST(CheckShapeTest, ByteCountOverflow) {
  ExpectInvalid([] { CheckShape("empty", "shape", V{(INT64_MAX / 8) + 1}, 8); },
                {"empty", "shape", Str({(INT64_MAX / 8) + 1}), "8 bytes"});
  ExpectInvalid(
      [] {
        CheckShape("empty", "shape", V{int64_t{1} << 31, int64_t{1} << 31}, 2);
      },
      {"empty", "2 bytes"});
}

TEST(IsContiguousTest, RowMajor) {
  EXPECT_TRUE(IsContiguous(Shape({2, 3, 4}), {12, 4, 1}));
  EXPECT_TRUE(IsContiguous(Shape(), {}));
  EXPECT_TRUE(IsContiguous(Shape({5}), {1}));
}

TEST(IsContiguousTest, PermutedNarrowedAndExpandedAreNot) {
  EXPECT_FALSE(IsContiguous(Shape({3, 2}), {1, 3}));
  EXPECT_FALSE(IsContiguous(Shape({4, 2}), {5, 1}));
  EXPECT_FALSE(IsContiguous(Shape({3, 4}), {0, 1}));
  EXPECT_FALSE(IsContiguous(Shape({3, 4}), {4, 0}));
  EXPECT_FALSE(IsContiguous(Shape({5}), {2}));
}

TEST(IsContiguousTest, NarrowingTheFirstDimKeepsContiguity) {
  EXPECT_TRUE(IsContiguous(Shape({2, 5}), {5, 1}));
}

TEST(IsContiguousTest, SizeOneDimsAreIgnored) {
  EXPECT_TRUE(IsContiguous(Shape({2, 1, 3}), {3, 99, 1}));
  EXPECT_TRUE(IsContiguous(Shape({1, 3}), {0, 1}));
  EXPECT_TRUE(IsContiguous(Shape({1}), {7}));
  EXPECT_TRUE(IsContiguous(Shape({1, 1}), {0, 0}));
}

TEST(IsContiguousTest, EmptyTensorsAreContiguous) {
  EXPECT_TRUE(IsContiguous(Shape({0, 3}), {1, 5}));
  EXPECT_TRUE(IsContiguous(Shape({3, 0}), {0, 0}));
}

}  // namespace
}  // namespace ofl::ops::testing
