// Boxing: a global tensor's shards under one SBP made into its shards under another, or on another
// placement of the same device type. Built from local ops (permute, contiguous, narrow) and the
// collectives of the placement's device type (kernels/collective/device_collectives.h), issued by
// the collective protocol (global_protocol.h); the SBP arithmetic is in ops/sbp_rules.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/distributed.h"
#include "oneflow_lite/tensor.h"

namespace ofl::functional {

// The per-rank sizes of a balanced split of n into `parts`.
std::vector<int64_t> BalancedSizes(int64_t n, int parts);
// S(axis) -> B, with the given per-rank sizes along axis (balanced or not): an all-gather.
Tensor AllGatherAlong(const Tensor& x, int axis, const std::vector<int64_t>& sizes,
                      const Shape& logical, const Placement& p, int me, const std::string& sbps);
// This rank's new shard for `to`, from its shard `x` under `from` (same placement; me >= 0).
Tensor BoxShard(const Tensor& x, const Sbp& from, const Sbp& to, const Shape& logical,
                const Placement& p, int me);
// t (global) on placement `to` (same device type) under `sbp`.
Tensor ChangePlacement(const Tensor& t, const Placement& to, const Sbp& sbp);

}  // namespace ofl::functional
