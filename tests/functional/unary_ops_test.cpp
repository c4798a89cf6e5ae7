// The elementwise-unary ops and the cast through the public API, on the test device: their values,
// dtypes (an integer input to a floating function is cast to float32 first, as PyTorch's), views
// as inputs, to(dtype) returning the tensor itself when nothing changes, the cast's gradient
// coming back in the input's dtype and an integer result leaving the graph, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

std::vector<double> Values(const Tensor& t) { return t.to(DType::kFloat64).to_vector<double>(); }

void ExpectInvalidArgument(const std::function<void()>& fn, const std::string& piece) {
  ExpectThrowWith<InvalidArgument>(fn, {piece});
}

TEST(UnaryOpsTest, ValuesMatchTheMathOfEachOp) {
  const std::vector<double> xs = {-2.5, -1.0, -0.25, 0.0, 0.5, 1.75, 3.0};
  const std::vector<double> pos = {0.1, 0.5, 1.0, 2.0, 9.0};
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    std::function<double(double)> ref;
    bool positive;
  };
  const std::vector<Case> cases = {
      {"neg", [](const Tensor& x) { return neg(x); }, [](double x) { return -x; }, false},
      {"abs", [](const Tensor& x) { return abs(x); }, [](double x) { return std::fabs(x); }, false},
      {"sign", [](const Tensor& x) { return sign(x); },
       [](double x) { return static_cast<double>((x > 0) - (x < 0)); }, false},
      {"relu", [](const Tensor& x) { return relu(x); }, [](double x) { return x > 0 ? x : 0; },
       false},
      {"exp", [](const Tensor& x) { return exp(x); }, [](double x) { return std::exp(x); }, false},
      {"log", [](const Tensor& x) { return log(x); }, [](double x) { return std::log(x); }, true},
      {"sqrt", [](const Tensor& x) { return sqrt(x); }, [](double x) { return std::sqrt(x); },
       true},
      {"rsqrt", [](const Tensor& x) { return rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); },
       true},
      {"sin", [](const Tensor& x) { return sin(x); }, [](double x) { return std::sin(x); }, false},
      {"cos", [](const Tensor& x) { return cos(x); }, [](double x) { return std::cos(x); }, false},
      {"tanh", [](const Tensor& x) { return tanh(x); }, [](double x) { return std::tanh(x); },
       false},
      {"sigmoid", [](const Tensor& x) { return sigmoid(x); },
       [](double x) { return 1 / (1 + std::exp(-x)); }, false},
      {"erf", [](const Tensor& x) { return erf(x); }, [](double x) { return std::erf(x); }, false},
      {"silu", [](const Tensor& x) { return silu(x); },
       [](double x) { return x / (1 + std::exp(-x)); }, false},
      {"gelu", [](const Tensor& x) { return gelu(x); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, false},
      {"gelu tanh", [](const Tensor& x) { return gelu(x, "tanh"); },
       [](double x) {
         return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       },
       false},
      {"pow 2.5", [](const Tensor& x) { return x.pow(2.5); },
       [](double x) { return std::pow(x, 2.5); }, true},
      {"pow -2", [](const Tensor& x) { return pow(x, -2.0); },
       [](double x) { return std::pow(x, -2.0); }, false},
  };
  for (const Case& c : cases) {
    for (DType dtype : {DType::kFloat64, DType::kFloat32}) {
      SCOPED_TRACE(std::string(c.name) + " " + to_string(dtype));
      const std::vector<double>& in = c.positive ? pos : xs;
      Tensor x =
          tensor<double>(in, Shape({static_cast<int64_t>(in.size())}), TestDevice()).to(dtype);
      Tensor y = c.op(x);
      EXPECT_EQ(y.dtype(), dtype);
      EXPECT_EQ(y.shape(), x.shape());
      const std::vector<double> got = Values(y);
      for (size_t i = 0; i < in.size(); ++i) {
        const double ref = c.ref(in[i]);
        if (std::isinf(ref)) {
          EXPECT_EQ(got[i], ref) << "x = " << in[i];
        } else {
          EXPECT_NEAR(got[i], ref,
                      (dtype == DType::kFloat64 ? 1e-12 : 2e-6) * std::max(1.0, std::fabs(ref)))
              << "x = " << in[i];
        }
      }
    }
  }
}

TEST(UnaryOpsTest, ViewsAsInputsGiveContiguousResults) {
  Tensor base =
      tensor<float>({0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f, -1.0f, -0.5f, 0.25f, 0.75f, 3.0f, -2.0f},
                    Shape({3, 4}), TestDevice());
  Tensor v = base.permute({1, 0}).narrow(0, 1, 2);  // (2, 3), strided
  Tensor y = exp(v);
  EXPECT_TRUE(y.is_contiguous());
  const std::vector<double> got = Values(y);
  const std::vector<double> src = Values(v.contiguous());
  ASSERT_EQ(got.size(), src.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], std::exp(src[i]), 1e-5 * got[i]);
  // An expanded (stride 0) input.
  Tensor e = tanh(full(Shape({}), 0.5, DType::kFloat32, TestDevice()).expand({3, 2}));
  for (double g : Values(e)) EXPECT_NEAR(g, std::tanh(0.5), 1e-6);
  // 0-size and 0-dim.
  EXPECT_EQ(sigmoid(zeros(Shape({0, 3}), DType::kFloat32, TestDevice())).shape(), Shape({0, 3}));
  EXPECT_NEAR(Values(relu(full(Shape({}), -1.0, DType::kFloat64, TestDevice())))[0], 0.0, 0);
}

TEST(UnaryOpsTest, IntegerInputs) {
  Tensor i =
      tensor<int64_t>({-3, 0, 4, std::numeric_limits<int64_t>::min()}, Shape({4}), TestDevice());
  // neg, abs, sign and relu keep the integer dtype (abs and neg of the minimum wrap to itself).
  EXPECT_EQ(neg(i).dtype(), DType::kInt64);
  EXPECT_EQ(neg(i).to_vector<int64_t>(),
            (std::vector<int64_t>{3, 0, -4, std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(abs(i).to_vector<int64_t>(),
            (std::vector<int64_t>{3, 0, 4, std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(sign(i).to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 1, -1}));
  EXPECT_EQ(relu(i).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 4, 0}));
  EXPECT_EQ((-i).to_vector<int64_t>(), neg(i).to_vector<int64_t>());
  // A floating function of an integer or bool tensor computes in float32.
  Tensor small = tensor<int32_t>({1, 4, 9}, Shape({3}), TestDevice());
  Tensor r = sqrt(small);
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_EQ(r.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(exp(tensor<bool>({false, true}, Shape({2}), TestDevice())).to_vector<float>(),
            (std::vector<float>{1.0f, std::exp(1.0f)}));
  EXPECT_EQ(small.pow(2).dtype(), DType::kFloat32);
}

TEST(UnaryOpsTest, ToDTypeConvertsAndReturnsTheTensorItselfWhenNothingChanges) {
  Tensor x = tensor<float>({-1.75f, 0.5f, 2.5f, 300.0f, std::numeric_limits<float>::quiet_NaN()},
                           Shape({5}), TestDevice());
  EXPECT_EQ(x.to(DType::kFloat32).impl(), x.impl());
  EXPECT_EQ(x.to(DType::kInt64).to_vector<int64_t>(), (std::vector<int64_t>{-1, 0, 2, 300, 0}));
  EXPECT_EQ(x.to(DType::kInt8).to_vector<int8_t>(), (std::vector<int8_t>{-1, 0, 2, 127, 0}));
  EXPECT_EQ(x.to(DType::kUInt8).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 0, 2, 255, 0}));
  EXPECT_EQ(x.to(DType::kBool).to_vector<bool>(),
            (std::vector<bool>{true, true, true, true, true}));
  Tensor big = tensor<int64_t>({(int64_t{1} << 32) + 5, -1}, Shape({2}), TestDevice());
  EXPECT_EQ(big.to(DType::kInt32).to_vector<int32_t>(), (std::vector<int32_t>{5, -1}));
  EXPECT_EQ(big.to(DType::kUInt8).to_vector<uint8_t>(), (std::vector<uint8_t>{5, 255}));
  EXPECT_EQ(x.to(DType::kFloat16).to(DType::kFloat32).to_vector<float>()[2], 2.5f);
  // A permuted view casts element by element.
  Tensor m = tensor<int32_t>({1, 2, 3, 4, 5, 6}, Shape({2, 3}), TestDevice()).permute({1, 0});
  EXPECT_EQ(m.to(DType::kFloat64).to_vector<double>(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
}

TEST(UnaryOpsTest, CastGradientComesBackInTheInputsDType) {
  Tensor x = tensor<float>({1.5f, -2.0f}, Shape({2}), TestDevice()).requires_grad_();
  Tensor y = x.to(DType::kFloat64);
  EXPECT_TRUE(y.requires_grad());
  (y * y).sum().backward();
  ASSERT_TRUE(x.grad().defined());
  EXPECT_EQ(x.grad().dtype(), DType::kFloat32);
  EXPECT_EQ(x.grad().to_vector<float>(), (std::vector<float>{3.0f, -4.0f}));
  // An integer result has no gradient: it leaves the graph.
  Tensor i = x.to(DType::kInt64);
  EXPECT_FALSE(i.requires_grad());
  EXPECT_TRUE(i.is_leaf());
}

TEST(UnaryOpsTest, BadInputsNameTheOpAndTheValues) {
  Tensor b = tensor<bool>({true}, Shape({1}), TestDevice());
  ExpectInvalidArgument([&] { neg(b); },
                        "neg: dtype bool is not supported (an integer or float dtype is)");
  ExpectInvalidArgument([&] { relu(b); },
                        "relu: dtype bool is not supported (an integer or float dtype is)");
  ExpectInvalidArgument([&] { -b; }, "neg: negation, the `-` operator, on a bool tensor");
  Tensor x = ones(Shape({2}), DType::kFloat32, TestDevice());
  ExpectInvalidArgument([&] { gelu(x, "fast"); },
                        "gelu: approximate is \"fast\"; expected \"none\" or \"tanh\"");
  ExpectInvalidArgument([&] { x.to(static_cast<DType>(42)); },
                        "cast: the attribute 'dtype' is a dtype, got no dtype (42)");
  ExpectInvalidArgument([&] { exp(Tensor()); }, "undefined");
  ExpectRuntimeWorks();
}

}  // namespace
}  // namespace ofl::testing
