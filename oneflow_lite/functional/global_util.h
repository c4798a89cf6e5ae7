// What the local functors need from the global ones: a global tensor's shard, and its logical
// value as a local tensor (for reads back to the host).
#pragma once

#include <cstdint>
#include <vector>

#include "oneflow_lite/tensor.h"

namespace ofl::functional {

// A global tensor over `shard` (this rank's physical shard; shares its memory).
Tensor GlobalOverShard(const Tensor& shard, const Placement& p, const Sbp& s, const Shape& logical);
// What a rank outside a placement holds.
Tensor EmptyShard(DType dtype);

// This rank's physical shard of a global tensor as a local tensor (shares memory); t itself when
// it is local.
Tensor ShardOf(const Tensor& t);
// A local tensor with t's logical value on this rank (boxing to broadcast). InvalidArgument naming
// `op` on a rank outside t's placement.
Tensor GlobalToBroadcastShard(const Tensor& t, const char* op);

}  // namespace ofl::functional
