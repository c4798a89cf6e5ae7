// InferReshape (the -1 inference and every argument error) and ReshapeStrides: when it returns
// strides they must address the input's elements in row-major order, and it must return nullopt
// exactly when no strides can (checked by brute force over every element's address).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "ops/array_ops.h"
#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

using V = std::vector<int64_t>;

V Reshape(const V& in, const V& shape) { return InferReshape(Shape(in), shape).vec(); }

TEST(InferReshapeTest, ExplicitShapes) {
  EXPECT_EQ(Reshape({2, 3, 4}, {6, 4}), (V{6, 4}));
  EXPECT_EQ(Reshape({2, 3, 4}, {24}), (V{24}));
  EXPECT_EQ(Reshape({}, {1, 1}), (V{1, 1}));
  EXPECT_EQ(Reshape({1, 1}, {}), (V{}));
  EXPECT_EQ(Reshape({0, 3}, {3, 0}), (V{3, 0}));
  EXPECT_EQ(Reshape({0, 3}, {0}), (V{0}));
}

TEST(InferReshapeTest, AnEmptyShapeMayHoldSizesWhoseProductOverflowsBeforeTheZero) {
  // (max, 1, 6, 0): 0 elements, though max * 6 does not fit in int64 (found by program_fuzz in
  // repeat_backward, which views such a gradient as (max, 1, 6, 0, 0)).
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(Reshape({kMax, 1, 6, 0}, {kMax, 1, 6, 0, 0}), (V{kMax, 1, 6, 0, 0}));
  EXPECT_EQ(Reshape({0}, {kMax, 6, 0}), (V{kMax, 6, 0}));
}

TEST(InferReshapeTest, InfersMinusOne) {
  EXPECT_EQ(Reshape({2, 3, 4}, {6, -1}), (V{6, 4}));
  EXPECT_EQ(Reshape({2, 3, 4}, {-1}), (V{24}));
  EXPECT_EQ(Reshape({2, 3, 4}, {-1, 1, 2}), (V{12, 1, 2}));
  EXPECT_EQ(Reshape({}, {-1}), (V{1}));
  EXPECT_EQ(Reshape({5}, {-1, 5, 1}), (V{1, 5, 1}));
}

TEST(InferReshapeTest, TwoMinusOnes) {
  ExpectInvalid([] { Reshape({2, 3}, {-1, -1}); }, {"reshape", "only one", "(-1,-1)"});
}

TEST(InferReshapeTest, MinusOneWithZeroElementsIsAmbiguous) {
  ExpectInvalid([] { Reshape({0, 3}, {0, -1}); }, {"reshape", "(0,3)", "(0,-1)", "ambiguous"});
  ExpectInvalid([] { Reshape({0}, {-1, 0}); }, {"reshape", "(0)", "(-1,0)"});
}

TEST(InferReshapeTest, WrongElementCount) {
  ExpectInvalid([] { Reshape({2, 3}, {4, 2}); }, {"reshape", "(4,2)", "(2,3)", "6"});
  ExpectInvalid([] { Reshape({2, 3}, {4, -1}); }, {"reshape", "(4,-1)", "(2,3)", "6"});
  ExpectInvalid([] { Reshape({}, {2}); }, {"reshape", "(2)", "()", "1"});
  ExpectInvalid([] { Reshape({0, 3}, {1}); }, {"reshape", "(1)", "(0,3)"});
}

TEST(InferReshapeTest, SizeBelowMinusOne) {
  ExpectInvalid([] { Reshape({6}, {-2, -3}); }, {"reshape", "-2", "dim 0", "(-2,-3)"});
}

TEST(InferReshapeTest, MoreThanTwentyFiveDims) {
  ExpectInvalid([] { Reshape({1}, V(26, 1)); }, {"reshape", "26", "25"});
  EXPECT_EQ(Reshape({1}, V(25, 1)), V(25, 1));
}

TEST(InferReshapeTest, ElementCountOverflow) {
  const int64_t big = int64_t{1} << 40;
  ExpectInvalid([&] { Reshape({4}, {big, big, -1}); }, {"reshape", Str({big, big, -1})});
}

// Checks the strides returned for (in, in_stride) -> out: they must address the same elements in
// the same row-major order. Returns whether a view was returned.
bool CheckViewStrides(const V& in, const V& in_stride, const V& out) {
  const std::optional<Strides> s = ReshapeStrides(Shape(in), Strides(in_stride), Shape(out));
  if (!s) return false;
  EXPECT_EQ(s->size(), out.size());
  if (s->size() != out.size()) return true;
  EXPECT_EQ(Addresses(out, s->vec()), Addresses(in, in_stride))
      << Str(in) << " stride " << Str(in_stride) << " -> " << Str(out) << " got " << s->str();
  return true;
}

TEST(ReshapeStridesTest, ContiguousInputs) {
  EXPECT_EQ(ReshapeStrides(Shape({2, 3, 4}), {12, 4, 1}, Shape({6, 4})), (V{4, 1}));
  EXPECT_EQ(ReshapeStrides(Shape({2, 3, 4}), {12, 4, 1}, Shape({2, 12})), (V{12, 1}));
  EXPECT_EQ(ReshapeStrides(Shape({2, 3, 4}), {12, 4, 1}, Shape({24})), (V{1}));
  EXPECT_EQ(ReshapeStrides(Shape({24}), {1}, Shape({2, 3, 4})), (V{12, 4, 1}));
}

TEST(ReshapeStridesTest, SizeOneDimsInsertedAndRemoved) {
  EXPECT_TRUE(CheckViewStrides({2, 3}, {3, 1}, {2, 1, 3}));
  EXPECT_TRUE(CheckViewStrides({2, 3}, {3, 1}, {1, 2, 3, 1}));
  EXPECT_TRUE(CheckViewStrides({2, 1, 3}, {3, 3, 1}, {2, 3}));
  // The size-1 dim's stride is meaningless and must not break the view.
  EXPECT_TRUE(CheckViewStrides({2, 1, 3}, {1, 99, 2}, {2, 3}));
  EXPECT_EQ(*ReshapeStrides(Shape({2, 1, 3}), {1, 99, 2}, Shape({2, 3})), (V{1, 2}));
  // Kept non-1 dims keep their strides (here a permuted (3,2) tensor).
  const auto s = ReshapeStrides(Shape({3, 2}), {1, 3}, Shape({1, 3, 1, 2}));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ((*s)[1], 1);
  EXPECT_EQ((*s)[3], 3);
}

TEST(ReshapeStridesTest, SplittingADimOfAPermutedTensor) {
  // A (4,6) tensor transposed to (6,4), strides (1,6); dim 0 split into (2,3).
  EXPECT_EQ(ReshapeStrides(Shape({6, 4}), {1, 6}, Shape({2, 3, 4})), (V{3, 1, 6}));
  // Dim 1 split into (2,2).
  EXPECT_EQ(ReshapeStrides(Shape({6, 4}), {1, 6}, Shape({6, 2, 2})), (V{1, 12, 6}));
  // A narrowed (4,2) of a (4,5) tensor, dim 0 split.
  EXPECT_EQ(ReshapeStrides(Shape({4, 2}), {5, 1}, Shape({2, 2, 2})), (V{10, 5, 1}));
  // An expanded dim split: both parts keep stride 0.
  EXPECT_EQ(ReshapeStrides(Shape({3, 4}), {1, 0}, Shape({3, 2, 2})), (V{1, 0, 0}));
}

TEST(ReshapeStridesTest, MergingPermutedDimsNeedsACopy) {
  EXPECT_EQ(ReshapeStrides(Shape({6, 4}), {1, 6}, Shape({24})), std::nullopt);
  EXPECT_EQ(ReshapeStrides(Shape({3, 4}), {1, 3}, Shape({12})), std::nullopt);
  EXPECT_EQ(ReshapeStrides(Shape({2, 4, 3}), {12, 1, 4}, Shape({8, 3})), std::nullopt);
  EXPECT_EQ(ReshapeStrides(Shape({2, 4, 3}), {12, 1, 4}, Shape({2, 12})), std::nullopt);
  EXPECT_TRUE(CheckViewStrides({2, 4, 3}, {12, 1, 4}, {2, 4, 3, 1}));
  // Merging across a narrowed dim or an expanded dim needs a copy too.
  EXPECT_EQ(ReshapeStrides(Shape({4, 2}), {5, 1}, Shape({8})), std::nullopt);
  EXPECT_EQ(ReshapeStrides(Shape({3, 4}), {0, 1}, Shape({12})), std::nullopt);
  EXPECT_EQ(ReshapeStrides(Shape({2, 3}), {3, 0}, Shape({3, 2})), std::nullopt);
}

TEST(ReshapeStridesTest, ZeroElementsAndZeroDim) {
  EXPECT_TRUE(CheckViewStrides({0, 3}, {3, 1}, {3, 0}));
  EXPECT_TRUE(CheckViewStrides({3, 0}, {1, 1}, {0, 2, 1}));
  EXPECT_TRUE(CheckViewStrides({}, {}, {1, 1}));
  EXPECT_TRUE(CheckViewStrides({1, 1}, {5, 7}, {}));
  EXPECT_TRUE(CheckViewStrides({}, {}, {}));
}

// A random layout of `shape`: contiguous, or the contiguous strides of a permutation of it, or a
// narrowing of a larger tensor, or with some size-1 / broadcast dims given stride 0.
V RandomStrides(std::mt19937_64& rng, const V& shape) {
  const size_t k = shape.size();
  V stride = Contiguous(shape);
  switch (rng() % 4) {
    case 0:
      break;
    case 1: {  // a permuted contiguous tensor
      std::vector<size_t> perm(k);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      V permuted_shape(k);
      for (size_t i = 0; i < k; ++i) permuted_shape[i] = shape[perm[i]];
      const V ps = Contiguous(permuted_shape);
      for (size_t i = 0; i < k; ++i) stride[perm[i]] = ps[i];
      break;
    }
    case 2: {  // narrowed out of a larger tensor
      V big = shape;
      for (int64_t& d : big) d += static_cast<int64_t>(rng() % 3);
      stride = Contiguous(big);
      break;
    }
    default:  // some dims broadcast
      for (size_t i = 0; i < k; ++i) {
        if (rng() % 3 == 0) stride[i] = 0;
      }
      break;
  }
  return stride;
}

// A random shape with `numel` elements (numel > 0): a factorisation plus some size-1 dims.
V RandomFactorisation(std::mt19937_64& rng, int64_t numel) {
  V out;
  int64_t rest = numel;
  while (rest > 1) {
    V divisors;
    for (int64_t d = 2; d <= rest; ++d) {
      if (rest % d == 0) divisors.push_back(d);
    }
    const int64_t d = divisors[rng() % std::min<size_t>(divisors.size(), 3)];
    out.push_back(d);
    rest /= d;
  }
  const size_t ones = rng() % 3;
  for (size_t i = 0; i < ones; ++i) out.insert(out.begin() + rng() % (out.size() + 1), 1);
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

TEST(ReshapeStridesTest, ViewExactlyWhenStridesCanAddressIt) {
  std::mt19937_64 rng(5);
  int views = 0, copies = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const size_t k = 1 + rng() % 4;
    V in(k);
    for (int64_t& d : in) d = 1 + static_cast<int64_t>(rng() % 4);
    const V in_stride = RandomStrides(rng, in);
    const V out = RandomFactorisation(rng, Product(in));
    SCOPED_TRACE(Str(in) + " stride " + Str(in_stride) + " -> " + Str(out));
    const bool expected = ViewExists(Addresses(in, in_stride), out);
    const bool got = CheckViewStrides(in, in_stride, out);
    ASSERT_EQ(got, expected);
    ++(got ? views : copies);
    if (::testing::Test::HasFailure()) return;
  }
  // Both outcomes were exercised many times.
  EXPECT_GT(views, 500);
  EXPECT_GT(copies, 500);
}

}  // namespace
}  // namespace ofl::ops::testing
