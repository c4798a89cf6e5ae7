// How a device's pool accounts for memory while work is in flight, checked deterministically on the
// simulated accelerator with its compute stream held shut: a dead tensor's block counts as free
// from the moment the tensor dies (PyTorch's rule) but is not handed out again until the work
// using it completed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "functional_test_util.h"
#include "sim_gate.h"

namespace ofl::testing {
namespace {

// The address of every block in `state` ("allocated", "pending_free", "free").
std::vector<uint64_t> BlocksIn(const MemorySnapshot& snap, const char* state) {
  std::vector<uint64_t> out;
  for (const MemorySegment& seg : snap.segments) {
    for (const MemoryBlock& b : seg.blocks) {
      const char* s = b.allocated ? "allocated" : b.pending_free ? "pending_free" : "free";
      if (std::string(s) == state) out.push_back(b.address);
    }
  }
  return out;
}

// Every test holds work in flight, which OFL_VM_SYNC=1 (each op waits for its completion) cannot.
#define SKIP_IN_SYNC_MODE() \
  if (EnvSet("OFL_VM_SYNC")) GTEST_SKIP() << "OFL_VM_SYNC=1 waits for every op to complete"

TEST(DeviceMemoryTest, ADeadTensorCountsAsFreeAtOnceButIsNotReusedBeforeItsWorkCompletes) {
  SKIP_IN_SYNC_MODE();
  const Device dev("sim:1");
  const int64_t n = 4096;  // 16 KiB: a multiple of the pool's rounding
  const int64_t bytes = n * 4;
  std::vector<float> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) a[i] = static_cast<float>(i), b[i] = static_cast<float>(-i);
  sync();
  empty_cache(dev);
  const MemoryStats before = memory_stats(dev);
  ASSERT_EQ(before.pending_free_bytes, 0);

  Tensor y;
  std::optional<SimComputeGate> gate;
  uint64_t x_address = 0;
  {
    const Tensor x = tensor<float>(a, Shape({n}), dev);
    sync();
    x_address = reinterpret_cast<uint64_t>(x.impl()->blob()->data());
    gate.emplace(dev);
    y = x.repeat({2});  // reads x on the device, behind the gate
    gate->WaitUntilLaunched();
    EXPECT_EQ(memory_stats(dev).allocated_bytes, before.allocated_bytes + 3 * bytes);
  }  // x dies while its reader has not run

  const MemoryStats dead = memory_stats(dev);
  EXPECT_EQ(dead.allocated_bytes, before.allocated_bytes + 2 * bytes) << "x still counted";
  EXPECT_EQ(dead.pending_free_bytes, bytes);
  EXPECT_GE(dead.reserved_bytes, before.allocated_bytes + 3 * bytes);
  const MemorySnapshot snap = memory_snapshot(dev);
  EXPECT_EQ(BlocksIn(snap, "pending_free"), std::vector<uint64_t>{x_address});
  EXPECT_EQ(snap.pending_free_bytes, bytes);
  EXPECT_EQ(snap.pending_free_blocks, 1);
  EXPECT_EQ(snap.allocated_bytes, dead.allocated_bytes);
  EXPECT_NE(snap.to_json().find("\"pending_free\""), std::string::npos);

  // A same-sized tensor must not get x's block while the reader is held back.
  const Tensor z = tensor<float>(b, Shape({n}), dev);
  EXPECT_EQ(z.to_vector<float>(), b);  // h2d and d2h: not behind the gate
  EXPECT_NE(reinterpret_cast<uint64_t>(z.impl()->blob()->data()), x_address);

  gate->Open();
  std::vector<float> want(2 * n);
  for (int64_t i = 0; i < 2 * n; ++i) want[i] = a[i % n];
  EXPECT_EQ(y.to_vector<float>(), want);
  sync();
  const MemoryStats after = memory_stats(dev);
  EXPECT_EQ(after.pending_free_bytes, 0) << "nothing of a dead tensor is pending after sync()";
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes + 3 * bytes);  // y (2n) and z (n)
  EXPECT_TRUE(BlocksIn(memory_snapshot(dev), "pending_free").empty());
}

TEST(DeviceMemoryTest, ATensorThatDiesBeforeItsProducerLaunchedIsCountedFreeWhenAllocated) {
  SKIP_IN_SYNC_MODE();
  const Device dev("sim:1");
  const int64_t n = 8192;
  sync();
  const MemoryStats before = memory_stats(dev);
  const Tensor x = tensor<float>(std::vector<float>(n, 1.f), Shape({n, 1}), dev);
  sync();
  {
    SimComputeGate gate(dev);
    // Issued and dropped at once: its output block may not exist yet when it dies.
    for (int i = 0; i < 20; ++i) (void)x.repeat({1, 3});
    gate.WaitUntilLaunched();
    const MemoryStats held = memory_stats(dev);
    EXPECT_EQ(held.allocated_bytes, before.allocated_bytes + n * 4) << "only x is alive";
    EXPECT_EQ(held.pending_free_bytes, 20 * n * 4 * 3) << "each output: allocated, then dead";
  }
  sync();
  EXPECT_EQ(memory_stats(dev).pending_free_bytes, 0);
  EXPECT_EQ(memory_stats(dev).allocated_bytes, before.allocated_bytes + n * 4);
}

}  // namespace
}  // namespace ofl::testing
