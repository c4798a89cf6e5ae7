// repeat end to end: for every dtype, repeat(x, r) equals reshape -> expand -> reshape ->
// contiguous on random shapes and layouts, its output is a fresh contiguous tensor, and the
// documented PyTorch examples give the documented values.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

template <class T>
class RepeatTest : public ::testing::Test {};
TYPED_TEST_SUITE(RepeatTest, AllElementTypes, DTypeNames);

// repeat by its definition: x (k dims) viewed as (1, s_0, 1, s_1, ...) with n - k leading (1, 1)
// pairs, expanded to (r_0, s_0, r_1, s_1, ...), read as (r_0 * s_0, r_1 * s_1, ...).
Tensor RepeatByExpand(const Tensor& x, const Dims& repeats) {
  const size_t n = repeats.size();
  const size_t lead = n - static_cast<size_t>(x.dim());
  Dims pairs, expanded, out;
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = i < lead ? 1 : x.shape()[static_cast<int64_t>(i - lead)];
    pairs.insert(pairs.end(), {1, s});
    expanded.insert(expanded.end(), {repeats[i], s});
    out.push_back(repeats[i] * s);
  }
  return ofl::contiguous(ofl::reshape(ofl::expand(ofl::reshape(x, pairs), expanded), out));
}

TYPED_TEST(RepeatTest, EqualsReshapeExpandReshape) {
  using T = TypeParam;
  std::mt19937_64 rng(50 + static_cast<int>(DTypeOf<T>::value));
  for (int iter = 0; iter < 60; ++iter) {
    const size_t k = rng() % 6;
    Dims shape(k);
    for (int64_t& d : shape) d = rng() % 20 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3);
    Dims repeats(k + rng() % 3);
    for (int64_t& r : repeats) r = rng() % 15 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3);
    const HostTensor<T> h = RandomHost<T>(rng, shape);
    Tensor x = ToDevice(h);
    if (k >= 2 && rng() % 2 == 0) {
      // A non-contiguous input: the transpose of a contiguous tensor, transposed back.
      Dims perm(k);
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[0], perm[k - 1]);
      x = ToDevice(RefPermute(h, perm)).permute(perm);
    }
    SCOPED_TRACE(Str(shape) + " by " + Str(repeats) + ", input strides " + Str(x.stride()));
    const Tensor got = ofl::repeat(x, repeats);
    const Tensor want = RepeatByExpand(x, repeats);
    ASSERT_EQ(got.shape(), want.shape());
    const HostTensor<T> want_host{want.shape().vec(), want.template to_vector<T>()};
    ASSERT_TRUE(SameAs(got, want_host));
    ASSERT_TRUE(SameAs(got, RefRepeat(h, repeats)));
  }
}

TYPED_TEST(RepeatTest, OutputIsAFreshContiguousTensor) {
  using T = TypeParam;
  std::mt19937_64 rng(8);
  const HostTensor<T> h = RandomHost<T>(rng, {3, 4});
  const Tensor x = ToDevice(h).permute({1, 0});
  ASSERT_FALSE(x.is_contiguous());
  const Tensor y = x.repeat({2, 1, 3});
  EXPECT_TRUE(y.is_contiguous());
  EXPECT_EQ(y.stride(), ContiguousStrides(Shape({2, 4, 9})));
  EXPECT_EQ(y.storage_offset(), 0);
  EXPECT_FALSE(SameStorage(y, x));
  EXPECT_TRUE(SameAs(y, RefRepeat(RefPermute(h, {1, 0}), {2, 1, 3})));
  // The input is left as it was.
  EXPECT_TRUE(SameAs(x, RefPermute(h, {1, 0})));
}

TEST(RepeatValuesTest, PyTorchExamples) {
  // torch.tensor([1, 2, 3]).repeat(4, 2) and .repeat(4, 2, 1).
  const Tensor x = ofl::tensor<int64_t>({1, 2, 3}, Shape({3}), TestDevice());
  const Tensor a = x.repeat({4, 2});
  EXPECT_EQ(a.shape(), Shape({4, 6}));
  std::vector<int64_t> row = {1, 2, 3, 1, 2, 3};
  std::vector<int64_t> want;
  for (int i = 0; i < 4; ++i) want.insert(want.end(), row.begin(), row.end());
  EXPECT_EQ(a.to_vector<int64_t>(), want);
  const Tensor b = x.repeat({4, 2, 1});
  EXPECT_EQ(b.shape(), Shape({4, 2, 3}));
  std::vector<int64_t> want_b;
  for (int i = 0; i < 8; ++i) want_b.insert(want_b.end(), {1, 2, 3});
  EXPECT_EQ(b.to_vector<int64_t>(), want_b);
  // A size-1 dim repeated 0 times.
  const Tensor c = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}), TestDevice()).repeat({0, 1});
  EXPECT_EQ(c.shape(), Shape({0, 1}));
  EXPECT_TRUE(c.to_vector<float>().empty());
}

TEST(RepeatValuesTest, NamedShapeFromTheBrief) {
  std::mt19937_64 rng(12);
  const HostTensor<int32_t> h = RandomHost<int32_t>(rng, {4, 1, 3, 5});
  const Tensor y = ToDevice(h).repeat({2, 1, 2, 4, 1, 1});
  EXPECT_EQ(y.shape(), Shape({2, 1, 8, 4, 3, 5}));
  EXPECT_TRUE(SameAs(y, RefRepeat(h, {2, 1, 2, 4, 1, 1})));
}

}  // namespace
}  // namespace ofl::testing
