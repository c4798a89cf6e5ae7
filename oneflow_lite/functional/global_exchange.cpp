// The to_global agreement (global_exchange.h): each rank's call packed into a slot of fixed size,
// and the verdict every rank draws from all the slots.
#include "oneflow_lite/functional/global_exchange.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/array_ops.h"
#include "ops/sbp_rules.h"

namespace ofl::functional {
namespace {

// The slot: int64 fields, then three text fields (NUL-terminated, cut to fit).
enum Field : size_t {
  kFailure,
  kMember,
  kHasTensor,
  kRecordsGrad,
  kDType,
  kNdim,
  kDims,
  kNumFields = kDims + kMaxDims
};
constexpr size_t kMessageBytes = 512;
constexpr size_t kSbpBytes = 32;
// A placement the world can hold names at most `world` ranks below `world`: it fits. A longer one
// fails its rank's own check, which is reported before any placement is compared.
size_t PlacementBytes(int world) { return 96 + 13 * static_cast<size_t>(world); }

size_t MessageAt() { return kNumFields * sizeof(int64_t); }
size_t PlacementAt() { return MessageAt() + kMessageBytes; }
size_t SbpAt(int world) { return PlacementAt() + PlacementBytes(world); }

void PutText(char* at, size_t room, const std::string& s) {
  std::memcpy(at, s.data(), std::min(room - 1, s.size()));
}

std::string GetText(const char* at, size_t room) { return std::string(at, strnlen(at, room)); }

using Failure = ToGlobalCall::Failure;

ToGlobalCall Decode(const char* slot, int world) {
  int64_t f[kNumFields];
  std::memcpy(f, slot, sizeof(f));
  ToGlobalCall c;
  c.failure = static_cast<Failure>(f[kFailure]);
  c.member = f[kMember] != 0;
  c.has_tensor = f[kHasTensor] != 0;
  c.records_grad = f[kRecordsGrad] != 0;
  c.dtype = static_cast<DType>(f[kDType]);
  const int64_t ndim = std::clamp<int64_t>(f[kNdim], 0, kMaxDims);
  c.shape = Shape(std::vector<int64_t>(f + kDims, f + kDims + ndim));
  c.failure_message = GetText(slot + MessageAt(), kMessageBytes);
  c.placement = GetText(slot + PlacementAt(), PlacementBytes(world));
  c.sbp = GetText(slot + SbpAt(world), kSbpBytes);
  return c;
}

std::string WithoutOpPrefix(const std::string& msg) {
  const std::string prefix = "to_global: ";
  return msg.compare(0, prefix.size(), prefix) == 0 ? msg.substr(prefix.size()) : msg;
}

[[noreturn]] void Throw(Failure kind, const std::string& msg) {
  switch (kind) {
    case Failure::kDeviceError:
      throw DeviceError(msg);
    case Failure::kInvalidArgument:
      throw InvalidArgument(msg);
    default:
      throw Error(msg);
  }
}

std::string RanksStr(const std::vector<int>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

// The first rank whose `what` differs from rank `ref`'s, or -1.
template <class F>
int FirstDiffering(const std::vector<int>& ranks, int ref, F what) {
  for (int r : ranks) {
    if (what(r) != what(ref)) return r;
  }
  return -1;
}

// The logical shape of the members' shards under `sbp` (split: the sizes along the axis summed,
// with overflow refused).
Shape LogicalFromShards(const std::vector<ToGlobalCall>& calls, const Placement& p, const Sbp& sbp,
                        std::vector<int64_t>* split_sizes) {
  const int first_rank = p.ranks()[0];
  const Shape& first = calls[first_rank].shape;
  std::vector<int64_t> logical(first.begin(), first.end());
  if (sbp.is_split() && sbp.axis() >= first.ndim()) {  // refused by the rank's own check already
    throw InvalidArgument("to_global: sbp " + sbp.str() + " splits axis " +
                          std::to_string(sbp.axis()) + " but rank " + std::to_string(first_rank) +
                          "'s tensor has shape " + first.str());
  }
  bool overflow = false;
  if (sbp.is_split()) logical[sbp.axis()] = 0;
  for (int r : p.ranks()) {
    const Shape& s = calls[r].shape;
    bool same = s.ndim() == first.ndim();
    for (int d = 0; same && d < s.ndim(); ++d) {
      if (sbp.is_split() && d == sbp.axis()) continue;
      same = s[d] == first[d];
    }
    if (!same) {
      throw InvalidArgument(
          "to_global: the ranks' tensors do not fit together under sbp " + sbp.str() + " on " +
          p.str() + ": rank " + std::to_string(first_rank) + " has shape " + first.str() +
          ", rank " + std::to_string(r) + " has " + s.str() +
          (sbp.is_split() ? " (only the split axis may differ)" : " (they must be equal)"));
    }
    if (sbp.is_split()) {
      const int64_t size = s[sbp.axis()];
      if (!overflow && __builtin_add_overflow(logical[sbp.axis()], size, &logical[sbp.axis()])) {
        overflow = true;
      }
      split_sizes->push_back(size);
    }
  }
  if (overflow) {
    std::string sizes;
    for (size_t i = 0; i < split_sizes->size(); ++i) {
      sizes += (i ? ", " : "") + std::string("rank ") + std::to_string(p.ranks()[i]) + ": " +
               std::to_string((*split_sizes)[i]);
    }
    throw InvalidArgument("to_global: the shards' sizes along the split axis " +
                          std::to_string(sbp.axis()) + " of sbp " + sbp.str() + " (" + sizes +
                          ") sum past " + std::to_string(std::numeric_limits<int64_t>::max()) +
                          ", the largest size a dim can have");
  }
  return Shape(logical);
}

}  // namespace

size_t ToGlobalSlotBytes(int world) { return SbpAt(world) + kSbpBytes; }

std::vector<char> EncodeToGlobalCall(const ToGlobalCall& call, int world) {
  std::vector<char> slot(ToGlobalSlotBytes(world), 0);
  int64_t f[kNumFields] = {};
  f[kFailure] = static_cast<int64_t>(call.failure);
  f[kMember] = call.member ? 1 : 0;
  f[kHasTensor] = call.has_tensor ? 1 : 0;
  f[kRecordsGrad] = call.records_grad ? 1 : 0;
  if (call.has_tensor) {
    f[kDType] = static_cast<int64_t>(call.dtype);
    f[kNdim] = std::min(call.shape.ndim(), kMaxDims);
    for (int d = 0; d < f[kNdim]; ++d) f[kDims + d] = call.shape[d];
  }
  std::memcpy(slot.data(), f, sizeof(f));
  PutText(slot.data() + MessageAt(), kMessageBytes, call.failure_message);
  PutText(slot.data() + PlacementAt(), PlacementBytes(world), call.placement);
  PutText(slot.data() + SbpAt(world), kSbpBytes, call.sbp);
  return slot;
}

ToGlobalAgreement AgreeOnToGlobal(const std::vector<char>& all, int world, const Placement& p,
                                  const Sbp& sbp) {
  const size_t slot = ToGlobalSlotBytes(world);
  std::vector<ToGlobalCall> calls;
  std::vector<int> everyone, failed;
  for (int r = 0; r < world; ++r) {
    calls.push_back(Decode(all.data() + r * slot, world));
    everyone.push_back(r);
    if (calls.back().failure != Failure::kNone) failed.push_back(r);
  }
  // 1. A rank whose own checks failed: its error, on every rank.
  if (!failed.empty()) {
    const ToGlobalCall& c = calls[failed[0]];
    std::string msg =
        "to_global: rank " + std::to_string(failed[0]) + ": " + WithoutOpPrefix(c.failure_message);
    if (failed.size() > 1) {
      msg += " (rank(s) " + RanksStr(std::vector<int>(failed.begin() + 1, failed.end())) +
             " failed their own checks too)";
    }
    Throw(c.failure, msg + "; every rank refuses the call");
  }
  // 2. The same placement and SBP on every rank of the world (a rank outside included: it must
  // know it is outside).
  const char* same = "; every rank must pass the same placement and sbp";
  if (int r = FirstDiffering(everyone, 0, [&](int i) { return calls[i].placement; }); r >= 0) {
    throw InvalidArgument("to_global: the ranks passed different placements: rank 0 passed " +
                          calls[0].placement + ", rank " + std::to_string(r) + " passed " +
                          calls[r].placement + same);
  }
  if (int r = FirstDiffering(everyone, 0, [&](int i) { return calls[i].sbp; }); r >= 0) {
    throw InvalidArgument("to_global: the ranks passed different sbps: rank 0 passed sbp " +
                          calls[0].sbp + ", rank " + std::to_string(r) + " passed sbp " +
                          calls[r].sbp + same);
  }
  // 3. The members' dtypes, then their shapes.
  const int first = p.ranks()[0];
  if (int r = FirstDiffering(p.ranks(), first, [&](int i) { return calls[i].dtype; }); r >= 0) {
    throw InvalidArgument("to_global: the shards' dtypes differ: rank " + std::to_string(first) +
                          " passed " + to_string(calls[first].dtype) + ", rank " +
                          std::to_string(r) + " passed " + to_string(calls[r].dtype) +
                          "; every rank of " + p.str() + " must pass the same dtype");
  }
  ToGlobalAgreement a;
  a.dtype = calls[first].dtype;
  a.logical = LogicalFromShards(calls, p, sbp, &a.split_sizes);
  ops::CheckShape("to_global", "the logical shape", a.logical, element_size(a.dtype));
  // 4. Autograd: every member's tensor requires grad, or none's; then balanced shards only.
  std::vector<int> with, without;
  for (int r : p.ranks()) (calls[r].records_grad ? with : without).push_back(r);
  if (!with.empty() && !without.empty()) {
    throw InvalidArgument("to_global: the local tensors require grad on rank(s) " + RanksStr(with) +
                          " but not on rank(s) " + RanksStr(without) + " of " + p.str() +
                          "; pass tensors that all require grad or none (detach(), or convert "
                          "under NoGradGuard)");
  }
  a.records_grad = !with.empty();
  if (a.records_grad && sbp.is_split()) {
    for (size_t i = 0; i < a.split_sizes.size(); ++i) {
      const ops::SplitRange r =
          ops::BalancedSplit(a.logical[sbp.axis()], p.size(), static_cast<int>(i));
      if (a.split_sizes[i] != r.size) {
        throw InvalidArgument(
            "to_global: the local tensors require grad, and their sizes along the split axis " +
            std::to_string(sbp.axis()) + " (rank " + std::to_string(p.ranks()[i]) + ": " +
            std::to_string(a.split_sizes[i]) + ") are not the balanced split of " +
            std::to_string(a.logical[sbp.axis()]) + " (" + std::to_string(r.size) +
            "), so a shard's gradient would not fit its tensor; pass balanced shards");
      }
    }
  }
  return a;
}

}  // namespace ofl::functional
