// The in-place ops on the test device (cpu, sim:0, sim:1): a source that overlaps the tensor it
// writes (read as it was before the write, through a copy, and no copy for the tensor's own view),
// writes into expanded views refused by every in-place op, div_ and mul_ by a tensor, and the
// refusal at the call of a result the tensor's dtype cannot hold (arithmetic on bool, true
// division of integers, a floating-point number into an integer tensor).
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F(const std::vector<float>& v, const Dims& shape) {
  return ofl::tensor<float>(v, Shape(shape), TestDevice());
}
std::vector<float> Iota(int64_t n, float start = 1) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<float>(i);
  return v;
}
int64_t AllocRequests() { return ofl::memory_stats(TestDevice()).alloc_requests; }

TEST(InplaceOverlapTest, ATransposedSourceOfTheSameStorageIsReadAsBefore) {
  Tensor x = F({1, 2, 3, 4}, {2, 2});
  x.add_(x.permute({1, 0}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 5, 5, 8}));
  Tensor y = F({1, 2, 3, 4}, {2, 2});
  y.copy_(y.permute({1, 0}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{1, 3, 2, 4}));
  Tensor z = F({1, 2, 3, 4}, {2, 2});
  z.sub_(z.permute({1, 0}));
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{0, -1, 1, 0}));
}

// Large enough that a kernel splits the work (oneTBB on cpu): the write of an element and the read
// of the next one race without the copy.
TEST(InplaceOverlapTest, ShiftedViewsOfOneStorageGiveTheValuesOfTheSourceBeforeTheWrite) {
  const int64_t n = int64_t{1} << 21;
  const std::vector<float> v = Iota(n, 0);
  Tensor t = F(v, {n});
  t.narrow(0, 1, n - 1).add_(t.narrow(0, 0, n - 1));
  std::vector<float> want = v;
  for (int64_t i = 1; i < n; ++i) want[i] = v[i] + v[i - 1];
  EXPECT_TRUE(SameAs(t, HostTensor<float>{{n}, want}));

  Tensor u = F(v, {n});
  u.narrow(0, 0, n - 1).copy_(u.narrow(0, 1, n - 1));  // backwards
  want = v;
  for (int64_t i = 0; i + 1 < n; ++i) want[i] = v[i + 1];
  EXPECT_TRUE(SameAs(u, HostTensor<float>{{n}, want}));

  Tensor w = F(v, {n});
  w.narrow(0, 1, n - 1).copy_(w.narrow(0, 0, n - 1));  // forwards
  want = v;
  for (int64_t i = 1; i < n; ++i) want[i] = v[i - 1];
  EXPECT_TRUE(SameAs(w, HostTensor<float>{{n}, want}));
}

TEST(InplaceOverlapTest, ABroadcastSourceOfTheSameStorageIsReadAsBefore) {
  Tensor x = F({1, 2, 3, 4, 5, 6}, {3, 2});
  x.add_(x.narrow(0, 0, 1));  // row 0 added to every row, itself included
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 4, 4, 6, 6, 8}));
  Tensor y = F({1, 2, 3, 4, 5, 6}, {3, 2});
  y.copy_(y.narrow(0, 2, 1));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{5, 6, 5, 6, 5, 6}));
}

TEST(InplaceOverlapTest, TheTensorsOwnViewIsWrittenInPlaceWithoutACopy) {
  const int64_t n = 64 * 64;  // beyond any inline size: every tensor is a pool allocation
  Tensor x = F(Iota(n), {64, 64});
  ofl::sync();
  const int64_t before = AllocRequests();
  x.add_(x);
  x.sub_(x.narrow(0, 0, 64));  // the same view through another tensor
  x.copy_(x);
  ofl::sync();
  EXPECT_EQ(AllocRequests(), before);
  EXPECT_TRUE(SameAs(x, HostTensor<float>{{64, 64}, std::vector<float>(n, 0.0f)}));

  Tensor y = F(Iota(n), {64, 64});
  ofl::sync();
  const int64_t before_copy = AllocRequests();
  y.add_(y.permute({1, 0}));
  ofl::sync();
  EXPECT_EQ(AllocRequests(), before_copy + 1);  // the source's copy
}

TEST(InplaceOverlapTest, DisjointViewsOfOneStorageNeedNoCopy) {
  Tensor x = F(Iota(4096), {2, 2048});
  ofl::sync();
  const int64_t before = AllocRequests();
  x.narrow(0, 0, 1).add_(x.narrow(0, 1, 1));
  ofl::sync();
  EXPECT_EQ(AllocRequests(), before);
  std::vector<float> want = Iota(4096);
  for (int i = 0; i < 2048; ++i) want[i] += want[i + 2048];
  EXPECT_TRUE(SameAs(x, HostTensor<float>{{2, 2048}, want}));
}

TEST(InplaceOverlapTest, EveryInplaceOpRefusesAnExpandedTarget) {
  if (EnvSet("OFL_DISABLE_VIEW")) GTEST_SKIP() << "OFL_DISABLE_VIEW=1 makes expand a copy";
  Tensor e = F({1}, {1}).expand({3});
  const Tensor src = F({1, 2, 3}, {3});
  const std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"fill_", [&] { e.fill_(1); }},   {"zero_", [&] { e.zero_(); }},
      {"add_", [&] { e.add_(src); }},   {"sub_", [&] { e.sub_(src); }},
      {"mul_", [&] { e.mul_(2); }},     {"mul_", [&] { e.mul_(src); }},
      {"div_", [&] { e.div_(2); }},     {"div_", [&] { e.div_(src); }},
      {"copy_", [&] { e.copy_(src); }},
  };
  for (const auto& [name, call] : calls) {
    SCOPED_TRACE(name);
    ExpectThrowWith<InvalidArgument>(call, {name, "expanded view", "stride 0"});
  }
  EXPECT_EQ(e.to_vector<float>(), (std::vector<float>{1, 1, 1}));
  ExpectRuntimeWorks();
}

TEST(InplaceArithmeticTest, DivAndMulByATensorOrANumberWriteTheTensorsOwnStorage) {
  Tensor x = F({2, 4, 6, 8}, {2, 2});
  const Tensor alias = x;
  const int64_t version = x.version();
  x.div_(2);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  x.div_(F({1, 4}, {2}));  // broadcast over rows
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 0.5, 3, 1}));
  x.mul_(F({2, 4}, {2}));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{2, 2, 6, 4}));
  x.div_(x.permute({1, 0}));  // overlapping: read as before
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2.0f / 6, 3, 1}));
  EXPECT_EQ(x.version(), version + 4);
  EXPECT_TRUE(SameStorage(x, alias));
  Tensor h = ofl::tensor<double>({1, 3}, Shape({2}), TestDevice());
  h.div_(4.0).mul_(h);
  EXPECT_EQ(h.to_vector<double>(), (std::vector<double>{0.0625, 0.5625}));
}

TEST(InplaceArithmeticTest, DivOnALeafThatRequiresGradUnderNoGradStaysInPlace) {
  Tensor w = F({2, 4}, {2});
  w.requires_grad_();
  ExpectThrowWith<InvalidArgument>([&] { w.div_(2); }, {"div_", "leaf", "NoGradGuard"});
  {
    NoGradGuard step;
    w.div_(2);
  }
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{1, 2}));
}

// b's data must survive every refusal: the checks run before anything is queued.
TEST(InplaceArithmeticTest, ArithmeticOnABoolTensorIsRefusedAndTheTensorKeepsItsData) {
  Tensor b = ofl::tensor<bool>({true, false, true}, Shape({3}), TestDevice());
  Tensor view = b.narrow(0, 1, 2);
  const std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"add_", [&] { b.add_(1); }},    {"add_", [&] { b.add_(true); }},
      {"add_", [&] { b.add_(b); }},    {"sub_", [&] { b.sub_(b); }},
      {"mul_", [&] { b.mul_(2); }},    {"mul_", [&] { b.mul_(b); }},
      {"div_", [&] { b.div_(2); }},    {"div_", [&] { b.div_(b); }},
      {"add_", [&] { view.add_(1); }},
  };
  for (const auto& [name, call] : calls) {
    SCOPED_TRACE(name);
    // "the tensor's dtype is bool", or (div_) "the result type float32 cannot be cast to the
    // tensor's dtype bool".
    ExpectThrowWith<InvalidArgument>(call, {name, "dtype", "bool", "unchanged"});
  }
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(view.to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_EQ(b.clone().to_vector<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(b.version(), 0);
  b.fill_(2);  // a fill holds any number: nonzero is true, as PyTorch
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, true, true}));
  ExpectRuntimeWorks();
}

TEST(InplaceArithmeticTest, AnIntegerTensorRefusesTrueDivisionAndFloatingNumbers) {
  Tensor i = ofl::tensor<int64_t>({4, 6}, Shape({2}), TestDevice());
  // True division's result type is float32, which an int64 tensor cannot hold.
  ExpectThrowWith<InvalidArgument>([&] { i.div_(2); },
                                   {"div_: the result type float32 cannot be cast to the tensor's "
                                    "dtype int64"});
  ExpectThrowWith<InvalidArgument>([&] { i.div_(i); }, {"div_", "float32", "int64", "unchanged"});
  ExpectThrowWith<InvalidArgument>([&] { i.add_(2.5); },
                                   {"add_", "value 2.5", "floating-point", "int64"});
  ExpectThrowWith<InvalidArgument>([&] { i.mul_(2.0); }, {"mul_", "value 2.0", "int64"});
  ExpectThrowWith<InvalidArgument>([&] { i.sub_(0.5); }, {"sub_", "value 0.5"});
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{4, 6}));
  i.add_(true).mul_(3).sub_(int64_t{1} << 40);
  EXPECT_EQ(i.to_vector<int64_t>(),
            (std::vector<int64_t>{15 - (int64_t{1} << 40), 21 - (int64_t{1} << 40)}));
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
