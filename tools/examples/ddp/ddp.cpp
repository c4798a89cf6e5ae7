// Data- and tensor-parallel training on global tensors (docs/global-tensors.md, "Training"): a
// 2-64-64-3 MLP (ReLU) trained with Adam on a synthetic 3-class spiral for 50 full-batch steps,
// once on every rank alone (the one-process run) and once over all ranks:
//
//   data    the parameters broadcast, the batch split on dim 0: each rank computes its rows, and
//           the weight gradients (partial sums) are all-reduced by the SBP rules as they land
//   tensor  Megatron's split: the first and middle Linear's weights and biases split on their
//           outputs / inputs in turn (column-parallel, then row-parallel), the batch broadcast
//
// Prints both runs' losses every 10 steps and the largest relative difference of the per-step
// losses; exits 0 when it is within 1e-6 (float64) or 1e-4 (float32), else 1.
//
//   mpiexec -n 4 ofl_example_ddp [data|tensor] [float32|float64]      (data float32 by default)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

namespace {

constexpr int64_t kPerClass = 100, kClasses = 3, kPoints = kPerClass * kClasses;
constexpr int kSteps = 50;

// x (kPoints, 2) and y (kPoints) int64, the same on every rank (the seed decides the noise).
void Spiral(ofl::DType dtype, ofl::Tensor* x, ofl::Tensor* y) {
  ofl::manual_seed(0);
  const ofl::Device cpu("cpu");
  const ofl::Tensor r = ofl::linspace(0, 1, kPerClass, ofl::DType::kFloat32, cpu)
                            .unsqueeze(0)
                            .expand({kClasses, kPerClass});
  const ofl::Tensor k = ofl::arange(kClasses, std::nullopt, cpu).unsqueeze(1);
  const ofl::Tensor t =
      r * 4.0 + k * 4.0 +
      ofl::randn(ofl::Shape({kClasses, kPerClass}), ofl::DType::kFloat32, cpu) * 0.2;
  *x = ofl::stack({r * ofl::cos(t), r * ofl::sin(t)}, -1).reshape({kPoints, 2}).to(dtype);
  *y = k.expand({kClasses, kPerClass}).reshape({kPoints});
}

std::shared_ptr<ofl::nn::Sequential> Mlp(ofl::DType dtype) {
  ofl::manual_seed(1);
  auto model =
      std::make_shared<ofl::nn::Sequential>(std::initializer_list<std::shared_ptr<ofl::nn::Module>>{
          std::make_shared<ofl::nn::Linear>(2, 64), std::make_shared<ofl::nn::ReLU>(),
          std::make_shared<ofl::nn::Linear>(64, 64), std::make_shared<ofl::nn::ReLU>(),
          std::make_shared<ofl::nn::Linear>(64, kClasses)});
  model->to(dtype);
  return model;
}

// The per-step losses of 50 Adam steps; `parallel` empty: this rank alone.
std::vector<double> Train(ofl::DType dtype, const std::string& parallel) {
  auto model = Mlp(dtype);
  ofl::Tensor x, y;
  Spiral(dtype, &x, &y);
  if (!parallel.empty()) {
    std::vector<int> ranks;
    for (int r = 0; r < ofl::world_size(); ++r) ranks.push_back(r);
    const ofl::Placement p("cpu", ranks);
    const ofl::Sbp batch = parallel == "data" ? ofl::Sbp::split(0) : ofl::Sbp::broadcast();
    if (parallel == "data") {
      model->to_global(p, ofl::Sbp::broadcast());
    } else {
      model->to_global(p, [](const std::string& name, const ofl::Tensor&) {
        if (name == "0.weight" || name == "0.bias") return ofl::Sbp::split(0);  // columns
        if (name == "2.weight") return ofl::Sbp::split(1);                      // rows
        return ofl::Sbp::broadcast();
      });
    }
    // Every rank made the same batch: broadcast it, then lay it out (a split slices locally).
    x = x.to_global(p, ofl::Sbp::broadcast()).to_global(p, batch);
    y = y.to_global(p, ofl::Sbp::broadcast()).to_global(p, batch);
  }
  ofl::optim::Adam opt(model->parameters(), ofl::optim::AdamOptions(0.01));
  std::vector<double> losses;
  for (int step = 0; step < kSteps; ++step) {
    opt.zero_grad();
    const ofl::Tensor loss = ofl::cross_entropy((*model)(x), y);
    loss.backward();
    opt.step();
    losses.push_back(loss.to(ofl::DType::kFloat64).to_vector<double>()[0]);
  }
  return losses;
}

}  // namespace

int main(int argc, char** argv) {
  ofl::init_distributed();
  const std::string parallel = argc > 1 ? argv[1] : "data";
  const std::string dtype_name = argc > 2 ? argv[2] : "float32";
  if ((parallel != "data" && parallel != "tensor") ||
      (dtype_name != "float32" && dtype_name != "float64")) {
    std::fprintf(stderr, "usage: ofl_example_ddp [data|tensor] [float32|float64]\n");
    return 2;
  }
  const ofl::DType dtype = dtype_name == "float64" ? ofl::DType::kFloat64 : ofl::DType::kFloat32;
  const std::vector<double> one = Train(dtype, "");
  const std::vector<double> many = Train(dtype, parallel);
  double worst = 0;
  for (int i = 0; i < kSteps; ++i) {
    worst = std::max(worst, std::fabs(many[i] - one[i]) / std::fabs(one[i]));
    if (ofl::rank() == 0 && (i % 10 == 0 || i == kSteps - 1)) {
      std::printf("step %2d  one process %.8f  %s parallel on %d ranks %.8f\n", i, one[i],
                  parallel.c_str(), ofl::world_size(), many[i]);
    }
  }
  const double tol = dtype == ofl::DType::kFloat64 ? 1e-6 : 1e-4;
  if (ofl::rank() == 0) {
    std::printf("%s parallel, %s, %d ranks: largest relative loss difference %.3g (limit %.0e)\n",
                parallel.c_str(), dtype_name.c_str(), ofl::world_size(), worst, tol);
  }
  return worst <= tol && one.back() < one.front() ? 0 : 1;
}
