// The agreement before to_global of local tensors moves any data: every rank of the world sends
// what it was given (its own checks' verdict, its tensor's shape and dtype, its placement and SBP)
// in one world-wide exchange, and every rank reaches the same verdict from what all of them sent:
// the same error on every rank, or the same logical shape and dtype. A rank whose own check
// failed still takes part, so the ranks stay in step for the next call.
//
// A rank outside the placement holds nothing: it may pass any local tensor or an undefined one
// (Tensor()); its tensor's shape, dtype and device are not looked at. It must pass the same
// placement and SBP as the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/tensor.h"

namespace ofl::functional {

// What one rank brings to to_global(local tensor, placement, sbp).
struct ToGlobalCall {
  // The verdict of this rank's own checks (an undefined tensor, a placement this build or node
  // cannot serve, a tensor on another device than the placement's, a split axis beyond the
  // tensor's dims): the kind of error, kNone when they passed.
  enum class Failure : int64_t { kNone = 0, kInvalidArgument = 1, kDeviceError = 2, kError = 3 };
  Failure failure = Failure::kNone;
  std::string failure_message;  // the check's message
  bool member = false;          // this rank is in its placement
  bool has_tensor = false;      // the tensor is defined (shape and dtype are meaningful)
  bool records_grad = false;    // a member whose tensor requires grad, in grad mode
  Shape shape;
  DType dtype = DType::kFloat32;
  std::string placement;  // Placement::str()
  std::string sbp;        // Sbp::str()
};

// The bytes one rank sends (the same on every rank of a world of `world` processes).
size_t ToGlobalSlotBytes(int world);
std::vector<char> EncodeToGlobalCall(const ToGlobalCall& call, int world);

struct ToGlobalAgreement {
  Shape logical;
  DType dtype = DType::kFloat32;     // the members' dtype (what a rank outside holds none of)
  std::vector<int64_t> split_sizes;  // per parallel index, for a split SBP: the shards' sizes
  bool records_grad = false;         // every member's tensor requires grad (autograd records)
};

// From every rank's slot (`all`: `world` slots back to back, in rank order), the verdict every
// rank reaches alike: throws the same InvalidArgument (DeviceError for a device a rank lacks) on
// every rank, naming the rank(s) and the values, or returns the logical shape. The members' tensors
// must all require grad or none; those that do must be the balanced split (their gradient is the
// balanced shard of the output's). `p` and `sbp` are
// this rank's own (used once every rank is known to have passed the same).
ToGlobalAgreement AgreeOnToGlobal(const std::vector<char>& all, int world, const Placement& p,
                                  const Sbp& sbp);

}  // namespace ofl::functional
