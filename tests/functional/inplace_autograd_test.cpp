// In-place ops under autograd on the test device (cpu, sim:0, sim:1), by PyTorch's rules: a write
// into a tensor that is not a leaf requiring grad is recorded as a node of the op's out-of-place
// form and becomes the tensor's history; one into a leaf that requires grad, or into a recorded
// view, is refused before anything is queued; a saved tensor changed in place is caught by its
// version at backward.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F(const std::vector<float>& v, const Dims& shape) {
  return ofl::tensor<float>(v, Shape(shape), TestDevice());
}
Tensor Leaf(const std::vector<float>& v, const Dims& shape) {
  Tensor t = F(v, shape);
  t.requires_grad_();
  return t;
}
std::vector<float> Grad(const Tensor& t) { return t.grad().to_vector<float>(); }

TEST(InplaceAutogradTest, AnInPlaceOpOnANonLeafIsRecordedAndRebasesItsHistory) {
  Tensor x = Leaf({1, 2, 3}, {3});
  Tensor y = x * 2.0f;
  y.add_(1);
  EXPECT_EQ(y.grad_fn_name(), "AddBackward");
  EXPECT_FALSE(y.is_leaf());
  y.mul_(F({3, 5, 7}, {3}));
  EXPECT_EQ(y.grad_fn_name(), "MulBackward");
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{9, 25, 49}));
  y.sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{6, 10, 14}));  // d/dx of (2x + 1) * c: 2c
  ExpectRuntimeWorks();
}

TEST(InplaceAutogradTest, MulInPlaceSavesTheTargetsValueBeforeTheWrite) {
  Tensor x = Leaf({1, 2, 3}, {3});
  Tensor w = Leaf({4, 5, 6}, {3});
  Tensor y = x * 1.0f;
  y.mul_(w);  // w's gradient reads y as it was before this write: x
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{4, 10, 18}));
  y.sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(Grad(w), (std::vector<float>{1, 2, 3}));

  Tensor a = Leaf({1, 2}, {2});
  Tensor b = a * 1.0f;
  b.div_(a);  // a's gradient through div reads the old b
  b.sum().backward();
  // b = a / a through the old b = a: d/da (a * (1/a)) = 1/a + a * (-1/a^2) = 0.
  EXPECT_EQ(Grad(a), (std::vector<float>{0, 0}));
  ExpectRuntimeWorks();
}

TEST(InplaceAutogradTest, AnInPlaceOpWithASourceThatRequiresGradMakesThePlainTargetRequireIt) {
  Tensor x = Leaf({1, 2, 3}, {3});
  Tensor z = ofl::zeros(Shape({2, 3}), DType::kFloat32, TestDevice());
  EXPECT_FALSE(z.requires_grad());
  z.copy_(x);  // broadcast over the rows
  EXPECT_TRUE(z.requires_grad());
  EXPECT_FALSE(z.is_leaf());
  EXPECT_EQ(z.grad_fn_name(), "CopyBackward");
  (z * z).sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{4, 8, 12}));  // 2 rows of 2x

  Tensor s = ofl::ones(Shape({3}), DType::kFloat32, TestDevice());
  s.add_(x);
  s.sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{5, 9, 13}));  // accumulated onto the first
  ExpectRuntimeWorks();
}

TEST(InplaceAutogradTest, FillAndZeroCutTheTensorsOldHistory) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor y = x * 2.0f;
  y.fill_(3);
  EXPECT_EQ(y.grad_fn_name(), "FillBackward");
  (y * x).sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{3, 3}));  // only through the factor x
  Tensor u = x * 5.0f;
  u.zero_();
  (u + x).sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{4, 4}));
  ExpectRuntimeWorks();
}

TEST(InplaceAutogradTest, CopyFromAnotherDeviceSendsTheGradientBack) {
  Tensor host = ofl::tensor<float>({1, 2}, Shape({2}), Device("cpu"));
  host.requires_grad_();
  Tensor z = ofl::zeros(Shape({2}), DType::kFloat32, TestDevice());
  z.copy_(host);
  (z * 3.0f).sum().backward();
  EXPECT_EQ(host.grad().device(), Device("cpu"));
  EXPECT_EQ(host.grad().to_vector<float>(), (std::vector<float>{3, 3}));
  ExpectRuntimeWorks();
}

TEST(InplaceAutogradTest, ASavedTensorWrittenInPlaceIsCaughtAtBackward) {
  Tensor x = Leaf({1, 2}, {2});
  Tensor y = x * 1.0f;
  Tensor z = y * y;  // saves y
  y.add_(1);
  ExpectThrowWith<Error>([&] { z.sum().backward(); },
                         {"modified by an in-place operation", "MulBackward"});
  // The target as its own source: mul_'s gradient for the target reads the source, which the
  // write changed (PyTorch refuses the same backward).
  Tensor a = x * 1.0f;
  a.mul_(a);
  ExpectThrowWith<Error>([&] { a.sum().backward(); }, {"modified by an in-place operation"});
  ExpectRuntimeWorks();
}

TEST(InplaceAutogradTest, RefusalsLeaveTheTensorUnchanged) {
  Tensor w = Leaf({1, 2}, {2});
  ExpectThrowWith<InvalidArgument>([&] { w.mul_(2); }, {"mul_", "leaf that requires grad"});
  Tensor y = w * 2.0f;
  Tensor v = y.narrow(0, 0, 1);
  ExpectThrowWith<InvalidArgument>([&] { v.add_(1); },
                                   {"add_", "view", "NarrowBackward", "clone()"});
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(y.version(), 0);
  {
    NoGradGuard step;  // an optimizer step: not recorded, the leaf stays a leaf
    w.mul_(2);
    v.add_(1);
  }
  EXPECT_TRUE(w.is_leaf());
  EXPECT_EQ(w.to_vector<float>(), (std::vector<float>{2, 4}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{3, 4}));
  ExpectRuntimeWorks();
}

TEST(InplaceAutogradTest, ARecordedInPlaceOpKeepsItsOverlapCopy) {
  // The source overlaps the target (a transposed view of it): the value it reads is the one
  // before the write, and its gradient goes to the same tensor's history twice.
  Tensor x = Leaf({1, 2, 3, 4}, {2, 2});
  Tensor y = x * 1.0f;
  y.add_(y.permute({1, 0}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{2, 5, 5, 8}));
  y.sum().backward();
  EXPECT_EQ(Grad(x), (std::vector<float>{2, 2, 2, 2}));
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
