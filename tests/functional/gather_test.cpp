// gather and scatter_add through the public API, on the test device: values, repeated indices
// (scatter_add's sums), the Tensor methods, the gradients reaching both operands, an index out of
// bounds failing the op's output (not the runtime), and the errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

Tensor F64(const std::vector<double>& v, const Shape& shape) {
  return tensor<double>(v, shape, TestDevice());
}
Tensor I64(const std::vector<int64_t>& v, const Shape& shape) {
  return tensor<int64_t>(v, shape, TestDevice());
}

TEST(GatherTest, GatherPicksAlongDim) {
  const Tensor x = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  EXPECT_EQ(gather(x, 1, I64({2, 0, 1, 1}, Shape({2, 2}))).to_vector<double>(),
            (std::vector<double>{3, 1, 5, 5}));
  EXPECT_EQ(x.gather(0, I64({1, 0, 1}, Shape({1, 3}))).to_vector<double>(),
            (std::vector<double>{4, 2, 6}));
  EXPECT_EQ(gather(x, -1, I64({}, Shape({2, 0}))).shape(), Shape({2, 0}));
  EXPECT_EQ(gather(F64({7}, Shape({})), 0, I64({0}, Shape({}))).to_vector<double>(),
            (std::vector<double>{7}));
}

TEST(GatherTest, ScatterAddSumsRepeatedIndices) {
  const Tensor self = F64({1, 1, 1, 1, 1, 1}, Shape({2, 3}));
  const Tensor src = F64({10, 20, 30, 40, 50, 60}, Shape({2, 3}));
  const Tensor index = I64({0, 0, 2, 1, 1, 1}, Shape({2, 3}));
  EXPECT_EQ(scatter_add(self, 1, index, src).to_vector<double>(),
            (std::vector<double>{31, 1, 31, 1, 151, 1}));
  EXPECT_EQ(self.to_vector<double>(), std::vector<double>(6, 1.0));  // self unchanged
  EXPECT_EQ(self.scatter_add(0, I64({1, 1, 0}, Shape({1, 3})), src).to_vector<double>(),
            (std::vector<double>{1, 1, 31, 11, 21, 1}));
  const Tensor ints = tensor<int32_t>({0, 0}, Shape({2}), TestDevice());
  EXPECT_EQ(ints.scatter_add(0, I64({1, 1, 1}, Shape({3})),
                             tensor<int32_t>({2, 3, 4}, Shape({3}), TestDevice()))
                .to_vector<int32_t>(),
            (std::vector<int32_t>{0, 9}));
}

TEST(GatherTest, GradientsReachEveryOperand) {
  Tensor x = F64({1, 2, 3, 4}, Shape({2, 2})).requires_grad_();
  gather(x, 1, I64({1, 1, 0, 1}, Shape({2, 2}))).sum().backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{0, 2, 1, 1}));
  Tensor self = F64({0, 0}, Shape({2})).requires_grad_();
  Tensor src = F64({1, 2, 3}, Shape({3})).requires_grad_();
  (scatter_add(self, 0, I64({1, 0, 1}, Shape({3})), src) * F64({5, 7}, Shape({2})))
      .sum()
      .backward();
  EXPECT_EQ(self.grad().to_vector<double>(), (std::vector<double>{5, 7}));
  EXPECT_EQ(src.grad().to_vector<double>(), (std::vector<double>{7, 5, 7}));
}

TEST(GatherTest, AnIndexOutOfBoundsFailsTheOutputNotTheRuntime) {
  if (TestDevice().type() == DeviceType::kCUDA) GTEST_SKIP() << "on CUDA it traps (a device fault)";
  const Tensor x = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  // Raised by the next wait on the output (by the call itself under OFL_VM_SYNC=1).
  ExpectThrowWith<Error>(
      [&] {
        gather(x, 1, I64({0, 3}, Shape({2, 1}))).to_vector<double>();
      },
      {"gather: index 3 is out of bounds for dim 1 with size 3"});
  ExpectThrowWith<Error>(
      [&] {
        scatter_add(x, 0, I64({-1}, Shape({1, 1})), x).to_vector<double>();
      },
      {"scatter_add: index -1 is out of bounds for dim 0 with size 2"});
  try {
    ofl::sync();  // at most the errors reported above (sync reports what the VM raised), never new
  } catch (const Error&) {
  }
  EXPECT_EQ(gather(x, 1, I64({0, 2}, Shape({2, 1}))).to_vector<double>(),
            (std::vector<double>{1, 6}));
  ExpectRuntimeWorks();
}

TEST(GatherTest, ErrorsNameTheOpAndTheValues) {
  const Tensor x = F64({1, 2, 3, 4, 5, 6}, Shape({2, 3}));
  ExpectThrowWith<InvalidArgument>(
      [&] {
        gather(x, 1, tensor<int32_t>({0, 1}, Shape({2, 1}), TestDevice()));
      },
      {"gather: index dtype int32 is not int64"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        gather(x, 1, I64({0, 1}, Shape({2})));
      },
      {"gather: index (2) and input (2,3) must have the same number "
       "of dims"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        gather(x, 1, I64({0, 0, 0}, Shape({3, 1})));
      },
      {"gather: index (3,1) is larger than input (2,3) in dim 0"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        gather(x, 2, I64({0}, Shape({1, 1})));
      },
      {"gather: dim 2 is out of range for a 2-dim tensor"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        scatter_add(x, 0, I64({0}, Shape({1, 1})), x.to(DType::kFloat32));
      },
      {"scatter_add: src dtype float32 differs from self's float64"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        scatter_add(x, 0, I64({0, 0}, Shape({1, 2})), F64({1}, Shape({1, 1})));
      },
      {"scatter_add: index (1,2) is larger than src (1,1) in dim 1"});
  ExpectThrowWith<InvalidArgument>(
      [&] {
        scatter_add(x.to(DType::kBool), 0, I64({0}, Shape({1, 1})), x.to(DType::kBool));
      },
      {"scatter_add: dtype bool is not supported (an integer or float dtype is)"});
  // src's gradient is the gathered g, of the index's shape: a larger src has none to take.
  Tensor src = F64({1, 2}, Shape({1, 2})).requires_grad_();
  ExpectThrowWith<InvalidArgument>(
      [&] {
        scatter_add(x, 0, I64({0}, Shape({1, 1})), src).sum().backward();
      },
      {"scatter_add: the gradient of src needs src's shape (1,2) to equal the index's (1,1)"});
}

}  // namespace
}  // namespace ofl::testing
