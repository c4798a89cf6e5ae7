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
// A global tensor of `logical` shape with every element `value`, laid out by `sbp` over p, made
// by each rank alone (no collective): the shards of split and broadcast hold `value`; under
// partial_sum the first rank holds it and the others zeros. InvalidArgument naming `op` for a bad
// shape, dtype or value.
Tensor GlobalFull(const char* op, const Shape& logical, const Scalar& value, DType dtype,
                  const Placement& p, const Sbp& sbp);

// The autograd nodes of a conversion (global_autograd.cpp): `out` made from `in` by to_global (in
// local or global) or to_local; the caller found autograd recording.
void RecordToGlobal(const Tensor& in, const Tensor& out);
void RecordToLocal(const Tensor& in, const Tensor& out);

// This rank's physical shard of a global tensor as a local tensor (shares memory); t itself when
// it is local.
Tensor ShardOf(const Tensor& t);
// A local tensor with t's logical value on this rank (boxing to broadcast). InvalidArgument naming
// `op` on a rank outside t's placement.
Tensor GlobalToBroadcastShard(const Tensor& t, const char* op);

}  // namespace ofl::functional
