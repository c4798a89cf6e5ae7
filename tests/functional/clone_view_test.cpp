// clone (always a copy, with a gradient) and view (reshape that refuses to copy) on the test
// device: values, storage sharing, strides, autograd, and view's error where only a copy would do.
#include <gtest/gtest.h>

#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor Iota6() { return ofl::tensor<float>({1, 2, 3, 4, 5, 6}, Shape({2, 3}), TestDevice()); }

TEST(CloneTest, CopiesEvenWhenContiguous) {
  Tensor x = Iota6();
  Tensor c = x.clone();
  EXPECT_EQ(c.shape(), x.shape());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_NE(c.impl()->blob(), x.impl()->blob());
  x.fill_(0);  // the clone keeps the old values
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(CloneTest, OfAPermutedViewIsRowMajor) {
  Tensor t = Iota6().permute({1, 0});
  Tensor c = ofl::clone(t);
  EXPECT_EQ(c.shape(), Shape({3, 2}));
  EXPECT_EQ(c.stride(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(CloneTest, GradientPassesThrough) {
  Tensor x = Iota6();
  x.requires_grad_();
  Tensor y = x.clone();
  EXPECT_EQ(y.grad_fn_name(), "CloneBackward");
  (y * 3.0).sum().backward();
  EXPECT_EQ(x.grad().to_vector<float>(), std::vector<float>(6, 3.0f));
}

TEST(ViewTest, SharesStorage) {
  Tensor x = Iota6();
  Tensor v = x.view({3, -1});
  EXPECT_EQ(v.shape(), Shape({3, 2}));
  EXPECT_EQ(v.impl()->blob(), x.impl()->blob());
  Tensor n = x.narrow(1, 1, 2).view({2, 2, 1});  // a non-contiguous view that still has one
  EXPECT_EQ(n.impl()->blob(), x.impl()->blob());
  EXPECT_EQ(n.to_vector<float>(), (std::vector<float>{2, 3, 5, 6}));
}

TEST(ViewTest, IsSetToHoldsForTheSameMemoryViewedTheSameWayOnly) {
  Tensor x = Iota6();
  EXPECT_TRUE(x.narrow(0, 1, 1).is_set_to(x.narrow(0, 1, 1)));
  EXPECT_TRUE(x.is_set_to(x.detach()));
  EXPECT_FALSE(x.narrow(0, 0, 1).is_set_to(x.narrow(0, 1, 1)));          // another offset
  EXPECT_FALSE(x.is_set_to(x.view({3, 2})));                             // another shape
  EXPECT_FALSE(x.permute({1, 0}).is_set_to(x.view({3, 2})));             // other strides
  EXPECT_FALSE(x.narrow(0, 1, 1).is_set_to(x.clone().narrow(0, 1, 1)));  // another storage
}

TEST(ViewTest, RefusesWhereOnlyACopyWould) {
  Tensor t = Iota6().permute({1, 0});
  ExpectThrowWith<InvalidArgument>([&] { t.view({6}); },
                                   {"view", "(6)", "(3,2)", "strides (1,3)", "reshape"});
  // reshape copies instead, and the runtime keeps working.
  EXPECT_EQ(t.reshape({6}).to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  ExpectThrowWith<InvalidArgument>([&] { Iota6().view({4, -1}); }, {"reshape", "6"});
}

}  // namespace
}  // namespace ofl::testing
