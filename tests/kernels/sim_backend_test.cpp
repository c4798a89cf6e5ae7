// The sim backend on its own: device memory the host cannot touch, streams that finish out of
// order, events that complete only when their stream gets there, poisoned frees, injected faults,
// and the sim kernels launching without touching device memory. Each test builds its own
// SimBackend with short delays unless it is about the process-wide instance.
#include "kernels/sim/sim_backend.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"

namespace ofl::kernels::sim {
namespace {

using std::chrono::milliseconds;

// Long enough for an unblocked stream to have run a few short tasks, so "not yet" means "blocked".
constexpr milliseconds kSettle{20};

SimConfig NoDelayConfig() {
  SimConfig c;
  c.devices = 2;
  c.capacity_bytes = size_t{1} << 20;
  c.seed = 7;
  c.max_delay_us = 20;
  c.stall_per_mille = 0;
  return c;
}

// A task that holds its stream until Open(); opened at the latest when the Gate goes out of scope,
// so a failing test never leaves a stream blocked for the backend's destructor.
class Gate {
 public:
  Gate() : future_(promise_.get_future().share()) {}
  ~Gate() { Open(); }
  void Block(SimBackend& b, NativeStream s) {
    std::shared_future<void> f = future_;
    b.Enqueue(s, [f] { f.wait(); });
  }
  void Open() {
    if (!open_) {
      open_ = true;
      promise_.set_value();
    }
  }

 private:
  std::promise<void> promise_;
  std::shared_future<void> future_;
  bool open_ = false;
};

// Records an event on `s` and waits for it: everything enqueued on `s` before has run.
void Sync(SimBackend& b, int index, NativeStream s) {
  NativeEvent e = b.create_event(index);
  b.record_event(e, s);
  b.synchronize_event(e);
  b.destroy_event(index, e);
}

template <class E, class F>
std::string MessageOf(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "<no exception>";
}

TEST(SimBackendDeathTest, HostDereferenceOfADevicePointerDies) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  SimBackend b(NoDelayConfig());
  void* p = b.allocate(0, 256);
  ASSERT_NE(p, nullptr);
  ASSERT_DEATH({ *static_cast<volatile char*>(p) = 1; }, "");
  b.deallocate(0, p, 256);
}

TEST(SimBackendDeathTest, ExitWithStreamsOfTheInstanceStillRunningIsClean) {
  ::testing::FLAGS_gtest_death_test_style = "threadsafe";
  EXPECT_EXIT(
      {
        SimBackend& b = SimBackend::Instance();
        NativeStream idle = b.create_stream(0);
        NativeStream busy = b.create_stream(1);
        (void)idle;
        for (int i = 0; i < 100; ++i) {
          b.Enqueue(busy, [] { std::this_thread::sleep_for(std::chrono::microseconds(100)); });
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SimBackendTest, ReportsAnAsynchronousDeviceWithoutHostAccess) {
  SimBackend b(NoDelayConfig());
  EXPECT_EQ(b.device_count(), 2);
  EXPECT_FALSE(b.synchronous());
  EXPECT_FALSE(b.host_accessible());
}

TEST(SimBackendTest, HostToDeviceToHostRoundTripGivesTheBytesBack) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(1);
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  void* d = b.allocate(1, in.size());
  ASSERT_NE(d, nullptr);
  b.copy_async(d, in.data(), in.size(), CopyKind::kHostToDevice, s);
  b.copy_async(out.data(), d, out.size(), CopyKind::kDeviceToHost, s);
  Sync(b, 1, s);
  EXPECT_EQ(in, out);
  b.deallocate(1, d, in.size());
  b.destroy_stream(1, s);
}

TEST(SimBackendTest, DeviceToDeviceCopyBetweenDevices) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(0);
  std::vector<int> in = {1, 2, 3, 4}, out(4, 0);
  const size_t n = in.size() * sizeof(int);
  void* d0 = b.allocate(0, n);
  void* d1 = b.allocate(1, n);
  b.copy_async(d0, in.data(), n, CopyKind::kHostToDevice, s);
  b.copy_async(d1, d0, n, CopyKind::kDeviceToDevice, s);
  b.copy_async(out.data(), d1, n, CopyKind::kDeviceToHost, s);
  Sync(b, 0, s);
  EXPECT_EQ(in, out);
  b.deallocate(0, d0, n);
  b.deallocate(1, d1, n);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, HostViewTranslatesDevicePointersOnly) {
  SimBackend b(NoDelayConfig());
  EXPECT_EQ(b.HostView(nullptr), nullptr);
  int host = 5;
  EXPECT_EQ(b.HostView(&host), &host);
  void* d = b.allocate(0, 64);
  char* view = static_cast<char*>(b.HostView(d));
  ASSERT_NE(view, d);
  EXPECT_EQ(b.HostView(static_cast<char*>(d) + 10), view + 10);
  // The view is the same memory: what the simulator writes there, a D2H copy reads back.
  std::memset(view, 0x5A, 64);
  NativeStream s = b.create_stream(0);
  std::vector<unsigned char> out(64, 0);
  b.copy_async(out.data(), d, 64, CopyKind::kDeviceToHost, s);
  Sync(b, 0, s);
  EXPECT_EQ(out, std::vector<unsigned char>(64, 0x5A));
  b.deallocate(0, d, 64);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, EventIsIncompleteUntilTheStreamReachesIt) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(0);
  NativeEvent e = b.create_event(0);
  Gate gate;
  gate.Block(b, s);
  b.record_event(e, s);
  std::this_thread::sleep_for(kSettle);
  EXPECT_FALSE(b.query_event(e));
  EXPECT_FALSE(b.query_event(e));
  gate.Open();
  b.synchronize_event(e);
  EXPECT_TRUE(b.query_event(e));
  b.destroy_event(0, e);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, EventNeverRecordedIsComplete) {
  SimBackend b(NoDelayConfig());
  NativeEvent e = b.create_event(1);
  EXPECT_TRUE(b.query_event(e));
  b.synchronize_event(e);  // returns at once
  b.destroy_event(1, e);
}

TEST(SimBackendTest, ReRecordingMovesTheMark) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(0);
  NativeEvent e = b.create_event(0);
  b.record_event(e, s);
  b.synchronize_event(e);
  ASSERT_TRUE(b.query_event(e));
  Gate gate;
  gate.Block(b, s);
  b.record_event(e, s);
  std::this_thread::sleep_for(kSettle);
  EXPECT_FALSE(b.query_event(e));  // the new mark is behind the gate
  gate.Open();
  b.synchronize_event(e);
  EXPECT_TRUE(b.query_event(e));
  b.destroy_event(0, e);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, TwoStreamsFinishOutOfOrder) {
  SimBackend b(NoDelayConfig());
  NativeStream a = b.create_stream(0);
  NativeStream c = b.create_stream(0);
  NativeEvent ea = b.create_event(0);
  NativeEvent ec = b.create_event(0);
  Gate gate;
  gate.Block(b, a);
  b.record_event(ea, a);
  std::atomic<bool> c_ran{false};
  b.Enqueue(c, [&] { c_ran = true; });
  b.record_event(ec, c);  // recorded after ea, completes first
  b.synchronize_event(ec);
  EXPECT_TRUE(c_ran);
  EXPECT_FALSE(b.query_event(ea));
  gate.Open();
  b.synchronize_event(ea);
  EXPECT_TRUE(b.query_event(ea));
  b.destroy_event(0, ea);
  b.destroy_event(0, ec);
  b.destroy_stream(0, a);
  b.destroy_stream(0, c);
}

TEST(SimBackendTest, StreamWaitEventMakesLaterWorkWaitButNotTheHost) {
  SimBackend b(NoDelayConfig());
  NativeStream a = b.create_stream(0);
  NativeStream c = b.create_stream(1);
  NativeEvent ea = b.create_event(0);
  NativeEvent ec = b.create_event(1);
  Gate gate;
  gate.Block(b, a);
  b.record_event(ea, a);
  b.stream_wait_event(c, ea);  // returns although ea is far from complete
  std::atomic<bool> c_ran{false};
  b.Enqueue(c, [&] { c_ran = true; });
  b.record_event(ec, c);
  std::this_thread::sleep_for(kSettle);
  EXPECT_FALSE(c_ran);
  EXPECT_FALSE(b.query_event(ec));
  gate.Open();
  b.synchronize_event(ec);
  EXPECT_TRUE(c_ran);
  EXPECT_TRUE(b.query_event(ea));
  b.destroy_event(0, ea);
  b.destroy_event(1, ec);
  b.destroy_stream(0, a);
  b.destroy_stream(1, c);
}

TEST(SimBackendTest, StreamWaitEventWaitsForTheRecordItSawNotALaterOne) {
  SimBackend b(NoDelayConfig());
  NativeStream a = b.create_stream(0);
  NativeStream c = b.create_stream(0);
  NativeStream free_stream = b.create_stream(0);
  NativeEvent e = b.create_event(0);
  Gate gate;
  gate.Block(b, a);
  b.record_event(e, a);
  b.stream_wait_event(c, e);
  std::atomic<bool> c_ran{false};
  b.Enqueue(c, [&] { c_ran = true; });
  b.record_event(e, free_stream);  // moves the mark; the wait above keeps the old one
  b.synchronize_event(e);
  EXPECT_TRUE(b.query_event(e));
  std::this_thread::sleep_for(kSettle);
  EXPECT_FALSE(c_ran);
  gate.Open();
  Sync(b, 0, c);
  EXPECT_TRUE(c_ran);
  b.destroy_event(0, e);
  b.destroy_stream(0, a);
  b.destroy_stream(0, c);
  b.destroy_stream(0, free_stream);
}

TEST(SimBackendTest, DeallocatePoisonsTheFreedRange) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(0);
  const size_t n = 4096;
  std::vector<unsigned char> data(n, 0x11), out(n, 0);
  void* d = b.allocate(0, n);
  b.copy_async(d, data.data(), n, CopyKind::kHostToDevice, s);
  Sync(b, 0, s);
  b.deallocate(0, d, n);
  void* again = b.allocate(0, n);
  ASSERT_EQ(again, d);  // first fit on an otherwise empty arena
  b.copy_async(out.data(), again, n, CopyKind::kDeviceToHost, s);
  Sync(b, 0, s);
  EXPECT_EQ(out, std::vector<unsigned char>(n, 0xFB));
  b.deallocate(0, again, n);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, AllocationsAreAlignedAndDistinct) {
  SimBackend b(NoDelayConfig());
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{3}, size_t{256}, size_t{300}}) {
    void* p = b.allocate(0, bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
    for (auto& [q, n] : blocks) EXPECT_NE(p, q);
    blocks.emplace_back(p, bytes);
  }
  for (auto& [p, n] : blocks) b.deallocate(0, p, n);
}

TEST(SimBackendTest, AllocateReturnsNullBeyondCapacityAndWorksAgainAfterFrees) {
  SimBackend b(NoDelayConfig());
  const size_t cap = NoDelayConfig().capacity_bytes;
  EXPECT_EQ(b.allocate(0, cap + 1), nullptr);
  const size_t quarter = cap / 4;
  std::vector<void*> q;
  for (int i = 0; i < 4; ++i) {
    q.push_back(b.allocate(0, quarter));
    ASSERT_NE(q.back(), nullptr);
  }
  EXPECT_EQ(b.allocate(0, 1), nullptr);
  EXPECT_NE(b.allocate(1, quarter), nullptr) << "devices have separate memory";
  // Two adjacent frees coalesce into one block that a half-capacity request fits.
  b.deallocate(0, q[2], quarter);
  b.deallocate(0, q[1], quarter);
  void* half = b.allocate(0, 2 * quarter);
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(half, q[1]);
  b.deallocate(0, half, 2 * quarter);
  b.deallocate(0, q[0], quarter);
  b.deallocate(0, q[3], quarter);
  void* all = b.allocate(0, cap);
  EXPECT_NE(all, nullptr);
  b.deallocate(0, all, cap);
}

TEST(SimBackendTest, DeallocateRejectsAWrongSizeOrADoubleFree) {
  SimBackend b(NoDelayConfig());
  void* p = b.allocate(0, 100);
  EXPECT_THROW(b.deallocate(0, p, 99), InvalidArgument);
  EXPECT_THROW(b.deallocate(1, p, 100), InvalidArgument);
  b.deallocate(0, p, 100);
  EXPECT_THROW(b.deallocate(0, p, 100), InvalidArgument);
  b.deallocate(0, nullptr, 0);  // like free(nullptr)
}

TEST(SimBackendTest, BadDeviceIndexThrowsDeviceError) {
  SimBackend b(NoDelayConfig());
  const std::string msg = MessageOf<DeviceError>([&] { b.allocate(2, 16); });
  EXPECT_NE(msg.find("index 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device_count 2"), std::string::npos) << msg;
  EXPECT_THROW(b.allocate(-1, 16), DeviceError);
  EXPECT_THROW(b.create_stream(2), DeviceError);
  EXPECT_THROW(b.create_event(7), DeviceError);
  EXPECT_THROW(b.InjectQueryFault(2, 1, false), DeviceError);
}

TEST(SimBackendTest, HandlesThatAreNotLiveThrowInvalidArgument) {
  SimBackend b(NoDelayConfig());
  NativeEvent e = b.create_event(0);
  b.destroy_event(0, e);
  EXPECT_THROW(b.query_event(e), InvalidArgument);
  int not_a_stream = 0;
  EXPECT_THROW(b.Enqueue(&not_a_stream, [] {}), InvalidArgument);
  NativeStream s = b.create_stream(0);
  EXPECT_THROW(b.destroy_stream(1, s), InvalidArgument);
  b.destroy_stream(0, s);
  EXPECT_THROW(b.destroy_stream(0, s), InvalidArgument);
}

TEST(SimBackendTest, WrongCopyKindThrowsInvalidArgument) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(0);
  void* d = b.allocate(0, 64);
  std::vector<char> host(64);
  const std::string msg = MessageOf<InvalidArgument>(
      [&] { b.copy_async(host.data(), d, 64, CopyKind::kHostToDevice, s); });
  EXPECT_NE(msg.find("copy_async"), std::string::npos) << msg;
  EXPECT_NE(msg.find("HostToDevice"), std::string::npos) << msg;
  EXPECT_THROW(b.copy_async(d, host.data(), 64, CopyKind::kDeviceToHost, s), InvalidArgument);
  EXPECT_THROW(b.copy_async(d, host.data(), 64, CopyKind::kDeviceToDevice, s), InvalidArgument);
  EXPECT_THROW(b.copy_async(host.data(), host.data() + 32, 16, CopyKind::kDeviceToDevice, s),
               InvalidArgument);
  EXPECT_THROW(b.copy_async(d, static_cast<char*>(d) + 16, 32, CopyKind::kDeviceToDevice, s),
               InvalidArgument)
      << "overlapping ranges";
  // Device ranges must lie in a live allocation.
  EXPECT_THROW(b.copy_async(d, host.data(), 65, CopyKind::kHostToDevice, s), InvalidArgument);
  b.deallocate(0, d, 64);
  EXPECT_THROW(b.copy_async(d, host.data(), 64, CopyKind::kHostToDevice, s), InvalidArgument);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, NonStickyQueryFaultThrowsOnceThenWorks) {
  SimBackend b(NoDelayConfig());
  NativeEvent e = b.create_event(0);
  b.InjectQueryFault(0, 2, /*sticky=*/false);
  EXPECT_TRUE(b.query_event(e));
  try {
    b.query_event(e);
    ADD_FAILURE() << "the second query should throw";
  } catch (const DeviceFailed& err) {
    ADD_FAILURE() << "a one-time fault is not DeviceFailed: " << err.what();
  } catch (const DeviceError& err) {
    const std::string msg = err.what();
    EXPECT_NE(msg.find("sim:0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("injected"), std::string::npos) << msg;
  }
  EXPECT_TRUE(b.query_event(e));
  void* p = b.allocate(0, 16);
  EXPECT_NE(p, nullptr);
  b.deallocate(0, p, 16);
  b.destroy_event(0, e);
}

TEST(SimBackendTest, StickyQueryFaultFailsTheDeviceForEveryLaterCall) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(1);
  NativeStream other = b.create_stream(0);
  NativeEvent e = b.create_event(1);
  NativeEvent e0 = b.create_event(0);
  void* d = b.allocate(1, 64);
  std::vector<char> host(64);
  b.InjectQueryFault(1, 1, /*sticky=*/true);
  const std::string first = MessageOf<DeviceFailed>([&] { b.query_event(e); });
  EXPECT_NE(first.find("sim:1"), std::string::npos) << first;
  EXPECT_NE(first.find("injected"), std::string::npos) << first;
  auto expect_failed = [&](const char* what, auto&& f) {
    const std::string msg = MessageOf<DeviceFailed>(f);
    EXPECT_NE(msg.find(first), std::string::npos) << what << ": " << msg;
  };
  expect_failed("query_event", [&] { b.query_event(e); });
  expect_failed("synchronize_event", [&] { b.synchronize_event(e); });
  expect_failed("allocate", [&] { b.allocate(1, 16); });
  expect_failed("create_stream", [&] { b.create_stream(1); });
  expect_failed("create_event", [&] { b.create_event(1); });
  expect_failed("record_event", [&] { b.record_event(e, s); });
  expect_failed("copy_async",
                [&] { b.copy_async(d, host.data(), 64, CopyKind::kHostToDevice, s); });
  expect_failed("copy_async from another device's stream",
                [&] { b.copy_async(d, host.data(), 64, CopyKind::kHostToDevice, other); });
  expect_failed("Enqueue", [&] { b.Enqueue(s, [] {}); });
  expect_failed("stream_wait_event", [&] { b.stream_wait_event(s, e0); });
  expect_failed("stream_wait_event on another stream", [&] { b.stream_wait_event(other, e); });
  // The other device keeps working, and the failed one can still be torn down.
  b.record_event(e0, other);
  b.synchronize_event(e0);
  EXPECT_TRUE(b.query_event(e0));
  b.deallocate(1, d, 64);
  b.destroy_event(1, e);
  b.destroy_stream(1, s);
  b.ClearFaults();
  void* p = b.allocate(1, 16);
  EXPECT_NE(p, nullptr);
  b.deallocate(1, p, 16);
  b.destroy_event(0, e0);
  b.destroy_stream(0, other);
}

TEST(SimBackendTest, TaskExceptionIsReportedAtTheNextQueryOnce) {
  SimBackend b(NoDelayConfig());
  NativeStream s = b.create_stream(0);
  NativeEvent e = b.create_event(0);
  b.Enqueue(s, [] { throw std::runtime_error("boom"); });
  b.record_event(e, s);
  const std::string msg = MessageOf<DeviceError>([&] { b.synchronize_event(e); });
  EXPECT_NE(msg.find("boom"), std::string::npos) << msg;
  EXPECT_TRUE(b.query_event(e));
  b.destroy_event(0, e);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, DestroyStreamDrainsPendingWork) {
  SimConfig config = NoDelayConfig();
  config.max_delay_us = 200;
  SimBackend b(config);
  NativeStream s = b.create_stream(0);
  std::atomic<int> ran{0};
  for (int i = 0; i < 20; ++i) b.Enqueue(s, [&] { ++ran; });
  b.destroy_stream(0, s);
  EXPECT_EQ(ran.load(), 20);
}

TEST(SimBackendTest, DestructorDrainsStreamsNotDestroyed) {
  std::atomic<int> ran{0};
  {
    SimBackend b(NoDelayConfig());
    NativeStream s = b.create_stream(1);
    for (int i = 0; i < 5; ++i) b.Enqueue(s, [&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 5);
}

TEST(SimBackendTest, ConfigFromEnvReadsVariablesAndIgnoresBadValues) {
  setenv("OFL_SIM_SEED", "42", 1);
  setenv("OFL_SIM_MEMORY_MB", "3", 1);
  setenv("OFL_SIM_MAX_DELAY_US", "0", 1);
  SimConfig c = SimConfigFromEnv();
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.capacity_bytes, size_t{3} << 20);
  EXPECT_EQ(c.max_delay_us, 0);
  setenv("OFL_SIM_SEED", "12x", 1);
  setenv("OFL_SIM_MEMORY_MB", "-1", 1);
  setenv("OFL_SIM_MAX_DELAY_US", "", 1);
  c = SimConfigFromEnv();
  const SimConfig defaults;
  EXPECT_EQ(c.seed, defaults.seed);
  EXPECT_EQ(c.capacity_bytes, defaults.capacity_bytes);
  EXPECT_EQ(c.max_delay_us, defaults.max_delay_us);
  unsetenv("OFL_SIM_SEED");
  unsetenv("OFL_SIM_MEMORY_MB");
  unsetenv("OFL_SIM_MAX_DELAY_US");
}

TEST(SimBackendTest, InstanceIsProcessWideAndSharedInstanceDoesNotOwnIt) {
  SimBackend& a = SimBackend::Instance();
  EXPECT_EQ(&a, &SimBackend::Instance());
  {
    std::shared_ptr<DeviceBackend> shared = SimBackend::SharedInstance();
    EXPECT_EQ(shared.get(), &a);
  }
  NativeStream s = a.create_stream(0);  // still alive after the shared_ptr went
  Sync(a, 0, s);
  a.destroy_stream(0, s);
}

// Device-side views for kernel arguments on SimBackend::Instance(), device 0.
struct DeviceTensor {
  void* data = nullptr;
  size_t bytes = 0;
};

DeviceTensor Upload(SimBackend& b, NativeStream s, const std::vector<float>& v) {
  DeviceTensor t{b.allocate(0, v.size() * sizeof(float)), v.size() * sizeof(float)};
  b.copy_async(t.data, v.data(), t.bytes, CopyKind::kHostToDevice, s);
  Sync(b, 0, s);  // `v` may go away after this
  return t;
}

std::vector<float> Download(SimBackend& b, NativeStream s, const DeviceTensor& t) {
  std::vector<float> v(t.bytes / sizeof(float));
  b.copy_async(v.data(), t.data, t.bytes, CopyKind::kDeviceToHost, s);
  Sync(b, 0, s);
  return v;
}

TensorArg Arg(void* data, Shape shape, Strides stride) {
  TensorArg a;
  a.data = data;
  a.shape = shape;
  a.stride = stride;
  a.dtype = DType::kFloat32;
  return a;
}

TEST(SimKernelsTest, CopyOfAnExpandedInputGivesTheRightValues) {
  SimBackend& b = SimBackend::Instance();
  NativeStream s = b.create_stream(0);
  DeviceTensor in = Upload(b, s, {1, 2, 3});
  DeviceTensor out = Upload(b, s, std::vector<float>(6, 0));
  KernelContext ctx;
  ctx.inputs.push_back(Arg(in.data, {2, 3}, {0, 1}));  // (3) expanded to (2, 3)
  ctx.outputs.push_back(Arg(out.data, {2, 3}, {3, 1}));
  ctx.stream = s;
  FindKernel("copy", DeviceType::kSim)(ctx);
  EXPECT_EQ(Download(b, s, out), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  b.deallocate(0, in.data, in.bytes);
  b.deallocate(0, out.data, out.bytes);
  b.destroy_stream(0, s);
}

TEST(SimKernelsTest, KernelReturnsBeforeItsWorkRuns) {
  SimBackend& b = SimBackend::Instance();
  NativeStream s = b.create_stream(0);
  DeviceTensor in = Upload(b, s, {4, 5});
  DeviceTensor out = Upload(b, s, {0, 0});
  KernelContext ctx;
  ctx.inputs.push_back(Arg(in.data, {2}, {1}));
  ctx.outputs.push_back(Arg(out.data, {2}, {1}));
  ctx.stream = s;
  {
    Gate gate;
    gate.Block(b, s);
    FindKernel("copy", DeviceType::kSim)(ctx);  // returns although the stream is blocked
    const float* view = static_cast<const float*>(b.HostView(out.data));
    EXPECT_EQ(view[0], 0.0f);
    EXPECT_EQ(view[1], 0.0f);
  }
  EXPECT_EQ(Download(b, s, out), (std::vector<float>{4, 5}));
  b.deallocate(0, in.data, in.bytes);
  b.deallocate(0, out.data, out.bytes);
  b.destroy_stream(0, s);
}

TEST(SimKernelsTest, RepeatAndReduceSumToRunOnTheStream) {
  SimBackend& b = SimBackend::Instance();
  NativeStream s = b.create_stream(0);
  DeviceTensor in = Upload(b, s, {1, 2});
  DeviceTensor rep = Upload(b, s, std::vector<float>(6, 0));
  DeviceTensor sum = Upload(b, s, std::vector<float>(3, 0));
  KernelContext r;
  r.inputs.push_back(Arg(in.data, {2}, {1}));
  r.outputs.push_back(Arg(rep.data, {3, 2}, {2, 1}));
  AttrSchema repeat_attrs{{"repeats", AttrType::kInts}};
  repeat_attrs.set_op("repeat");
  r.attributes = Attrs(repeat_attrs, std::vector<int64_t>{3, 1});
  r.stream = s;
  FindKernel("repeat", DeviceType::kSim)(r);
  KernelContext sum_ctx;
  sum_ctx.inputs.push_back(Arg(rep.data, {3, 2}, {2, 1}));
  sum_ctx.outputs.push_back(Arg(sum.data, {3, 1}, {1, 1}));
  sum_ctx.stream = s;
  FindKernel("reduce_sum_to",
             DeviceType::kSim)(sum_ctx);  // ordered after the repeat by the stream alone
  FindKernel("empty", DeviceType::kSim)(sum_ctx);
  EXPECT_EQ(Download(b, s, rep), (std::vector<float>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(Download(b, s, sum), (std::vector<float>{3, 3, 3}));
  sum_ctx.inputs[0].dtype = DType::kBool;
  sum_ctx.outputs[0].dtype = DType::kBool;
  EXPECT_THROW(FindKernel("reduce_sum_to", DeviceType::kSim)(sum_ctx), InvalidArgument);
  for (const DeviceTensor& t : {in, rep, sum}) b.deallocate(0, t.data, t.bytes);
  b.destroy_stream(0, s);
}

TEST(SimBackendTest, ManyThreadsAllocateRecordAndQueryConcurrently) {
  SimBackend b(NoDelayConfig());
  NativeEvent shared = b.create_event(0);
  NativeStream shared_stream = b.create_stream(0);
  constexpr int kThreads = 4;
  constexpr int kIters = 30;
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const int dev = t % 2;
      NativeStream s = b.create_stream(dev);
      NativeEvent e = b.create_event(dev);
      std::vector<unsigned char> in(512), out(512);
      for (int i = 0; i < kIters; ++i) {
        std::memset(in.data(), t * 16 + i, in.size());
        void* d = b.allocate(dev, in.size());
        if (d == nullptr) {
          ++mismatches;
          continue;
        }
        b.copy_async(d, in.data(), in.size(), CopyKind::kHostToDevice, s);
        b.record_event(e, s);
        while (!b.query_event(e)) std::this_thread::yield();
        b.copy_async(out.data(), d, out.size(), CopyKind::kDeviceToHost, s);
        b.record_event(e, s);
        b.synchronize_event(e);
        if (out != in) ++mismatches;
        b.deallocate(dev, d, in.size());
        // Everyone moves and polls one event, and makes its own stream wait on it.
        b.record_event(shared, i % 2 ? s : shared_stream);
        (void)b.query_event(shared);
        if (dev == 0) b.stream_wait_event(s, shared);
      }
      b.record_event(e, s);
      b.synchronize_event(e);
      b.destroy_event(dev, e);
      b.destroy_stream(dev, s);
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  b.synchronize_event(shared);
  b.destroy_event(0, shared);
  b.destroy_stream(0, shared_stream);
}

}  // namespace
}  // namespace ofl::kernels::sim
