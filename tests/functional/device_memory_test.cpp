// How a device's pool accounts for memory while work is in flight, checked deterministically on the
// simulated accelerator with one of its streams held shut: a dead tensor's block counts as free
// from the moment the tensor dies (PyTorch's rule) but is not handed out again until the work
// using it completed; host staging buffers come from a pool and are reused only after their copy
// completed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "functional_test_util.h"
#include "sim_gate.h"
#include "vm/virtual_machine.h"

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
  std::optional<SimStreamGate> gate;
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
    SimStreamGate gate(dev);
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

TEST(DeviceMemoryTest, ResetPeakMemoryStatsRestartsThePeaksFromNow) {
  const Device dev = TestDevice();
  {
    const Tensor big = empty(Shape({1 << 20}), DType::kFloat32, dev);
    sync();
  }
  sync();
  const MemoryStats high = memory_stats(dev);
  EXPECT_GE(high.peak_allocated_bytes, high.allocated_bytes + (4 << 20));
  reset_peak_memory_stats(dev);
  const MemoryStats reset = memory_stats(dev);
  EXPECT_EQ(reset.peak_allocated_bytes, reset.allocated_bytes);
  EXPECT_EQ(reset.peak_reserved_bytes, reset.reserved_bytes);
  const Tensor small = empty(Shape({1024}), DType::kFloat32, dev);
  sync();
  EXPECT_EQ(memory_stats(dev).peak_allocated_bytes, reset.allocated_bytes + 4096);
}

std::vector<float> Values(int64_t n, float start) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

TEST(DeviceMemoryTest, StagingBuffersComeFromAPoolAndAreReusedAcrossTransfers) {
  const Device dev("sim:1");
  sync();
  empty_cache(dev);
  vm::CachingAllocator* staging =
      vm::VirtualMachine::Get().devices().GetStagingPool(DeviceType::kSim);
  const MemoryStats before = staging->stats();
  EXPECT_EQ(before.reserved_bytes, 0) << "empty_cache returns the cached staging buffers";
  const int64_t n = 1000;
  for (int round = 0; round < 20; ++round) {
    const std::vector<float> v = Values(n, static_cast<float>(round * n));
    EXPECT_EQ(tensor<float>(v, Shape({n}), dev).to_vector<float>(), v);
  }
  sync();  // retires (and destroys) the last transfers
  const MemoryStats after = staging->stats();
  EXPECT_EQ(after.alloc_requests - before.alloc_requests, 40) << "one h2d and one d2h per round";
  EXPECT_LE(after.cache_misses - before.cache_misses, 1) << "the host was asked for memory again";
  EXPECT_EQ(after.allocated_bytes, 0) << "a staging buffer outlived its transfer";
  EXPECT_GT(after.reserved_bytes, 0);
  empty_cache(dev);
  EXPECT_EQ(staging->stats().reserved_bytes, 0);
}

TEST(DeviceMemoryTest, AStagingBufferIsNotReusedWhileItsCopyIsInFlight) {
  SKIP_IN_SYNC_MODE();
  const Device dev("sim:1");
  const int64_t n = 1000;
  const std::vector<float> a = Values(n, 1.f), b = Values(n, -5000.f);
  sync();
  vm::CachingAllocator* staging =
      vm::VirtualMachine::Get().devices().GetStagingPool(DeviceType::kSim);
  const int64_t block = static_cast<int64_t>((n * 4 + 511) / 512 * 512);
  Tensor x, z;
  {
    SimStreamGate gate(dev, vm::StreamRole::kHost2Device);
    // Both copies wait on the device: the caller's vectors are free again, their staging is not.
    x = tensor<float>(a, Shape({n}), dev);
    z = tensor<float>(b, Shape({n}), dev);
    gate.WaitUntilLaunched();
    EXPECT_EQ(staging->stats().allocated_bytes, 2 * block);
  }
  EXPECT_EQ(x.to_vector<float>(), a);
  EXPECT_EQ(z.to_vector<float>(), b);
  sync();
  EXPECT_EQ(staging->stats().allocated_bytes, 0);
}

TEST(DeviceMemoryTest, StagingOutOfHostMemoryIsAClearErrorAndTransfersWorkAfter) {
  // A program-wide allocation the host cannot serve: the staging pool's own out-of-memory error
  // names the pool, the request and its totals.
  const Device dev("sim:1");
  vm::CachingAllocator* staging =
      vm::VirtualMachine::Get().devices().GetStagingPool(DeviceType::kSim);
  staging->SetLimit(4 << 20);
  struct Unlimit {
    vm::CachingAllocator* pool;
    ~Unlimit() { pool->SetLimit(0); }
  } unlimit{staging};
  ExpectThrowWith<OutOfMemory>(
      [&] { (void)tensor<float>(std::vector<float>(2 << 20, 1.f), Shape({2 << 20}), dev); },
      {"host staging for sim", "tried to allocate 8388608 bytes", "limit 4194304 bytes"});
  const std::vector<float> v = Values(64, 3.f);
  EXPECT_EQ(tensor<float>(v, Shape({64}), dev).to_vector<float>(), v);
}

}  // namespace
}  // namespace ofl::testing
