// The collective protocol of global tensors. Every collective a rank issues gets the next sequence
// number of its rank list and a fingerprint (kind, element type, logical shape, SBPs, placement);
// the pair names the same collective on every rank (the collective watchdog's hang report, the
// trace tool's pairing), and the ranks compare both before it runs, in the agreement every
// collective begins with (unless OFL_CHECK_COLLECTIVES=0), all throwing the same error when they
// differ (collective_policy.h). A collective is a VM instruction on the collective
// stream of the placement's device (oneflow_lite/functional/collective_policy.h), which runs them
// in issue order; what it moves, and how, is the device type's collectives'
// (kernels/collective/device_collectives.h).
#pragma once

#include <string>
#include <vector>

#include "kernels/collective/device_collectives.h"
#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/collective_policy.h"
#include "oneflow_lite/tensor.h"

namespace ofl::functional {

// cpu:0, where metadata and the host's side of every exchange live.
const Device& HostDevice();
// The collectives of p's device type; InvalidArgument naming `op` for a type global tensors do
// not support, and the entry's own refusal (no NCCL, no GPU) when this process cannot use it.
const kernels::collective::DeviceCollectives& CheckedCollectivesOf(const char* op,
                                                                   const Placement& p);
// The same for a placement already checked.
const kernels::collective::DeviceCollectives& CollectivesOf(const Placement& p);
// The device this rank's shards of `p` live on.
Device PlacementDevice(const Placement& p);

// The fingerprint every rank's collective number `seq` must share.
struct Fingerprint {
  std::string text;
};
Fingerprint MakeFingerprint(const char* kind, DType dtype, const Shape& logical,
                            const std::string& sbps, const Placement& p);

// Issues one collective over p's ranks on the collective stream of p's device: `run` gets the
// inputs', the outputs' memory and the stream's native stream.
void IssueCollective(const Fingerprint& fp, const Placement& p, std::vector<vm::BlobArg> in,
                     std::vector<vm::BlobArg> out, CollectivePolicy::Run run);

// Every rank's `mine` (the same size on every rank), gathered over the world in rank order and
// waited for: the metadata exchange before to_global of local tensors moves any data.
std::vector<char> GatherSlots(const char* op, std::vector<char> mine);

}  // namespace ofl::functional
