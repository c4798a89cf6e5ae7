// Fits y = a*x + b to 10,000 noisy points by gradient descent: a and b are 0-dim leaves that
// require grad, broadcast against x; each step computes the mean squared error, runs backward()
// and updates a and b in place under NoGradGuard. Runs 500 steps, printing the loss every 100;
// exits 0 when a and b ended within 1e-3 of the true values, else 1. Nothing waits for the device
// between the prints: each step's forward, backward and update are queued behind the last.
//
//   ofl_example_fit_line [device]      (cpu by default; sim:0, cuda:0, ...)
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

int main(int argc, char** argv) {
  const ofl::Device device(argc > 1 ? argv[1] : "cpu");
  constexpr int kPoints = 10000;
  constexpr double kTrueA = 2.5, kTrueB = -0.75;

  std::mt19937 rng(42);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 0.01f);
  std::vector<float> xs(kPoints), ys(kPoints);
  for (int i = 0; i < kPoints; ++i) {
    xs[i] = uniform(rng);
    ys[i] = static_cast<float>(kTrueA * xs[i] + kTrueB) + noise(rng);
  }
  const ofl::Tensor x = ofl::tensor(xs, ofl::Shape({kPoints}), device);
  const ofl::Tensor y = ofl::tensor(ys, ofl::Shape({kPoints}), device);

  ofl::Tensor a = ofl::zeros(ofl::Shape(std::vector<int64_t>{}), ofl::DType::kFloat32, device);
  ofl::Tensor b = ofl::zeros(ofl::Shape(std::vector<int64_t>{}), ofl::DType::kFloat32, device);
  a.requires_grad_();
  b.requires_grad_();
  const double lr = 0.1;
  int reached = 0;  // the first printed step at which a and b were within 1e-3
  for (int step = 1; step <= 500; ++step) {
    const ofl::Tensor err = a * x + b - y;  // a and b broadcast against x
    const ofl::Tensor loss = (err * err).sum() / static_cast<double>(kPoints);
    loss.backward();
    {
      ofl::NoGradGuard no_grad;  // the update is not part of the graph
      a.sub_(a.grad() * lr);
      b.sub_(b.grad() * lr);
    }
    a.set_grad(ofl::Tensor());
    b.set_grad(ofl::Tensor());
    if (step % 100 != 0) continue;
    const float got_a = a.to_vector<float>()[0], got_b = b.to_vector<float>()[0];
    std::printf("step %d: loss %.6f a %.5f b %.5f\n", step, loss.to_vector<float>()[0], got_a,
                got_b);
    const bool close = std::fabs(got_a - kTrueA) < 1e-3 && std::fabs(got_b - kTrueB) < 1e-3;
    if (close && reached == 0) reached = step;
    if (!close) reached = 0;
  }
  const float got_a = a.to_vector<float>()[0], got_b = b.to_vector<float>()[0];
  if (reached == 0) {
    std::printf("fit_line on %s: a = %.5f, b = %.5f: not within 1e-3 of %.2f, %.2f\n",
                device.str().c_str(), got_a, got_b, kTrueA, kTrueB);
    return 1;
  }
  std::printf("fit_line on %s: a = %.5f, b = %.5f (true %.2f, %.2f), within 1e-3 by step %d\n",
              device.str().c_str(), got_a, got_b, kTrueA, kTrueB, reached);
  return 0;
}
