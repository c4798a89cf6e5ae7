// TraceRecord: what the VM remembers about one finished instruction while tracing is on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vm/instruction.h"

namespace ofl::vm {

struct TraceRecord {
  uint64_t id = 0;
  std::string policy;
  std::string op;
  std::string stream;
  std::vector<uint64_t> reads;   // blob ids
  std::vector<uint64_t> writes;  // blob ids
  std::vector<uint64_t> deps;    // predecessor instruction ids
  std::vector<bool> dep_cross_stream;
  std::vector<AllocRecord> allocs;
  std::vector<uint64_t> folded_releases;  // blobs freed right after it ran (their tensors died)
  int64_t issue_ns = 0, ready_ns = 0, start_ns = 0, end_ns = 0;
  std::string error;  // empty when it succeeded
};

int64_t NowNs();

}  // namespace ofl::vm
