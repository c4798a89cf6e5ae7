// The loop-nest simplification and offset arithmetic of kernels/index_util.h on hand-checked
// cases: which dims drop, which merge, which must stay apart, and where linear positions land.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/index_util.h"

namespace ofl::kernels {
namespace {

LoopDims<2> Simplify(const std::vector<int64_t>& size, const std::vector<int64_t>& s0,
                     const std::vector<int64_t>& s1, bool sort) {
  LoopDims<2> d;
  InitLoopDims(&d, static_cast<int>(size.size()), size.data(), {s0.data(), s1.data()});
  if (sort) SortDimsByStride(&d);
  CoalesceDims(&d);
  return d;
}

std::vector<int64_t> Sizes(const LoopDims<2>& d) {
  return std::vector<int64_t>(d.size, d.size + d.ndim);
}
std::vector<int64_t> Strides(const LoopDims<2>& d, int op) {
  return std::vector<int64_t>(d.stride[op], d.stride[op] + d.ndim);
}

TEST(IndexUtilTest, ContiguousCopyCollapsesToOneDim) {
  const LoopDims<2> d = Simplify({4, 3, 5}, {15, 5, 1}, {15, 5, 1}, true);
  EXPECT_EQ(Sizes(d), (std::vector<int64_t>{60}));
  EXPECT_EQ(Strides(d, 0), (std::vector<int64_t>{1}));
}

TEST(IndexUtilTest, SizeOneDimsDropWhateverTheirStride) {
  const LoopDims<2> d = Simplify({4, 1, 3}, {3, 99, 1}, {3, 7, 1}, true);
  EXPECT_EQ(Sizes(d), (std::vector<int64_t>{12}));
  const LoopDims<2> scalar = Simplify({1, 1}, {5, 6}, {7, 8}, true);
  EXPECT_EQ(scalar.ndim, 0);
}

TEST(IndexUtilTest, BroadcastDimStaysApartAndNeighboursMerge) {
  // (4,3,1,2) expanded to (4,3,5,2): dims 0 and 1 merge (12 rows of input), dim 2 is the
  // broadcast, dim 3 the contiguous run.
  const LoopDims<2> d = Simplify({4, 3, 5, 2}, {30, 10, 2, 1}, {6, 2, 0, 1}, true);
  EXPECT_EQ(Sizes(d), (std::vector<int64_t>{12, 5, 2}));
  EXPECT_EQ(Strides(d, 0), (std::vector<int64_t>{10, 2, 1}));
  EXPECT_EQ(Strides(d, 1), (std::vector<int64_t>{2, 0, 1}));
}

TEST(IndexUtilTest, SortingFollowsOperandZero) {
  // Output transposed: sorted so the output is walked in memory order.
  const LoopDims<2> d = Simplify({3, 4}, {1, 3}, {4, 1}, true);
  EXPECT_EQ(Sizes(d), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(Strides(d, 0), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(Strides(d, 1), (std::vector<int64_t>{1, 4}));
  // Without sorting the order is kept.
  const LoopDims<2> unsorted = Simplify({3, 4}, {1, 3}, {4, 1}, false);
  EXPECT_EQ(Sizes(unsorted), (std::vector<int64_t>{3, 4}));
}

TEST(IndexUtilTest, OffsetsAndCursorAgree) {
  const LoopDims<2> d = Simplify({2, 3, 4}, {12, 4, 1}, {1, 9, 2}, false);
  ASSERT_EQ(d.ndim, 3);
  LoopCursor<2> c;
  ResetCursor(d.ndim, &c);
  for (int64_t linear = 0; linear < 24; ++linear) {
    int64_t off[2];
    LinearToOffsets(d, linear, off);
    const int64_t i = linear / 12, j = linear / 4 % 3, k = linear % 4;
    EXPECT_EQ(off[0], linear);
    EXPECT_EQ(off[1], i * 1 + j * 9 + k * 2);
    EXPECT_EQ(c.offset[0], off[0]);
    EXPECT_EQ(c.offset[1], off[1]);
    LoopCursor<2> seek;
    SeekCursor(d, d.ndim, linear, &seek);
    EXPECT_EQ(seek.offset[1], off[1]);
    AdvanceCursor(d, d.ndim, &c);
  }
  EXPECT_EQ(c.offset[0], 0);  // wrapped around
}

TEST(IndexUtilTest, CopyBytesEverySmallLength) {
  char src[80], dst[82];
  for (int i = 0; i < 80; ++i) src[i] = static_cast<char>(i + 1);
  for (size_t n = 0; n <= 80; ++n) {
    std::memset(dst, 0, sizeof(dst));
    CopyBytes(dst + 1, src, n);
    EXPECT_EQ(dst[0], 0);
    EXPECT_EQ(std::memcmp(dst + 1, src, n), 0) << n;
    EXPECT_EQ(dst[n + 1], 0) << n;
  }
}

}  // namespace
}  // namespace ofl::kernels
