// Helpers shared by the ofl_bench_* programs: wall-clock accounting that turns a benchmark loop
// into the counters every case reports (ns_per_op or GB/s), the thread counts the baselines are
// pinned to, and the main() that records them in the benchmark context.
//
// Benchmark names follow "<case>/<impl>[/threads:N]" so that tools/bench/ratios.py can compare
// every implementation of a case against the others from one --benchmark_format=json run. With
// --benchmark_repetitions=N every benchmark also reports min and max over the repetitions: on a
// machine shared with other work the best repetition is the steadiest estimate of the cost.
#pragma once

#include <benchmark/benchmark.h>

#include <dlfcn.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#ifdef OFL_BENCH_WITH_TORCH
#include <ATen/Parallel.h>
#include <torch/version.h>
#endif

namespace ofl_bench {

// oneflow_lite's CPU kernels run in oneTBB's default arena, which uses every core this process
// may run on (its affinity mask, as oneTBB counts them; `taskset` narrows it).
inline int NumCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

inline double ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Measures the whole timed loop with a steady clock, and the calling thread's CPU time over it.
// Counters computed from them do not depend on how Google Benchmark turns counter flags into
// rates (CPU time alone would miss the work the VM's workers do).
class LoopClock {
 public:
  LoopClock() : start_(std::chrono::steady_clock::now()), cpu_start_(ThreadCpuNs()) {}
  double ElapsedNs() const {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start_)
        .count();
  }
  double CallerCpuNs() const { return ThreadCpuNs() - cpu_start_; }

 private:
  std::chrono::steady_clock::time_point start_;
  double cpu_start_;
};

// Reports the mean wall time of one op (`ops_per_iteration` ops per benchmark iteration), and the
// CPU time the calling (issuing) thread spent per op: for oneflow_lite the gap between the two is
// time spent waiting for the VM's worker.
inline void ReportNsPerOp(benchmark::State& state, const LoopClock& clock,
                          int64_t ops_per_iteration) {
  const double ns = clock.ElapsedNs();
  const double cpu_ns = clock.CallerCpuNs();
  const int64_t ops = static_cast<int64_t>(state.iterations()) * ops_per_iteration;
  state.SetItemsProcessed(ops);
  state.counters["ns_per_op"] = ops > 0 ? ns / static_cast<double>(ops) : 0.0;
  state.counters["caller_cpu_ns_per_op"] = ops > 0 ? cpu_ns / static_cast<double>(ops) : 0.0;
}

// Reports output bandwidth: `bytes_per_iteration` bytes written per benchmark iteration.
inline void ReportGBps(benchmark::State& state, const LoopClock& clock,
                       int64_t bytes_per_iteration) {
  const double ns = clock.ElapsedNs();
  const int64_t bytes = static_cast<int64_t>(state.iterations()) * bytes_per_iteration;
  state.SetBytesProcessed(bytes);
  state.counters["GB/s"] = ns > 0 ? static_cast<double>(bytes) / ns : 0.0;  // bytes/ns == GB/s
}

// The shared object whose malloc this process calls. Linking oneflow_lite brings in libmimalloc,
// whose malloc/free then serve the whole process (libtorch included) unless something earlier in
// the lookup order, such as LD_PRELOAD=libc.so.6, provides them.
inline std::string ProcessMalloc() {
  void* fn = dlsym(RTLD_DEFAULT, "malloc");
  Dl_info info;
  if (fn == nullptr || dladdr(fn, &info) == 0 || info.dli_fname == nullptr) return "unknown";
  return info.dli_fname;
}

// Registers fn under `name` with the settings every case shares: wall-clock time, and min / max
// over repetitions next to Google Benchmark's mean, median and stddev.
template <class Fn>
benchmark::internal::Benchmark* Register(const std::string& name, Fn fn) {
  return benchmark::RegisterBenchmark(name.c_str(), fn)
      ->UseRealTime()
      ->ComputeStatistics(
          "min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); })
      ->ComputeStatistics("max", [](const std::vector<double>& v) {
        return *std::max_element(v.begin(), v.end());
      });
}

#ifdef OFL_BENCH_WITH_TORCH
// libtorch's intra-op pool is global; every torch case sets the count it is labelled with.
inline void SetTorchThreads(int n) { at::set_num_threads(n); }
#endif

// Records the conditions of the run in the JSON "context" and runs the registered benchmarks.
inline int RunMain(int argc, char** argv, const char* note) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("ofl_threads",
                              std::to_string(NumCpus()) + " (oneTBB default arena = all cores)");
#ifdef OFL_BENCH_WITH_TORCH
  benchmark::AddCustomContext("libtorch", std::string(TORCH_VERSION) +
                                              " (synchronous: an op returns after its kernel ran)");
#else
  benchmark::AddCustomContext(
      "libtorch", "none in this program (no libtorch baseline here, or OFL_BENCH_WITH_TORCH=OFF)");
#endif
  benchmark::AddCustomContext("malloc", ProcessMalloc());
  if (note != nullptr) benchmark::AddCustomContext("note", note);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

inline int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// What a materialised expand or a repeat of `in` (shape `input`) to `output` must produce: output
// element idx is input element (idx mod the input shape, aligned to the right).
inline std::vector<float> TiledReference(const std::vector<float>& in,
                                         const std::vector<int64_t>& input,
                                         const std::vector<int64_t>& output) {
  const size_t nd = output.size();
  std::vector<int64_t> in_size(nd, 1), in_stride(nd, 1), idx(nd, 0);
  const size_t lead = nd - input.size();
  for (size_t i = 0; i < input.size(); ++i) in_size[lead + i] = input[i];
  for (size_t d = nd - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * in_size[d];
  std::vector<float> out(static_cast<size_t>(Numel(output)));
  for (float& v : out) {
    int64_t src = 0;
    for (size_t d = 0; d < nd; ++d) src += (idx[d] % in_size[d]) * in_stride[d];
    v = in[static_cast<size_t>(src)];
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < output[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace ofl_bench
