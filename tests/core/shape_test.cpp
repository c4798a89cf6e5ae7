// Shape: construction (initializer_list, vector, pointer + count, push_back), numel, equality,
// printing in OneFlow's "(2,3)" style, 0-dim shapes, the 25-dim limit, and the row-major strides.
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/shape.h"

namespace ofl {
namespace {

TEST(ShapeTest, FromInitializerList) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(s.ndim(), 3);
  EXPECT_EQ(s.size(), 3);
  EXPECT_EQ(s[0], 2);
  EXPECT_EQ(s[1], 3);
  EXPECT_EQ(s[2], 4);
  EXPECT_EQ(s.vec(), (std::vector<int64_t>{2, 3, 4}));
}

TEST(ShapeTest, FromVectorAndPointer) {
  const std::vector<int64_t> dims = {5, 1, 7};
  const Shape a(dims);
  const Shape b(dims.data(), 3);
  EXPECT_EQ(a.vec(), dims);
  EXPECT_EQ(b.vec(), dims);
  EXPECT_EQ(std::vector<int64_t>(a.begin(), a.end()), dims);
  EXPECT_EQ(a.data()[2], 7);
}

TEST(ShapeTest, ElementsAreWritable) {
  Shape s{2, 3};
  s[1] = 9;
  EXPECT_EQ(s.vec(), (std::vector<int64_t>{2, 9}));
  s.push_back(4);
  EXPECT_EQ(s.vec(), (std::vector<int64_t>{2, 9, 4}));
}

TEST(ShapeTest, Numel) {
  EXPECT_EQ(Shape({2, 3, 4}).numel(), 24);
  EXPECT_EQ(Shape({7}).numel(), 7);
  EXPECT_EQ(Shape({3, 0, 5}).numel(), 0);
  EXPECT_EQ(Shape({1, 1, 1}).numel(), 1);
  EXPECT_EQ(Shape().numel(), 1);  // a 0-dim tensor holds one element
  EXPECT_EQ(Shape(std::vector<int64_t>{}).numel(), 1);
}

// numel saturates at INT64_MAX instead of overflowing, and a zero dim makes 0 even after dims
// whose product overflowed; the same with more dims than fit inline.
TEST(ShapeTest, NumelSaturatesAndAZeroDimWinsOverAnOverflow) {
  const int64_t big = int64_t{1} << 40;
  EXPECT_EQ(Shape({big, big}).numel(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Shape({big, big, 0}).numel(), 0);
  EXPECT_EQ(Shape({0, big, big}).numel(), 0);
  EXPECT_EQ(Shape({1, 1, 1, 1, 1, 1, big, big}).numel(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Shape({1, 1, 1, 1, 1, 1, big, big, 0}).numel(), 0);
  EXPECT_EQ(Shape({2, 2, 2, 2, 2, 2, 2, 2}).numel(), 256);
}

TEST(ShapeTest, NegativeDimCountIsInvalidArgument) {
  const int64_t dims[1] = {3};
  try {
    Shape s(dims, -1);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("ndim must be >= 0, got -1"), std::string::npos)
        << e.what();
  }
}

TEST(ShapeTest, ZeroDim) {
  const Shape s{};
  EXPECT_EQ(s.ndim(), 0);
  EXPECT_EQ(s.begin(), s.end());
  EXPECT_EQ(s, Shape(std::vector<int64_t>{}));
  EXPECT_EQ(s.str(), "()");
  EXPECT_TRUE(s.vec().empty());
}

TEST(ShapeTest, Equality) {
  EXPECT_EQ(Shape({2, 3}), Shape(std::vector<int64_t>{2, 3}));
  EXPECT_NE(Shape({2, 3}), Shape({3, 2}));
  EXPECT_NE(Shape({2, 3}), Shape({2, 3, 1}));  // same numel, different rank
  EXPECT_NE(Shape({1}), Shape());
  EXPECT_FALSE(Shape({2, 3}) != Shape({2, 3}));
  // A shape grown by push_back equals one built at once.
  Shape grown{4};
  grown.push_back(5);
  EXPECT_EQ(grown, Shape({4, 5}));
}

TEST(ShapeTest, Printing) {
  EXPECT_EQ(Shape({2, 3}).str(), "(2,3)");
  EXPECT_EQ(Shape({5}).str(), "(5)");
  EXPECT_EQ(Shape({0, 1}).str(), "(0,1)");
  std::ostringstream os;
  os << Shape({2, 3});
  EXPECT_EQ(os.str(), "(2,3)");
  EXPECT_EQ(ToString({2, 3}), "(2,3)");
  EXPECT_EQ(ToString({-1, 4}), "(-1,4)");
  EXPECT_EQ(ToString({}), "()");
}

TEST(ShapeTest, TwentyFiveDimsAreAllowed) {
  const std::vector<int64_t> dims(kMaxDims, 1);
  EXPECT_EQ(kMaxDims, 25);
  EXPECT_EQ(Shape(dims).ndim(), 25);
  EXPECT_EQ(Shape(dims.data(), 25).ndim(), 25);
}

void ExpectTooManyDims(const std::function<void()>& make) {
  try {
    make();
    ADD_FAILURE() << "a 26-dim shape was accepted";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("Shape"), std::string::npos) << msg;
    EXPECT_NE(msg.find("26"), std::string::npos) << msg;
    EXPECT_NE(msg.find("25"), std::string::npos) << msg;
  }
}

TEST(ShapeTest, MoreThanTwentyFiveDimsIsInvalidArgument) {
  const std::vector<int64_t> dims(26, 1);
  ExpectTooManyDims([&] { Shape s(dims); });
  ExpectTooManyDims([&] { Shape s(dims.data(), 26); });
  ExpectTooManyDims([] {
    Shape s{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  });
  ExpectTooManyDims([] {
    Shape s(std::vector<int64_t>(25, 2));
    s.push_back(3);
  });
}

// Up to six dims live inside the object, more on the heap: every copy, move and growth across that
// line keeps each dim, and no two shapes share storage (ASan sees the heap side).
TEST(ShapeTest, CopiesMovesAndGrowthAcrossTheInlineLimitKeepEveryDim) {
  for (int n = 0; n <= kMaxDims; ++n) {
    std::vector<int64_t> dims(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) dims[i] = 100 + i;
    const Shape a(dims);
    Shape copy(a);
    EXPECT_EQ(copy.vec(), dims) << n;
    copy = a;  // assign over a shape of the same size
    EXPECT_EQ(copy.vec(), dims) << n;
    if (n > 0) copy[n - 1] = -1;
    EXPECT_EQ(a.vec(), dims) << "a copy shares storage with its source, n=" << n;
    Shape moved(std::move(copy));
    EXPECT_EQ(moved.ndim(), n);
    EXPECT_EQ(copy.ndim(), 0);  // NOLINT(bugprone-use-after-move): moved-from is empty
    Shape small{7};
    small = a;  // one dim -> n dims
    EXPECT_EQ(small, a) << n;
    Shape big(a);
    big = Shape{1, 2};  // n dims -> two
    EXPECT_EQ(big.vec(), (std::vector<int64_t>{1, 2})) << n;
    big = std::move(small);
    EXPECT_EQ(big, a) << n;
    Shape grown;
    for (int i = 0; i < n; ++i) grown.push_back(100 + i);
    EXPECT_EQ(grown, a) << n;
    EXPECT_EQ(grown.numel() > 0, true);
  }
}

TEST(ShapeTest, ContiguousStrides) {
  EXPECT_EQ(ContiguousStrides(Shape({2, 3, 4})), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(ContiguousStrides(Shape({5})), (std::vector<int64_t>{1}));
  EXPECT_EQ(ContiguousStrides(Shape()), (std::vector<int64_t>{}));
  EXPECT_EQ(ContiguousStrides(Shape({3, 1, 2})), (std::vector<int64_t>{2, 2, 1}));
  // PyTorch's rule: a 0-size dim counts as 1 for the strides of the dims before it.
  EXPECT_EQ(ContiguousStrides(Shape({2, 0, 3})), (std::vector<int64_t>{3, 3, 1}));
  // RowMajorStrides gives the same as a Strides (a Shape), past the inline limit too.
  const Shape deep(std::vector<int64_t>(9, 2));
  const Strides st = RowMajorStrides(deep);
  EXPECT_EQ(st, ContiguousStrides(deep));
  EXPECT_EQ(st[0], 256);
  EXPECT_EQ(st.back(), 1);
}

TEST(ShapeTest, FilledAndComparedWithAVector) {
  EXPECT_EQ(Shape::Filled(3, 7), (std::vector<int64_t>{7, 7, 7}));
  EXPECT_EQ(Shape::Filled(0, 7).ndim(), 0);
  EXPECT_EQ(Shape::Filled(kMaxDims, 1).numel(), 1);
  ExpectTooManyDims([] { Shape::Filled(kMaxDims + 1, 1); });
  EXPECT_THROW(Shape::Filled(-1, 0), InvalidArgument);
  EXPECT_TRUE((std::vector<int64_t>{2, 3}) == Shape({2, 3}));
  EXPECT_TRUE(Shape({2, 3}) != (std::vector<int64_t>{2}));
  EXPECT_TRUE(Shape({2, 3}) != (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE((std::vector<int64_t>{}) == Shape());
}

}  // namespace
}  // namespace ofl
