// Tests ofl::memory_snapshot: with live tensors its totals equal memory_stats, its blocks tile each
// segment in address order, each live tensor's block is allocated and names the op that produced
// it, the fragmentation summary matches the free blocks, and to_json parses back (nlohmann) to the
// same numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"
#include "oneflow_lite/tensor_impl.h"

namespace ofl {
namespace {

const Device kCpu("cpu");

uint64_t AddressOf(const Tensor& t) { return reinterpret_cast<uint64_t>(t.impl()->blob()->data()); }

const MemoryBlock* FindBlock(const MemorySnapshot& snap, uint64_t address) {
  for (const MemorySegment& seg : snap.segments) {
    for (const MemoryBlock& b : seg.blocks) {
      if (b.address == address) return &b;
    }
  }
  return nullptr;
}

void ExpectConsistentWithStats(const MemorySnapshot& snap) {
  const MemoryStats stats = memory_stats(kCpu);
  EXPECT_EQ(snap.allocated_bytes, stats.allocated_bytes);
  EXPECT_EQ(snap.reserved_bytes, stats.reserved_bytes);
  int64_t allocated = 0, reserved = 0, free_bytes = 0, largest_free = 0, free_blocks = 0,
          allocated_blocks = 0;
  uint64_t previous_end = 0;
  for (const MemorySegment& seg : snap.segments) {
    EXPECT_GE(seg.address, previous_end) << "segments overlap or are out of order";
    previous_end = seg.address + static_cast<uint64_t>(seg.size);
    reserved += seg.size;
    uint64_t next = seg.address;
    ASSERT_FALSE(seg.blocks.empty());
    for (const MemoryBlock& b : seg.blocks) {
      EXPECT_EQ(b.address, next) << "blocks do not tile the segment";
      EXPECT_GT(b.size, 0);
      next = b.address + static_cast<uint64_t>(b.size);
      if (b.allocated) {
        allocated += b.size;
        ++allocated_blocks;
      } else {
        EXPECT_TRUE(b.owner.empty()) << "a free block names an owner: " << b.owner;
        free_bytes += b.size;
        largest_free = std::max(largest_free, b.size);
        ++free_blocks;
      }
    }
    EXPECT_EQ(next, seg.address + static_cast<uint64_t>(seg.size));
  }
  EXPECT_EQ(snap.allocated_bytes, allocated);
  EXPECT_EQ(snap.reserved_bytes, reserved);
  EXPECT_EQ(snap.free_bytes, reserved - allocated);
  EXPECT_EQ(snap.free_bytes, free_bytes);
  EXPECT_EQ(snap.largest_free_block, largest_free);
  EXPECT_EQ(snap.free_blocks, free_blocks);
  EXPECT_EQ(snap.allocated_blocks, allocated_blocks);
  EXPECT_GE(snap.fragmentation(), 0.0);
  EXPECT_LT(snap.fragmentation(), 1.0);
}

TEST(MemorySnapshotTest, TotalsEqualMemoryStatsWithLiveTensors) {
  sync();
  empty_cache(kCpu);
  std::vector<float> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const Tensor a = tensor<float>(values, Shape({1000}));
  const Tensor b = a.repeat({3});
  const Tensor big = empty(Shape({600 * 1000}));  // 2.4 MB: a segment of its own
  {
    const Tensor dead = a.repeat({2});  // leaves a cached free block behind
    sync();
  }
  sync();
  const MemorySnapshot snap = memory_snapshot(kCpu);
  EXPECT_EQ(snap.device, kCpu);
  ASSERT_NO_FATAL_FAILURE(ExpectConsistentWithStats(snap));
  EXPECT_GE(snap.segments.size(), 2u);
  EXPECT_GE(snap.free_blocks, 1);
  EXPECT_GT(snap.largest_free_block, 0);

  // Each live tensor sits at the start of an allocated block named for the op that produced it.
  struct Expect {
    const Tensor* t;
    const char* owner;
  };
  for (const Expect& e : {Expect{&a, "from_host"}, Expect{&b, "repeat"}, Expect{&big, "empty"}}) {
    const MemoryBlock* block = FindBlock(snap, AddressOf(*e.t));
    ASSERT_NE(block, nullptr) << e.owner;
    EXPECT_TRUE(block->allocated) << e.owner;
    EXPECT_EQ(block->owner, e.owner);
    EXPECT_GE(block->size, e.t->numel() * 4) << e.owner;
  }
  EXPECT_EQ(b.to_vector<float>()[1500], 500.0f);
}

TEST(MemorySnapshotTest, FreedTensorsLeaveTheTotalsEqualToMemoryStats) {
  sync();
  const int64_t before = memory_snapshot(kCpu).allocated_bytes;
  uint64_t address = 0;
  {
    const Tensor t = empty(Shape({4096}));
    sync();
    address = AddressOf(t);
    const MemorySnapshot live = memory_snapshot(kCpu);
    ASSERT_NO_FATAL_FAILURE(ExpectConsistentWithStats(live));
    EXPECT_GT(live.allocated_bytes, before);
    ASSERT_NE(FindBlock(live, address), nullptr);
    EXPECT_TRUE(FindBlock(live, address)->allocated);
  }
  sync();
  const MemorySnapshot after = memory_snapshot(kCpu);
  ASSERT_NO_FATAL_FAILURE(ExpectConsistentWithStats(after));
  EXPECT_EQ(after.allocated_bytes, before);
  // The freed block is cached (merged into a free block that starts at or before it).
  bool covered_by_free = false;
  for (const MemorySegment& seg : after.segments) {
    for (const MemoryBlock& blk : seg.blocks) {
      if (!blk.allocated && blk.address <= address &&
          address < blk.address + static_cast<uint64_t>(blk.size)) {
        covered_by_free = true;
      }
    }
  }
  EXPECT_TRUE(covered_by_free);
}

TEST(MemorySnapshotTest, ToJsonParsesBackToTheSameNumbers) {
  sync();
  const Tensor a = tensor<float>({1, 2, 3, 4}, Shape({2, 2}));
  const Tensor b = a.repeat({2, 2});
  sync();
  const MemorySnapshot snap = memory_snapshot(kCpu);
  const nlohmann::json doc = nlohmann::json::parse(snap.to_json());
  EXPECT_EQ(doc["device"], "cpu:0");
  EXPECT_EQ(doc["allocated_bytes"], snap.allocated_bytes);
  EXPECT_EQ(doc["reserved_bytes"], snap.reserved_bytes);
  EXPECT_EQ(doc["free_bytes"], snap.free_bytes);
  EXPECT_EQ(doc["largest_free_block"], snap.largest_free_block);
  EXPECT_EQ(doc["allocated_blocks"], snap.allocated_blocks);
  EXPECT_EQ(doc["free_blocks"], snap.free_blocks);
  EXPECT_DOUBLE_EQ(doc["fragmentation"].get<double>(), snap.fragmentation());
  ASSERT_EQ(doc["segments"].size(), snap.segments.size());
  int64_t allocated = 0;
  bool found_repeat = false;
  for (size_t s = 0; s < snap.segments.size(); ++s) {
    const nlohmann::json& seg = doc["segments"][s];
    EXPECT_EQ(seg["address"], snap.segments[s].address);
    EXPECT_EQ(seg["size"], snap.segments[s].size);
    ASSERT_EQ(seg["blocks"].size(), snap.segments[s].blocks.size());
    for (const nlohmann::json& blk : seg["blocks"]) {
      const std::string state = blk["state"];
      EXPECT_TRUE(state == "allocated" || state == "free") << state;
      if (state == "allocated") allocated += blk["size"].get<int64_t>();
      if (blk["address"] == AddressOf(b)) {
        found_repeat = true;
        EXPECT_EQ(blk["owner"], "repeat");
      }
    }
  }
  EXPECT_EQ(allocated, memory_stats(kCpu).allocated_bytes);
  EXPECT_TRUE(found_repeat);
  // Indented output is the same document.
  EXPECT_EQ(nlohmann::json::parse(snap.to_json(2)), doc);
}

}  // namespace
}  // namespace ofl
