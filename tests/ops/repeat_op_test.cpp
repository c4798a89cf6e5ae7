// InferRepeat: output shapes (out[i] = repeats[i] * input size right-aligned, 1 on new leading
// dims) on named and random cases, and every argument error with its message.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ops/array_ops.h"
#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

std::vector<int64_t> Repeat(const std::vector<int64_t>& in, const std::vector<int64_t>& repeats) {
  return InferRepeat(Shape(in), repeats, 4).vec();
}

TEST(InferRepeatTest, NamedCases) {
  using V = std::vector<int64_t>;
  // Input padded to (1,1,4,1,3,5), then multiplied dim by dim.
  EXPECT_EQ(Repeat({4, 1, 3, 5}, {2, 1, 2, 4, 1, 1}), (V{2, 1, 8, 4, 3, 5}));
  EXPECT_EQ(Repeat({3, 1}, {0, 1}), (V{0, 1}));
  EXPECT_EQ(Repeat({2, 3}, {2, 2}), (V{4, 6}));
  EXPECT_EQ(Repeat({3}, {4, 2}), (V{4, 6}));
  EXPECT_EQ(Repeat({2, 3}, {1, 1}), (V{2, 3}));
  EXPECT_EQ(Repeat({0, 2}, {5, 1}), (V{0, 2}));
  EXPECT_EQ(Repeat({2, 3}, {3, 1, 1}), (V{3, 2, 3}));
  EXPECT_EQ(Repeat({2, 3}, {0, 1, 1}), (V{0, 2, 3}));
}

TEST(InferRepeatTest, ZeroDimInput) {
  EXPECT_EQ(Repeat({}, {}), (std::vector<int64_t>{}));
  EXPECT_EQ(Repeat({}, {3}), (std::vector<int64_t>{3}));
  EXPECT_EQ(Repeat({}, {2, 1}), (std::vector<int64_t>{2, 1}));
}

TEST(InferRepeatTest, RandomCases) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 2000; ++iter) {
    const size_t k = rng() % 6;
    const size_t n = k + rng() % 4;
    std::vector<int64_t> in(k), repeats(n), want(n);
    for (int64_t& d : in) d = static_cast<int64_t>(rng() % 5);
    for (int64_t& r : repeats) r = static_cast<int64_t>(rng() % 4);
    for (size_t i = 0; i < n; ++i) want[i] = repeats[i] * (i < n - k ? 1 : in[i - (n - k)]);
    ASSERT_EQ(Repeat(in, repeats), want) << Str(in) << " by " << Str(repeats);
  }
}

TEST(InferRepeatTest, TwentyFiveRepeats) {
  std::vector<int64_t> repeats(25, 1);
  repeats[3] = 2;
  std::vector<int64_t> want(25, 1);
  want[3] = 2;
  want[24] = 3;
  EXPECT_EQ(Repeat({3}, repeats), want);
}

TEST(InferRepeatTest, FewerRepeatsThanDims) {
  ExpectInvalid(
      [] {
        Repeat({2, 3}, {2});
      },
      {"repeat", "number of repeats (1)", "dimensions of the tensor (2)", "(2)", "(2,3)"});
  ExpectInvalid([] { Repeat({2}, {}); }, {"repeat", "(0)", "(1)"});
}

TEST(InferRepeatTest, NegativeRepeats) {
  ExpectInvalid([] { Repeat({2, 3}, {1, -1}); }, {"repeat", "-1", "dim 1", "(1,-1)", "(2,3)"});
  ExpectInvalid([] { Repeat({2}, {-3, 1}); }, {"repeat", "-3", "dim 0"});
}

TEST(InferRepeatTest, MoreThanTwentyFiveDims) {
  const std::vector<int64_t> repeats(26, 1);
  ExpectInvalid([&] { Repeat({2}, repeats); }, {"repeat", "26", "25"});
}

TEST(InferRepeatTest, SizeOverflow) {
  const int64_t r = int64_t{1} << 62;
  // 2 * 2^62 does not fit a single dim.
  ExpectInvalid([&] { Repeat({2}, {r}); }, {"repeat", "dim 0", "2 x " + std::to_string(r)});
  // Each dim fits, their product does not.
  const int64_t big = int64_t{1} << 40;
  ExpectInvalid([&] { Repeat({1, 1}, {big, big}); }, {"repeat", Str({big, big})});
  // The element count fits, the byte count does not.
  const int64_t n = int64_t{1} << 61;
  ExpectInvalid([&] { InferRepeat(Shape({1}), {n}, 8); }, {"repeat", Str({n}), "8 bytes"});
  EXPECT_NO_THROW(InferRepeat(Shape({1}), {n}, 1));
  // A zero repeat makes any count fit.
  EXPECT_EQ(Repeat({1, 1, 1}, {big, big, 0}), (std::vector<int64_t>{big, big, 0}));
}

}  // namespace
}  // namespace ofl::ops::testing
