// InferExpand: output shapes and strides against PyTorch's expand rule (written out again here,
// independently of ops/), on named and random cases with contiguous and non-contiguous inputs, and
// every argument error with its message.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "ops/array_ops.h"
#include "tests/ops/ops_test_util.h"

namespace ofl::ops::testing {
namespace {

struct Expected {
  std::vector<int64_t> shape;
  std::vector<int64_t> stride;
};

// PyTorch's rule (inferExpandGeometry): a 0-dim input gets stride 0 on every dim. Otherwise kept
// dims keep the input stride; broadcast dims (input size 1) and new leading dims of size != 1 get
// stride 0; a new leading dim of size 1 gets stride[i+1] * size[i+1].
Expected ExpandRule(const std::vector<int64_t>& in, const std::vector<int64_t>& in_stride,
                    const std::vector<int64_t>& sizes) {
  const size_t n = sizes.size();
  if (in.empty()) return {sizes, std::vector<int64_t>(n, 0)};
  const size_t lead = n - in.size();
  Expected e{std::vector<int64_t>(n), std::vector<int64_t>(n)};
  for (size_t j = 0; j < in.size(); ++j) {
    const size_t i = lead + j;
    const int64_t want = sizes[i] == -1 ? in[j] : sizes[i];
    e.shape[i] = want;
    e.stride[i] = want == in[j] ? in_stride[j] : 0;
  }
  for (size_t i = lead; i-- > 0;) {
    e.shape[i] = sizes[i];
    if (sizes[i] != 1) {
      e.stride[i] = 0;
    } else {
      e.stride[i] = e.stride[i + 1] * e.shape[i + 1];
    }
  }
  return e;
}

void CheckExpand(const std::vector<int64_t>& in, const std::vector<int64_t>& in_stride,
                 const std::vector<int64_t>& sizes, const std::vector<int64_t>& want_shape,
                 const std::vector<int64_t>& want_stride) {
  SCOPED_TRACE("expand " + Str(in) + " stride " + Str(in_stride) + " to " + Str(sizes));
  const ViewGeometry g = InferExpand(Shape(in), Strides(in_stride), sizes, 4);
  EXPECT_EQ(g.shape.vec(), want_shape);
  EXPECT_EQ(g.stride, want_stride);
  EXPECT_EQ(g.offset_delta, 0);
  // The hand-written expectation and the rule agree, so the rule can be trusted on random cases.
  const Expected e = ExpandRule(in, in_stride, sizes);
  EXPECT_EQ(e.shape, want_shape);
  EXPECT_EQ(e.stride, want_stride);
}

TEST(InferExpandTest, BroadcastsASizeOneDim) {
  CheckExpand({4, 3, 1, 2}, {6, 2, 2, 1}, {4, 3, 5, 2}, {4, 3, 5, 2}, {6, 2, 0, 1});
}

TEST(InferExpandTest, AddsLeadingDims) {
  // New dim 1 of size 1 takes stride[2] * size[2], and stride[2] is 0 (a broadcast dim).
  CheckExpand({1, 4, 3, 5}, {60, 15, 5, 1}, {2, 1, 2, 4, 3, 5}, {2, 1, 2, 4, 3, 5},
              {0, 0, 0, 15, 5, 1});
  CheckExpand({2, 3}, {3, 1}, {1, 2, 3}, {1, 2, 3}, {6, 3, 1});
  CheckExpand({2, 3}, {3, 1}, {1, 1, 2, 3}, {1, 1, 2, 3}, {6, 6, 3, 1});
  CheckExpand({2, 3}, {3, 1}, {4, 2, 3}, {4, 2, 3}, {0, 3, 1});
  CheckExpand({2, 3}, {3, 1}, {1, 4, 2, 3}, {1, 4, 2, 3}, {0, 0, 3, 1});
}

TEST(InferExpandTest, MinusOneKeepsADim) {
  CheckExpand({3, 1}, {1, 1}, {-1, 4}, {3, 4}, {1, 0});
  CheckExpand({3, 1}, {1, 1}, {2, -1, -1}, {2, 3, 1}, {0, 1, 1});
  CheckExpand({2, 3}, {3, 1}, {-1, -1}, {2, 3}, {3, 1});
}

TEST(InferExpandTest, SameShapeIsIdentity) {
  CheckExpand({2, 3, 4}, {12, 4, 1}, {2, 3, 4}, {2, 3, 4}, {12, 4, 1});
  CheckExpand({}, {}, {}, {}, {});
}

TEST(InferExpandTest, ZeroAllowedWhereInputIsOneAndInNewDims) {
  CheckExpand({3, 1}, {1, 1}, {3, 0}, {3, 0}, {1, 0});
  CheckExpand({2, 3}, {3, 1}, {0, 2, 3}, {0, 2, 3}, {0, 3, 1});
  CheckExpand({0, 1}, {1, 1}, {0, 5}, {0, 5}, {1, 0});
  CheckExpand({0, 1}, {1, 1}, {-1, 0}, {0, 0}, {1, 0});
}

// torch.tensor(1.).expand(2, 1).stride() == (0, 0): size-1 dims too, unlike a new size-1 dim in
// front of a tensor that has dims.
TEST(InferExpandTest, ZeroDimInputGetsStrideZeroOnEveryDim) {
  CheckExpand({}, {}, {1}, {1}, {0});
  CheckExpand({}, {}, {2, 1}, {2, 1}, {0, 0});
  CheckExpand({}, {}, {1, 3, 1}, {1, 3, 1}, {0, 0, 0});
  CheckExpand({}, {}, {3, 3, 1}, {3, 3, 1}, {0, 0, 0});
  CheckExpand({}, {}, {1, 1}, {1, 1}, {0, 0});
  CheckExpand({}, {}, {3}, {3}, {0});
  CheckExpand({}, {}, {1, 3}, {1, 3}, {0, 0});
  CheckExpand({}, {}, {0, 1}, {0, 1}, {0, 0});
}

TEST(InferExpandTest, NonContiguousInputs) {
  // A (2,3) tensor permuted to (3,2): strides (1,3).
  CheckExpand({3, 2}, {1, 3}, {1, 3, 2}, {1, 3, 2}, {3, 1, 3});
  CheckExpand({3, 2}, {1, 3}, {4, 3, 2}, {4, 3, 2}, {0, 1, 3});
  // A (4,5) tensor narrowed to (4,2): strides (5,1).
  CheckExpand({4, 2}, {5, 1}, {2, 1, 4, 2}, {2, 1, 4, 2}, {0, 20, 5, 1});
  // A narrowed row (1,5) of a (4,7) tensor: the size-1 dim keeps its stride when kept.
  CheckExpand({1, 5}, {7, 1}, {1, 5}, {1, 5}, {7, 1});
  CheckExpand({1, 5}, {7, 1}, {3, 5}, {3, 5}, {0, 1});
  CheckExpand({1, 5}, {7, 1}, {1, 1, 5}, {1, 1, 5}, {7, 7, 1});
  // An already expanded input (stride 0) stays expanded.
  CheckExpand({3, 4}, {0, 1}, {2, 3, 4}, {2, 3, 4}, {0, 0, 1});
}

TEST(InferExpandTest, MatchesTheRuleOnRandomCases) {
  std::mt19937_64 rng(7);
  auto pick = [&](std::initializer_list<int64_t> xs) {
    return *(xs.begin() + static_cast<int64_t>(rng() % xs.size()));
  };
  for (int iter = 0; iter < 3000; ++iter) {
    const size_t k = rng() % 6;
    std::vector<int64_t> in(k), in_stride(k), sizes;
    for (size_t j = 0; j < k; ++j) {
      in[j] = pick({0, 1, 1, 1, 2, 3, 4});
      in_stride[j] = pick({0, 1, 2, 3, 5, 12, 40});
    }
    const size_t lead = rng() % 4;
    for (size_t i = 0; i < lead; ++i) sizes.push_back(pick({0, 1, 1, 2, 3}));
    for (size_t j = 0; j < k; ++j) {
      sizes.push_back(in[j] == 1 ? pick({1, -1, 0, 2, 5}) : pick({in[j], -1}));
    }
    SCOPED_TRACE("expand " + Str(in) + " stride " + Str(in_stride) + " to " + Str(sizes));
    const Expected e = ExpandRule(in, in_stride, sizes);
    const ViewGeometry g = InferExpand(Shape(in), Strides(in_stride), sizes, 8);
    ASSERT_EQ(g.shape.vec(), e.shape);
    ASSERT_EQ(g.stride, e.stride);
    ASSERT_EQ(g.offset_delta, 0);
  }
}

TEST(InferExpandTest, TwentyFiveDims) {
  std::vector<int64_t> sizes(25, 1);
  sizes[0] = 2;
  sizes[24] = 3;
  const ViewGeometry g = InferExpand(Shape({1}), {1}, sizes, 4);
  EXPECT_EQ(g.shape.vec(), sizes);
  EXPECT_EQ(g.stride, ExpandRule({1}, {1}, sizes).stride);
}

TEST(InferExpandTest, FewerSizesThanDims) {
  ExpectInvalid(
      [] {
        InferExpand(Shape({2, 3}), {3, 1}, {3}, 4);
      },
      {"expand", "number of sizes provided (1)", "dimensions in the tensor (2)", "(2,3)"});
  ExpectInvalid([] { InferExpand(Shape({2}), {1}, {}, 4); }, {"expand", "(0)", "(1)"});
}

TEST(InferExpandTest, MinusOneInANewLeadingDim) {
  ExpectInvalid(
      [] {
        InferExpand(Shape({2, 3}), {3, 1}, {-1, 2, 3}, 4);
      },
      {"expand", "-1", "dimension 0", "(-1,2,3)", "(2,3)"});
  ExpectInvalid([] { InferExpand(Shape(), {}, {-1}, 4); }, {"expand", "-1", "dimension 0"});
}

TEST(InferExpandTest, NonSingletonMismatch) {
  ExpectInvalid(
      [] {
        InferExpand(Shape({2, 3}), {3, 1}, {4, 3}, 4);
      },
      {"expand", "(4)", "existing size (2)", "dimension 0", "(4,3)", "(2,3)"});
  ExpectInvalid(
      [] {
        InferExpand(Shape({4, 3, 2}), {6, 2, 1}, {4, 3, 5}, 4);
      },
      {"expand", "(5)", "(2)", "dimension 2"});
  // A 0-size dim is not a singleton either.
  ExpectInvalid([] { InferExpand(Shape({0}), {1}, {3}, 4); }, {"expand", "(3)", "(0)"});
}

TEST(InferExpandTest, SizeBelowMinusOne) {
  ExpectInvalid(
      [] {
        InferExpand(Shape({1, 3}), {3, 1}, {-2, 3}, 4);
      },
      {"expand", "-2", "dim 0", "(-2,3)"});
  ExpectInvalid([] { InferExpand(Shape({3}), {1}, {-5, 3}, 4); }, {"expand", "-5"});
}

TEST(InferExpandTest, MoreThanTwentyFiveDims) {
  const std::vector<int64_t> sizes(26, 1);
  ExpectInvalid([&] { InferExpand(Shape({1}), {1}, sizes, 4); }, {"expand", "26", "25"});
}

TEST(InferExpandTest, ElementCountOverflow) {
  const int64_t big = int64_t{1} << 40;
  ExpectInvalid(
      [&] {
        InferExpand(Shape({1, 1}), {1, 1}, {big, big}, 4);
      },
      {"expand", Str({big, big})});
  ExpectInvalid([&] { InferExpand(Shape(), {}, {big, big}, 1); }, {"expand", Str({big, big})});
  // The element count fits, the byte count does not.
  const int64_t n = int64_t{1} << 61;
  ExpectInvalid([&] { InferExpand(Shape({1}), {1}, {n}, 8); }, {"expand", Str({n}), "8 bytes"});
  EXPECT_NO_THROW(InferExpand(Shape({1}), {1}, {n}, 1));
}

TEST(InferExpandTest, ZeroSizeMakesAHugeShapeEmpty) {
  const int64_t big = int64_t{1} << 40;
  const ViewGeometry g = InferExpand(Shape({1, 1, 1}), {1, 1, 1}, {big, big, 0}, 8);
  EXPECT_EQ(g.shape.vec(), (std::vector<int64_t>{big, big, 0}));
  EXPECT_EQ(g.shape.numel(), 0);
}

}  // namespace
}  // namespace ofl::ops::testing
