// ofl::memory_snapshot, built on CachingAllocator::Snapshot(), and its JSON form.
#include "oneflow_lite/memory.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "vm/virtual_machine.h"

namespace ofl {

double MemorySnapshot::fragmentation() const {
  if (free_bytes <= 0) return 0.0;
  return 1.0 - static_cast<double>(largest_free_block) / static_cast<double>(free_bytes);
}

std::string MemorySnapshot::to_json(int indent) const {
  using nlohmann::json;
  json segs = json::array();
  for (const MemorySegment& seg : segments) {
    json blocks = json::array();
    for (const MemoryBlock& b : seg.blocks) {
      blocks.push_back({{"address", b.address},
                        {"size", b.size},
                        {"state", b.allocated      ? "allocated"
                                  : b.pending_free ? "pending_free"
                                                   : "free"},
                        {"owner", b.owner}});
    }
    segs.push_back({{"address", seg.address}, {"size", seg.size}, {"blocks", std::move(blocks)}});
  }
  json doc = {{"device", device.str()},
              {"allocated_bytes", allocated_bytes},
              {"reserved_bytes", reserved_bytes},
              {"free_bytes", free_bytes},
              {"largest_free_block", largest_free_block},
              {"allocated_blocks", allocated_blocks},
              {"free_blocks", free_blocks},
              {"pending_free_bytes", pending_free_bytes},
              {"pending_free_blocks", pending_free_blocks},
              {"fragmentation", fragmentation()},
              {"segments", std::move(segs)}};
  return doc.dump(indent);
}

MemorySnapshot memory_snapshot(const Device& device) {
  const std::vector<vm::SegmentInfo> segments =
      vm::VirtualMachine::Get().devices().GetAllocator(device)->Snapshot();
  MemorySnapshot snap;
  snap.device = device;
  snap.segments.reserve(segments.size());
  for (const vm::SegmentInfo& s : segments) {
    MemorySegment seg;
    seg.address = s.address;
    seg.size = static_cast<int64_t>(s.size);
    snap.reserved_bytes += seg.size;
    for (const vm::BlockInfo& b : s.blocks) {
      MemoryBlock block;
      block.address = b.address;
      block.size = static_cast<int64_t>(b.size);
      block.allocated = b.allocated;
      block.pending_free = b.pending_free;
      block.owner = b.owner;
      if (b.allocated) {
        snap.allocated_bytes += block.size;
        ++snap.allocated_blocks;
      } else if (b.pending_free) {
        snap.pending_free_bytes += block.size;
        ++snap.pending_free_blocks;
      } else {
        snap.free_bytes += block.size;
        snap.largest_free_block = std::max(snap.largest_free_block, block.size);
        ++snap.free_blocks;
      }
      seg.blocks.push_back(std::move(block));
    }
    snap.segments.push_back(std::move(seg));
  }
  return snap;
}

}  // namespace ofl
