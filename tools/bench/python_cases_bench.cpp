// ofl_bench_python_cases: the C++ calls that the Python benchmark's cases make
// (tools/bench/python_bench.py), timed the same way: 1000 calls per iteration, then one
// ofl::sync(). python_bench.py runs this binary and its own Python loops in the same run, and
// reports the Python layer's cost per call as the difference.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

namespace {

using ofl_bench::LoopClock;
using ofl_bench::ReportNsPerOp;

constexpr int64_t kCalls = 1000;

ofl::Tensor Input() {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  ofl::Tensor x = ofl::tensor<float>(data, ofl::Shape{4, 1, 3});
  ofl::sync();
  return x;
}

template <class Fn>
void Loop(benchmark::State& state, Fn fn) {
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kCalls; ++i) fn();
    ofl::sync();
  }
  ReportNsPerOp(state, clock, kCalls);
}

void ExpandContiguous(benchmark::State& state) {
  const ofl::Tensor x = Input();
  Loop(state, [&] { benchmark::DoNotOptimize(x.expand({2, 4, 5, 3}).contiguous()); });
}

void Repeat(benchmark::State& state) {
  const ofl::Tensor x = Input();
  Loop(state, [&] { benchmark::DoNotOptimize(x.repeat({2, 1, 2, 1})); });
}

void Empty(benchmark::State& state) {
  ofl::sync();
  Loop(state, [&] { benchmark::DoNotOptimize(ofl::empty(ofl::Shape{4, 3})); });
}

void AddSumBackward(benchmark::State& state) {
  ofl::Tensor a = Input().requires_grad_();
  ofl::Tensor b = Input().requires_grad_();
  Loop(state, [&] { (a + b).sum().backward(); });
}

}  // namespace

int main(int argc, char** argv) {
  ofl_bench::Register("py_expand_contiguous/cpp", ExpandContiguous);
  ofl_bench::Register("py_repeat/cpp", Repeat);
  ofl_bench::Register("py_empty/cpp", Empty);
  ofl_bench::Register("py_add_sum_backward/cpp", AddSumBackward);
  return ofl_bench::RunMain(argc, argv,
                            "the Python benchmark's calls from C++: ns_per_op per call, 1000 "
                            "calls then one ofl::sync()");
}
