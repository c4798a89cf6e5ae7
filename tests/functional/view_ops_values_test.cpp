// End to end through the VM, for every dtype: random chains of expand / repeat / reshape / permute
// / narrow / contiguous on random shapes (0-dim, 0-size dims, up to 6 dims) read back with
// to_vector<T> after every step and compared with naive host references; one 25-dim chain; and
// large cases that take the kernels' parallel paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

template <class T>
class ViewOpsValuesTest : public ::testing::Test {};
TYPED_TEST_SUITE(ViewOpsValuesTest, AllElementTypes, DTypeNames);

constexpr int64_t kMaxNumel = 2048;
constexpr size_t kMaxRank = 6;

Dims RandomShape(std::mt19937_64& rng) {
  for (;;) {
    Dims shape(rng() % (kMaxRank + 1));
    for (int64_t& d : shape) d = rng() % 20 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 4);
    if (Numel(shape) <= 512) return shape;
  }
}

// A random shape with `numel` elements and at most kMaxRank dims, maybe with one -1.
Dims RandomReshapeTarget(std::mt19937_64& rng, int64_t numel) {
  Dims out;
  if (numel == 0) {
    out.resize(1 + rng() % kMaxRank);
    for (int64_t& d : out) d = static_cast<int64_t>(rng() % 4);
    out[rng() % out.size()] = 0;
    return out;
  }
  int64_t rest = numel;
  while (rest > 1 && out.size() < kMaxRank) {
    Dims divisors;
    for (int64_t d = 2; d <= rest; ++d) {
      if (rest % d == 0) divisors.push_back(d);
    }
    const int64_t d =
        out.size() + 1 == kMaxRank ? rest : divisors[rng() % std::min<size_t>(divisors.size(), 3)];
    out.push_back(d);
    rest /= d;
  }
  if (out.size() < kMaxRank && rng() % 2 == 0)
    out.insert(out.begin() + rng() % (out.size() + 1), 1);
  std::shuffle(out.begin(), out.end(), rng);
  if (!out.empty() && rng() % 2 == 0) out[rng() % out.size()] = -1;
  return out;
}

// Applies one random valid op to (t, ref) and checks the result; `log` collects what was done.
template <class T>
void RandomStep(std::mt19937_64& rng, Tensor* t, HostTensor<T>* ref, std::string* log) {
  const Dims& shape = ref->shape;
  const size_t k = shape.size();
  const int64_t numel = Numel(shape);
  Tensor next;
  HostTensor<T> want;
  switch (rng() % 6) {
    case 0: {
      Dims sizes;
      const size_t lead = std::min<size_t>(rng() % 3, kMaxRank - k);
      int64_t out_numel = 1;
      for (size_t i = 0; i < lead; ++i) {
        sizes.push_back(rng() % 15 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3));
        out_numel *= sizes.back();
      }
      for (int64_t d : shape) {
        int64_t s = d;
        if (d == 1) {
          const int64_t choices[] = {1, -1, 2, 3, 4, 0};
          s = choices[rng() % (rng() % 15 == 0 ? 6 : 5)];
        } else if (rng() % 2 == 0) {
          s = -1;
        }
        sizes.push_back(s);
        out_numel *= s == -1 ? d : s;
      }
      if (out_numel > kMaxNumel) return;
      *log += " expand" + Str(sizes);
      next = t->expand(sizes);
      want = RefExpand(*ref, sizes);
      break;
    }
    case 1: {
      const size_t lead = std::min<size_t>(rng() % 3, kMaxRank - k);
      Dims repeats(k + lead);
      for (int64_t& r : repeats) r = rng() % 15 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 3);
      if (numel * Numel(repeats) > kMaxNumel) return;
      *log += " repeat" + Str(repeats);
      next = ofl::repeat(*t, repeats);
      want = RefRepeat(*ref, repeats);
      break;
    }
    case 2: {
      const Dims target = RandomReshapeTarget(rng, numel);
      *log += " reshape" + Str(target);
      next = t->reshape(target);
      want = RefReshape(*ref, target);
      break;
    }
    case 3: {
      Dims dims(k);
      std::iota(dims.begin(), dims.end(), 0);
      std::shuffle(dims.begin(), dims.end(), rng);
      for (int64_t& d : dims) {
        if (rng() % 4 == 0) d -= static_cast<int64_t>(k);
      }
      *log += " permute" + Str(dims);
      next = ofl::permute(*t, dims);
      want = RefPermute(*ref, dims);
      break;
    }
    case 4: {
      if (k == 0) return;
      int64_t dim = static_cast<int64_t>(rng() % k);
      const int64_t size = shape[dim];
      int64_t start = static_cast<int64_t>(rng() % (size + 1));
      const int64_t length = static_cast<int64_t>(rng() % (size - start + 1));
      if (rng() % 4 == 0) dim -= static_cast<int64_t>(k);
      if (start < size && rng() % 4 == 0) start -= size;
      *log += " narrow(" + std::to_string(dim) + "," + std::to_string(start) + "," +
              std::to_string(length) + ")";
      next = t->narrow(dim, start, length);
      want = RefNarrow(*ref, dim, start, length);
      break;
    }
    default: {
      *log += " contiguous";
      next = ofl::contiguous(*t);
      want = *ref;
      EXPECT_TRUE(next.is_contiguous()) << *log;
      break;
    }
  }
  EXPECT_EQ(next.dtype(), DTypeOf<T>::value);
  EXPECT_EQ(next.dim(), static_cast<int64_t>(want.shape.size()));
  EXPECT_EQ(next.numel(), Numel(want.shape));
  EXPECT_TRUE(SameAs(next, want)) << "after" << *log;
  *t = next;
  *ref = std::move(want);
}

TYPED_TEST(ViewOpsValuesTest, RandomChainsMatchReferences) {
  using T = TypeParam;
  std::mt19937_64 rng(1000 + static_cast<int>(DTypeOf<T>::value));
  for (int chain = 0; chain < 40; ++chain) {
    HostTensor<T> ref = RandomHost<T>(rng, RandomShape(rng));
    Tensor t = ToDevice(ref);
    std::string log = "from " + Str(ref.shape) + ":";
    ASSERT_TRUE(SameAs(t, ref));
    for (int step = 0; step < 6; ++step) {
      RandomStep(rng, &t, &ref, &log);
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_NO_THROW(ofl::sync());
}

TYPED_TEST(ViewOpsValuesTest, ZeroDimTensor) {
  using T = TypeParam;
  std::mt19937_64 rng(2);
  const HostTensor<T> x = RandomHost<T>(rng, {});
  const Tensor t = ToDevice(x);
  EXPECT_EQ(t.dim(), 0);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_TRUE(SameAs(t, x));
  EXPECT_TRUE(SameAs(t.expand({3, 1}), RefExpand(x, {3, 1})));
  EXPECT_TRUE(SameAs(t.expand({}), x));
  EXPECT_TRUE(SameAs(t.repeat({2, 3}), RefRepeat(x, {2, 3})));
  EXPECT_TRUE(SameAs(t.repeat({}), x));
  EXPECT_TRUE(SameAs(t.reshape({1, 1}), RefReshape(x, {1, 1})));
  EXPECT_TRUE(SameAs(t.permute({}), x));
  EXPECT_TRUE(SameAs(t.contiguous(), x));
  EXPECT_TRUE(SameAs(t.reshape({1}).reshape({}), x));
}

TYPED_TEST(ViewOpsValuesTest, ZeroSizeDims) {
  using T = TypeParam;
  std::mt19937_64 rng(3);
  const HostTensor<T> x = RandomHost<T>(rng, {2, 0, 3});
  const Tensor t = ToDevice(x);
  EXPECT_TRUE(SameAs(t, x));
  EXPECT_TRUE(SameAs(t.expand({4, 2, 0, 3}), RefExpand(x, {4, 2, 0, 3})));
  EXPECT_TRUE(SameAs(t.repeat({3, 1, 2}), RefRepeat(x, {3, 1, 2})));
  EXPECT_TRUE(SameAs(t.permute({2, 0, 1}).contiguous(), RefPermute(x, {2, 0, 1})));
  EXPECT_TRUE(SameAs(t.reshape({0, 5}), RefReshape(x, {0, 5})));
  // Non-empty inputs made empty.
  const HostTensor<T> y = RandomHost<T>(rng, {3, 1});
  const Tensor u = ToDevice(y);
  EXPECT_TRUE(SameAs(u.expand({3, 0}), RefExpand(y, {3, 0})));
  EXPECT_TRUE(SameAs(u.repeat({0, 1}), RefRepeat(y, {0, 1})));
  EXPECT_TRUE(SameAs(u.narrow(0, 1, 0), RefNarrow(y, 0, 1, 0)));
  EXPECT_TRUE(SameAs(u.expand({0, 3, 1}).contiguous(), RefExpand(y, {0, 3, 1})));
}

TYPED_TEST(ViewOpsValuesTest, TwentyFiveDims) {
  using T = TypeParam;
  std::mt19937_64 rng(4);
  HostTensor<T> ref = RandomHost<T>(rng, {2, 1, 3});
  Tensor t = ToDevice(ref);

  Dims sizes(22, 1);
  sizes[5] = 2;
  sizes.insert(sizes.end(), {-1, 2, 3});
  t = t.expand(sizes);
  ref = RefExpand(ref, sizes);
  ASSERT_EQ(t.dim(), 25);
  ASSERT_TRUE(SameAs(t, ref));

  Dims reversed(25);
  for (int i = 0; i < 25; ++i) reversed[i] = 24 - i;
  t = t.permute(reversed);
  ref = RefPermute(ref, reversed);
  ASSERT_TRUE(SameAs(t, ref));

  Dims target(21, 1);
  target.insert(target.end(), {3, 2, -1, 2});
  t = t.reshape(target);
  ref = RefReshape(ref, target);
  ASSERT_TRUE(SameAs(t, ref));

  Dims repeats(25, 1);
  repeats[0] = 2;
  repeats[23] = 2;
  t = t.repeat(repeats);
  ref = RefRepeat(ref, repeats);
  ASSERT_TRUE(SameAs(t, ref));

  t = t.narrow(23, 1, 2).permute(reversed);
  ref = RefPermute(RefNarrow(ref, 23, 1, 2), reversed);
  ASSERT_TRUE(SameAs(t, ref));
  ASSERT_TRUE(SameAs(t.contiguous(), ref));
}

// Above every kernel's parallel threshold.
TYPED_TEST(ViewOpsValuesTest, LargeExpandContiguousAndTranspose) {
  using T = TypeParam;
  std::mt19937_64 rng(5);
  const HostTensor<T> row = RandomHost<T>(rng, {1, 4096});
  const Tensor big = ToDevice(row).expand({64, 4096}).contiguous();
  EXPECT_TRUE(big.is_contiguous());
  EXPECT_TRUE(SameAs(big, RefExpand(row, {64, 4096})));

  const HostTensor<T> m = RandomHost<T>(rng, {512, 384});
  EXPECT_TRUE(SameAs(ToDevice(m).permute({1, 0}).contiguous(), RefPermute(m, {1, 0})));
}

TYPED_TEST(ViewOpsValuesTest, LargeRepeat) {
  using T = TypeParam;
  std::mt19937_64 rng(6);
  const HostTensor<T> x = RandomHost<T>(rng, {256, 256});
  const Tensor r = ToDevice(x).repeat({4, 2});
  EXPECT_EQ(r.shape(), Shape({1024, 512}));
  EXPECT_TRUE(SameAs(r, RefRepeat(x, {4, 2})));
  // And from a non-contiguous input.
  const Tensor rt = ToDevice(x).permute({1, 0}).repeat({2, 1, 3});
  EXPECT_TRUE(SameAs(rt, RefRepeat(RefPermute(x, {1, 0}), {2, 1, 3})));
}

}  // namespace
}  // namespace ofl::testing
