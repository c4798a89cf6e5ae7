// ofl_bench_backward: the backward of large expands and repeats (the "reduce_sum_to" kernel), in
// GB/s of dy bytes read. Each case is measured against, in the same run:
//   read                   a one-thread streaming read of dy's bytes (eight float or double
//                          lanes summed, the least work that reads every byte): the memory
//                          system's speed for reading that many bytes;
//   memcpy                 dy's bytes copied into memory touched beforehand, one thread;
//   torch_sum              libtorch's `sum` over the same dims (keepdim; for repeat, over the
//                          tile dims of dy viewed as (r0, s0, r1, s1)), at 1 thread and at as many
//                          threads as oneflow_lite's kernels use, labelled threads:N.
// "ofl/threads:1" caps oneTBB at one thread with tbb::global_control. Before anything is timed,
// every implementation's result is checked against a long-double host reference.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

#ifdef OFL_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#endif

namespace {

using ofl_bench::LoopClock;
using ofl_bench::ReportGBps;

enum class OpKind { kExpand, kRepeat };

struct Case {
  std::string name;
  OpKind kind;
  bool f64;
  std::vector<int64_t> dy;       // dy's shape
  std::vector<int64_t> input;    // the forward input's shape (the result's)
  std::vector<int64_t> repeats;  // repeat only
};

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t DyBytes(const Case& c) { return Numel(c.dy) * (c.f64 ? 8 : 4); }

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"expand_rows_bwd", OpKind::kExpand, false, {8192, 4096}, {1, 4096}, {}},
      {"expand_cols_bwd", OpKind::kExpand, false, {4096, 8192}, {4096, 1}, {}},
      {"repeat_2d_bwd", OpKind::kRepeat, false, {8192, 2048}, {1024, 1024}, {8, 2}},
      {"expand_rows_bwd_f64", OpKind::kExpand, true, {8192, 2048}, {1, 2048}, {}},
      {"expand_cols_bwd_f64", OpKind::kExpand, true, {4096, 4096}, {4096, 1}, {}},
  };
  return cases;
}

// dy's values: not dyadic, so every implementation rounds (i * 0.618... mod 1, minus a half).
double DyValue(int64_t i) {
  const double v = static_cast<double>(i) * 0.6180339887498949;
  return v - std::floor(v) - 0.5;
}

template <class T>
std::vector<T> DyData(const Case& c) {
  std::vector<T> data(static_cast<size_t>(Numel(c.dy)));
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<T>(DyValue(static_cast<int64_t>(i)));
  return data;
}

ofl::Tensor OflDy(const Case& c) {
  if (c.f64) return ofl::tensor<double>(DyData<double>(c), ofl::Shape(c.dy));
  return ofl::tensor<float>(DyData<float>(c), ofl::Shape(c.dy));
}

ofl::Tensor OflBackward(const Case& c, const ofl::Tensor& dy) {
  return c.kind == OpKind::kExpand ? ofl::expand_backward(dy, ofl::Shape(c.input))
                                   : ofl::repeat_backward(dy, ofl::Shape(c.input), c.repeats);
}

// Page-aligned memory, written once so that every page is mapped before timing starts.
struct TouchedBuffer {
  explicit TouchedBuffer(size_t bytes) : bytes(bytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes) != 0) std::abort();
    data.reset(static_cast<char*>(p));
    std::memset(p, 1, bytes);
  }
  struct Free {
    void operator()(char* p) const { std::free(p); }
  };
  size_t bytes;
  std::unique_ptr<char, Free> data;
};

void Ofl(benchmark::State& state, const Case& c, int threads) {
  std::optional<tbb::global_control> cap;
  if (threads > 0) cap.emplace(tbb::global_control::max_allowed_parallelism, threads);
  const ofl::Tensor dy = OflDy(c);
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    ofl::Tensor dx = OflBackward(c, dy);
    ofl::sync();
    benchmark::DoNotOptimize(dx);
  }
  ReportGBps(state, clock, DyBytes(c));
}

template <class T>
T StreamSum(const T* p, size_t n) {
  T lane[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lane[l] += p[i + l];
  }
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

void Read(benchmark::State& state, const Case& c) {
  TouchedBuffer src(static_cast<size_t>(DyBytes(c)));
  LoopClock clock;
  for (auto _ : state) {
    if (c.f64) {
      benchmark::DoNotOptimize(
          StreamSum(reinterpret_cast<const double*>(src.data.get()), src.bytes / 8));
    } else {
      benchmark::DoNotOptimize(
          StreamSum(reinterpret_cast<const float*>(src.data.get()), src.bytes / 4));
    }
  }
  ReportGBps(state, clock, DyBytes(c));
}

void Memcpy(benchmark::State& state, const Case& c) {
  TouchedBuffer src(static_cast<size_t>(DyBytes(c)));
  TouchedBuffer dst(static_cast<size_t>(DyBytes(c)));
  LoopClock clock;
  for (auto _ : state) {
    std::memcpy(dst.data.get(), src.data.get(), dst.bytes);
    benchmark::ClobberMemory();
  }
  ReportGBps(state, clock, DyBytes(c));
}

// Result element of dy element idx: idx with every summed coordinate reduced modulo the input's
// size there (dims right-aligned), which covers both expand and repeat.
std::vector<long double> Reference(const Case& c) {
  const size_t nd = c.dy.size();
  std::vector<int64_t> in_size(nd, 1), idx(nd, 0);
  const size_t lead = nd - c.input.size();
  for (size_t i = 0; i < c.input.size(); ++i) in_size[lead + i] = c.input[i];
  std::vector<long double> out(static_cast<size_t>(Numel(c.input)), 0.0L);
  const int64_t n = Numel(c.dy);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < nd; ++d) o = o * in_size[d] + idx[d] % in_size[d];
    const long double v = c.f64 ? static_cast<long double>(static_cast<double>(DyValue(i)))
                                : static_cast<long double>(static_cast<float>(DyValue(i)));
    out[static_cast<size_t>(o)] += v;
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < c.dy[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

// Within 1e-6 of the sum of |x| per element (the values are below 0.5 in magnitude): a looser
// bound than any of the implementations needs, tight enough to catch a wrong index.
bool Close(const char* what, const Case& c, const std::vector<double>& got,
           const std::vector<long double>& want) {
  const double terms = static_cast<double>(Numel(c.dy) / Numel(c.input));
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    ok = std::fabs(static_cast<long double>(got[i]) - want[i]) <= 1e-6 * 0.5 * terms;
  }
  if (!ok) std::fprintf(stderr, "%s/%s produced a wrong result\n", c.name.c_str(), what);
  return ok;
}

std::vector<double> OflResult(const Case& c, const ofl::Tensor& t) {
  if (c.f64) return t.to_vector<double>();
  const std::vector<float> f = t.to_vector<float>();
  return std::vector<double>(f.begin(), f.end());
}

#ifdef OFL_BENCH_WITH_TORCH
at::Tensor TorchDy(const Case& c) {
  at::Tensor t = at::empty(c.dy, c.f64 ? at::kDouble : at::kFloat);
  if (c.f64) {
    const std::vector<double> d = DyData<double>(c);
    std::memcpy(t.data_ptr(), d.data(), d.size() * sizeof(double));
  } else {
    const std::vector<float> d = DyData<float>(c);
    std::memcpy(t.data_ptr(), d.data(), d.size() * sizeof(float));
  }
  return t;
}

// at::sum over the summed dims; for repeat, what libtorch's own repeat backward does: dy viewed
// as (r0, s0, r1, s1, ...) summed over the r's.
at::Tensor TorchBackward(const Case& c, const at::Tensor& dy) {
  if (c.kind == OpKind::kExpand) {
    std::vector<int64_t> dims;
    for (size_t i = 0; i < c.dy.size(); ++i) {
      if (c.input[i] == 1 && c.dy[i] != 1) dims.push_back(static_cast<int64_t>(i));
    }
    return dy.sum(dims, /*keepdim=*/true);
  }
  std::vector<int64_t> unfolded, dims;
  for (size_t i = 0; i < c.repeats.size(); ++i) {
    dims.push_back(static_cast<int64_t>(unfolded.size()));
    unfolded.insert(unfolded.end(), {c.repeats[i], c.input[i]});
  }
  return dy.view(unfolded).sum(dims);
}

void TorchSum(benchmark::State& state, const Case& c, int threads) {
  ofl_bench::SetTorchThreads(threads);
  const at::Tensor dy = TorchDy(c);
  LoopClock clock;
  for (auto _ : state) {
    at::Tensor dx = TorchBackward(c, dy);
    benchmark::DoNotOptimize(dx);
  }
  ReportGBps(state, clock, DyBytes(c));
}

std::vector<double> ToVector(const at::Tensor& t) {
  const at::Tensor d = t.to(at::kDouble).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}
#endif

// Checks once, before timing, that every implementation of every case sums the right values.
bool VerifyAll() {
  bool ok = true;
  for (const Case& c : Cases()) {
    const std::vector<long double> want = Reference(c);
    ok &= Close("ofl", c, OflResult(c, OflBackward(c, OflDy(c))), want);
#ifdef OFL_BENCH_WITH_TORCH
    ok &= Close("torch_sum", c, ToVector(TorchBackward(c, TorchDy(c))), want);
#endif
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (!VerifyAll()) return 1;
  const int cpus = ofl_bench::NumCpus();
  std::vector<int> thread_counts = {1};
  if (cpus > 1) thread_counts.push_back(cpus);
  auto reg = [](const std::string& name, std::function<void(benchmark::State&)> fn) {
    ofl_bench::Register(name, std::move(fn))->Unit(benchmark::kMillisecond);
  };
  for (const Case& c : Cases()) {
    reg(c.name + "/ofl", [&c](benchmark::State& s) { Ofl(s, c, 0); });
    if (cpus > 1) reg(c.name + "/ofl/threads:1", [&c](benchmark::State& s) { Ofl(s, c, 1); });
    reg(c.name + "/read", [&c](benchmark::State& s) { Read(s, c); });
    reg(c.name + "/memcpy", [&c](benchmark::State& s) { Memcpy(s, c); });
#ifdef OFL_BENCH_WITH_TORCH
    for (int t : thread_counts) {
      const std::string suffix = "/threads:" + std::to_string(t);
      reg(c.name + "/torch_sum" + suffix, [&c, t](benchmark::State& s) { TorchSum(s, c, t); });
    }
#endif
  }
  (void)thread_counts;
  return ofl_bench::RunMain(argc, argv,
                            "backward (reduce_sum_to): GB/s counts dy bytes read; read/memcpy run "
                            "on one thread over memory touched beforehand");
}
