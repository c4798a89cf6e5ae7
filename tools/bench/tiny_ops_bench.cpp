// ofl_bench_tiny_ops: the per-op overhead of oneflow_lite on tiny tensors, where bookkeeping, not
// copying, is the cost. Throughput cases issue kOpsPerIteration ops back to back and wait once
// (ofl::sync()); the latency case issues one op and reads it back every iteration. The libtorch
// baselines run the same calls on one intra-op thread; libtorch is synchronous, so its ops need no
// final wait. "torch_inference" repeats them under c10::InferenceMode (no autograd bookkeeping),
// the fastest libtorch can be made to go.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

#ifdef OFL_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/generated/variable_factories.h>
#endif

namespace {

using ofl_bench::LoopClock;
using ofl_bench::ReportNsPerOp;

constexpr int64_t kOpsPerIteration = 1000;

constexpr char kCpu[] = "cpu";
constexpr char kSim0[] = "sim:0";

ofl::Tensor OflInput(const char* device = kCpu) {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  ofl::Tensor x = ofl::tensor<float>(data, ofl::Shape{4, 1, 3}, ofl::Device(device));
  ofl::sync();
  return x;
}

// On the simulated accelerator (the "ofl_sim0" cases): what the asynchronous path (completion
// events, polling, cross-stream device waits, staged transfers) costs per op. Run with
// OFL_SIM_MAX_DELAY_US=0 to time the VM rather than the simulator's injected delays.
void OflSimRoundTrip(benchmark::State& state) {
  const ofl::Tensor x = OflInput(kSim0);
  LoopClock clock;
  for (auto _ : state) {
    std::vector<float> v = x.expand({4, 2, 3}).contiguous().to_vector<float>();
    benchmark::DoNotOptimize(v);
  }
  ReportNsPerOp(state, clock, 1);
}

template <const char* kDevice>
void OflExpandContiguous(benchmark::State& state) {
  const ofl::Tensor x = OflInput(kDevice);
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) {
      ofl::Tensor y = x.expand({4, 2, 3}).contiguous();
      benchmark::DoNotOptimize(y);
    }
    ofl::sync();
  }
  ReportNsPerOp(state, clock, kOpsPerIteration);
}

// The same loop with VM tracing on (every instruction and pool event recorded): what recording
// costs. With it off, the recording paths are skipped by one branch per instruction.
void OflExpandContiguousTraced(benchmark::State& state) {
  const ofl::Tensor x = OflInput();
  ofl::trace::start();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) {
      ofl::Tensor y = x.expand({4, 2, 3}).contiguous();
      benchmark::DoNotOptimize(y);
    }
    ofl::sync();
  }
  ReportNsPerOp(state, clock, kOpsPerIteration);
  ofl::trace::stop("/dev/null");
}

template <const char* kDevice>
void OflRepeat(benchmark::State& state) {
  const ofl::Tensor x = OflInput(kDevice);
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) {
      ofl::Tensor y = x.repeat({2, 2, 1});
      benchmark::DoNotOptimize(y);
    }
    ofl::sync();
  }
  ReportNsPerOp(state, clock, kOpsPerIteration);
}

void OflEmpty(benchmark::State& state) {
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) {
      ofl::Tensor y = ofl::empty(ofl::Shape{4, 1, 3});
      benchmark::DoNotOptimize(y);
    }
    ofl::sync();
  }
  ReportNsPerOp(state, clock, kOpsPerIteration);
}

void OflRoundTrip(benchmark::State& state) {
  const ofl::Tensor x = OflInput();
  LoopClock clock;
  for (auto _ : state) {
    std::vector<float> v = x.expand({4, 2, 3}).contiguous().to_vector<float>();
    benchmark::DoNotOptimize(v.data());
  }
  ReportNsPerOp(state, clock, 1);
}

#ifdef OFL_BENCH_WITH_TORCH
at::Tensor TorchInput() { return at::arange(12, at::kFloat).reshape({4, 1, 3}); }

// `inference` wraps the whole run (input included) in c10::InferenceMode.
template <bool kInference>
void TorchExpandContiguous(benchmark::State& state) {
  ofl_bench::SetTorchThreads(1);
  c10::optional<c10::InferenceMode> guard;
  if (kInference) guard.emplace();
  const at::Tensor x = TorchInput();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) {
      at::Tensor y = x.expand({4, 2, 3}).contiguous();
      benchmark::DoNotOptimize(y);
    }
  }
  ReportNsPerOp(state, clock, kOpsPerIteration);
}

template <bool kInference>
void TorchRepeat(benchmark::State& state) {
  ofl_bench::SetTorchThreads(1);
  c10::optional<c10::InferenceMode> guard;
  if (kInference) guard.emplace();
  const at::Tensor x = TorchInput();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) {
      at::Tensor y = x.repeat({2, 2, 1});
      benchmark::DoNotOptimize(y);
    }
  }
  ReportNsPerOp(state, clock, kOpsPerIteration);
}

template <bool kInference>
void TorchEmpty(benchmark::State& state) {
  ofl_bench::SetTorchThreads(1);
  c10::optional<c10::InferenceMode> guard;
  if (kInference) guard.emplace();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kOpsPerIteration; ++i) {
      at::Tensor y = torch::empty({4, 1, 3});
      benchmark::DoNotOptimize(y);
    }
  }
  ReportNsPerOp(state, clock, kOpsPerIteration);
}

template <bool kInference>
void TorchRoundTrip(benchmark::State& state) {
  ofl_bench::SetTorchThreads(1);
  c10::optional<c10::InferenceMode> guard;
  if (kInference) guard.emplace();
  const at::Tensor x = TorchInput();
  LoopClock clock;
  for (auto _ : state) {
    at::Tensor y = x.expand({4, 2, 3}).contiguous();
    const float* p = y.data_ptr<float>();
    std::vector<float> v(p, p + y.numel());
    benchmark::DoNotOptimize(v.data());
  }
  ReportNsPerOp(state, clock, 1);
}
#endif

// Checks once, before timing, that the ofl calls compute what the benchmarks claim they do.
bool Verify() {
  const ofl::Tensor x = OflInput();  // x[i][0][k] = 3i + k
  std::vector<float> expanded, repeated;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 3; ++k) expanded.push_back(static_cast<float>(3 * i + k));
    }
  }
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 2; ++j) {
        for (int k = 0; k < 3; ++k) repeated.push_back(static_cast<float>(3 * i + k));
      }
    }
  }
  const bool ok = x.expand({4, 2, 3}).contiguous().to_vector<float>() == expanded &&
                  x.repeat({2, 2, 1}).to_vector<float>() == repeated &&
                  ofl::empty(ofl::Shape{4, 1, 3}).shape() == ofl::Shape({4, 1, 3});
  if (!ok) std::fprintf(stderr, "ofl_bench_tiny_ops: an ofl op produced a wrong result\n");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (!Verify()) return 1;
  ofl_bench::Register("tiny_expand_contiguous/ofl", OflExpandContiguous<kCpu>);
  ofl_bench::Register("tiny_expand_contiguous/ofl_tracing_on", OflExpandContiguousTraced);
  ofl_bench::Register("tiny_repeat/ofl", OflRepeat<kCpu>);
  ofl_bench::Register("tiny_empty/ofl", OflEmpty);
  ofl_bench::Register("tiny_roundtrip/ofl", OflRoundTrip);
  ofl_bench::Register("tiny_expand_contiguous/ofl_sim0", OflExpandContiguous<kSim0>);
  ofl_bench::Register("tiny_repeat/ofl_sim0", OflRepeat<kSim0>);
  ofl_bench::Register("tiny_roundtrip/ofl_sim0", OflSimRoundTrip);
#ifdef OFL_BENCH_WITH_TORCH
  ofl_bench::Register("tiny_expand_contiguous/torch/threads:1", TorchExpandContiguous<false>);
  ofl_bench::Register("tiny_expand_contiguous/torch_inference/threads:1",
                      TorchExpandContiguous<true>);
  ofl_bench::Register("tiny_repeat/torch/threads:1", TorchRepeat<false>);
  ofl_bench::Register("tiny_repeat/torch_inference/threads:1", TorchRepeat<true>);
  ofl_bench::Register("tiny_empty/torch/threads:1", TorchEmpty<false>);
  ofl_bench::Register("tiny_empty/torch_inference/threads:1", TorchEmpty<true>);
  ofl_bench::Register("tiny_roundtrip/torch/threads:1", TorchRoundTrip<false>);
  ofl_bench::Register("tiny_roundtrip/torch_inference/threads:1", TorchRoundTrip<true>);
#endif
  return ofl_bench::RunMain(
      argc, argv,
      "tiny ops: ns_per_op is wall time per op; ofl throughput cases issue 1000 ops then one "
      "ofl::sync(); roundtrip = one op + to_vector per iteration");
}
