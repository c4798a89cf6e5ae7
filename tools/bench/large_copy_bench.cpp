// ofl_bench_large_copy: materialising large expands and repeats, in GB/s of output bytes. Each
// case is measured against, in the same run:
//   memset / memcpy        the same byte count into already-touched memory, one thread: the
//                          memory system's own speed for writing (and reading) that many bytes;
//   torch_op               libtorch's op, a fresh output every call (the C allocator hands big
//                          blocks back to the OS, so each call page-faults its output in again;
//                          the JSON context's "malloc" names the allocator serving the process);
//   torch_into             libtorch's copy kernel into an output allocated and touched once
//                          (`out.copy_(x.expand(...))`; for repeat, the expand-as-strided view
//                          that at::repeat itself copies through);
// libtorch at 1 thread and at as many threads as oneflow_lite's kernels use (oneTBB's default
// arena: every core), labelled threads:N. "ofl/threads:1" caps oneTBB at one thread with
// tbb::global_control, to separate the kernels' speed from their parallelism. Before anything is
// timed, every implementation's output is checked against a host reference.
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
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
  std::vector<int64_t> input;
  std::vector<int64_t> arg;  // expand: the sizes; repeat: the repeats
  std::vector<int64_t> output;
};

using ofl_bench::Numel;

int64_t OutputBytes(const Case& c) { return Numel(c.output) * static_cast<int64_t>(sizeof(float)); }

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"expand_rows", OpKind::kExpand, {1, 4096}, {8192, 4096}, {8192, 4096}},
      {"expand_cols", OpKind::kExpand, {4096, 1}, {4096, 8192}, {4096, 8192}},
      {"repeat_2d", OpKind::kRepeat, {1024, 1024}, {8, 2}, {8192, 2048}},
      {"repeat_4d", OpKind::kRepeat, {16, 1, 1024, 64}, {1, 8, 1, 1}, {16, 8, 1024, 64}},
  };
  return cases;
}

std::vector<float> InputData(const Case& c) {
  std::vector<float> data(static_cast<size_t>(Numel(c.input)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000);
  return data;
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
  const std::vector<float> data = InputData(c);
  const ofl::Tensor x = ofl::tensor<float>(data, ofl::Shape(c.input));
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    ofl::Tensor y = c.kind == OpKind::kExpand ? x.expand(c.arg).contiguous() : x.repeat(c.arg);
    ofl::sync();
    benchmark::DoNotOptimize(y);
  }
  ReportGBps(state, clock, OutputBytes(c));
}

void Memset(benchmark::State& state, const Case& c) {
  TouchedBuffer out(static_cast<size_t>(OutputBytes(c)));
  LoopClock clock;
  int value = 0;
  for (auto _ : state) {
    std::memset(out.data.get(), ++value & 0xff, out.bytes);
    benchmark::ClobberMemory();
  }
  ReportGBps(state, clock, OutputBytes(c));
}

void Memcpy(benchmark::State& state, const Case& c) {
  TouchedBuffer src(static_cast<size_t>(OutputBytes(c)));
  TouchedBuffer dst(static_cast<size_t>(OutputBytes(c)));
  LoopClock clock;
  for (auto _ : state) {
    std::memcpy(dst.data.get(), src.data.get(), dst.bytes);
    benchmark::ClobberMemory();
  }
  ReportGBps(state, clock, OutputBytes(c));
}

// What every implementation must produce: output element idx is input element (idx mod the input
// shape, aligned to the right), which covers both expand and repeat.
std::vector<float> Reference(const Case& c, const std::vector<float>& in) {
  return ofl_bench::TiledReference(in, c.input, c.output);
}

bool Same(const char* what, const Case& c, const std::vector<float>& got,
          const std::vector<float>& want) {
  if (got.size() == want.size() &&
      std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0) {
    return true;
  }
  std::fprintf(stderr, "%s/%s produced a wrong result\n", c.name.c_str(), what);
  return false;
}

#ifdef OFL_BENCH_WITH_TORCH
at::Tensor TorchInput(const Case& c) {
  return at::arange(Numel(c.input), at::kFloat).remainder(1000).reshape(c.input).contiguous();
}

void TorchOp(benchmark::State& state, const Case& c, int threads) {
  ofl_bench::SetTorchThreads(threads);
  const at::Tensor x = TorchInput(c);
  LoopClock clock;
  for (auto _ : state) {
    at::Tensor y = c.kind == OpKind::kExpand ? x.expand(c.arg).contiguous() : x.repeat(c.arg);
    benchmark::DoNotOptimize(y);
  }
  ReportGBps(state, clock, OutputBytes(c));
}

// The destination and source of libtorch's copy kernel for the case. For repeat this is
// at::repeat's own kernel: the output seen as (r0, s0, r1, s1, ...) receives the input seen as
// (1, s0, 1, s1, ...) expanded over the r's.
struct TorchCopy {
  at::Tensor out, dst, src;
};
TorchCopy MakeTorchCopy(const Case& c, const at::Tensor& x) {
  TorchCopy t;
  t.out = at::empty(c.output, at::kFloat);
  t.out.zero_();
  t.dst = t.out;
  if (c.kind == OpKind::kExpand) {
    t.src = x.expand(c.arg);
    return t;
  }
  std::vector<int64_t> unfolded, padded;
  const size_t lead = c.arg.size() - c.input.size();
  for (size_t i = 0; i < c.arg.size(); ++i) {
    const int64_t s = i < lead ? 1 : c.input[i - lead];
    unfolded.insert(unfolded.end(), {c.arg[i], s});
    padded.insert(padded.end(), {1, s});
  }
  t.dst = t.out.view(unfolded);
  t.src = x.reshape(padded).expand(unfolded);
  return t;
}

void TorchInto(benchmark::State& state, const Case& c, int threads) {
  ofl_bench::SetTorchThreads(threads);
  const at::Tensor x = TorchInput(c);
  TorchCopy t = MakeTorchCopy(c, x);
  LoopClock clock;
  for (auto _ : state) {
    t.dst.copy_(t.src);
    benchmark::ClobberMemory();
  }
  ReportGBps(state, clock, OutputBytes(c));
}

std::vector<float> ToVector(const at::Tensor& t) {
  const at::Tensor c = t.contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}
#endif

// Checks once, before timing, that every implementation of every case computes the same bytes.
bool VerifyAll() {
  bool ok = true;
  for (const Case& c : Cases()) {
    const std::vector<float> in = InputData(c);
    const std::vector<float> want = Reference(c, in);
    const ofl::Tensor x = ofl::tensor<float>(in, ofl::Shape(c.input));
    const ofl::Tensor y =
        c.kind == OpKind::kExpand ? x.expand(c.arg).contiguous() : x.repeat(c.arg);
    ok &= Same("ofl", c, y.to_vector<float>(), want);
#ifdef OFL_BENCH_WITH_TORCH
    const at::Tensor tx = TorchInput(c);
    ok &=
        Same("torch_op", c,
             ToVector(c.kind == OpKind::kExpand ? tx.expand(c.arg).contiguous() : tx.repeat(c.arg)),
             want);
    TorchCopy t = MakeTorchCopy(c, tx);
    t.dst.copy_(t.src);
    ok &= Same("torch_into", c, ToVector(t.out), want);
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
    reg(c.name + "/memset", [&c](benchmark::State& s) { Memset(s, c); });
    reg(c.name + "/memcpy", [&c](benchmark::State& s) { Memcpy(s, c); });
#ifdef OFL_BENCH_WITH_TORCH
    for (int t : thread_counts) {
      const std::string suffix = "/threads:" + std::to_string(t);
      reg(c.name + "/torch_op" + suffix, [&c, t](benchmark::State& s) { TorchOp(s, c, t); });
      reg(c.name + "/torch_into" + suffix, [&c, t](benchmark::State& s) { TorchInto(s, c, t); });
    }
#endif
  }
  (void)thread_counts;
  return ofl_bench::RunMain(argc, argv,
                            "large copies: GB/s counts output bytes only; memset/memcpy run on "
                            "one thread into memory touched beforehand");
}
