// Brings every rank's trace to rank 0 with the product's own global tensors (the tool does not
// link MPI): each rank's bytes are its shard of a uint8 tensor split over the world, and the
// logical tensor is their concatenation.
#pragma once

#include <string>
#include <vector>

#include "tools/vm_trace/global_trace.h"

namespace ofl::vm_trace {

// The name of the host this process runs on ("" when it cannot be told).
std::string HostName();

// A collective: every rank of the world must call it, in step. Returns every rank's trace (by
// rank) on rank 0 and nothing elsewhere. Throws ofl::Error when the exchange fails.
std::vector<RankTraceText> GatherRankTraces(const RankTraceText& mine);

}  // namespace ofl::vm_trace
