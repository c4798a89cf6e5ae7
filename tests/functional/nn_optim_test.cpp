// ofl::nn and ofl::optim on the test device: parameter order and state-dict keys as PyTorch's,
// Linear's initialisation bounds and output, train/eval and Dropout, to(dtype), zero_grad,
// load_state_dict (strict errors), and the optimizers' updates against the formulas worked by hand
// for a few steps on a scalar parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "oneflow_lite/nn.h"
#include "oneflow_lite/optim.h"
#include "oneflow_lite/random.h"
#include "tests/functional/functional_test_util.h"

namespace ofl::testing {
namespace {

std::shared_ptr<nn::Sequential> Mlp() {
  return std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(4, 8, true, DType::kFloat32, TestDevice()),
      std::make_shared<nn::ReLU>(), std::make_shared<nn::Dropout>(0.5),
      std::make_shared<nn::Linear>(8, 3, true, DType::kFloat32, TestDevice())});
}

std::vector<std::string> Names(const nn::NamedTensors& v) {
  std::vector<std::string> out;
  for (const auto& kv : v) out.push_back(kv.first);
  return out;
}

TEST(NnTest, ParameterOrderAndStateDictKeysArePyTorchs) {
  const auto model = Mlp();
  const std::vector<std::string> want = {"0.weight", "0.bias", "3.weight", "3.bias"};
  EXPECT_EQ(Names(model->named_parameters()), want);
  EXPECT_EQ(Names(model->state_dict()), want);
  EXPECT_EQ(model->parameters().size(), 4u);
  for (const Tensor& p : model->parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
    EXPECT_EQ(p.device(), TestDevice());
  }
  EXPECT_EQ(model->size(), 4u);
  EXPECT_EQ((*model)[1]->name(), "ReLU");
}

TEST(NnTest, LinearInitialisationAndForward) {
  manual_seed(0);
  nn::Linear a(100, 50, true, DType::kFloat64, TestDevice());
  const std::vector<double> w = a.weight.to_vector<double>();
  const std::vector<double> b = a.bias.to_vector<double>();
  ASSERT_EQ(w.size(), 5000u);
  double sq = 0;
  for (double v : w) {
    ASSERT_LE(std::fabs(v), 0.1);
    sq += v * v;
  }
  EXPECT_NEAR(std::sqrt(sq / 5000), 0.1 / std::sqrt(3.0), 0.005);
  for (double v : b) ASSERT_LE(std::fabs(v), 0.1);
  manual_seed(0);
  nn::Linear again(100, 50, true, DType::kFloat64, TestDevice());
  EXPECT_EQ(again.weight.to_vector<double>(), w);
  const Tensor x = ones(Shape({2, 100}), DType::kFloat64, TestDevice());
  const std::vector<double> y = a(x).to_vector<double>();
  for (int64_t j = 0; j < 50; ++j) {
    double s = b[j];
    for (int64_t k = 0; k < 100; ++k) s += w[j * 100 + k];
    EXPECT_NEAR(y[j], s, 1e-12);
    EXPECT_NEAR(y[50 + j], s, 1e-12);
  }
  nn::Linear nobias(3, 2, false, DType::kFloat32, TestDevice());
  EXPECT_FALSE(nobias.bias.defined());
  EXPECT_EQ(Names(nobias.named_parameters()), (std::vector<std::string>{"weight"}));
}

TEST(NnTest, TrainEvalDropoutToAndZeroGrad) {
  manual_seed(1);
  auto model = Mlp();
  const Tensor x = randn(Shape({16, 4}), DType::kFloat32, TestDevice());
  model->eval();
  EXPECT_FALSE((*model)[2]->is_training());
  EXPECT_EQ((*model)(x).to_vector<float>(), (*model)(x).to_vector<float>());
  model->train();
  EXPECT_TRUE((*model)[2]->is_training());
  (*model)(x).sum().backward();
  for (const Tensor& p : model->parameters()) EXPECT_TRUE(p.grad().defined());
  model->zero_grad(/*set_to_none=*/false);
  for (const Tensor& p : model->parameters()) {
    for (float g : p.grad().to_vector<float>()) ASSERT_EQ(g, 0.0f);
  }
  model->zero_grad();
  for (const Tensor& p : model->parameters()) EXPECT_FALSE(p.grad().defined());
  // to(dtype): the layers' own references follow.
  model->to(DType::kFloat64);
  auto& first = static_cast<nn::Linear&>(*(*model)[0]);
  EXPECT_EQ(first.weight.dtype(), DType::kFloat64);
  EXPECT_TRUE(first.weight.requires_grad());
  EXPECT_EQ((*model)(x.to(DType::kFloat64)).dtype(), DType::kFloat64);
}

TEST(NnTest, LoadStateDictCopiesAndRefusesMismatches) {
  manual_seed(2);
  auto a = Mlp();
  auto b = Mlp();
  b->load_state_dict(a->state_dict());
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a->parameters()[i].to_vector<float>(), b->parameters()[i].to_vector<float>());
  }
  nn::NamedTensors sd = a->state_dict();
  sd.erase(sd.begin() + 1);
  sd.emplace_back("extra", ones(Shape({1})));
  ExpectThrowWith<InvalidArgument>([&] { b->load_state_dict(sd); },
                                   {"load_state_dict", "Sequential",
                                    "Unexpected key(s) in "
                                    "state_dict: \"extra\"",
                                    "Missing key(s) in state_dict: "
                                    "\"0.bias\""});
  EXPECT_NO_THROW(b->load_state_dict(sd, /*strict=*/false));
  nn::NamedTensors bad = a->state_dict();
  bad[0].second = ones(Shape({2, 2}));
  ExpectThrowWith<InvalidArgument>([&] { b->load_state_dict(bad); },
                                   {"size mismatch for 0.weight", "(2,2)", "(8,4)"});
  ExpectThrowWith<InvalidArgument>([] { nn::Dropout(1.5); }, {"Dropout", "1.5"});
  ExpectThrowWith<InvalidArgument>([] { nn::Linear(-1, 2); },
                                   {"Linear", "non-negative", "-1 and 2"});
  ExpectThrowWith<InvalidArgument>([] { nn::Sequential({nullptr}); },
                                   {"Sequential", "submodule '0' is null"});
  ExpectThrowWith<InvalidArgument>([] { nn::ReLU().to(DType::kInt32); },
                                   {"ReLU", "floating dtype", "int32"});
  ExpectRuntimeWorks();
}

// One scalar parameter p with loss p^2 (gradient 2p): the optimizers' first steps by hand.
Tensor Scalar1(double v) {
  Tensor p = full(Shape({1}), v, DType::kFloat64, TestDevice());
  p.requires_grad_();
  return p;
}

double StepOf(optim::Optimizer& opt, Tensor& p) {
  opt.zero_grad();
  (p * p).sum().backward();
  opt.step();
  return p.to_vector<double>()[0];
}

TEST(OptimTest, SgdMomentumNesterovAndWeightDecayByHand) {
  Tensor p = Scalar1(1.0);
  optim::SGD sgd({p}, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.5));
  // d = 2p + 0.5p = 2.5p; b = d; p -= 0.1 b
  EXPECT_DOUBLE_EQ(StepOf(sgd, p), 1.0 - 0.1 * 2.5);
  const double p1 = 0.75, b1 = 2.5;
  const double b2 = 0.9 * b1 + 2.5 * p1;
  EXPECT_DOUBLE_EQ(StepOf(sgd, p), p1 - 0.1 * b2);
  Tensor q = Scalar1(1.0);
  optim::SGD nesterov({q}, optim::SGDOptions(0.1).momentum(0.5).nesterov(true));
  // d = 2; b = 2; step d + 0.5 b = 3
  EXPECT_DOUBLE_EQ(StepOf(nesterov, q), 1.0 - 0.3);
  ExpectThrowWith<InvalidArgument>([&] { optim::SGD({p}, optim::SGDOptions(0.1).nesterov(true)); },
                                   {"SGD", "Nesterov momentum requires a momentum"});
  ExpectThrowWith<InvalidArgument>([&] { optim::SGD({p}, optim::SGDOptions(-1)); },
                                   {"SGD", "Invalid learning rate"});
  ExpectThrowWith<InvalidArgument>([&] { optim::SGD({p * 2}, optim::SGDOptions(0.1)); },
                                   {"non-leaf"});
  ExpectThrowWith<InvalidArgument>([&] { optim::SGD({}, optim::SGDOptions(0.1)); },
                                   {"empty parameter list"});
  ExpectThrowWith<InvalidArgument>([&] { optim::SGD({Tensor()}, optim::SGDOptions(0.1)); },
                                   {"optimizer: parameter 0 is undefined"});
}

TEST(OptimTest, AdamAndAdamWByHand) {
  const double lr = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  auto adam_step = [&](double p, double g, double* m, double* v, int t) {
    *m = b1 * *m + (1 - b1) * g;
    *v = b2 * *v + (1 - b2) * g * g;
    const double denom = std::sqrt(*v) / std::sqrt(1 - std::pow(b2, t)) + eps;
    return p - lr / (1 - std::pow(b1, t)) * *m / denom;
  };
  Tensor p = Scalar1(1.0);
  optim::Adam adam({p}, optim::AdamOptions(lr).weight_decay(0.1));
  double want = 1.0, m = 0, v = 0;
  for (int t = 1; t <= 3; ++t) {
    want = adam_step(want, 2 * want + 0.1 * want, &m, &v, t);
    EXPECT_NEAR(StepOf(adam, p), want, 1e-14) << "step " << t;
  }
  Tensor q = Scalar1(1.0);
  optim::AdamW adamw({q}, optim::AdamOptions(lr).weight_decay(0.1));
  want = 1.0, m = 0, v = 0;
  for (int t = 1; t <= 3; ++t) {
    const double g = 2 * want;
    want = adam_step(want * (1 - lr * 0.1), g, &m, &v, t);
    EXPECT_NEAR(StepOf(adamw, q), want, 1e-14) << "step " << t;
  }
  ExpectThrowWith<InvalidArgument>([&] { optim::Adam({p}, optim::AdamOptions().betas(0.9, 1.0)); },
                                   {"Adam", "Invalid beta parameter at index 1"});
}

}  // namespace
}  // namespace ofl::testing
