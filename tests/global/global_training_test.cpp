// Training on global tensors: a 4-8-3 MLP trained with cross-entropy and Adam (and SGD with
// momentum) data parallel (parameters broadcast, batches split: the weight gradients are reduced
// by the SBP rules alone) and tensor parallel (Megatron's column-split first Linear and row-split
// second) gives the per-step losses and final parameters of the same training in one process, in
// float64 within 1e-6 relative and in float32 within 1e-4; Module::to_global broadcasts the first
// rank's parameters.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "global_test_util.h"
#include "oneflow_lite/oneflow_lite.h"

namespace ofl::testing {
namespace {

std::shared_ptr<nn::Sequential> Mlp(DType dtype) {
  manual_seed(7);
  auto m = std::make_shared<nn::Sequential>(std::initializer_list<std::shared_ptr<nn::Module>>{
      std::make_shared<nn::Linear>(4, 8), std::make_shared<nn::ReLU>(),
      std::make_shared<nn::Linear>(8, 3)});
  m->to(dtype);
  return m;
}

// A fixed batch of 10 samples (10 over 4 ranks splits 3,3,2,2) and its classes.
Tensor Inputs(DType dtype) {
  std::vector<double> v(40);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.7 * static_cast<double>(i));
  return tensor<double>(v, Shape({10, 4}), Device("cpu")).to(dtype);
}
Tensor Targets() {
  std::vector<int64_t> t(10);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int64_t>((i * 7) % 3);
  return tensor<int64_t>(t, Shape({10}), Device("cpu"));
}

enum class Parallel { kData, kTensor };

struct Run {
  std::vector<double> losses;
  std::vector<std::vector<double>> params;
};

Run Train(DType dtype, bool global, Parallel parallel, bool adam) {
  auto model = Mlp(dtype);
  Tensor x = Inputs(dtype), t = Targets();
  if (global) {
    const Placement p = World();
    if (parallel == Parallel::kData) {
      model->to_global(p, Sbp::broadcast());
      x = x.to_global(p, Sbp::broadcast()).to_global(p, Sbp::split(0));
      t = t.to_global(p, Sbp::broadcast()).to_global(p, Sbp::split(0));
    } else {
      // Column-parallel first layer (weight and bias split on the outputs), row-parallel second
      // (weight split on its inputs, bias broadcast).
      model->to_global(p, [](const std::string& name, const Tensor&) {
        if (name == "0.weight" || name == "0.bias") return Sbp::split(0);
        if (name == "2.weight") return Sbp::split(1);
        return Sbp::broadcast();
      });
      x = x.to_global(p, Sbp::broadcast());
      t = t.to_global(p, Sbp::broadcast());
    }
  }
  std::unique_ptr<optim::Optimizer> opt;
  if (adam) {
    opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(0.05));
  } else {
    opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
  }
  Run run;
  for (int step = 0; step < 8; ++step) {
    opt->zero_grad();
    const Tensor loss = cross_entropy(model->forward(x), t);
    loss.backward();
    opt->step();
    run.losses.push_back(loss.to(DType::kFloat64).to_vector<double>()[0]);
  }
  for (const Tensor& p : model->parameters()) {
    EXPECT_EQ(p.is_global(), global);
    run.params.push_back(p.to(DType::kFloat64).to_vector<double>());
  }
  return run;
}

void ExpectSameTraining(DType dtype, Parallel parallel, bool adam, double tol) {
  const Run one = Train(dtype, /*global=*/false, parallel, adam);
  const Run many = Train(dtype, /*global=*/true, parallel, adam);
  ASSERT_EQ(one.losses.size(), many.losses.size());
  for (size_t i = 0; i < one.losses.size(); ++i) {
    EXPECT_NEAR(many.losses[i], one.losses[i], tol * std::fabs(one.losses[i])) << "step " << i;
  }
  EXPECT_LT(one.losses.back(), one.losses.front());  // it trains
  ASSERT_EQ(one.params.size(), many.params.size());
  for (size_t k = 0; k < one.params.size(); ++k) {
    ASSERT_EQ(one.params[k].size(), many.params[k].size());
    for (size_t i = 0; i < one.params[k].size(); ++i) {
      EXPECT_NEAR(many.params[k][i], one.params[k][i], tol * (1 + std::fabs(one.params[k][i])))
          << "parameter " << k << " element " << i;
    }
  }
}

TEST(GlobalTrainingTest, DataParallelEqualsOneProcess) {
  ExpectSameTraining(DType::kFloat64, Parallel::kData, /*adam=*/true, 1e-6);
  ExpectSameTraining(DType::kFloat64, Parallel::kData, /*adam=*/false, 1e-6);
  ExpectSameTraining(DType::kFloat32, Parallel::kData, /*adam=*/true, 1e-4);
}

TEST(GlobalTrainingTest, TensorParallelEqualsOneProcess) {
  ExpectSameTraining(DType::kFloat64, Parallel::kTensor, /*adam=*/true, 1e-6);
  ExpectSameTraining(DType::kFloat32, Parallel::kTensor, /*adam=*/false, 1e-4);
}

TEST(GlobalTrainingTest, ToGlobalTakesTheFirstRanksParameters) {
  // Every rank initialises from its own seed: the module's values are rank 0's on every rank.
  manual_seed(100 + static_cast<uint64_t>(rank()));
  nn::Linear layer(3, 2);
  manual_seed(100);
  nn::Linear first(3, 2);
  layer.to_global(World(), Sbp::split(0));
  EXPECT_TRUE(layer.weight.is_global());
  EXPECT_TRUE(layer.weight.requires_grad());
  EXPECT_TRUE(layer.weight.is_leaf());
  EXPECT_EQ(layer.weight.sbp(), Sbp::split(0));
  EXPECT_EQ(layer.weight.to_vector<float>(), first.weight.to_vector<float>());
  EXPECT_EQ(layer.bias.to_vector<float>(), first.bias.to_vector<float>());
}

}  // namespace
}  // namespace ofl::testing
