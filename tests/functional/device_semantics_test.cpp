// What makes a device asynchronous, checked on the simulated accelerator (sim:0, sim:1): chains
// across its streams (h2d -> compute -> d2h), copies between devices, pool reuse while work is in
// flight, out-of-memory, faults reported by query_event (recoverable and sticky), bad indices and
// missing kernels. The last tests break one VM rule each in a child process and show that the
// simulator catches it: these suites would fail if the VM treated "launched" as "complete".
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "functional_test_util.h"
#include "host_memory_backend.h"
#include "kernels/sim/sim_backend.h"
#include "sim_gate.h"
#include "vm/instructions_builder.h"
#include "vm/virtual_machine.h"
#include "vm/vm_testing.h"

namespace ofl::testing {
namespace {

using vm::BrokenRule;
using vm::VirtualMachine;

std::vector<float> Iota(size_t n, float start) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// One round of eight chains h2d -> expand().contiguous() -> repeat -> d2h on `device`, all queued
// before the first read, their temporaries dying while the chains are in flight; true when every
// value matches the host reference.
bool ChainMatches(const Device& device, int round) {
  const int64_t rows = 64, cols = 257;
  constexpr int kChains = 8;
  std::vector<std::vector<float>> cols_data;
  std::vector<Tensor> outs;
  for (int k = 0; k < kChains; ++k) {
    cols_data.push_back(Iota(rows, static_cast<float>((round * kChains + k) * 100)));
    outs.push_back(ofl::tensor<float>(cols_data.back(), Shape({rows, 1}), device)
                       .expand({rows, cols})
                       .contiguous()
                       .repeat({2, 1}));
  }
  for (int k = 0; k < kChains; ++k) {
    const std::vector<float> got = outs[k].to_vector<float>();
    if (got.size() != static_cast<size_t>(2 * rows * cols)) return false;
    for (int64_t i = 0; i < 2 * rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        if (got[i * cols + j] != cols_data[k][i % rows]) return false;
      }
    }
  }
  return true;
}

// Inputs that die as soon as their consumers are queued, each next input the same size: on an
// asynchronous device the next input's block may be the dead one's only once those consumers'
// work is complete. Three consumers per input keep the compute stream behind the h2d stream, so
// a block reused too early would be overwritten before it is read. True when every output is right.
bool ReusedInputsKeepValues(const Device& device, int round) {
  const int64_t n = 700;  // a size nothing else in these tests allocates
  constexpr int kInputs = 48;
  std::vector<std::vector<float>> data;
  std::vector<Tensor> outs;
  for (int k = 0; k < kInputs; ++k) {
    data.push_back(Iota(n, static_cast<float>((round * kInputs + k) * 1000)));
    const Tensor x = ofl::tensor<float>(data.back(), Shape({n, 1}), device);
    outs.push_back(x.repeat({1, 2}));
    outs.push_back(x.expand({n, 2}).contiguous());
    outs.push_back(x.repeat({1, 2}));
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const std::vector<float> got = outs[k].to_vector<float>();
    const std::vector<float>& want = data[k / 3];
    for (int64_t i = 0; i < n; ++i) {
      if (got[2 * i] != want[i] || got[2 * i + 1] != want[i]) return false;
    }
  }
  return true;
}

class DeviceSemanticsTest : public ::testing::TestWithParam<const char*> {
 protected:
  Device device() const { return Device(GetParam()); }
};

TEST_P(DeviceSemanticsTest, ChainsAcrossStreamsKeepTheirValues) {
  for (int round = 0; round < 10; ++round) {
    ASSERT_TRUE(ChainMatches(device(), round)) << "round " << round;
  }
}

TEST_P(DeviceSemanticsTest, InputsDyingWhileTheirConsumersAreInFlightKeepValues) {
  for (int round = 0; round < 5; ++round) {
    ASSERT_TRUE(ReusedInputsKeepValues(device(), round)) << "round " << round;
  }
}

TEST_P(DeviceSemanticsTest, ManyChainsInFlightBeforeAnyRead) {
  std::vector<Tensor> outs;
  for (int i = 0; i < 64; ++i) {
    const Tensor x = ofl::tensor<float>({float(i), float(i + 1)}, Shape({2, 1}), device());
    outs.push_back(x.expand({2, 3}).contiguous().repeat({1, 2}));
  }
  for (int i = 0; i < 64; ++i) {
    const std::vector<float> v = outs[i].to_vector<float>();
    ASSERT_EQ(v.size(), 12u);
    EXPECT_EQ(v[0], float(i));
    EXPECT_EQ(v[11], float(i + 1));
  }
}

TEST_P(DeviceSemanticsTest, CopiesBetweenDevicesKeepValues) {
  const std::vector<float> data = Iota(6, 1);
  const Tensor x = ofl::tensor<float>(data, Shape({2, 3}), device());
  for (const char* other : {"cpu", "sim:0", "sim:1"}) {
    const Tensor y = x.to(Device(other));
    EXPECT_EQ(y.device(), Device(other));
    EXPECT_EQ(y.to_vector<float>(), data) << GetParam() << " -> " << other;
    // Strided sources are copied in logical order, and the copy comes back intact.
    const Tensor t = x.permute({1, 0}).to(Device(other)).to(device());
    EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  }
  EXPECT_TRUE(SameStorage(x.to(device()), x));  // already there: the same tensor
}

TEST_P(DeviceSemanticsTest, BlocksFreedWhileWorkIsInFlightAreReusedSafely) {
  // Temporaries die right after their consumer is queued, so their blocks go back to the pool
  // while the device may still read them; later allocations on other streams reuse the pool.
  ofl::sync();
  const int64_t before = ofl::memory_stats(device()).allocated_bytes;
  std::mt19937 rng(7);
  for (int round = 0; round < 30; ++round) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 5000);
    std::vector<float> v = Iota(static_cast<size_t>(n), static_cast<float>(round));
    Tensor out;
    {
      const Tensor a = ofl::tensor<float>(v, Shape({n, 1}), device());
      const Tensor b = a.expand({n, 3}).contiguous();
      out = ofl::expand_backward(b, Shape({n, 1}));
    }
    const std::vector<float> got = out.to_vector<float>();
    ASSERT_EQ(got.size(), v.size());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 3 * v[i]) << "round " << round << " i " << i;
  }
  ofl::sync();
  EXPECT_EQ(ofl::memory_stats(device()).allocated_bytes, before);
}

TEST_P(DeviceSemanticsTest, OutOfMemoryIsAClearErrorAndTheDeviceRecovers) {
  ofl::sync();
  ofl::empty_cache(device());
  MemoryLimitGuard guard(device());
  const int64_t ooms = ofl::memory_stats(device()).ooms;
  ofl::set_memory_limit(device(), 4 << 20);
  const Tensor x = ofl::tensor<float>({1, 2}, Shape({2, 1}), device());
  // 8 MiB > the limit; the error comes at the read (at the call in OFL_VM_SYNC=1 mode).
  ExpectThrowWith<OutOfMemory>(
      [&] {
        x.expand({2, 1 << 20}).contiguous().to_vector<float>();
      },
      {"out of memory", device().str(), "limit"});
  ofl::set_memory_limit(device(), 0);
  EXPECT_EQ(x.expand({2, 4}).contiguous().to_vector<float>(),
            (std::vector<float>{1, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_GT(ofl::memory_stats(device()).ooms, ooms);
  ExpectRuntimeWorks();
}

INSTANTIATE_TEST_SUITE_P(Devices, DeviceSemanticsTest, ::testing::Values("cpu", "sim:0", "sim:1"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string s = info.param;
                           for (char& c : s) c = c == ':' ? '_' : c;
                           return s;
                         });

TEST(SimDeviceTest, TheTraceShowsLaunchedAndComplete) {
  const std::string path = ::testing::TempDir() + "sim_trace.json";
  ofl::trace::start();
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}), Device("sim:0"));
  EXPECT_EQ(x.expand({3, 4}).contiguous().to_vector<float>().size(), 12u);
  ofl::trace::stop(path);
  std::FILE* f = std::fopen(path.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) text.append(buf, n);
  std::fclose(f);
  // A device-side track per asynchronous stream, and each instruction's completion time.
  EXPECT_NE(text.find("sim:0/compute (device: launched -> complete)"), std::string::npos);
  EXPECT_NE(text.find("\"complete\""), std::string::npos);
  EXPECT_NE(text.find("\"cat\":\"device\""), std::string::npos);
}

TEST(SimDeviceTest, AnIndexBeyondDeviceCountIsADeviceError) {
  ExpectThrowWith<DeviceError>([] { ofl::empty(Shape({2}), DType::kFloat32, Device("sim:2")); },
                               {"sim:2", "2 device(s)"});
  ExpectThrowWith<DeviceError>([] { ofl::memory_stats(Device("sim:7")); }, {"sim:7"});
  ExpectRuntimeWorks();
}

TEST(SimDeviceTest, TheHostCannotTouchDeviceMemory) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3}), Device("sim:0"));
  ofl::sync();
  const void* p = x.impl()->blob()->data();
  ASSERT_NE(p, nullptr);
  EXPECT_DEATH({ std::printf("%f\n", *static_cast<const volatile float*>(p)); }, "");
}

TEST(SimDeviceTest, AQueryFaultIsReportedAtTheNextWaitAndTheDeviceKeepsWorking) {
  const Device dev("sim:0");
  const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}), dev);
  ofl::sync();
  kernels::sim::SimBackend::Instance().InjectQueryFault(0, 1, /*sticky=*/false);
  try {
    x.expand({3, 2}).contiguous().to_vector<float>();
    ofl::sync();
    ADD_FAILURE() << "the injected fault was not reported";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("injected"), std::string::npos) << e.what();
  }
  kernels::sim::SimBackend::Instance().ClearFaults();
  try {
    ofl::sync();  // at most the error reported above, never a new one
  } catch (const DeviceError&) {
  }
  EXPECT_EQ(x.expand({3, 2}).contiguous().to_vector<float>(),
            (std::vector<float>{1, 1, 2, 2, 3, 3}));
  ExpectRuntimeWorks();
}

// The child of AStickyFaultFailsThatDeviceOnlyAndNamesTheFirstFault: exits 0 when the fault was
// reported, later ops on sim:1 name it, and sim:0 still works.
[[noreturn]] void StickyFaultChild() {
  const Tensor x = ofl::tensor<float>({1, 2}, Shape({2}), Device("sim:1"));
  ofl::sync();
  kernels::sim::SimBackend::Instance().InjectQueryFault(1, 1, /*sticky=*/true);
  bool reported = false;
  try {
    x.repeat({2}).to_vector<float>();
    ofl::sync();
  } catch (const DeviceError&) {
    reported = true;
  }
  bool later_fails = false;
  try {
    ofl::empty(Shape({2}), DType::kFloat32, Device("sim:1"));
  } catch (const DeviceError& e) {
    later_fails = std::string(e.what()).find("injected") != std::string::npos &&
                  std::string(e.what()).find("sim:1") != std::string::npos;
  }
  const bool other_works =
      ofl::tensor<float>({5}, Shape({1}), Device("sim:0")).repeat({3}).to_vector<float>() ==
      std::vector<float>{5, 5, 5};
  std::exit(reported && later_fails && other_works ? 0 : 3);
}

TEST(SimDeviceTest, AStickyFaultFailsThatDeviceOnlyAndNamesTheFirstFault) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // In a child process: the failed device stays failed for the rest of the process.
  EXPECT_EXIT(StickyFaultChild(), ::testing::ExitedWithCode(0), "");
}

// The child of ShutdownWithWorkInFlightDrainsJoinsAndRefusesLaterCalls: exits 0 when shutdown
// finished the queued work (a read that came before it saw the values), returned the pools'
// memory, and every later call threw Error while tensors could still die.
[[noreturn]] void ShutdownChild() {
  std::vector<Tensor> keep;
  for (const char* d : {"cpu", "sim:0", "sim:1"}) {
    const Tensor x = ofl::tensor<float>({1, 2, 3}, Shape({3, 1}), Device(d));
    for (int i = 0; i < 50; ++i) keep.push_back(x.expand({3, 64}).contiguous().repeat({2, 1}));
  }
  const bool read_ok = keep.back().to_vector<float>().size() == 384;
  for (int i = 0; i < 50; ++i) keep.push_back(keep[i].repeat({1, 2}));  // in flight at shutdown
  ofl::shutdown();
  ofl::shutdown();  // idempotent
  const bool memory_returned = ofl::memory_stats(Device("sim:0")).reserved_bytes == 0 &&
                               ofl::memory_stats(Device("cpu")).reserved_bytes == 0;
  int refused = 0;
  const auto expect_error = [&](const std::function<void()>& fn) {
    try {
      fn();
    } catch (const Error& e) {
      refused += std::string(e.what()).find("shut down") != std::string::npos ? 1 : 0;
    }
  };
  expect_error([] { ofl::empty(Shape({2}), DType::kFloat32, Device("sim:0")); });
  expect_error([&] { keep[0].repeat({2, 1}); });
  expect_error([&] { keep[0].to_vector<float>(); });
  expect_error([&] { keep[60].to_vector<float>(); });
  expect_error([] { ofl::sync(); });
  keep.clear();  // tensors die after the runtime: no crash
  std::exit(read_ok && memory_returned && refused == 5 ? 0 : 3 + refused);
}

TEST(ShutdownTest, ShutdownWithWorkInFlightDrainsJoinsAndRefusesLaterCalls) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(ShutdownChild(), ::testing::ExitedWithCode(0), "");
}

TEST(DeviceBackendRegistryTest, AnOpWithoutAKernelNamesTheOpAndTheDeviceType) {
  register_device_backend("nokernels", std::make_shared<HostMemoryBackend>());
  const Tensor x = ofl::tensor<float>({1, 2}, Shape({2, 1}), Device("nokernels:0"));
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2}));  // transfers need no kernel
  ExpectThrowWith<InvalidArgument>([&] { x.repeat({1, 2}); }, {"repeat", "nokernels"});
  ExpectThrowWith<InvalidArgument>([&] { x.expand({2, 2}).contiguous(); }, {"copy", "nokernels"});
  ExpectThrowWith<DeviceError>([] { ofl::empty(Shape({1}), DType::kFloat32, "nokernels:1"); },
                               {"nokernels:1", "1 device(s)"});
  ExpectRuntimeWorks();
}

// The end of the failed-device children below: exits 0 when the fault reached the caller
// (`reported`), the next op on `dev` threw at the call naming `fault`, and the CPU kept working.
[[noreturn]] void ExitWithFailedDeviceVerdict(bool reported, const Device& dev,
                                              const std::string& fault) {
  bool refused = false;
  try {
    (void)ofl::empty(Shape({2}), DType::kFloat32, dev);
  } catch (const DeviceError& e) {
    refused = std::string(e.what()).find(fault) != std::string::npos;
  }
  const bool cpu_works =
      ofl::tensor<float>({1}, Shape({1}), Device("cpu")).repeat({2}).to_vector<float>().size() == 2;
  std::exit(reported && refused && cpu_works ? 0 : 3);
}

// The child of AKernelThatThrowsDeviceFailedMarksItsDeviceFailed: exits 0 when the failed
// kernel's error reached the read, the next op on that device threw at the call naming the fault,
// and the CPU kept working.
[[noreturn]] void KernelDeviceFailedChild() {
  register_device_backend("brokenkernel", std::make_shared<HostMemoryBackend>());
  register_kernel("empty", "brokenkernel", [](const KernelContext&) {});
  register_kernel("repeat", "brokenkernel", [](const KernelContext&) {
    throw DeviceFailed("brokenkernel:0: illegal address in the repeat kernel");
  });
  const Device dev("brokenkernel:0");
  const Tensor x = ofl::empty(Shape({2}), DType::kFloat32, dev);
  bool reported = false;
  try {
    (void)x.repeat({2}).to_vector<float>();
  } catch (const DeviceError&) {
    reported = true;
  }
  ExitWithFailedDeviceVerdict(reported, dev, "illegal address");
}

TEST(DeviceBackendRegistryTest, AKernelThatThrowsDeviceFailedMarksItsDeviceFailed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(KernelDeviceFailedChild(), ::testing::ExitedWithCode(0), "");
}

// A backend whose streams after the first report a fault it cannot recover from (as the simulator
// does once another thread hit a sticky fault it has not reported yet).
class FailingStreamsBackend final : public HostMemoryBackend {
 public:
  NativeStream create_stream(int index) override {
    if (streams_++ > 0) throw DeviceFailed("failstreams:0: unrecoverable fault seen elsewhere");
    return HostMemoryBackend::create_stream(index);
  }

 private:
  std::atomic<int> streams_{0};
};

// The child of AStreamThatCannotBeCreatedForAFailedDeviceMarksItFailed: exits 0 when the read
// whose d2h stream could not be made threw, the next op on the device (whose compute stream
// exists) threw at the call naming the fault, and the CPU kept working.
[[noreturn]] void FailingStreamChild() {
  register_device_backend("failstreams", std::make_shared<FailingStreamsBackend>());
  register_kernel("empty", "failstreams", [](const KernelContext&) {});
  const Device dev("failstreams:0");
  // The compute stream: fine. 80 KB: a read this large goes on the d2h stream (a small one of an
  // unfinished output would follow its writer on the compute stream).
  const Tensor x = ofl::empty(Shape({20000}), DType::kFloat32, dev);
  bool reported = false;
  try {
    (void)x.to_vector<float>();  // needs the d2h stream
  } catch (const DeviceError&) {
    reported = true;
  }
  ExitWithFailedDeviceVerdict(reported, dev, "unrecoverable fault seen elsewhere");
}

TEST(DeviceBackendRegistryTest, AStreamThatCannotBeCreatedForAFailedDeviceMarksItFailed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(FailingStreamChild(), ::testing::ExitedWithCode(0), "");
}

TEST(DeviceBackendRegistryTest, BadRegistrationsAreRejected) {
  ExpectThrowWith<InvalidArgument>(
      [] { register_device_backend("cpu", std::make_shared<HostMemoryBackend>()); }, {"cpu"});
  ExpectThrowWith<InvalidArgument>([] { register_device_backend("x", nullptr); }, {"null"});
  ExpectThrowWith<InvalidArgument>(
      [] { register_device_backend("Bad Name", std::make_shared<HostMemoryBackend>()); },
      {"'Bad Name'", "identifier"});
  ExpectThrowWith<InvalidArgument>([] { register_kernel("copy", "nokernels", nullptr); },
                                   {"copy", "nokernels", "null"});
}

// --- The simulator catches a VM that breaks the rules of asynchronous devices ---

// Runs chains on sim:0 with `rule` broken, in a child process; the child exits 0 only when every
// value was right (and it did not crash). The parent expects anything else.
[[noreturn]] void BrokenRuleChild(BrokenRule rule) {
  // Longer device delays than the default 0..200 us: on a busy 2-core machine a thread hand-off
  // alone can take milliseconds, which would hide an early read behind a slow host.
  setenv("OFL_SIM_MAX_DELAY_US", "5000", 1);
  ofl::vm::VmTesting::BreakRule(rule);
  bool all_right = true;
  // Each round catches a broken rule only when the random delays line up; stop at the first.
  for (int round = 0; round < 100 && all_right; ++round) {
    all_right =
        ChainMatches(Device("sim:0"), round) && ReusedInputsKeepValues(Device("sim:0"), round);
  }
  std::exit(all_right ? 0 : 3);
}

bool NotACleanExit(int status) { return !(WIFEXITED(status) && WEXITSTATUS(status) == 0); }

void ExpectBrokenRuleIsCaught(BrokenRule rule) {
  if (EnvSet("OFL_VM_SYNC")) {
    GTEST_SKIP() << "OFL_VM_SYNC=1 waits for every op to complete: nothing is in flight to break";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(BrokenRuleChild(rule), NotACleanExit, "");
}

TEST(BrokenRuleTest, TreatingLaunchedAsCompleteIsCaught) {
  ExpectBrokenRuleIsCaught(BrokenRule::kCompleteAtLaunch);
}

TEST(BrokenRuleTest, SkippingTheDeviceWaitBetweenStreamsIsCaught) {
  ExpectBrokenRuleIsCaught(BrokenRule::kNoDeviceWait);
}

// Deterministic: sim:0's compute stream is held shut on the device while a tensor whose only
// reader sits behind the gate dies and a new tensor of the same size is written through the h2d
// stream. Freed at launch, the dead tensor's block is handed to the new one and overwritten
// before the reader runs; freed at completion, it cannot be.
[[noreturn]] void FreeAtLaunchChild(bool break_rule) {
  if (break_rule) ofl::vm::VmTesting::BreakRule(BrokenRule::kFreeAtLaunch);
  const Device dev("sim:0");
  const int64_t n = 700;
  const std::vector<float> a = Iota(n, 1), b = Iota(n, 100000);
  Tensor y;
  std::optional<SimStreamGate> gate;
  {
    const Tensor x = ofl::tensor<float>(a, Shape({n, 1}), dev);
    ofl::sync();
    gate.emplace(dev);
    y = x.repeat({1, 2});
  }  // x dies; its only reader is held behind the gate
  // Wait until the compute worker launched the reader, so that a block freed at launch is back in
  // the pool before z asks for one.
  gate->WaitUntilLaunched();
  const Tensor z = ofl::tensor<float>(b, Shape({n, 1}), dev);
  const bool z_ok = z.to_vector<float>() == b;  // h2d and d2h only: not behind the gate
  gate->Open();
  const std::vector<float> got = y.to_vector<float>();
  bool y_ok = true;
  for (int64_t i = 0; i < n; ++i) y_ok = y_ok && got[2 * i] == a[i] && got[2 * i + 1] == a[i];
  std::exit(z_ok && y_ok ? 0 : 3);
}

TEST(BrokenRuleTest, FreeingAtLaunchIsCaught) {
  if (EnvSet("OFL_VM_SYNC")) GTEST_SKIP() << "OFL_VM_SYNC=1 waits for every op to complete";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(FreeAtLaunchChild(/*break_rule=*/false), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(FreeAtLaunchChild(/*break_rule=*/true), NotACleanExit, "");
}

}  // namespace
}  // namespace ofl::testing
