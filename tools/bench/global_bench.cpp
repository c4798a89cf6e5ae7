// ofl_bench_global: boxing a global tensor against the bare MPI collective that moves the same
// bytes, in the same mpiexec run. GB/s counts the logical tensor's bytes (64 MiB) per conversion:
//   boxing_s0_to_b_64MiB/ofl            x.to_global(p, Sbp::broadcast()) then ofl::sync(), x a
//                                       (4096, 4096) float32 tensor split(0) over every rank;
//   boxing_s0_to_b_64MiB/mpi_allgather  MPI_Allgather (MPI_Allgatherv when the shards are uneven)
//                                       of each rank's shard bytes;
//   boxing_p_to_b_64MiB/ofl             the same tensor partial_sum -> broadcast;
//   boxing_p_to_b_64MiB/mpi_allreduce   MPI_Allreduce (MPI_SUM, MPI_FLOAT) of the 64 MiB, from a
//                                       send buffer into a separate receive buffer;
//   allreduce_1MiB/ofl                  a (256, 1024) float32 tensor partial_sum -> broadcast with
//                                       the fingerprint check (the default: the agreement before
//                                       the all-reduce carries each rank's sequence number and
//                                       fingerprint hash);
//   allreduce_1MiB/ofl_unchecked        the same with the check off (OFL_CHECK_COLLECTIVES=0's
//                                       status-only agreement), switched on every rank alike
//                                       between the loops: the check's cost is the ratio of the
//                                       two;
//   allreduce_1MiB/mpi_allreduce        MPI_Allreduce of the 1 MiB;
//   dp_step_b4096/ofl                   one data-parallel training step (forward, cross-entropy,
//                                       backward, Adam) of the 64-128-10 MLP at batch 4096 split
//                                       over the ranks, parameters broadcast (ns_per_op: per
//                                       step; the one-process step is ofl_bench_train_step's).
// ofl takes its output from its caching pool at every conversion, as a program does; the
// baselines reuse page-aligned buffers written once. Before timing, ofl's results are checked
// against MPI's on every rank.
//
// Every rank runs every benchmark for exactly the same number of iterations (fixed here: Google
// Benchmark would pick counts from each rank's own timings and the collectives would no longer
// match), in 5 interleaved rounds, and each timed loop starts after a barrier. Flags that would
// make the ranks diverge (--benchmark_min_warmup_time, --benchmark_enable_random_interleaving) are
// dropped. Only rank 0 reports; the other ranks run the same loops with a reporter that prints
// nothing.
//
// Run it under mpiexec (4 ranks oversubscribe a 2-core machine; without mpiexec it is a world of
// one process, where boxing is a local copy), then compare ofl with the baselines (the first
// command is one line, split here to fit):
//   mpiexec --allow-run-as-root --oversubscribe -n 2 build/tools/bench/ofl_bench_global
//       --benchmark_format=json > global.json
//   python3 tools/bench/ratios.py global.json
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "kernels/collective/collectives.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

namespace {

using ofl_bench::LoopClock;

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 4096;
constexpr int64_t kElems = kRows * kCols;
constexpr int64_t kBytes = kElems * static_cast<int64_t>(sizeof(float));  // 64 MiB
constexpr int kIterations = 10;
constexpr int64_t kSmallRows = 256;  // (256, 1024) float32: 1 MiB
constexpr int64_t kSmallElems = kSmallRows * 1024;
constexpr int64_t kSmallBytes = kSmallElems * static_cast<int64_t>(sizeof(float));
constexpr int kSmallIterations = 400;
constexpr int kRounds = 5;

ofl::Placement World() {
  std::vector<int> ranks(static_cast<size_t>(ofl::world_size()));
  std::iota(ranks.begin(), ranks.end(), 0);
  return ofl::Placement("cpu", ranks);
}

// Elements per rank under split(0), balanced as ofl splits (the first kRows % n ranks hold one
// row more), and their offsets in the gathered tensor.
struct Split {
  std::vector<int> counts, displs;
  bool even = true;
  int me = 0;
};

Split SplitRows() {
  Split s;
  const int n = ofl::world_size();
  s.me = ofl::rank();
  for (int r = 0, at = 0; r < n; ++r) {
    const int64_t rows = kRows / n + (r < kRows % n ? 1 : 0);
    s.counts.push_back(static_cast<int>(rows * kCols));
    s.displs.push_back(at);
    at += s.counts.back();
    s.even = s.even && s.counts.back() == s.counts.front();
  }
  return s;
}

// Small integers: their sums are exact in float whatever order MPI adds them in.
std::vector<float> Data(int64_t count) {
  std::vector<float> v(static_cast<size_t>(count));
  const size_t shift = 7 * static_cast<size_t>(ofl::rank());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i + shift) % 1000);
  return v;
}

// Page-aligned as ofl's pool hands out blocks (with malloc's 16-byte offset into a page,
// MPI_Allreduce measured faster: the alignment, not boxing, would set the ratio).
struct Buffer {
  explicit Buffer(const std::vector<float>& init) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, init.size() * sizeof(float)) != 0) std::abort();
    data.reset(static_cast<float*>(p));
    std::memcpy(p, init.data(), init.size() * sizeof(float));
  }
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data;
};

void AllGather(const float* send, float* recv, const Split& s) {
  if (s.even) {
    MPI_Allgather(send, s.counts[0], MPI_FLOAT, recv, s.counts[0], MPI_FLOAT, MPI_COMM_WORLD);
  } else {
    MPI_Allgatherv(send, s.counts[s.me], MPI_FLOAT, recv, s.counts.data(), s.displs.data(),
                   MPI_FLOAT, MPI_COMM_WORLD);
  }
}

void AllReduce(const float* send, float* recv) {
  MPI_Allreduce(send, recv, static_cast<int>(kElems), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

ofl::Tensor SplitInput(const Split& s) {
  const ofl::Shape shard({s.counts[s.me] / kCols, kCols});
  return ofl::tensor<float>(Data(s.counts[s.me]), shard).to_global(World(), ofl::Sbp::split(0));
}

ofl::Tensor PartialInput() {
  return ofl::tensor<float>(Data(kElems), ofl::Shape({kRows, kCols}))
      .to_global(World(), ofl::Sbp::partial_sum());
}

// One untimed step (the pool's first block, MPI's first use of the buffers), a barrier so that
// every rank starts together, then the timed loop.
template <class Step>
void Timed(benchmark::State& state, Step step, int64_t bytes = kBytes) {
  step();
  MPI_Barrier(MPI_COMM_WORLD);
  LoopClock clock;
  for (auto _ : state) step();
  ofl_bench::ReportGBps(state, clock, bytes);
}

void OflBox(benchmark::State& state, const ofl::Tensor& x) {
  const ofl::Placement p = World();
  Timed(state, [&] {
    ofl::Tensor y = x.to_global(p, ofl::Sbp::broadcast());
    ofl::sync();
    benchmark::DoNotOptimize(y);
  });
}

void MpiAllGather(benchmark::State& state) {
  const Split s = SplitRows();
  const Buffer send(Data(s.counts[s.me]));
  const Buffer recv(std::vector<float>(static_cast<size_t>(kElems)));
  Timed(state, [&] {
    AllGather(send.data.get(), recv.data.get(), s);
    benchmark::ClobberMemory();
  });
}

void MpiAllReduce(benchmark::State& state) {
  const Buffer send(Data(kElems));
  const Buffer recv(std::vector<float>(static_cast<size_t>(kElems)));
  Timed(state, [&] {
    AllReduce(send.data.get(), recv.data.get());
    benchmark::ClobberMemory();
  });
}

// The 1 MiB all-reduce, with the fingerprint check on or off on every rank (each rank makes the
// same switch at the same point, with no collective in flight: the untimed step syncs).
void OflAllReduce1MiB(benchmark::State& state, bool checked) {
  const ofl::Placement p = World();
  const ofl::Tensor x = ofl::tensor<float>(Data(kSmallElems), ofl::Shape({kSmallRows, 1024}))
                            .to_global(p, ofl::Sbp::partial_sum());
  ofl::sync();
  ofl::kernels::collective::SetCollectiveChecks(checked);
  auto step = [&] {
    ofl::Tensor y = x.to_global(p, ofl::Sbp::broadcast());
    ofl::sync();
    benchmark::DoNotOptimize(y);
  };
  step();
  MPI_Barrier(MPI_COMM_WORLD);
  LoopClock clock;
  for (auto _ : state) step();
  ofl_bench::ReportGBps(state, clock, kSmallBytes);
  ofl::kernels::collective::SetCollectiveChecks(true);
}

void MpiAllReduce1MiB(benchmark::State& state) {
  const Buffer send(Data(kSmallElems));
  const Buffer recv(std::vector<float>(static_cast<size_t>(kSmallElems)));
  Timed(
      state,
      [&] {
        MPI_Allreduce(send.data.get(), recv.data.get(), static_cast<int>(kSmallElems), MPI_FLOAT,
                      MPI_SUM, MPI_COMM_WORLD);
        benchmark::ClobberMemory();
      },
      kSmallBytes);
}

// Data-parallel training steps of the 64-128-10 MLP at batch 4096: the weight gradients arrive as
// partial sums and are all-reduced as they land, on the collective stream, while the backward of
// the layers below goes on.
void OflDataParallelStep(benchmark::State& state) {
  constexpr int64_t kBatch = 4096, kSteps = 4;
  const ofl::Placement p = World();
  ofl::manual_seed(0);
  auto model =
      std::make_shared<ofl::nn::Sequential>(std::initializer_list<std::shared_ptr<ofl::nn::Module>>{
          std::make_shared<ofl::nn::Linear>(64, 128), std::make_shared<ofl::nn::ReLU>(),
          std::make_shared<ofl::nn::Linear>(128, 10)});
  model->to_global(p, ofl::Sbp::broadcast());
  ofl::optim::Adam opt(model->parameters(), ofl::optim::AdamOptions(1e-3));
  const ofl::Tensor x = ofl::randn(ofl::Shape({kBatch, 64}))
                            .to_global(p, ofl::Sbp::broadcast())
                            .to_global(p, ofl::Sbp::split(0));
  const ofl::Tensor y = ofl::randint(0, 10, ofl::Shape({kBatch}))
                            .to_global(p, ofl::Sbp::broadcast())
                            .to_global(p, ofl::Sbp::split(0));
  auto steps = [&] {
    for (int64_t i = 0; i < kSteps; ++i) {
      opt.zero_grad();
      const ofl::Tensor loss = ofl::cross_entropy((*model)(x), y);
      loss.backward();
      opt.step();
    }
    ofl::sync();
  };
  steps();
  MPI_Barrier(MPI_COMM_WORLD);
  LoopClock clock;
  for (auto _ : state) steps();
  ofl_bench::ReportNsPerOp(state, clock, kSteps);
}

// ofl's broadcast shard must equal what MPI computes from the same inputs. The verdict is agreed
// over the world, so that every rank goes on (or stops) alike.
bool Check() {
  const Split s = SplitRows();
  const ofl::Placement p = World();
  std::vector<float> want(static_cast<size_t>(kElems));
  bool ok = true;
  auto same = [&](const char* what, const ofl::Tensor& x) {
    const std::vector<float> got =
        x.to_global(p, ofl::Sbp::broadcast()).to_local().to_vector<float>();
    if (got.size() == want.size() && std::memcmp(got.data(), want.data(), kBytes) == 0) return;
    std::fprintf(stderr, "rank %d: %s/ofl differs from MPI's result\n", ofl::rank(), what);
    ok = false;
  };
  AllGather(Data(s.counts[s.me]).data(), want.data(), s);
  same("boxing_s0_to_b_64MiB", SplitInput(s));
  AllReduce(Data(kElems).data(), want.data());
  same("boxing_p_to_b_64MiB", PartialInput());
  int all_ok = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all_ok == 1;
}

class NullReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

bool StartsWith(const char* arg, const char* prefix) {
  return std::strncmp(arg, prefix, std::strlen(prefix)) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  ofl::init_distributed();
  const int rank = ofl::rank();
  // Ranks other than 0 drop --benchmark_out* as well: they must not truncate rank 0's file.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (StartsWith(argv[i], "--benchmark_min_warmup_time") ||
        StartsWith(argv[i], "--benchmark_enable_random_interleaving")) {
      if (rank == 0) std::fprintf(stderr, "ignoring %s: the ranks would diverge\n", argv[i]);
      continue;
    }
    if (rank != 0 && StartsWith(argv[i], "--benchmark_out")) continue;
    args.push_back(argv[i]);
  }
  int args_n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&args_n, args.data());
  if (benchmark::ReportUnrecognizedArguments(args_n, args.data()) || !Check()) {
    ofl::shutdown();
    return 1;
  }
  auto reg = [](const std::string& name, void (*fn)(benchmark::State&)) {
    ofl_bench::Register(name, fn)->Unit(benchmark::kMillisecond)->Iterations(kIterations);
  };
  // Rounds in turn rather than --benchmark_repetitions in a row: load from other work then
  // falls on every implementation alike. ratios.py takes a name's runs as its repetitions.
  for (int round = 0; round < kRounds; ++round) {
    reg("boxing_s0_to_b_64MiB/ofl",
        [](benchmark::State& s) { OflBox(s, SplitInput(SplitRows())); });
    reg("boxing_s0_to_b_64MiB/mpi_allgather", MpiAllGather);
    reg("boxing_p_to_b_64MiB/ofl", [](benchmark::State& s) { OflBox(s, PartialInput()); });
    reg("boxing_p_to_b_64MiB/mpi_allreduce", MpiAllReduce);
    auto small = [](const std::string& name, void (*fn)(benchmark::State&)) {
      ofl_bench::Register(name, fn)->Unit(benchmark::kMicrosecond)->Iterations(kSmallIterations);
    };
    small("allreduce_1MiB/ofl", [](benchmark::State& s) { OflAllReduce1MiB(s, true); });
    small("allreduce_1MiB/ofl_unchecked", [](benchmark::State& s) { OflAllReduce1MiB(s, false); });
    small("allreduce_1MiB/mpi_allreduce", MpiAllReduce1MiB);
    ofl_bench::Register("dp_step_b4096/ofl", OflDataParallelStep)
        ->Unit(benchmark::kMillisecond)
        ->Iterations(kIterations);
  }

  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  const std::string mpi(version, static_cast<size_t>(len));
  benchmark::AddCustomContext("mpi", mpi.substr(0, mpi.find_first_of(",\n")));
  benchmark::AddCustomContext("world_size", std::to_string(ofl::world_size()));
  benchmark::AddCustomContext("ofl_threads", std::to_string(ofl_bench::NumCpus()) + " per rank");
  benchmark::AddCustomContext("malloc", ofl_bench::ProcessMalloc());
  benchmark::AddCustomContext("libtorch", "none in this program");
  benchmark::AddCustomContext("note", "GB/s counts the 64 MiB logical tensor per conversion; " +
                                          std::to_string(kIterations) + " iterations x " +
                                          std::to_string(kRounds) + " interleaved rounds, fixed");
  NullReporter quiet;
  if (rank == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    benchmark::RunSpecifiedBenchmarks(&quiet);
  }
  benchmark::Shutdown();
  ofl::shutdown();
  return 0;
}
