// ofl_icount_driver: one tiny-op case in a fresh process, for the measuring scripts
// tools/bench/icount.sh (instructions per op under callgrind) and tools/bench/live_rss.sh (resident
// memory per live tensor). Not a benchmark by itself: it prints one line (rss) or nothing
// (op cases), and the scripts turn two runs into a figure.
//
//   ofl_icount_driver <case> <impl> <N>
//     case: expand  x.expand({4,5,3}).contiguous() of a (4,1,3) float32 tensor on cpu
//           repeat  x.repeat({2,1,2}) of the same x
//           unary   x.exp() of the same x (a tiny elementwise-unary op)
//           empty   empty({4,3}) float32 on cpu
//           autograd  one tiny autograd graph per op: x's and w's grads cleared (set_grad of an
//                   undefined tensor; libtorch: grad reset), then (x.expand({2,4,5,3}) * w).sum()
//                   .backward() with x (4,1,3) and w (2,4,5,3) float32 leaves that require grad
//                   (ofl_bench_autograd's tiny_graph)
//           rss     N live (4,3) float32 tensors from empty(), kept in a std::vector
//           rss_tensor  the same from 12 host floats: ofl::tensor / torch::from_blob().clone()
//                   (the data is written, so the pages holding it are resident)
//     impl: ofl | torch (torch only when built with OFL_BENCH_WITH_TORCH)
//
// Op cases: a warm-up (kWarmup ops, then ofl::sync()), then N ops back to back (each result
// dropped at once, as in ofl_bench_tiny_ops), then ofl::sync() for ofl. libtorch runs on one
// intra-op thread; its ops are synchronous, so it needs no final wait. Under callgrind the
// instructions of two runs with different N, subtracted and divided by the difference in N, are
// the cost of one op on every thread of the process (start-up, warm-up, the final sync cancel).
// With valgrind's header (valgrind/callgrind.h) at build time the driver turns callgrind's
// instrumentation on at the start of main(), so that --instr-atstart=no skips the process's
// start-up; without it callgrind counts the whole process, which is slower but gives the same
// difference.
//
// rss, rss_tensor: a warm-up that makes and frees kWarmup tensors (then sync()), so that the
// runtime's threads, pools and first-use allocations are in the baseline; then the resident set
// size (/proc/self/statm) before and after making N tensors and sync(), printed as one line of
// key=value fields. RSS does not shrink reliably, so every (case, impl) needs a fresh process.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define OFL_ICOUNT_HAVE_CALLGRIND 1
#endif
#endif

#ifdef OFL_BENCH_WITH_TORCH
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/generated/variable_factories.h>
#endif

namespace {

constexpr int64_t kWarmup = 500;

// Keeps the compiler from dropping a result it can prove unused.
template <class T>
inline void Keep(const T& value) {
  asm volatile("" : : "r"(&value) : "memory");
}

// Under `valgrind --tool=callgrind --instr-atstart=no` the start-up (libtorch's static
// initialisers: two billion instructions, over a minute under instrumentation) runs uninstrumented:
// main() starts instrumentation, which is global, so every thread is counted from there on.
// (Stopping it again before the exit, where libtorch spends 260 million instructions deregistering
// its operators, would be quicker, but callgrind 3.19 then writes zero costs; and its ZERO_STATS /
// DUMP_STATS requests act on the calling thread only, which would miss the VM's workers.)
// Outside valgrind the request does nothing.
void StartInstrumentation() {
#ifdef OFL_ICOUNT_HAVE_CALLGRIND
  CALLGRIND_START_INSTRUMENTATION;
#endif
}

// Resident set size in bytes, from /proc/self/statm (its second field, in pages).
int64_t RssBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (got != 2) return -1;
  return static_cast<int64_t>(resident) * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void PrintRss(const std::string& which, const char* impl, int64_t n, int64_t before, int64_t after,
              const std::string& extra) {
  const int64_t growth = after - before;
  std::printf(
      "%s impl=%s tensors=%lld baseline_bytes=%lld after_bytes=%lld growth_bytes=%lld "
      "bytes_per_tensor=%.1f growth_mb=%.2f%s\n",
      which.c_str(), impl, static_cast<long long>(n), static_cast<long long>(before),
      static_cast<long long>(after), static_cast<long long>(growth),
      n > 0 ? static_cast<double>(growth) / static_cast<double>(n) : 0.0,
      static_cast<double>(growth) / 1e6, extra.c_str());
}

bool IsRss(const std::string& which) { return which == "rss" || which == "rss_tensor"; }

// The 12 values every rss_tensor tensor is made from.
const std::vector<float>& HostValues() {
  static const std::vector<float> v = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  return v;
}

// Keeps n tensors from make() alive and prints the RSS they added over a warm baseline; wait()
// waits for their work (ofl::sync(), nothing for libtorch).
template <class TensorT, class Make, class Wait>
std::vector<TensorT> LiveRss(const std::string& which, const char* impl, int64_t n, Make make,
                             Wait wait, const std::function<std::string()>& extra) {
  std::vector<TensorT> live;
  live.reserve(static_cast<size_t>(n));  // its pages are resident once written: counted
  {
    std::vector<TensorT> warm;
    for (int64_t i = 0; i < kWarmup; ++i) warm.push_back(make());
    wait();
  }
  const int64_t before = RssBytes();
  for (int64_t i = 0; i < n; ++i) live.push_back(make());
  wait();
  const int64_t after = RssBytes();
  PrintRss(which, impl, n, before, after, extra());
  return live;
}

// w of the autograd case: small integers, so every gradient is exact.
std::vector<float> GraphWeights() {
  std::vector<float> w(2 * 4 * 5 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  return w;
}

// The autograd case's gradients: x.grad[i,0,k] = sum over a, j of w[a,i,j,k] and
// w.grad[a,i,j,k] = x[i,0,k] = 3i + k.
void GraphReference(std::vector<float>* gx, std::vector<float>* gw) {
  const std::vector<float> w = GraphWeights();
  gx->assign(12, 0.0f);
  gw->assign(w.size(), 0.0f);
  for (size_t idx = 0; idx < w.size(); ++idx) {
    const size_t k = idx % 3, i = idx / 15 % 4;
    (*gx)[i * 3 + k] += w[idx];
    (*gw)[idx] = static_cast<float>(3 * i + k);
  }
}

// x[i][0][k] = 3i + k
ofl::Tensor OflInput() {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  return ofl::tensor<float>(data, ofl::Shape{4, 1, 3});
}

// Checks, before anything is measured, that the ofl calls compute what the case names.
bool OflVerify(const std::string& which, const ofl::Tensor& x) {
  std::vector<float> want;
  if (which == "expand") {
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j)
        for (int k = 0; k < 3; ++k) want.push_back(static_cast<float>(3 * i + k));
    return x.expand({4, 5, 3}).contiguous().to_vector<float>() == want;
  }
  if (which == "roundtrip") {  // (4,1,3) expanded to (4,2,3), read back
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j)
        for (int k = 0; k < 3; ++k) want.push_back(static_cast<float>(3 * i + k));
    return x.expand({4, 2, 3}).contiguous().to_vector<float>() == want;
  }
  if (which == "unary") {
    const std::vector<float> in = x.to_vector<float>();
    const std::vector<float> got = x.exp().to_vector<float>();
    if (got.size() != in.size()) return false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (std::fabs(got[i] - std::exp(in[i])) > 1e-6f * std::exp(in[i])) return false;
    }
    return true;
  }
  if (which == "repeat") {  // (4,1,3) repeated (2,1,2) -> (8,1,6)
    for (int t = 0; t < 2; ++t)
      for (int i = 0; i < 4; ++i)
        for (int r = 0; r < 2; ++r)
          for (int k = 0; k < 3; ++k) want.push_back(static_cast<float>(3 * i + k));
    return x.repeat({2, 1, 2}).to_vector<float>() == want;
  }
  return ofl::empty(ofl::Shape{4, 3}).shape() == ofl::Shape({4, 3});
}

template <class Op>
void OflLoop(int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) {
    ofl::Tensor y = op();
    Keep(y);
  }
  ofl::sync();
}

int RunOflAutograd(int64_t n) {
  ofl::Tensor x = OflInput();
  ofl::Tensor w = ofl::tensor<float>(GraphWeights(), ofl::Shape{2, 4, 5, 3});
  x.requires_grad_();
  w.requires_grad_();
  auto graph = [&] {
    x.set_grad(ofl::Tensor());
    w.set_grad(ofl::Tensor());
    (x.expand({2, 4, 5, 3}) * w).sum().backward();
  };
  std::vector<float> gx, gw;
  GraphReference(&gx, &gw);
  graph();
  graph();  // the second after the first's grads were cleared
  if (x.grad().to_vector<float>() != gx || w.grad().to_vector<float>() != gw) {
    std::fprintf(stderr, "ofl_icount_driver: ofl autograd produced wrong gradients\n");
    return 1;
  }
  auto run = [&](int64_t count) {
    for (int64_t i = 0; i < count; ++i) graph();
    ofl::sync();
  };
  run(kWarmup);
  run(n);
  return 0;
}

int RunOfl(const std::string& which, int64_t n) {
  if (which == "autograd") return RunOflAutograd(n);
  const ofl::Tensor x = OflInput();
  ofl::sync();
  if (IsRss(which)) {
    const bool filled = which == "rss_tensor";
    auto live = LiveRss<ofl::Tensor>(
        which, "ofl", n,
        [filled] {
          return filled ? ofl::tensor<float>(HostValues(), ofl::Shape{4, 3})
                        : ofl::empty(ofl::Shape{4, 3});
        },
        [] { ofl::sync(); },
        [] {
          const ofl::MemoryStats s = ofl::memory_stats(ofl::Device("cpu"));
          return " pool_allocated_bytes=" + std::to_string(s.allocated_bytes) +
                 " pool_reserved_bytes=" + std::to_string(s.reserved_bytes) +
                 " sizeof_handle=" + std::to_string(sizeof(ofl::Tensor));
        });
    Keep(live);
    return 0;
  }
  if (!OflVerify(which, x)) {
    std::fprintf(stderr, "ofl_icount_driver: ofl %s produced a wrong result\n", which.c_str());
    return 1;
  }
  auto run = [&](int64_t count) {
    if (which == "expand") {
      OflLoop(count, [&] { return x.expand({4, 5, 3}).contiguous(); });
    } else if (which == "repeat") {
      OflLoop(count, [&] { return x.repeat({2, 1, 2}); });
    } else if (which == "unary") {
      OflLoop(count, [&] { return x.exp(); });
    } else if (which == "roundtrip") {
      // One op and its read per iteration: the read waits, so no final sync is needed.
      for (int64_t i = 0; i < count; ++i) Keep(x.expand({4, 2, 3}).contiguous().to_vector<float>());
    } else {
      OflLoop(count, [] { return ofl::empty(ofl::Shape{4, 3}); });
    }
  };
  run(kWarmup);
  run(n);
  return 0;
}

#ifdef OFL_BENCH_WITH_TORCH
template <class Op>
void TorchLoop(int64_t n, Op op) {
  for (int64_t i = 0; i < n; ++i) {
    at::Tensor y = op();
    Keep(y);
  }
}

int RunTorchAutograd(int64_t n) {
  at::Tensor x = at::arange(12, at::kFloat).reshape({4, 1, 3});
  const std::vector<float> wd = GraphWeights();
  at::Tensor w = at::empty({2, 4, 5, 3}, at::kFloat);
  std::copy(wd.begin(), wd.end(), w.data_ptr<float>());
  x.requires_grad_(true);
  w.requires_grad_(true);
  auto graph = [&] {
    x.mutable_grad().reset();  // PyTorch's zero_grad(set_to_none=True)
    w.mutable_grad().reset();
    (x.expand({2, 4, 5, 3}) * w).sum().backward();
  };
  std::vector<float> gx, gw;
  GraphReference(&gx, &gw);
  graph();
  graph();
  auto host = [](const at::Tensor& t) {
    const at::Tensor c = t.contiguous();
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  };
  if (host(x.grad()) != gx || host(w.grad()) != gw) {
    std::fprintf(stderr, "ofl_icount_driver: torch autograd produced wrong gradients\n");
    return 1;
  }
  auto run = [&](int64_t count) {
    for (int64_t i = 0; i < count; ++i) graph();
  };
  run(kWarmup);
  run(n);
  return 0;
}

int RunTorch(const std::string& which, int64_t n) {
  at::set_num_threads(1);
  if (which == "autograd") return RunTorchAutograd(n);
  const at::Tensor x = at::arange(12, at::kFloat).reshape({4, 1, 3});
  if (IsRss(which)) {
    const bool filled = which == "rss_tensor";
    auto live = LiveRss<at::Tensor>(
        which, "torch", n,
        [filled] {
          // from_blob(...).clone(): a tensor that owns a copy of host data, as ofl::tensor makes.
          return filled ? torch::from_blob(const_cast<float*>(HostValues().data()), {4, 3}).clone()
                        : torch::empty({4, 3});
        },
        [] {}, [] { return " sizeof_handle=" + std::to_string(sizeof(at::Tensor)); });
    Keep(live);
    return 0;
  }
  auto run = [&](int64_t count) {
    if (which == "expand") {
      TorchLoop(count, [&] { return x.expand({4, 5, 3}).contiguous(); });
    } else if (which == "repeat") {
      TorchLoop(count, [&] { return x.repeat({2, 1, 2}); });
    } else if (which == "unary") {
      TorchLoop(count, [&] { return x.exp(); });
    } else if (which == "roundtrip") {
      for (int64_t i = 0; i < count; ++i) {
        const at::Tensor y = x.expand({4, 2, 3}).contiguous();
        const float* p = y.data_ptr<float>();
        Keep(std::vector<float>(p, p + y.numel()));
      }
    } else {
      TorchLoop(count, [] { return torch::empty({4, 3}); });
    }
  };
  run(kWarmup);
  run(n);
  return 0;
}
#endif

int Usage() {
  std::fprintf(
      stderr,
      "usage: ofl_icount_driver <expand|repeat|unary|empty|roundtrip|autograd|rss|rss_tensor> "
      "<ofl|torch> "
      "<N>\n"
      "  torch is %s in this build\n",
#ifdef OFL_BENCH_WITH_TORCH
      "available"
#else
      "not available (configure with -DOFL_BENCH_WITH_TORCH=ON)"
#endif
  );
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return Usage();
  const std::string which = argv[1];
  const std::string impl = argv[2];
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(argv[3], &end, 10);
  if (end == argv[3] || *end != '\0' || errno != 0 || n < 0) return Usage();
  if (which != "expand" && which != "repeat" && which != "unary" && which != "empty" &&
      which != "roundtrip" && which != "autograd" && !IsRss(which)) {
    return Usage();
  }
  StartInstrumentation();
  try {
    if (impl == "ofl") return RunOfl(which, n);
#ifdef OFL_BENCH_WITH_TORCH
    if (impl == "torch") return RunTorch(which, n);
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ofl_icount_driver: %s\n", e.what());
    return 1;
  }
  return Usage();
}
