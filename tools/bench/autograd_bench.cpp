// ofl_bench_autograd: the arithmetic ops and autograd against baselines measured in the same run.
//
//   tiny_graph       forward + backward of (x.expand({2,4,5,3}) * w).sum(), x (4,1,3) and w
//                    (2,4,5,3) float32 leaves that require grad, their grads cleared
//                    (set_grad(Tensor())) before every graph; ns_per_op is the wall time per graph.
//                    "ofl" issues kGraphsPerIteration graphs and then waits once (ofl::sync());
//                    against "torch/threads:1": libtorch's autograd doing the same (grads reset,
//                    .backward()) on one intra-op thread, synchronous. tiny_graph_roundtrip: one
//                    graph per iteration and both grads read back to host vectors, on both sides.
//                    tiny_graph_paired: both, in alternating batches within one loop (the
//                    "speedup" counter), immune to the host's speed drifting between benchmarks.
//   large_add        ofl::add of a contiguous (8192,4096) and a (1,4096) float32 into a fresh
//                    output, in GB/s of output bytes (128 MiB; the op reads as many, so it moves
//                    2 x 128 MiB). Against: "memcpy", 128 MiB copied into memory touched beforehand
//                    on one thread (the same 2 x 128 MiB of traffic, so the same byte count);
//                    "torch_op", at::add into a fresh output; "torch_into", at::add_out into an
//                    output allocated and touched once; libtorch at 1 thread and at as many
//                    threads as oneflow_lite's kernels use (oneTBB's default arena: every core),
//                    labelled threads:N.
//   sum_dim0         ofl::sum(x, {0}) of a (8192,4096) float32, in GB/s of input bytes read
//                    (128 MiB). Against: "read", a one-thread streaming read of those bytes (eight
//                    float lanes summed, the least work that reads every byte); "torch_sum",
//                    libtorch's x.sum(0) at 1 and N threads.
//   mul_sum_bwd      forward + backward of (x.expand({8192,4096}) * y).sum(), x (1,4096) and y
//                    (8192,4096) float32 leaves that require grad, grads cleared each iteration,
//                    ofl::sync() at the end of each; ns_per_op is the wall time of the whole.
//                    Against the ops it is made of, each timed alone in the same run (one op, then
//                    ofl::sync(), per iteration) as the case "mul_sum_bwd_ops": the forward's
//                      mul_fwd      mul(x.expand(...), y)                    -> (8192,4096)
//                      sum          sum(p) of that product                   -> ()
//                    the backward's (autograd/engine.cpp, ops/{sum,mul,expand}_op.cpp, in the
//                    order the engine issues them):
//                      root_full    full({}, 1): the root's gradient
//                      grad_views   g.reshape({1,1}).expand({8192,4096}): SumBackward (views)
//                      mul_gy       mul(that view, y): MulBackward's grad of x.expand(...)
//                      mul_gx       mul(that view, x.expand(...)): MulBackward's grad of y
//                      clone_ygrad  a copy of mul_gx's result: y's first gradient (AccumulateGrad)
//                      expand_bwd   expand_backward(mul_gy's result, (1,4096)): ExpandBackward
//                      clone_xgrad  a copy of that (1,4096): x's first gradient
//                    tools/bench/autograd_five_runs.py adds them up. "ofl_ops_in_sequence" issues
//                    the same ops back to back with no autograd and waits once; "torch/threads:N"
//                    is libtorch's autograd doing the whole (for reference, no target).
// "ofl/threads:1" caps oneTBB at one thread with tbb::global_control. Before anything is timed,
// every implementation's results are checked against host references (exact where the values are
// small integers, within a small tolerance for float sums).
#include <benchmark/benchmark.h>
#include <tbb/global_control.h>

#include <chrono>
#include <cmath>
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

#include "oneflow_lite/functional/op_call.h"  // functional::Clone: AccumulateGrad's copy
#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

#ifdef OFL_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#endif

namespace {

using ofl_bench::LoopClock;
using ofl_bench::Numel;
using ofl_bench::ReportGBps;
using ofl_bench::ReportNsPerOp;

constexpr int64_t kGraphsPerIteration = 100;

// ---- Shapes and values ------------------------------------------------------------------------

const std::vector<int64_t> kTinyX = {4, 1, 3};
const std::vector<int64_t> kTinyW = {2, 4, 5, 3};
const std::vector<int64_t> kRows = {8192, 4096};
const std::vector<int64_t> kRow = {1, 4096};

constexpr int64_t kBigBytes = 8192LL * 4096 * sizeof(float);  // 128 MiB

// Small integers (exact in float, and so are their sums here).
std::vector<float> TinyXData() {
  std::vector<float> v(static_cast<size_t>(Numel(kTinyX)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return v;
}
std::vector<float> TinyWData() {
  std::vector<float> v(static_cast<size_t>(Numel(kTinyW)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

// Values whose sums round: i * 0.618... mod 1, minus a half.
float FracValue(int64_t i) {
  const double v = static_cast<double>(i) * 0.6180339887498949;
  return static_cast<float>(v - std::floor(v) - 0.5);
}

std::vector<float> RowsFrac() {
  std::vector<float> v(static_cast<size_t>(Numel(kRows)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = FracValue(static_cast<int64_t>(i));
  return v;
}
std::vector<float> RowsInt() {  // large_add's a: exact sums with RowInt
  std::vector<float> v(static_cast<size_t>(Numel(kRows)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
  return v;
}
std::vector<float> RowInt() {  // quarter steps, exact in float
  std::vector<float> v(static_cast<size_t>(Numel(kRow)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i % 13) - 6) / 4;
  return v;
}

ofl::Tensor OflFrom(const std::vector<float>& data, const std::vector<int64_t>& shape) {
  return ofl::tensor<float>(data, ofl::Shape(shape));
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

std::optional<tbb::global_control> CapThreads(int threads) {
  std::optional<tbb::global_control> cap;
  if (threads > 0) cap.emplace(tbb::global_control::max_allowed_parallelism, threads);
  return cap;
}

// ---- tiny_graph --------------------------------------------------------------------------------

struct OflTiny {
  ofl::Tensor x, w;
  OflTiny() : x(OflFrom(TinyXData(), kTinyX)), w(OflFrom(TinyWData(), kTinyW)) {
    x.requires_grad_();
    w.requires_grad_();
    ofl::sync();
  }
  void Graph() {
    x.set_grad(ofl::Tensor());
    w.set_grad(ofl::Tensor());
    (x.expand(kTinyW) * w).sum().backward();
  }
  void Warm() {  // the pool's blocks and the first-use paths, before timing
    for (int64_t i = 0; i < kGraphsPerIteration; ++i) Graph();
    ofl::sync();
  }
};

void OflTinyGraph(benchmark::State& state) {
  OflTiny t;
  t.Warm();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kGraphsPerIteration; ++i) t.Graph();
    ofl::sync();
  }
  ReportNsPerOp(state, clock, kGraphsPerIteration);
}

void OflTinyRoundTrip(benchmark::State& state) {
  OflTiny t;
  t.Warm();
  LoopClock clock;
  for (auto _ : state) {
    t.Graph();
    std::vector<float> gx = t.x.grad().to_vector<float>();
    std::vector<float> gw = t.w.grad().to_vector<float>();
    benchmark::DoNotOptimize(gx.data());
    benchmark::DoNotOptimize(gw.data());
  }
  ReportNsPerOp(state, clock, 1);
}

// x.grad[i,0,k] = sum over a, j of w[a,i,j,k]; w.grad[a,i,j,k] = x[i,0,k].
void TinyReference(std::vector<float>* gx, std::vector<float>* gw) {
  const std::vector<float> x = TinyXData(), w = TinyWData();
  gx->assign(x.size(), 0.0f);
  gw->assign(w.size(), 0.0f);
  for (int a = 0; a < 2; ++a)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        for (int k = 0; k < 3; ++k) {
          const size_t wi = static_cast<size_t>(((a * 4 + i) * 5 + j) * 3 + k);
          (*gx)[static_cast<size_t>(i * 3 + k)] += w[wi];
          (*gw)[wi] = x[static_cast<size_t>(i * 3 + k)];
        }
}

// ---- large_add -------------------------------------------------------------------------------

void OflAdd(benchmark::State& state, int threads) {
  auto cap = CapThreads(threads);
  const ofl::Tensor a = OflFrom(RowsInt(), kRows);
  const ofl::Tensor b = OflFrom(RowInt(), kRow);
  ofl::add(a, b);  // the output's block in the pool, before timing
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    ofl::Tensor out = ofl::add(a, b);
    ofl::sync();
    benchmark::DoNotOptimize(out);
  }
  ReportGBps(state, clock, kBigBytes);
}

void Memcpy(benchmark::State& state) {
  TouchedBuffer src(static_cast<size_t>(kBigBytes));
  TouchedBuffer dst(static_cast<size_t>(kBigBytes));
  LoopClock clock;
  for (auto _ : state) {
    std::memcpy(dst.data.get(), src.data.get(), dst.bytes);
    benchmark::ClobberMemory();
  }
  ReportGBps(state, clock, kBigBytes);
}

std::vector<float> AddReference() {
  std::vector<float> a = RowsInt();
  const std::vector<float> b = RowInt();
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i % b.size()];
  return a;
}

// ---- sum_dim0 --------------------------------------------------------------------------------

void OflSumDim0(benchmark::State& state, int threads) {
  auto cap = CapThreads(threads);
  const ofl::Tensor x = OflFrom(RowsFrac(), kRows);
  ofl::sum(x, {0});
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    ofl::Tensor s = ofl::sum(x, {0});
    ofl::sync();
    benchmark::DoNotOptimize(s);
  }
  ReportGBps(state, clock, kBigBytes);
}

float StreamSum(const float* p, size_t n) {
  float lane[8] = {};
  for (size_t i = 0; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lane[l] += p[i + l];
  }
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

void Read(benchmark::State& state) {
  TouchedBuffer src(static_cast<size_t>(kBigBytes));
  LoopClock clock;
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        StreamSum(reinterpret_cast<const float*>(src.data.get()), src.bytes / sizeof(float)));
  }
  ReportGBps(state, clock, kBigBytes);
}

// Column sums of a row-major (rows, cols) matrix, in long double.
std::vector<long double> ColumnSums(const std::vector<float>& m, int64_t cols) {
  std::vector<long double> out(static_cast<size_t>(cols), 0.0L);
  for (size_t i = 0; i < m.size(); ++i) out[i % static_cast<size_t>(cols)] += m[i];
  return out;
}

// Within 1e-6 of the sum of |v| per element (the values are below 0.5 in magnitude): looser than
// any implementation needs, tight enough to catch a wrong index.
bool Close(const char* what, const std::vector<float>& got, const std::vector<long double>& want,
           int64_t terms) {
  bool ok = got.size() == want.size();
  for (size_t i = 0; ok && i < got.size(); ++i) {
    ok = std::fabs(static_cast<long double>(got[i]) - want[i]) <=
         1e-6 * 0.5 * static_cast<double>(terms);
  }
  if (!ok) std::fprintf(stderr, "%s produced a wrong result\n", what);
  return ok;
}

bool Same(const char* what, const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() == want.size() &&
      std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0) {
    return true;
  }
  std::fprintf(stderr, "%s produced a wrong result\n", what);
  return false;
}

// ---- mul_sum_bwd -------------------------------------------------------------------------------

struct OflBwd {
  ofl::Tensor x, y;
  OflBwd() : x(OflFrom(RowInt(), kRow)), y(OflFrom(RowsFrac(), kRows)) {
    x.requires_grad_();
    y.requires_grad_();
    ofl::sync();
  }
  void Graph() {
    x.set_grad(ofl::Tensor());
    y.set_grad(ofl::Tensor());
    (x.expand(kRows) * y).sum().backward();
  }
};

void OflMulSumBwd(benchmark::State& state) {
  OflBwd t;
  t.Graph();  // the intermediates' and grads' blocks in the pool, before timing
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    t.Graph();
    ofl::sync();
  }
  ReportNsPerOp(state, clock, 1);
  benchmark::DoNotOptimize(t.x.grad());
}

// What the forward and the backward issue, as plain ops on tensors that require no grad; every
// intermediate kept, so that each op can be timed alone on its real inputs.
struct BwdOps {
  ofl::Tensor x, y, xe, p, loss, g, ge, gy, gx, ygrad, dx, xgrad;
  BwdOps() : x(OflFrom(RowInt(), kRow)), y(OflFrom(RowsFrac(), kRows)) {
    xe = x.expand(kRows);
    Run();
    ofl::sync();
  }
  ofl::Tensor MulFwd() const { return ofl::mul(xe, y); }
  ofl::Tensor Sum() const { return ofl::sum(p); }
  ofl::Tensor RootFull() const { return ofl::full(ofl::Shape{}, 1.0); }
  ofl::Tensor GradViews() const { return g.reshape({1, 1}).expand(kRows); }
  ofl::Tensor MulGy() const { return ofl::mul(ge, y); }
  ofl::Tensor MulGx() const { return ofl::mul(ge, xe); }
  ofl::Tensor CloneYGrad() const { return ofl::functional::Clone(gx); }
  ofl::Tensor ExpandBwd() const { return ofl::expand_backward(gy, ofl::Shape(kRow)); }
  ofl::Tensor CloneXGrad() const { return ofl::functional::Clone(dx); }
  // All of them, in the engine's order.
  void Run() {
    p = MulFwd();
    loss = Sum();
    g = RootFull();
    ge = GradViews();
    gy = MulGy();
    gx = MulGx();
    ygrad = CloneYGrad();
    dx = ExpandBwd();
    xgrad = CloneXGrad();
  }
};

void OflOpsInSequence(benchmark::State& state) {
  BwdOps ops;
  ops.Run();  // a second set of blocks: each op's old result lives until its new one is issued
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    ops.Run();
    ofl::sync();
  }
  ReportNsPerOp(state, clock, 1);
}

// One of BwdOps' ops alone: issued, then waited for, every iteration.
void OflPart(benchmark::State& state, ofl::Tensor (BwdOps::*op)() const) {
  BwdOps ops;
  (ops.*op)();  // the output's block in the pool, before timing
  ofl::sync();
  LoopClock clock;
  for (auto _ : state) {
    ofl::Tensor out = (ops.*op)();
    ofl::sync();
    benchmark::DoNotOptimize(out);
  }
  ReportNsPerOp(state, clock, 1);
}

const std::vector<std::pair<const char*, ofl::Tensor (BwdOps::*)() const>>& Parts() {
  static const std::vector<std::pair<const char*, ofl::Tensor (BwdOps::*)() const>> parts = {
      {"mul_fwd", &BwdOps::MulFwd},         {"sum", &BwdOps::Sum},
      {"root_full", &BwdOps::RootFull},     {"grad_views", &BwdOps::GradViews},
      {"mul_gy", &BwdOps::MulGy},           {"mul_gx", &BwdOps::MulGx},
      {"clone_ygrad", &BwdOps::CloneYGrad}, {"expand_bwd", &BwdOps::ExpandBwd},
      {"clone_xgrad", &BwdOps::CloneXGrad},
  };
  return parts;
}

// ---- libtorch ----------------------------------------------------------------------------------

#ifdef OFL_BENCH_WITH_TORCH
at::Tensor TorchFrom(const std::vector<float>& data, const std::vector<int64_t>& shape) {
  at::Tensor t = at::empty(shape, at::kFloat);
  std::memcpy(t.data_ptr<float>(), data.data(), data.size() * sizeof(float));
  return t;
}

std::vector<float> ToVector(const at::Tensor& t) {
  const at::Tensor c = t.detach().contiguous();
  const float* p = c.data_ptr<float>();
  return std::vector<float>(p, p + c.numel());
}

struct TorchTiny {
  at::Tensor x, w;
  TorchTiny() : x(TorchFrom(TinyXData(), kTinyX)), w(TorchFrom(TinyWData(), kTinyW)) {
    x.requires_grad_(true);
    w.requires_grad_(true);
  }
  void Graph() {
    x.mutable_grad().reset();  // PyTorch's zero_grad(set_to_none=True)
    w.mutable_grad().reset();
    (x.expand(kTinyW) * w).sum().backward();
  }
};

void TorchTinyGraph(benchmark::State& state) {
  ofl_bench::SetTorchThreads(1);
  TorchTiny t;
  for (int64_t i = 0; i < kGraphsPerIteration; ++i) t.Graph();
  LoopClock clock;
  for (auto _ : state) {
    for (int64_t i = 0; i < kGraphsPerIteration; ++i) t.Graph();
    benchmark::DoNotOptimize(t.x.grad());
  }
  ReportNsPerOp(state, clock, kGraphsPerIteration);
}

void TorchTinyRoundTrip(benchmark::State& state) {
  ofl_bench::SetTorchThreads(1);
  TorchTiny t;
  for (int64_t i = 0; i < kGraphsPerIteration; ++i) t.Graph();
  LoopClock clock;
  for (auto _ : state) {
    t.Graph();
    const float* px = t.x.grad().data_ptr<float>();
    const float* pw = t.w.grad().data_ptr<float>();
    std::vector<float> gx(px, px + t.x.numel());
    std::vector<float> gw(pw, pw + t.w.numel());
    benchmark::DoNotOptimize(gx.data());
    benchmark::DoNotOptimize(gw.data());
  }
  ReportNsPerOp(state, clock, 1);
}

// Both tiny graphs in one loop: each iteration runs a batch of kGraphsPerIteration ofl graphs
// (then ofl::sync()) and a batch of libtorch graphs, in alternating order, and times each batch.
// The host's speed drifts over seconds, so two benchmarks timed one after the other can see
// different machines; batches a few milliseconds apart see the same one. ns_per_op is ofl's time
// per graph; torch_ns_per_graph libtorch's; speedup their ratio.
void TinyPaired(benchmark::State& state) {
  ofl_bench::SetTorchThreads(1);
  OflTiny o;
  o.Warm();
  TorchTiny t;
  for (int64_t i = 0; i < kGraphsPerIteration; ++i) t.Graph();
  using Clock = std::chrono::steady_clock;
  double ofl_ns = 0, torch_ns = 0;
  auto ofl_batch = [&] {
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < kGraphsPerIteration; ++i) o.Graph();
    ofl::sync();
    ofl_ns += std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  };
  auto torch_batch = [&] {
    const Clock::time_point start = Clock::now();
    for (int64_t i = 0; i < kGraphsPerIteration; ++i) t.Graph();
    torch_ns += std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  };
  bool ofl_first = true;
  for (auto _ : state) {
    if (ofl_first) {
      ofl_batch();
      torch_batch();
    } else {
      torch_batch();
      ofl_batch();
    }
    ofl_first = !ofl_first;
  }
  const double graphs = static_cast<double>(state.iterations() * kGraphsPerIteration);
  state.SetItemsProcessed(state.iterations() * kGraphsPerIteration);
  state.counters["ns_per_op"] = graphs > 0 ? ofl_ns / graphs : 0.0;
  state.counters["torch_ns_per_graph"] = graphs > 0 ? torch_ns / graphs : 0.0;
  state.counters["speedup"] = ofl_ns > 0 ? torch_ns / ofl_ns : 0.0;
}

void TorchAdd(benchmark::State& state, int threads) {
  ofl_bench::SetTorchThreads(threads);
  const at::Tensor a = TorchFrom(RowsInt(), kRows), b = TorchFrom(RowInt(), kRow);
  LoopClock clock;
  for (auto _ : state) {
    at::Tensor out = at::add(a, b);
    benchmark::DoNotOptimize(out);
  }
  ReportGBps(state, clock, kBigBytes);
}

void TorchAddInto(benchmark::State& state, int threads) {
  ofl_bench::SetTorchThreads(threads);
  const at::Tensor a = TorchFrom(RowsInt(), kRows), b = TorchFrom(RowInt(), kRow);
  at::Tensor out = at::empty(kRows, at::kFloat);
  out.zero_();
  LoopClock clock;
  for (auto _ : state) {
    at::add_out(out, a, b);
    benchmark::ClobberMemory();
  }
  ReportGBps(state, clock, kBigBytes);
}

void TorchSumDim0(benchmark::State& state, int threads) {
  ofl_bench::SetTorchThreads(threads);
  const at::Tensor x = TorchFrom(RowsFrac(), kRows);
  LoopClock clock;
  for (auto _ : state) {
    at::Tensor s = x.sum(0);
    benchmark::DoNotOptimize(s);
  }
  ReportGBps(state, clock, kBigBytes);
}

struct TorchBwd {
  at::Tensor x, y;
  TorchBwd() : x(TorchFrom(RowInt(), kRow)), y(TorchFrom(RowsFrac(), kRows)) {
    x.requires_grad_(true);
    y.requires_grad_(true);
  }
  void Graph() {
    x.mutable_grad().reset();
    y.mutable_grad().reset();
    (x.expand(kRows) * y).sum().backward();
  }
};

void TorchMulSumBwd(benchmark::State& state, int threads) {
  ofl_bench::SetTorchThreads(threads);
  TorchBwd t;
  t.Graph();
  LoopClock clock;
  for (auto _ : state) {
    t.Graph();
    benchmark::DoNotOptimize(t.x.grad());
  }
  ReportNsPerOp(state, clock, 1);
}
#endif

// ---- checks ------------------------------------------------------------------------------------

// Checks once, before timing, that every implementation computes what its case names.
bool VerifyAll() {
  bool ok = true;
  {
    std::vector<float> gx, gw;
    TinyReference(&gx, &gw);
    for (int round = 0; round < 2; ++round) {  // the second after grads were cleared
      OflTiny t;
      t.Graph();
      if (round == 1) t.Graph();
      ok &= Same("tiny_graph/ofl x.grad", t.x.grad().to_vector<float>(), gx);
      ok &= Same("tiny_graph/ofl w.grad", t.w.grad().to_vector<float>(), gw);
    }
#ifdef OFL_BENCH_WITH_TORCH
    TorchTiny t;
    t.Graph();
    t.Graph();
    ok &= Same("tiny_graph/torch x.grad", ToVector(t.x.grad()), gx);
    ok &= Same("tiny_graph/torch w.grad", ToVector(t.w.grad()), gw);
#endif
  }
  {
    const std::vector<float> want = AddReference();
    ok &=
        Same("large_add/ofl",
             ofl::add(OflFrom(RowsInt(), kRows), OflFrom(RowInt(), kRow)).to_vector<float>(), want);
#ifdef OFL_BENCH_WITH_TORCH
    const at::Tensor a = TorchFrom(RowsInt(), kRows), b = TorchFrom(RowInt(), kRow);
    ok &= Same("large_add/torch_op", ToVector(at::add(a, b)), want);
    at::Tensor out = at::empty(kRows, at::kFloat);
    at::add_out(out, a, b);
    ok &= Same("large_add/torch_into", ToVector(out), want);
#endif
  }
  const std::vector<float> frac = RowsFrac();
  const std::vector<long double> col_sums = ColumnSums(frac, kRows[1]);
  {
    ok &= Close("sum_dim0/ofl", ofl::sum(OflFrom(frac, kRows), {0}).to_vector<float>(), col_sums,
                kRows[0]);
#ifdef OFL_BENCH_WITH_TORCH
    ok &= Close("sum_dim0/torch_sum", ToVector(TorchFrom(frac, kRows).sum(0)), col_sums, kRows[0]);
#endif
  }
  {
    // x.grad = the column sums of y, as (1,4096); y.grad = x broadcast over the rows.
    const std::vector<float> ygrad_want =
        ofl_bench::TiledReference(RowInt(), kRow, std::vector<int64_t>(kRows));
    OflBwd t;
    t.Graph();
    t.Graph();
    const std::vector<float> xgrad = t.x.grad().to_vector<float>();
    ok &= Close("mul_sum_bwd/ofl x.grad", xgrad, col_sums, kRows[0]);
    ok &= Same("mul_sum_bwd/ofl y.grad", t.y.grad().to_vector<float>(), ygrad_want);
    // The ops timed one by one compute the same bits as the backward.
    BwdOps ops;
    ok &= Same("mul_sum_bwd_ops x.grad", ops.xgrad.to_vector<float>(), xgrad);
    ok &= Same("mul_sum_bwd_ops y.grad", ops.ygrad.to_vector<float>(), ygrad_want);
    const std::vector<float> loss = ops.loss.to_vector<float>();
    double loss_want = 0;
    const std::vector<float> x = RowInt();
    for (size_t i = 0; i < frac.size(); ++i) loss_want += double{x[i % x.size()]} * frac[i];
    if (loss.size() != 1 || std::fabs(loss[0] - loss_want) > 1e-3) {
      std::fprintf(stderr, "mul_sum_bwd_ops: sum %g, want %g\n", loss.empty() ? 0.0 : loss[0],
                   loss_want);
      ok = false;
    }
#ifdef OFL_BENCH_WITH_TORCH
    TorchBwd tt;
    tt.Graph();
    tt.Graph();
    ok &= Close("mul_sum_bwd/torch x.grad", ToVector(tt.x.grad()), col_sums, kRows[0]);
    ok &= Same("mul_sum_bwd/torch y.grad", ToVector(tt.y.grad()), ygrad_want);
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
  auto ms = [](const std::string& name, std::function<void(benchmark::State&)> fn) {
    ofl_bench::Register(name, std::move(fn))->Unit(benchmark::kMillisecond);
  };
  ofl_bench::Register("tiny_graph/ofl", OflTinyGraph);
  ofl_bench::Register("tiny_graph_roundtrip/ofl", OflTinyRoundTrip);
#ifdef OFL_BENCH_WITH_TORCH
  ofl_bench::Register("tiny_graph/torch/threads:1", TorchTinyGraph);
  ofl_bench::Register("tiny_graph_roundtrip/torch/threads:1", TorchTinyRoundTrip);
  ofl_bench::Register("tiny_graph_paired/ofl_vs_torch/threads:1", TinyPaired);
#endif

  ms("large_add/ofl", [](benchmark::State& s) { OflAdd(s, 0); });
  if (cpus > 1) ms("large_add/ofl/threads:1", [](benchmark::State& s) { OflAdd(s, 1); });
  ms("large_add/memcpy", Memcpy);
  ms("sum_dim0/ofl", [](benchmark::State& s) { OflSumDim0(s, 0); });
  if (cpus > 1) ms("sum_dim0/ofl/threads:1", [](benchmark::State& s) { OflSumDim0(s, 1); });
  ms("sum_dim0/read", Read);
#ifdef OFL_BENCH_WITH_TORCH
  for (int t : thread_counts) {
    const std::string suffix = "/threads:" + std::to_string(t);
    ms("large_add/torch_op" + suffix, [t](benchmark::State& s) { TorchAdd(s, t); });
    ms("large_add/torch_into" + suffix, [t](benchmark::State& s) { TorchAddInto(s, t); });
    ms("sum_dim0/torch_sum" + suffix, [t](benchmark::State& s) { TorchSumDim0(s, t); });
  }
#endif

  ms("mul_sum_bwd/ofl", OflMulSumBwd);
  ms("mul_sum_bwd/ofl_ops_in_sequence", OflOpsInSequence);
  for (const auto& [name, op] : Parts()) {
    ms(std::string("mul_sum_bwd_ops/") + name, [op = op](benchmark::State& s) { OflPart(s, op); });
  }
#ifdef OFL_BENCH_WITH_TORCH
  for (int t : thread_counts) {
    ms("mul_sum_bwd/torch/threads:" + std::to_string(t),
       [t](benchmark::State& s) { TorchMulSumBwd(s, t); });
  }
#endif
  (void)thread_counts;
  return ofl_bench::RunMain(
      argc, argv,
      "autograd: tiny_graph ns_per_op per graph (ofl: 100 graphs, then one sync); large_add GB/s "
      "counts output bytes, sum_dim0 input bytes; memcpy/read run on one thread over memory "
      "touched beforehand; mul_sum_bwd_ops are the backward's ops, each timed alone");
}
