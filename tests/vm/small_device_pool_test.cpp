// A device, or a memory limit, smaller than the pool's usual 2 MiB segment: what fits is still
// served (a segment of just the block's size), and what does not fit names the device's capacity.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "kernels/sim/sim_backend.h"
#include "oneflow_lite/error.h"
#include "tests/vm/cpu_allocator_backend.h"
#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

TEST(SmallDevicePoolTest, ALimitBelowOneSegmentStillServesSmallRequests) {
  CachingAllocator alloc(Device("cpu"), std::make_unique<CpuAllocatorBackend>());
  alloc.SetLimit(static_cast<int64_t>(kMiB));
  CachingAllocator::Block* tiny = alloc.Allocate(12);
  CachingAllocator::Block* mid = alloc.Allocate(100 * kKiB);
  ASSERT_NE(tiny, nullptr);
  ASSERT_NE(mid, nullptr);
  EXPECT_LE(alloc.stats().reserved_bytes, static_cast<int64_t>(kMiB));
  // More than the limit leaves is still refused, and the message names the limit.
  try {
    alloc.Allocate(kMiB);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    EXPECT_NE(std::string(e.what()).find("limit 1048576 bytes"), std::string::npos) << e.what();
  }
  alloc.Free(tiny);
  alloc.Free(mid);
  alloc.EmptyCache();
  EXPECT_EQ(alloc.stats().reserved_bytes, 0);
}

TEST(SmallDevicePoolTest, AOneMebibyteSimDeviceServesSmallTensorsAndNamesItsCapacityWhenFull) {
  kernels::sim::SimConfig config;
  config.capacity_bytes = kMiB;
  config.max_delay_us = 0;
  auto sim = std::make_shared<kernels::sim::SimBackend>(config);
  CachingAllocator alloc(Device("sim:0"), std::make_unique<DeviceMemoryBackend>(sim.get(), 0));
  std::vector<CachingAllocator::Block*> blocks;
  for (int i = 0; i < 8; ++i) blocks.push_back(alloc.Allocate(12));
  blocks.push_back(alloc.Allocate(256 * kKiB));
  try {
    alloc.Allocate(900 * kKiB);
    FAIL() << "expected OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tried to allocate 921600 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("device capacity 1048576 bytes (OFL_SIM_MEMORY_MB)"), std::string::npos)
        << msg;
  }
  for (CachingAllocator::Block* b : blocks) alloc.Free(b);
  alloc.EmptyCache();
  EXPECT_EQ(alloc.stats().reserved_bytes, 0);
}

TEST(SmallDevicePoolTest, BadSimSettingsWarnNamingTheVariableAndKeepTheDefault) {
  setenv("OFL_SIM_MEMORY_MB", "0", 1);
  setenv("OFL_SIM_MAX_DELAY_US", "-3", 1);
  std::vector<std::string> warnings;
  const kernels::sim::SimConfig c = kernels::sim::SimConfigFromEnv(&warnings);
  unsetenv("OFL_SIM_MEMORY_MB");
  unsetenv("OFL_SIM_MAX_DELAY_US");
  const kernels::sim::SimConfig defaults;
  EXPECT_EQ(c.capacity_bytes, defaults.capacity_bytes);
  EXPECT_EQ(c.max_delay_us, defaults.max_delay_us);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0],
            "OFL_SIM_MEMORY_MB='0' is not valid: need an integer from 1 to 1048576; using 256 "
            "instead");
  EXPECT_EQ(warnings[1],
            "OFL_SIM_MAX_DELAY_US='-3' is not valid: need an integer from 0 to 2147483647; using "
            "200 instead");
}

}  // namespace
}  // namespace ofl::vm
