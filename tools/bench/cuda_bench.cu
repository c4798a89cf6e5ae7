// ofl_bench_cuda: oneflow_lite's ops on cuda:0 against what the CUDA runtime itself does in the
// same process, on the same GPU. Two kinds of case:
//
//   large copies (cuda_expand_rows, cuda_expand_cols, cuda_repeat_2d, cuda_repeat_4d, and the
//   backward cuda_expand_rows_bwd) report "GB/s" = effective bandwidth, (bytes written + unique
//   bytes read) / wall time. A batch of ops is issued back to back, then one wait (ofl::sync(),
//   cudaStreamSynchronize), per benchmark iteration, so that the wait's latency is spread over the
//   batch. Baselines, on one non-blocking stream of this program:
//     cudaMemcpy   cudaMemcpyAsync device to device of the case's large tensor (the output; for
//                  the backward, dy): 2x its bytes moved. A kernel that writes the output once and
//                  reads its small input from cache does half a copy's traffic per output byte, so
//                  its effective bandwidth near the copy's means it runs at the memory's speed;
//     cudaMemset   cudaMemsetAsync of the output's bytes (copies only): the write-only bound.
//   "ofl_sync_each" waits after every op: the latency of one op and its wait, as GB/s.
//
//   tiny ops (cuda_tiny_expand_contiguous, cuda_tiny_repeat, cuda_tiny_empty) report
//   "ns_per_op": kTinyOps ops back to back, then ofl::sync(). Baseline "empty_kernel": kTinyOps
//   launches of an empty kernel on one stream, then cudaStreamSynchronize: the least a queued GPU
//   op can cost.
//
// Names are "<case>/<impl>" (tools/bench/ratios.py compares every impl of a case with "ofl");
// tools/bench/torch_cuda_bench.py measures the same cases with PyTorch under the same names with
// impl "torch", so `ratios.py ofl_bench_cuda.json torch_cuda.json` puts them side by side. Timing
// is wall clock over the whole benchmark loop (ofl_bench::LoopClock): every iteration ends in a
// wait, so the loop's wall time is the GPU's time plus what the wait adds. (UseManualTime would
// rename every run "<case>/<impl>/manual_time", which ratios.py does not strip.)
//
// Without a CUDA device (cudaGetDeviceCount fails or finds none) every benchmark is skipped with
// "no CUDA device: <CUDA's reason>" and the program exits 0. With one, every ofl op is first
// checked against a host reference; a wrong result exits 1 before anything is timed.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "tools/bench/bench_util.h"

namespace {

using ofl_bench::LoopClock;
using ofl_bench::ReportGBps;
using ofl_bench::ReportNsPerOp;

constexpr int64_t kTinyOps = 1000;
constexpr char kDevice[] = "cuda:0";
// About this many effective bytes per batch: a few milliseconds of HBM traffic, long against the
// wait at the batch's end.
constexpr int64_t kBatchBytes = int64_t{8} << 30;

__global__ void EmptyKernel() {}

// Made once: parsing "cuda:0" is no part of an op's cost.
const ofl::Device& CudaDevice() {
  static const ofl::Device device(kDevice);
  return device;
}

// Empty when cuda:0 is usable; otherwise why not, in CUDA's words.
std::string& NoDeviceReason() {
  static std::string reason;
  return reason;
}

std::string ProbeDevice() {
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string(cudaGetErrorString(err)) + " (" + cudaGetErrorName(err) +
           " from cudaGetDeviceCount)";
  }
  if (n == 0) return "cudaGetDeviceCount found 0 devices";
  return {};
}

// Skips the benchmark when there is no device; true when it may run.
bool HaveDevice(benchmark::State& state) {
  if (NoDeviceReason().empty()) return true;
  state.SkipWithError(("no CUDA device: " + NoDeviceReason()).c_str());
  return false;
}

// Skips the benchmark on a failed CUDA call; true on success.
bool CudaOk(benchmark::State& state, cudaError_t err, const char* call) {
  if (err == cudaSuccess) return true;
  const std::string msg =
      std::string(call) + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
  state.SkipWithError(msg.c_str());
  return false;
}

// Runs one benchmark body; an exception (an ofl::Error from the VM, say) skips the benchmark with
// its message instead of ending the program.
void Guarded(benchmark::State& state, const std::function<void()>& body) {
  if (!HaveDevice(state)) return;
  try {
    body();
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// Device memory of the baselines, freed when the benchmark ends.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    err_ = cudaMalloc(&ptr_, bytes);
    if (err_ != cudaSuccess) ptr_ = nullptr;
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  cudaError_t error() const { return err_; }

 private:
  void* ptr_ = nullptr;
  cudaError_t err_;
};

class Stream {
 public:
  Stream() { err_ = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); }
  ~Stream() {
    if (err_ == cudaSuccess) (void)cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }
  cudaError_t error() const { return err_; }

 private:
  cudaStream_t stream_ = nullptr;
  cudaError_t err_;
};

// ---- large copies -----------------------------------------------------------------------------

enum class OpKind { kExpand, kRepeat, kExpandBackward };

struct Case {
  std::string name;
  OpKind kind;
  std::vector<int64_t> input;   // the op's input (for the backward: dy)
  std::vector<int64_t> arg;     // expand: the sizes; repeat: the repeats; backward: unused
  std::vector<int64_t> output;  // the op's output (for the backward: the forward input's shape)
};

using ofl_bench::Numel;

int64_t Bytes(const std::vector<int64_t>& shape) {
  return Numel(shape) * static_cast<int64_t>(sizeof(float));
}

// Every input element is read at least once by each of these ops.
int64_t EffectiveBytes(const Case& c) { return Bytes(c.output) + Bytes(c.input); }

// The tensor the baselines copy: the larger of input and output.
int64_t LargeBytes(const Case& c) { return std::max(Bytes(c.output), Bytes(c.input)); }

int64_t BatchOf(int64_t bytes_per_op) {
  return std::clamp<int64_t>(kBatchBytes / std::max<int64_t>(bytes_per_op, 1), 8, 256);
}

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"cuda_expand_rows", OpKind::kExpand, {1, 4096}, {8192, 4096}, {8192, 4096}},
      {"cuda_expand_cols", OpKind::kExpand, {4096, 1}, {4096, 8192}, {4096, 8192}},
      {"cuda_repeat_2d", OpKind::kRepeat, {1024, 1024}, {8, 2}, {8192, 2048}},
      {"cuda_repeat_4d", OpKind::kRepeat, {16, 1, 1024, 64}, {1, 8, 1, 1}, {16, 8, 1024, 64}},
      {"cuda_expand_rows_bwd", OpKind::kExpandBackward, {8192, 4096}, {}, {1, 4096}},
  };
  return cases;
}

// Small integers, so that the backward's sums are exact in float whatever the order of addition
// (8192 * 6 < 2^24).
std::vector<float> ForwardInput(const std::vector<int64_t>& shape) {
  std::vector<float> data(static_cast<size_t>(Numel(shape)));
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 7);
  return data;
}

// The op's input on cuda:0. For the backward, dy = the forward input of the same name expanded,
// made contiguous: row i of dy is the forward input's row, so dy's column sums are 8192 * it.
ofl::Tensor OpInput(const Case& c) {
  const ofl::Device& dev = CudaDevice();
  if (c.kind != OpKind::kExpandBackward) {
    return ofl::tensor<float>(ForwardInput(c.input), ofl::Shape(c.input), dev);
  }
  const ofl::Tensor row = ofl::tensor<float>(ForwardInput(c.output), ofl::Shape(c.output), dev);
  return row.expand(c.input).contiguous();
}

ofl::Tensor RunOp(const Case& c, const ofl::Tensor& x) {
  switch (c.kind) {
    case OpKind::kExpand:
      return x.expand(c.arg).contiguous();
    case OpKind::kRepeat:
      return x.repeat(c.arg);
    case OpKind::kExpandBackward:
      return ofl::expand_backward(x, ofl::Shape(c.output));
  }
  return {};
}

// Output element idx of expand and repeat is input element (idx mod the input shape, aligned to
// the right); the backward of the row expand sums dy's 8192 equal rows.
std::vector<float> Reference(const Case& c) {
  if (c.kind == OpKind::kExpandBackward) {
    std::vector<float> out = ForwardInput(c.output);
    for (float& v : out) v *= static_cast<float>(c.input[0]);
    return out;
  }
  const std::vector<float> in = ForwardInput(c.input);
  return ofl_bench::TiledReference(in, c.input, c.output);
}

void Ofl(benchmark::State& state, const Case& c, bool sync_each) {
  Guarded(state, [&] {
    const int64_t batch = sync_each ? 1 : BatchOf(EffectiveBytes(c));
    const ofl::Tensor x = OpInput(c);
    for (int64_t i = 0; i < batch; ++i) {  // untimed: fills the pool, loads the kernels
      ofl::Tensor y = RunOp(c, x);
      benchmark::DoNotOptimize(y);
    }
    ofl::sync();
    LoopClock clock;
    for (auto _ : state) {
      for (int64_t i = 0; i < batch; ++i) {
        ofl::Tensor y = RunOp(c, x);
        benchmark::DoNotOptimize(y);
      }
      ofl::sync();
    }
    ReportGBps(state, clock, batch * EffectiveBytes(c));
    state.counters["batch"] = static_cast<double>(batch);
  });
}

// A batch of cudaMemcpyAsync (memset: cudaMemsetAsync) on one stream, then one synchronize.
void Baseline(benchmark::State& state, const Case& c, bool write_only) {
  Guarded(state, [&] {
    const size_t bytes = static_cast<size_t>(write_only ? Bytes(c.output) : LargeBytes(c));
    const int64_t moved =
        write_only ? static_cast<int64_t>(bytes) : 2 * static_cast<int64_t>(bytes);
    const int64_t batch = BatchOf(moved);
    Stream stream;
    DeviceBuffer dst(bytes);
    std::optional<DeviceBuffer> src;
    if (!write_only) src.emplace(bytes);
    if (!CudaOk(state, stream.error(), "cudaStreamCreateWithFlags") ||
        !CudaOk(state, dst.error(), "cudaMalloc") ||
        (src && !CudaOk(state, src->error(), "cudaMalloc"))) {
      return;
    }
    if (src &&
        !CudaOk(state, cudaMemsetAsync(src->get(), 1, bytes, stream.get()), "cudaMemsetAsync")) {
      return;
    }
    auto issue = [&]() {
      for (int64_t i = 0; i < batch; ++i) {
        const cudaError_t err =
            write_only ? cudaMemsetAsync(dst.get(), static_cast<int>(i & 0xff), bytes, stream.get())
                       : cudaMemcpyAsync(dst.get(), src->get(), bytes, cudaMemcpyDeviceToDevice,
                                         stream.get());
        if (!CudaOk(state, err, write_only ? "cudaMemsetAsync" : "cudaMemcpyAsync")) return false;
      }
      return CudaOk(state, cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
    };
    if (!issue()) return;  // warm-up
    LoopClock clock;
    for (auto _ : state) {
      if (!issue()) break;
    }
    ReportGBps(state, clock, batch * moved);
    state.counters["batch"] = static_cast<double>(batch);
  });
}

// ---- tiny ops ---------------------------------------------------------------------------------

// x[i][0][k] = 3i + k, on cuda:0.
ofl::Tensor TinyInput() {
  std::vector<float> data(12);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  ofl::Tensor x = ofl::tensor<float>(data, ofl::Shape{4, 1, 3}, CudaDevice());
  ofl::sync();
  return x;
}

enum class TinyKind { kExpandContiguous, kRepeat, kEmpty };

ofl::Tensor RunTiny(TinyKind kind, const ofl::Tensor& x) {
  switch (kind) {
    case TinyKind::kExpandContiguous:
      return x.expand({4, 5, 3}).contiguous();
    case TinyKind::kRepeat:
      return x.repeat({2, 1, 2});
    case TinyKind::kEmpty:
      return ofl::empty(ofl::Shape{4, 3}, ofl::DType::kFloat32, CudaDevice());
  }
  return {};
}

void OflTiny(benchmark::State& state, TinyKind kind) {
  Guarded(state, [&] {
    const ofl::Tensor x = TinyInput();
    for (int64_t i = 0; i < kTinyOps; ++i) {  // untimed
      ofl::Tensor y = RunTiny(kind, x);
      benchmark::DoNotOptimize(y);
    }
    ofl::sync();
    LoopClock clock;
    for (auto _ : state) {
      for (int64_t i = 0; i < kTinyOps; ++i) {
        ofl::Tensor y = RunTiny(kind, x);
        benchmark::DoNotOptimize(y);
      }
      ofl::sync();
    }
    ReportNsPerOp(state, clock, kTinyOps);
  });
}

void EmptyKernels(benchmark::State& state) {
  Guarded(state, [&] {
    Stream stream;
    if (!CudaOk(state, stream.error(), "cudaStreamCreateWithFlags")) return;
    auto issue = [&]() {
      for (int64_t i = 0; i < kTinyOps; ++i) EmptyKernel<<<1, 1, 0, stream.get()>>>();
      return CudaOk(state, cudaGetLastError(), "EmptyKernel<<<1, 1>>>") &&
             CudaOk(state, cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
    };
    if (!issue()) return;  // warm-up: the module loads on the first launch
    LoopClock clock;
    for (auto _ : state) {
      if (!issue()) break;
    }
    ReportNsPerOp(state, clock, kTinyOps);
  });
}

// ---- checks and main ----------------------------------------------------------------------------

bool Same(const std::string& what, const std::vector<float>& got, const std::vector<float>& want) {
  if (got.size() == want.size() &&
      std::memcmp(got.data(), want.data(), got.size() * sizeof(float)) == 0) {
    return true;
  }
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  std::fprintf(stderr, "ofl_bench_cuda: %s/ofl produced a wrong result (%zu values, want %zu",
               what.c_str(), got.size(), want.size());
  if (i < got.size() && i < want.size()) {
    std::fprintf(stderr, "; first difference at %zu: %g, want %g", i, got[i], want[i]);
  }
  std::fprintf(stderr, ")\n");
  return false;
}

// Checks once, before timing, that every ofl op computes what its case claims on cuda:0.
bool VerifyAll() {
  bool ok = true;
  for (const Case& c : Cases()) {
    const ofl::Tensor y = RunOp(c, OpInput(c));
    ok &= y.device() == CudaDevice() && y.shape() == ofl::Shape(c.output) &&
          Same(c.name, y.to_vector<float>(), Reference(c));
  }
  const ofl::Tensor x = TinyInput();
  std::vector<float> expanded, repeated;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 5; ++j) {
      for (int k = 0; k < 3; ++k) expanded.push_back(static_cast<float>(3 * i + k));
    }
  }
  for (int t = 0; t < 2; ++t) {  // (4,1,3) by (2,1,2) -> (8,1,6)
    for (int i = 0; i < 4; ++i) {
      for (int r = 0; r < 2; ++r) {
        for (int k = 0; k < 3; ++k) repeated.push_back(static_cast<float>(3 * i + k));
      }
    }
  }
  ok &= Same("cuda_tiny_expand_contiguous",
             RunTiny(TinyKind::kExpandContiguous, x).to_vector<float>(), expanded);
  ok &= Same("cuda_tiny_repeat", RunTiny(TinyKind::kRepeat, x).to_vector<float>(), repeated);
  const ofl::Tensor e = RunTiny(TinyKind::kEmpty, x);
  if (e.shape() != ofl::Shape{4, 3} || e.device() != CudaDevice()) {
    std::fprintf(stderr, "ofl_bench_cuda: cuda_tiny_empty/ofl has the wrong shape or device\n");
    ok = false;
  }
  ofl::sync();
  return ok;
}

void AddDeviceContext() {
  int runtime = 0;
  int driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  benchmark::AddCustomContext("cuda_runtime", std::to_string(runtime));
  benchmark::AddCustomContext("cuda_driver", std::to_string(driver));
  if (!NoDeviceReason().empty()) {
    benchmark::AddCustomContext("cuda_device", "none: " + NoDeviceReason());
    return;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  benchmark::AddCustomContext("cuda_device",
                              std::string(prop.name) + ", sm_" + std::to_string(prop.major) +
                                  std::to_string(prop.minor) + ", " +
                                  std::to_string(prop.multiProcessorCount) + " SMs, " +
                                  std::to_string(prop.totalGlobalMem >> 20) + " MiB");
}

}  // namespace

int main(int argc, char** argv) {
  NoDeviceReason() = ProbeDevice();
  const bool have_device = NoDeviceReason().empty();
  if (!have_device) {
    std::fprintf(stderr, "ofl_bench_cuda: no CUDA device: %s; every benchmark is skipped\n",
                 NoDeviceReason().c_str());
  } else {
    try {
      if (!VerifyAll()) return 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ofl_bench_cuda: checking the ofl ops on %s failed: %s\n", kDevice,
                   e.what());
      return 1;
    }
  }
  auto reg = [](const std::string& name, std::function<void(benchmark::State&)> fn) {
    ofl_bench::Register(name, std::move(fn))->Unit(benchmark::kMicrosecond);
  };
  for (const Case& c : Cases()) {
    reg(c.name + "/ofl", [&c](benchmark::State& s) { Ofl(s, c, /*sync_each=*/false); });
    reg(c.name + "/ofl_sync_each", [&c](benchmark::State& s) { Ofl(s, c, /*sync_each=*/true); });
    reg(c.name + "/cudaMemcpy",
        [&c](benchmark::State& s) { Baseline(s, c, /*write_only=*/false); });
    if (c.kind != OpKind::kExpandBackward) {
      reg(c.name + "/cudaMemset",
          [&c](benchmark::State& s) { Baseline(s, c, /*write_only=*/true); });
    }
  }
  const std::pair<const char*, TinyKind> tiny[] = {
      {"cuda_tiny_expand_contiguous", TinyKind::kExpandContiguous},
      {"cuda_tiny_repeat", TinyKind::kRepeat},
      {"cuda_tiny_empty", TinyKind::kEmpty},
  };
  for (const auto& [name, kind] : tiny) {
    const TinyKind k = kind;
    reg(std::string(name) + "/ofl", [k](benchmark::State& s) { OflTiny(s, k); });
    reg(std::string(name) + "/empty_kernel", EmptyKernels);
  }
  AddDeviceContext();
  const int rc = ofl_bench::RunMain(
      argc, argv,
      "cuda:0: GB/s = (bytes written + unique bytes read) / wall time of a batch of ops and one "
      "wait; cudaMemcpy moves 2x the large tensor's bytes; ns_per_op = 1000 ops then one wait");
  // The VM's pools hold cudaMalloc'ed blocks: give them back while the CUDA runtime is alive.
  if (have_device) ofl::shutdown();
  return rc;
}
