// ofl_bench_train_step: one training step (forward, cross-entropy loss, backward, Adam) of the
// MLP 64-128-10 (ReLU) in float32 on the CPU, at batch 32 (where per-op overhead counts) and at
// batch 4096 (where the products do), against libtorch doing the same step with torch::nn and
// torch::optim::Adam in the same binary (OFL_BENCH_WITH_TORCH). ns_per_op is wall time per step;
// oneflow_lite issues kSteps steps, then waits once.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

#ifdef OFL_BENCH_WITH_TORCH
#include <torch/torch.h>
#endif

namespace {

using ofl_bench::LoopClock;
using ofl_bench::ReportNsPerOp;

int64_t StepsFor(int64_t batch) { return batch >= 1024 ? 2 : 50; }

void OflStep(benchmark::State& state) {
  const int64_t batch = state.range(0), steps = StepsFor(batch);
  ofl::manual_seed(0);
  auto model =
      std::make_shared<ofl::nn::Sequential>(std::initializer_list<std::shared_ptr<ofl::nn::Module>>{
          std::make_shared<ofl::nn::Linear>(64, 128), std::make_shared<ofl::nn::ReLU>(),
          std::make_shared<ofl::nn::Linear>(128, 10)});
  ofl::optim::Adam opt(model->parameters(), ofl::optim::AdamOptions(1e-3));
  const ofl::Tensor x = ofl::randn(ofl::Shape({batch, 64}));
  const ofl::Tensor y = ofl::randint(0, 10, ofl::Shape({batch}));
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < steps; ++i) {
      opt.zero_grad();
      const ofl::Tensor loss = ofl::cross_entropy((*model)(x), y);
      loss.backward();
      opt.step();
    }
    ofl::sync();
  }
  ReportNsPerOp(state, clock, steps);
}

#ifdef OFL_BENCH_WITH_TORCH
void TorchStep(benchmark::State& state) {
  const int64_t batch = state.range(0), steps = StepsFor(batch);
  torch::manual_seed(0);
  torch::nn::Sequential model(torch::nn::Linear(64, 128), torch::nn::ReLU(),
                              torch::nn::Linear(128, 10));
  torch::optim::Adam opt(model->parameters(), torch::optim::AdamOptions(1e-3));
  const torch::Tensor x = torch::randn({batch, 64});
  const torch::Tensor y = torch::randint(0, 10, {batch});
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < steps; ++i) {
      opt.zero_grad();
      const torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
      loss.backward();
      opt.step();
    }
  }
  ReportNsPerOp(state, clock, steps);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  for (int64_t batch : {32, 4096}) {
    const std::string c = "mlp_64_128_10_batch" + std::to_string(batch);
    ofl_bench::Register(c + "/ofl", OflStep)->Arg(batch);
#ifdef OFL_BENCH_WITH_TORCH
    ofl_bench::Register(c + "/torch", TorchStep)->Arg(batch);
#endif
  }
  return ofl_bench::RunMain(argc, argv,
                            "train_step: ns_per_op is wall time per training step (forward, "
                            "cross-entropy, backward, Adam) of the MLP 64-128-10 in float32");
}
