// expand is a view: it shares the input's storage, broadcast and new dims get stride 0 (every dim
// of an expanded 0-dim tensor, as in PyTorch), and it allocates nothing (the CPU pool's request
// count does not move). Its values read back correctly from contiguous and non-contiguous inputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/common/scoped_env.h"
#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

class ExpandViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (EnvSet("OFL_DISABLE_VIEW")) GTEST_SKIP() << "OFL_DISABLE_VIEW=1 makes expand a copy";
  }
};

// Tensors keep their strides inline and make the std::vector that stride() returns on the first
// call: every caller, on any thread, gets that one vector, with the right values.
TEST(TensorStrideTest, StrideVectorIsMadeOnceForEveryCallerAndThread) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}), TestDevice());
  for (int round = 0; round < 20; ++round) {
    const Tensor y = x.permute({1, 0});
    std::vector<const std::vector<int64_t>*> seen(4, nullptr);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < seen.size(); ++i) {
      threads.emplace_back([&y, &seen, i] { seen[i] = &y.stride(); });
    }
    for (auto& t : threads) t.join();
    for (const auto* v : seen) EXPECT_EQ(v, &y.stride());
    EXPECT_EQ(y.stride(), (Dims{1, 1}));
  }
  EXPECT_EQ(x.stride(), (Dims{1, 1}));
  const Tensor deep = x.reshape({1, 1, 1, 1, 1, 1, 3, 1});  // past Shape's inline dims
  EXPECT_EQ(deep.stride(), (Dims{3, 3, 3, 3, 3, 3, 1, 1}));
}

// A tensor's dtype and device are its storage's: every view, whatever its shape, reports them,
// and a local tensor has no global metadata even after its strides were asked for.
TEST(TensorStrideTest, ViewsReportTheirStoragesDTypeAndDevice) {
  const Tensor x = ofl::tensor<int64_t>({1, 2, 3, 4, 5, 6}, Shape({2, 3}), TestDevice());
  for (const Tensor& v : {x.permute({1, 0}), x.reshape({3, 2}), x.narrow(1, 1, 2),
                          x.reshape({1, 6}).expand({4, 6})}) {
    EXPECT_EQ(v.dtype(), DType::kInt64);
    EXPECT_EQ(v.device(), TestDevice());
    (void)v.stride();
    EXPECT_EQ(v.impl()->global(), nullptr);
  }
  const Tensor e = ofl::empty(Shape({2, 3}), DType::kFloat16, TestDevice());
  EXPECT_EQ(e.permute({1, 0}).dtype(), DType::kFloat16);
  EXPECT_EQ(x.dtype(), DType::kInt64);
}

TEST_F(ExpandViewTest, SharesStorageWithZeroStrides) {
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}), TestDevice());
  const Tensor y = x.expand({2, 3, 4});
  EXPECT_TRUE(SameStorage(y, x));
  EXPECT_EQ(y.shape(), Shape({2, 3, 4}));
  EXPECT_EQ(y.stride(), (Dims{0, 1, 0}));
  EXPECT_EQ(y.storage_offset(), x.storage_offset());
  EXPECT_FALSE(y.is_contiguous());
  std::vector<float> want;
  for (int a = 0; a < 2; ++a) {
    for (float v : {1.f, 2.f, 3.f}) want.insert(want.end(), {v, v, v, v});
  }
  EXPECT_EQ(y.to_vector<float>(), want);
}

TEST_F(ExpandViewTest, AllocatesNothing) {
  const Device cpu = TestDevice();
  const Tensor x = ofl::tensor<double>({1, 2, 3, 4}, Shape({1, 4}), TestDevice());
  ofl::sync();
  const int64_t before = ofl::memory_stats(cpu).alloc_requests;
  const Tensor y = x.expand({1000, 4});
  const Tensor z = ofl::expand(y, {3, 1000, 4});
  ofl::sync();
  EXPECT_EQ(ofl::memory_stats(cpu).alloc_requests, before);
  EXPECT_TRUE(SameStorage(z, x));
  // Its values read back through the view.
  const std::vector<double> v = z.to_vector<double>();
  ASSERT_EQ(v.size(), 12000u);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<double>(i % 4 + 1));
  // Making it contiguous is where the memory is asked for.
  const Tensor c = z.contiguous();
  ofl::sync();
  EXPECT_GT(ofl::memory_stats(cpu).alloc_requests, before);
  EXPECT_FALSE(SameStorage(c, x));
}

TEST_F(ExpandViewTest, ViewsOfNonContiguousInputs) {
  std::mt19937_64 rng(21);
  const HostTensor<int16_t> h = RandomHost<int16_t>(rng, {4, 5});
  const Tensor x = ToDevice(h);
  // Narrowed to a column (4,1): stride (5,1), offset 2.
  const Tensor col = x.narrow(1, 2, 1);
  const Tensor e = col.expand({2, 4, 3});
  EXPECT_TRUE(SameStorage(e, x));
  EXPECT_EQ(e.stride(), (Dims{0, 5, 0}));
  EXPECT_EQ(e.storage_offset(), 2);
  EXPECT_TRUE(SameAs(e, RefExpand(RefNarrow(h, 1, 2, 1), {2, 4, 3})));
  // Permuted (5,4) with strides (1,5), given a new leading dim of size 1.
  const Tensor p = x.permute({1, 0}).expand({1, 5, 4});
  EXPECT_EQ(p.stride(), (Dims{5, 1, 5}));
  EXPECT_TRUE(SameAs(p, RefExpand(RefPermute(h, {1, 0}), {1, 5, 4})));
  // An expanded view expanded again.
  const Tensor ee = e.narrow(0, 1, 1).expand({3, 2, 4, 3});
  EXPECT_TRUE(SameAs(ee, RefExpand(RefNarrow(RefExpand(RefNarrow(h, 1, 2, 1), {2, 4, 3}), 0, 1, 1),
                                   {3, 2, 4, 3})));
}

// PyTorch: every dim of an expanded 0-dim tensor has stride 0, size-1 dims included
// (torch.tensor(1.).expand(2, 1).stride() == (0, 0)).
TEST_F(ExpandViewTest, ZeroDimInputGetsStrideZeroOnEveryDim) {
  const Tensor x = ofl::tensor<int32_t>({7}, Shape(), TestDevice());
  const std::vector<Dims> cases = {{1}, {2, 1}, {1, 3, 1}, {3, 3, 1}, {1, 1}, {3}};
  for (const Dims& sizes : cases) {
    SCOPED_TRACE("expand () to " + Str(sizes));
    const Tensor y = x.expand(sizes);
    EXPECT_EQ(y.shape(), Shape(sizes));
    EXPECT_EQ(y.stride(), Dims(sizes.size(), 0));
    EXPECT_TRUE(SameStorage(y, x));
    EXPECT_EQ(y.storage_offset(), x.storage_offset());
  }
}

TEST(ExpandValuesTest, ZeroDimInputReadsBack) {
  const Tensor x = ofl::tensor<float>({2.5f}, Shape(), TestDevice());
  const std::vector<Dims> cases = {{1}, {2, 1}, {1, 3, 1}, {3, 3, 1}, {0, 1}};
  for (const Dims& sizes : cases) {
    SCOPED_TRACE("expand () to " + Str(sizes));
    const std::vector<float> want(static_cast<size_t>(Numel(sizes)), 2.5f);
    const Tensor y = x.expand(sizes);
    EXPECT_EQ(y.to_vector<float>(), want);
    const Tensor c = y.contiguous();
    EXPECT_TRUE(c.is_contiguous());
    EXPECT_EQ(c.shape(), Shape(sizes));
    EXPECT_EQ(c.to_vector<float>(), want);
    // Expanded again (a new leading dim of 2), through the free function.
    Dims again = sizes;
    again.insert(again.begin(), 2);
    const std::vector<float> twice(want.size() * 2, 2.5f);
    EXPECT_EQ(ofl::expand(y, again).contiguous().to_vector<float>(), twice);
  }
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2.5f}));
}

TEST(ExpandValuesTest, LargeExpandThenContiguous) {
  std::mt19937_64 rng(22);
  const HostTensor<float> row = RandomHost<float>(rng, {1, 4096});
  const Tensor y = ToDevice(row).expand({64, 4096});
  EXPECT_TRUE(SameAs(y, RefExpand(row, {64, 4096})));
  const Tensor c = y.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.stride(), (Dims{4096, 1}));
  EXPECT_TRUE(SameAs(c, RefExpand(row, {64, 4096})));
}

// A value of OFL_DISABLE_VIEW other than 0 or 1 used to turn views off without a word; it is now
// reported, naming the variable and the value, and the default (views on) is used. In a fresh
// process (the threadsafe style re-runs this binary): the setting is read once.
TEST(ExpandSettingDeathTest, BadDisableViewValueWarnsAndExpandStaysAView) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ScopedEnv env("OFL_DISABLE_VIEW", "yes");
  EXPECT_EXIT(
      {
        const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}), Device("cpu"));
        const Tensor y = x.expand({2, 3, 4});
        std::exit(SameStorage(y, x) && y.stride() == Dims{0, 1, 0} ? 0 : 3);
      },
      ::testing::ExitedWithCode(0),
      "OFL_DISABLE_VIEW='yes' is not valid: need an integer from 0 to 1; using 0 instead");
}

}  // namespace
}  // namespace ofl::testing
