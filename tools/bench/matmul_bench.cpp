// ofl_bench_matmul: the float32 matrix products on the CPU. Each case multiplies two n x n
// matrices (and a small linear layer's x @ W^T + b, where per-op overhead counts) against
// baselines in the same binary: the bare cblas_sgemm the kernel calls (what the runtime adds on
// top of OpenBLAS), and, with libtorch, at::mm / at::linear at libtorch's default thread count.
// ns_per_op is wall time per product; oneflow_lite issues kOps products, then waits once.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

#ifdef OFL_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#endif

namespace {

using ofl_bench::LoopClock;
using ofl_bench::ReportNsPerOp;

int64_t OpsFor(int64_t n) { return n >= 512 ? 1 : n >= 128 ? 10 : 200; }

std::vector<float> Values(int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 17) * 0.125f - 1.0f;
  return v;
}

void OflMm(benchmark::State& state) {
  const int64_t n = state.range(0), ops = OpsFor(n);
  const ofl::Tensor a = ofl::tensor<float>(Values(n * n), ofl::Shape{n, n});
  const ofl::Tensor b = ofl::tensor<float>(Values(n * n), ofl::Shape{n, n});
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < ops; ++i) {
      ofl::Tensor c = ofl::mm(a, b);
      benchmark::DoNotOptimize(c);
    }
    ofl::sync();
  }
  ReportNsPerOp(state, clock, ops);
}

void CblasMm(benchmark::State& state) {
  const int64_t n = state.range(0), ops = OpsFor(n);
  const std::vector<float> a = Values(n * n), b = Values(n * n);
  std::vector<float> c(static_cast<size_t>(n * n));
  const int ni = static_cast<int>(n);
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < ops; ++i) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni,
                  b.data(), ni, 0.0f, c.data(), ni);
      benchmark::DoNotOptimize(c.data());
    }
  }
  ReportNsPerOp(state, clock, ops);
}

// x (32 x 64) @ W^T (64 x 64) + b: a small layer, the weight transposed in place.
constexpr int64_t kBatch = 32, kIn = 64, kOut = 64, kLinearOps = 1000;

void OflLinear(benchmark::State& state) {
  const ofl::Tensor x = ofl::tensor<float>(Values(kBatch * kIn), ofl::Shape{kBatch, kIn});
  const ofl::Tensor w = ofl::tensor<float>(Values(kOut * kIn), ofl::Shape{kOut, kIn});
  const ofl::Tensor b = ofl::tensor<float>(Values(kOut), ofl::Shape{kOut});
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kLinearOps; ++i) {
      ofl::Tensor y = ofl::linear(x, w, b);
      benchmark::DoNotOptimize(y);
    }
    ofl::sync();
  }
  ReportNsPerOp(state, clock, kLinearOps);
}

void CblasLinear(benchmark::State& state) {
  const std::vector<float> x = Values(kBatch * kIn), w = Values(kOut * kIn), b = Values(kOut);
  std::vector<float> y(static_cast<size_t>(kBatch * kOut));
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kLinearOps; ++i) {
      for (int64_t r = 0; r < kBatch; ++r) {
        for (int64_t j = 0; j < kOut; ++j) y[static_cast<size_t>(r * kOut + j)] = b[j];
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, kBatch, kOut, kIn, 1.0f, x.data(), kIn,
                  w.data(), kIn, 1.0f, y.data(), kOut);
      benchmark::DoNotOptimize(y.data());
    }
  }
  ReportNsPerOp(state, clock, kLinearOps);
}

#ifdef OFL_BENCH_WITH_TORCH
template <bool kInference>
void TorchMm(benchmark::State& state) {
  const int64_t n = state.range(0), ops = OpsFor(n);
  std::optional<c10::InferenceMode> guard;
  if (kInference) guard.emplace();
  const at::Tensor a = at::rand({n, n}), b = at::rand({n, n});
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < ops; ++i) {
      at::Tensor c = at::mm(a, b);
      benchmark::DoNotOptimize(c);
    }
  }
  ReportNsPerOp(state, clock, ops);
}

template <bool kInference>
void TorchLinear(benchmark::State& state) {
  std::optional<c10::InferenceMode> guard;
  if (kInference) guard.emplace();
  const at::Tensor x = at::rand({kBatch, kIn}), w = at::rand({kOut, kIn}), b = at::rand({kOut});
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kLinearOps; ++i) {
      at::Tensor y = at::linear(x, w, b);
      benchmark::DoNotOptimize(y);
    }
  }
  ReportNsPerOp(state, clock, kLinearOps);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  for (int64_t n : {64, 256, 1024}) {
    const std::string c = "mm_" + std::to_string(n);
    ofl_bench::Register(c + "/ofl", OflMm)->Arg(n);
    ofl_bench::Register(c + "/cblas", CblasMm)->Arg(n);
#ifdef OFL_BENCH_WITH_TORCH
    ofl_bench::Register(c + "/torch", TorchMm<false>)->Arg(n);
    ofl_bench::Register(c + "/torch_inference", TorchMm<true>)->Arg(n);
#endif
  }
  ofl_bench::Register("linear_32x64x64/ofl", OflLinear);
  ofl_bench::Register("linear_32x64x64/cblas", CblasLinear);
#ifdef OFL_BENCH_WITH_TORCH
  ofl_bench::Register("linear_32x64x64/torch", TorchLinear<false>);
  ofl_bench::Register("linear_32x64x64/torch_inference", TorchLinear<true>);
#endif
  return ofl_bench::RunMain(argc, argv,
                            "matmul: ns_per_op is wall time per float32 product; cblas is the bare "
                            "cblas_sgemm the CPU kernel calls");
}
