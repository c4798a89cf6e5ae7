// Trains a 2-hidden-layer MLP (2-64-64-3, ReLU) with Adam on a deterministic synthetic spiral of 3
// classes (300 points per class: radius r from 0 to 1, angle 4 r + 4 k plus noise from ofl::randn
// after manual_seed, so the data and the initial weights are the same on every device),
// full-batch, printing the loss and the training accuracy every 50 epochs. Exits 0 when the final
// training accuracy is at least 97%, else 1.
//
//   ofl_example_mlp [device] [epochs]      (cpu and 400 by default; sim:0, cuda:0, ...)
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

namespace {

constexpr int64_t kPerClass = 300, kClasses = 3, kPoints = kPerClass * kClasses;

// x (kPoints, 2) float32 and y (kPoints) int64 on `device`.
void Spiral(const ofl::Device& device, ofl::Tensor* x, ofl::Tensor* y) {
  const ofl::Tensor r = ofl::linspace(0, 1, kPerClass, ofl::DType::kFloat32, device)
                            .unsqueeze(0)
                            .expand({kClasses, kPerClass});
  const ofl::Tensor k = ofl::arange(kClasses, std::nullopt, device).unsqueeze(1);
  const ofl::Tensor t =
      r * 4.0 + k * 4.0 +
      ofl::randn(ofl::Shape({kClasses, kPerClass}), ofl::DType::kFloat32, device) * 0.2;
  *x = ofl::stack({r * ofl::cos(t), r * ofl::sin(t)}, -1).reshape({kPoints, 2});
  *y = k.expand({kClasses, kPerClass}).reshape({kPoints});
}

double Accuracy(const ofl::Tensor& logits, const ofl::Tensor& y) {
  const ofl::Tensor right = ofl::eq(ofl::argmax(logits, 1), y).sum();
  return static_cast<double>(right.to(ofl::Device("cpu")).to_vector<int64_t>()[0]) / kPoints;
}

}  // namespace

int main(int argc, char** argv) {
  const ofl::Device device(argc > 1 ? argv[1] : "cpu");
  const int epochs = argc > 2 ? std::atoi(argv[2]) : 400;
  ofl::manual_seed(0);
  ofl::Tensor x, y;
  Spiral(device, &x, &y);

  auto model =
      std::make_shared<ofl::nn::Sequential>(std::initializer_list<std::shared_ptr<ofl::nn::Module>>{
          std::make_shared<ofl::nn::Linear>(2, 64, true, ofl::DType::kFloat32, device),
          std::make_shared<ofl::nn::ReLU>(),
          std::make_shared<ofl::nn::Linear>(64, 64, true, ofl::DType::kFloat32, device),
          std::make_shared<ofl::nn::ReLU>(),
          std::make_shared<ofl::nn::Linear>(64, kClasses, true, ofl::DType::kFloat32, device)});
  ofl::optim::Adam opt(model->parameters(), ofl::optim::AdamOptions(0.01));

  double accuracy = 0;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    opt.zero_grad();
    const ofl::Tensor logits = (*model)(x);
    const ofl::Tensor loss = ofl::cross_entropy(logits, y);
    loss.backward();
    opt.step();
    if (epoch % 50 == 0 || epoch == epochs) {
      accuracy = Accuracy(logits, y);
      std::printf("epoch %4d  loss %.4f  accuracy %.2f%%\n", epoch,
                  loss.to(ofl::Device("cpu")).to_vector<float>()[0], 100 * accuracy);
    }
  }
  model->eval();
  accuracy = Accuracy((*model)(x), y);
  std::printf("final training accuracy %.2f%% on %s\n", 100 * accuracy, device.str().c_str());
  return accuracy >= 0.97 ? 0 : 1;
}
