// ofl_bench_async_wait: how soon a wait on an asynchronous device returns once the work it waits
// for completed (vm/THREADING.md, "Launched and complete"). Run with OFL_SIM_MAX_DELAY_US=0, so
// the simulator adds no random delays and the VM's own waits are what is timed.
//
// - roundtrip/cpu, roundtrip/sim0: one tiny op and a read back per iteration,
//   x.expand({4,2,3}).contiguous().to_vector<float>(), on cpu and on sim:0 (the same run gives the
//   ratio).
// - long_task_read/sim0, long_task_sync/sim0: a task that takes 2 ms on sim:0's compute stream
//   (the op "bench_sleep" below, whose sim kernel sleeps on the stream and stamps the moment it
//   ends), then a read of its output (to_vector: a device-to-host copy behind it) or ofl::sync().
//   Counters: late_us, how long after the task ended the wait returned (median and worst over the
//   iterations), and waiter_cpu_pct, the waiting thread's CPU time as a share of its wait.
//
// The kernel reaches the simulator's stream through its own interface (kernels/sim/sim_backend.h),
// as a test kernel would: the public API has no way to make a device task take a given time.
#include <benchmark/benchmark.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "kernels/sim/sim_backend.h"
#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

namespace {

using ofl_bench::LoopClock;
using ofl_bench::ReportNsPerOp;

constexpr int64_t kTaskUs = 2000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// When the last bench_sleep task ended, on the steady clock.
std::atomic<int64_t> task_end_ns{0};

// bench_sleep(x, us): a copy of x that takes `us` microseconds on the device's stream.
void SimSleepKernel(const ofl::KernelContext& ctx) {
  auto& sim = ofl::kernels::sim::SimBackend::Instance();
  const int64_t us = ctx.attributes.get_int("us");
  const void* from = sim.HostView(ctx.inputs[0].data);
  void* to = sim.HostView(ctx.outputs[0].data);
  const size_t bytes =
      static_cast<size_t>(ctx.inputs[0].shape.numel()) * ofl::element_size(ctx.inputs[0].dtype);
  sim.Enqueue(ctx.stream, [us, from, to, bytes] {
    std::this_thread::sleep_for(std::chrono::microseconds(us));
    std::memcpy(to, from, bytes);
    task_end_ns.store(NowNs(), std::memory_order_release);
  });
}

void RegisterSleepOp() {
  ofl::OpDef def;
  def.name = "bench_sleep";
  def.num_inputs = 1;
  def.attrs = {{"us", ofl::AttrType::kInt}};
  def.infer = [](const std::vector<ofl::TensorMeta>& in, const ofl::Attrs&) {
    return std::vector<ofl::TensorMeta>{in[0]};
  };
  ofl::register_op(def);
  ofl::register_kernel("bench_sleep", "sim", &SimSleepKernel);
}

ofl::Tensor Input(const char* device) {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  ofl::Tensor x = ofl::tensor<float>(data, ofl::Shape{4, 1, 3}, ofl::Device(device));
  ofl::sync();
  return x;
}

template <const char* kDevice>
void RoundTrip(benchmark::State& state) {
  const ofl::Tensor x = Input(kDevice);
  LoopClock clock;
  for (auto _ : state) {
    std::vector<float> v = x.expand({4, 2, 3}).contiguous().to_vector<float>();
    benchmark::DoNotOptimize(v.data());
  }
  ReportNsPerOp(state, clock, 1);
}

// `read`: to_vector of the task's output; else ofl::sync().
template <bool kRead>
void LongTask(benchmark::State& state) {
  const ofl::Tensor x = Input("sim:0");
  std::vector<double> late_us;
  int64_t wait_ns = 0, cpu_ns = 0;
  for (auto _ : state) {
    const ofl::Tensor y = ofl::call_op("bench_sleep", {x}, {{"us", kTaskUs}})[0];
    const int64_t t0 = NowNs(), c0 = ThreadCpuNs();
    if (kRead) {
      std::vector<float> v = y.to_vector<float>();
      benchmark::DoNotOptimize(v.data());
    } else {
      ofl::sync();
    }
    const int64_t t1 = NowNs(), c1 = ThreadCpuNs();
    late_us.push_back(static_cast<double>(t1 - task_end_ns.load(std::memory_order_acquire)) / 1e3);
    wait_ns += t1 - t0;
    cpu_ns += c1 - c0;
  }
  std::sort(late_us.begin(), late_us.end());
  if (!late_us.empty()) {
    state.counters["late_us_median"] = late_us[late_us.size() / 2];
    state.counters["late_us_worst"] = late_us.back();
    state.counters["waiter_cpu_pct"] =
        100.0 * static_cast<double>(cpu_ns) / static_cast<double>(wait_ns > 0 ? wait_ns : 1);
  }
}

constexpr char kCpu[] = "cpu";
constexpr char kSim0[] = "sim:0";

}  // namespace

int main(int argc, char** argv) {
  RegisterSleepOp();
  ofl_bench::Register("roundtrip/cpu", RoundTrip<kCpu>);
  ofl_bench::Register("roundtrip/sim0", RoundTrip<kSim0>);
  benchmark::RegisterBenchmark("long_task_read/sim0", LongTask<true>)
      ->Iterations(200)
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("long_task_sync/sim0", LongTask<false>)
      ->Iterations(200)
      ->Unit(benchmark::kMicrosecond);
  return ofl_bench::RunMain(argc, argv,
                            "async waits: roundtrip = one op + to_vector per iteration; "
                            "long_task = a 2 ms task on sim:0, then a read or a sync");
}
