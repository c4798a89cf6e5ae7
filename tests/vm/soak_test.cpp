// Load and soak: 4 issuing threads each issue OFL_SOAK_OPS tiny ops (default 20,000 per thread,
// 10,000 on a device other than the CPU; the full run shown in docs/checks.md is 1,000,000) with
// random dependencies (ops read tensors shared by every thread and the thread's own recent results)
// and random lifetimes (a result replaces a random slot, so the tensor there dies). Every result is
// checked against a plain reference by an asynchronous read on the VM's worker, and now and then by
// a blocking read. In-flight instructions must stay under the back-pressure high-water mark plus
// one batch per issuer, pool memory must stay bounded by what that many instructions and the live
// tensors can hold, and a watchdog aborts the run with the VM's hang report if nothing progresses
// for OFL_SOAK_WATCHDOG_SECONDS (default 60). Prints ops/s, peak in-flight instructions and peak
// pool bytes. Runs on VmTestDevice(); there the asynchronous check reads a CPU copy of the result,
// since the host may not touch device memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"
#include "tests/vm/vm_test_util.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl {
namespace {

using vm::testing::ScopeGuard;
using vm::testing::VmTestDevice;

constexpr int kThreads = 4;
constexpr int kSlots = 16;            // recent results kept per thread
constexpr int kShared = 8;            // tensors every thread reads
constexpr int64_t kMaxLen = 8;        // every tensor is 1-D with 1..8 floats
constexpr float kMaxMagnitude = 1e4;  // sums of integers stay exact in float below this
constexpr int64_t kHighWater = 1024;  // the soak's back-pressure marks
constexpr int64_t kLowWater = 512;
// The VM's defaults, restored after the run (as tests/vm/back_pressure_test.cpp does).
constexpr int64_t kDefaultHigh = 16384;
constexpr int64_t kDefaultLow = 8192;
// Every block the pool hands out for a tensor of <= 8 floats is one 64-byte size class.
constexpr int64_t kBlockBytes = 64;

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoll(v, nullptr, 10);
}

struct Value {
  Tensor t;
  std::vector<float> ref;
};

float MaxAbs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

// What every thread reports back.
struct Shared {
  std::atomic<int64_t> ops{0};      // op calls issued (progress for the watchdog)
  std::atomic<int64_t> checked{0};  // results compared on the worker
  std::atomic<int64_t> mismatches{0};
  std::atomic<int64_t> blocking_reads{0};
  std::mutex mu;
  std::string first_problem;  // guarded by mu
  void Problem(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    if (first_problem.empty()) first_problem = what;
  }
};

// Queues a read of `v` that compares it with its reference on the worker; does not wait. On a
// device the host cannot read, the comparison reads a CPU copy made by an asynchronous Tensor::to
// (on the CPU, to() returns `v.t` itself, so the callback reads the result's own block).
void CheckAsync(const Value& v, Shared* shared) {
  if (!v.t.is_contiguous()) {
    shared->Problem("a result is not contiguous: shape " + v.t.shape().str());
    return;
  }
  auto expected = std::make_shared<std::vector<float>>(v.ref);
  const Tensor host = v.t.to(Device("cpu"));
  vm::PhysicalRun([&](vm::InstructionsBuilder* b) {
    b->AccessBlobByCallback(
        "soak_check", host.impl()->arg(),
        [expected, shared](const kernels::TensorArg& src) {
          const size_t bytes = expected->size() * sizeof(float);
          if (std::memcmp(src.data, expected->data(), bytes) != 0) {
            shared->mismatches.fetch_add(1);
            shared->Problem("a result differs from the reference (" +
                            std::to_string(expected->size()) + " floats)");
          }
          shared->checked.fetch_add(1, std::memory_order_relaxed);
        },
        vm::AccessModifier::kConst);
  });
}

Value Host(std::mt19937_64& rng) {
  const int64_t len = 1 + static_cast<int64_t>(rng() % kMaxLen);
  std::vector<float> v;
  for (int64_t i = 0; i < len; ++i)
    v.push_back(static_cast<float>(static_cast<int>(rng() % 11) - 5));
  return {tensor<float>(v, Shape({len}), VmTestDevice()), v};
}

// One random op on x; returns false when the op does not apply to x (the caller picks again).
bool RandomOp(const Value& x, std::mt19937_64& rng, Value* out) {
  const int64_t len = x.t.numel();
  const std::vector<float>& a = x.ref;
  switch (rng() % 6) {
    case 0: {  // repeat
      const int64_t r = 2 * len <= kMaxLen ? 2 : 1;
      out->t = x.t.repeat({r});
      out->ref.clear();
      for (int64_t i = 0; i < r; ++i) out->ref.insert(out->ref.end(), a.begin(), a.end());
      return true;
    }
    case 1: {  // broadcast copy: (1,L) -> (k,L), contiguous, flattened, cut to 8
      const int64_t k = 2 + static_cast<int64_t>(rng() % 2);
      Tensor y = x.t.reshape({1, len}).expand({k, len}).contiguous().reshape({k * len});
      const int64_t keep = std::min(k * len, kMaxLen);
      out->t = y.narrow(0, 0, keep);
      out->ref.clear();
      for (int64_t i = 0; i < keep; ++i) out->ref.push_back(a[i % len]);
      return true;
    }
    case 2: {  // a strided slice made contiguous
      if (len < 2) return false;
      const int64_t start = 1 + static_cast<int64_t>(rng() % (len - 1));
      const int64_t n = 1 + static_cast<int64_t>(rng() % (len - start));
      out->t = x.t.narrow(0, start, n).contiguous();
      out->ref.assign(a.begin() + start, a.begin() + start + n);
      return true;
    }
    case 3: {  // expand backward: k * x
      const int64_t k = 2 + static_cast<int64_t>(rng() % 2);
      if (MaxAbs(a) * k > kMaxMagnitude) return false;
      out->t = expand_backward(x.t.expand({k, len}), Shape({len}));
      out->ref.clear();
      for (float v : a) out->ref.push_back(v * static_cast<float>(k));
      return true;
    }
    case 4: {  // repeat backward: the two halves summed
      if (len % 2 != 0 || MaxAbs(a) * 2 > kMaxMagnitude) return false;
      const int64_t h = len / 2;
      out->t = repeat_backward(x.t, Shape({h}), {2});
      out->ref.clear();
      for (int64_t i = 0; i < h; ++i) out->ref.push_back(a[i] + a[i + h]);
      return true;
    }
    default: {  // transpose of (2, L/2)
      if (len % 2 != 0 || len < 4) return false;
      const int64_t h = len / 2;
      out->t = x.t.reshape({2, h}).permute({1, 0}).contiguous().reshape({len});
      out->ref.clear();
      for (int64_t j = 0; j < h; ++j) {
        for (int64_t i = 0; i < 2; ++i) out->ref.push_back(a[i * h + j]);
      }
      return true;
    }
  }
}

void Issuer(int id, int64_t ops, const std::vector<Value>& shared_values, Shared* shared) {
  std::mt19937_64 rng(0x5eed0000 + id);
  std::vector<Value> slots(kSlots);
  try {
    for (int64_t i = 0; i < ops; ++i) {
      const uint64_t pick = rng() % 16;
      Value result;
      if (pick == 0) {
        result = Host(rng);
      } else {
        const Value* x = nullptr;
        if (pick < 5) {
          x = &shared_values[rng() % kShared];
        } else {
          x = &slots[rng() % kSlots];
          if (!x->t.defined()) x = &shared_values[rng() % kShared];
        }
        while (!RandomOp(*x, rng, &result)) {
        }
      }
      CheckAsync(result, shared);
      if (i % 256 == 255) {  // a blocking read now and then
        const Value& r = slots[rng() % kSlots];
        if (r.t.defined()) {
          if (r.t.to_vector<float>() != r.ref) {
            shared->mismatches.fetch_add(1);
            shared->Problem("a blocking read differs from the reference");
          }
          shared->blocking_reads.fetch_add(1, std::memory_order_relaxed);
        }
      }
      Value& slot = slots[rng() % kSlots];
      slot = std::move(result);  // what was there dies (random lifetimes)
      if (rng() % 32 == 0) slots[rng() % kSlots] = Value();
      shared->ops.fetch_add(1, std::memory_order_relaxed);
    }
  } catch (const std::exception& e) {
    shared->Problem(std::string("thread ") + std::to_string(id) + " threw: " + e.what());
  }
}

TEST(SoakTest, FourIssuersOfTinyOpsStayCorrectAndBounded) {
  vm::VirtualMachine& vm = vm::VirtualMachine::Get();
  sync();
  // The simulated device delays every task on each of its streams by ~0.1 ms, which makes an op
  // there tens of times slower than on the CPU: half the ops keep the suite's run time in bounds.
  const int64_t default_ops = VmTestDevice().is_cpu() ? 20000 : 10000;
  const int64_t ops_per_thread = EnvInt("OFL_SOAK_OPS", vm.sync_mode() ? 2000 : default_ops);
  const int64_t watchdog_s = EnvInt("OFL_SOAK_WATCHDOG_SECONDS", 60);
  ASSERT_GT(ops_per_thread, 0);

  const double old_timeout = vm.wait_timeout();
  vm.SetWaterMarks(kHighWater, kLowWater);
  // A wait that sees nothing complete for the watchdog's period throws the VM's hang report.
  ofl::vm::VmTesting::SetWaitTimeout(static_cast<double>(watchdog_s));
  ScopeGuard restore([&vm, old_timeout] {
    vm.SetWaterMarks(kDefaultHigh, kDefaultLow);
    ofl::vm::VmTesting::SetWaitTimeout(old_timeout);
  });

  std::mt19937_64 rng(42);
  std::vector<Value> shared_values;
  for (int i = 0; i < kShared; ++i) shared_values.push_back(Host(rng));
  sync();
  reset_peak_memory_stats(VmTestDevice());  // the bound below is on this test's own peak
  const MemoryStats before = memory_stats(VmTestDevice());
  ofl::vm::VmTesting::ResetPeakInFlight();

  Shared shared;
  std::atomic<bool> done{false};
  std::mutex watchdog_mu;
  std::condition_variable watchdog_cv;
  std::thread watchdog([&] {
    int64_t last = -1;
    auto last_progress = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(watchdog_mu);
    while (!done.load()) {
      watchdog_cv.wait_for(lock, std::chrono::milliseconds(200));
      const int64_t now_ops = shared.ops.load() + shared.checked.load();
      const auto now = std::chrono::steady_clock::now();
      if (now_ops != last) {
        last = now_ops;
        last_progress = now;
      } else if (now - last_progress > std::chrono::seconds(watchdog_s) && !done.load()) {
        std::string report = "(no hang report)";
        try {
          ofl::vm::VmTesting::SetWaitTimeout(1.0);
          vm.Sync();
        } catch (const std::exception& e) {
          report = e.what();
        }
        std::fprintf(stderr, "soak watchdog: no progress for %lld s after %lld ops; %s\n",
                     static_cast<long long>(watchdog_s), static_cast<long long>(now_ops),
                     report.c_str());
        std::abort();  // the issuers may be blocked for good: fail the run here
      }
    }
  });

  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> issuers;
  for (int i = 0; i < kThreads; ++i) {
    issuers.emplace_back(Issuer, i, ops_per_thread, std::cref(shared_values), &shared);
  }
  for (std::thread& t : issuers) t.join();
  std::string sync_error;
  try {
    sync();
  } catch (const std::exception& e) {
    sync_error = e.what();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  {
    std::lock_guard<std::mutex> lock(watchdog_mu);
    done = true;
  }
  watchdog_cv.notify_all();
  watchdog.join();

  const MemoryStats after = memory_stats(VmTestDevice());
  const int64_t total = ops_per_thread * kThreads;
  EXPECT_EQ(sync_error, "");
  EXPECT_EQ(shared.first_problem, "");
  EXPECT_EQ(shared.mismatches.load(), 0);
  EXPECT_EQ(shared.ops.load(), total);
  EXPECT_EQ(shared.checked.load(), total) << "a result was never checked";
  EXPECT_GT(shared.blocking_reads.load(), 0);
  // Each issuer passes the water-mark check before its batch lands, so up to one batch per issuer
  // (an op, its check, a release: a handful of instructions) may sit above the mark.
  const int64_t slack = kThreads * 8;
  EXPECT_LE(vm::VmTesting::peak_in_flight(), kHighWater + slack);
  // Every in-flight instruction writes at most one block and every live tensor holds one.
  const int64_t live_tensors = kThreads * kSlots + kShared;
  const int64_t bound = before.allocated_bytes + (kHighWater + slack + live_tensors) * kBlockBytes;
  EXPECT_LE(after.peak_allocated_bytes, bound);
  shared_values.clear();
  sync();
  EXPECT_EQ(memory_stats(VmTestDevice()).allocated_bytes,
            before.allocated_bytes - kShared * kBlockBytes)
      << "blocks leaked";
  std::printf(
      "[ soak ] on %s: %d threads x %lld ops = %lld ops in %.2f s: %.0f ops/s; peak in flight "
      "%lld (high-water mark %lld); pool allocated before %lld B, peak %lld B (bound %lld B), "
      "reserved peak %lld B; %lld blocking reads\n",
      VmTestDevice().str().c_str(), kThreads, static_cast<long long>(ops_per_thread),
      static_cast<long long>(total), seconds, static_cast<double>(total) / seconds,
      static_cast<long long>(vm::VmTesting::peak_in_flight()), static_cast<long long>(kHighWater),
      static_cast<long long>(before.allocated_bytes),
      static_cast<long long>(after.peak_allocated_bytes), static_cast<long long>(bound),
      static_cast<long long>(after.peak_reserved_bytes),
      static_cast<long long>(shared.blocking_reads.load()));
}

}  // namespace
}  // namespace ofl
