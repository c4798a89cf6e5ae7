// The collectives of global tensors on cuda placements: NCCL (from the CUDA toolkit), with its
// communicators' unique ids handed out over MPI. The same contracts as collectives.h, on device
// buffers: each call enqueues its work on `stream` (a cudaStream_t of device `device_index`, the
// VM's collective stream of that GPU), then waits on the host until the device completed it,
// polling NCCL's asynchronous error meanwhile. So a collective that fails, or whose peer died,
// fails its own instruction on every surviving rank instead of spinning on the GPU for ever; the
// price is that the collective stream's worker enqueues the next collective only once this one
// completed (the collective stream runs nothing else, and the GPU ran its collectives one after
// another anyway). The wait needs no host action from the waiting worker: what the collective
// waits for on the device (events of other streams) is already recorded.
//
// Failures (the decisions are in nccl_wait.h, where they are tested without a GPU):
// - a refused call (ncclInvalidArgument: InvalidArgument; ncclInvalidUsage: DeviceError) enqueued
//   nothing; the communicator is kept;
// - ncclSystemError, ncclInternalError, ncclRemoteError, an asynchronous error reported while the
//   collective runs, and a collective that does not complete within the hang timeout
//   (OFL_VM_TIMEOUT_SECONDS, the collective watchdog's; counted from when the device reached the
//   collective) leave the communicator unusable: it is aborted (ncclCommAbort) and dropped, and
//   the error is a DeviceError naming the call, the collective, its ranks and this rank. The GPU
//   is not marked failed; the next collective over those ranks builds a new communicator;
// - ncclUnhandledCudaError does the same, but throws DeviceFailed when CUDA's error is sticky (the
//   context is gone: the VM marks the device failed); a CUDA call of ours fails as cuda_check.h
//   says (DeviceFailed when sticky, else DeviceError).
//
// NCCL needs equal counts per rank; the uneven vector collectives are groups of per-root
// collectives instead (AllGatherV: one broadcast per rank; ReduceScatterSum: one reduce per rank),
// which move no padding. Sums: NCCL has no int16 type, so an int16 sum is refused (before any
// message: NcclCheckSum at the call); bool sums are a max over 0/1, the clamped sum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collective/watchdog.h"
#include "oneflow_lite/dtype.h"

namespace ofl::kernels::collective {

// Whether the library was built with NCCL.
bool BuiltWithNccl();
// Throws InvalidArgument naming `op` when NCCL cannot sum `dtype` (int16).
void NcclCheckSum(const char* op, DType dtype);

void NcclAllGatherV(const void* send, int64_t send_count, void* recv,
                    const std::vector<int64_t>& counts, DType dtype, const std::vector<int>& ranks,
                    int device_index, void* stream);
void NcclAllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                      const std::vector<int>& ranks, int device_index, void* stream);
void NcclReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts,
                          DType dtype, const std::vector<int>& ranks, int device_index,
                          void* stream);
// buf on every rank = the root's `root_src` (copied into the root's own buf first when they
// differ; root_src is read on the root only).
void NcclBroadcast(void* buf, const void* root_src, int64_t count, DType dtype, int root_index,
                   const std::vector<int>& ranks, int device_index, void* stream);

// The collective instruction that the calling thread runs, for the NCCL calls it makes meanwhile:
// their completion wait gives up after `timeout_s` (the watchdog's hang timeout; <= 0: never) and
// their errors name `op_name`, `id`'s fingerprint and what the watchdog knows about `id`. Set by
// functional::CollectivePolicy around its run, on the collective stream's worker. Without one, a
// call waits without a timeout (an asynchronous NCCL error still ends it) and names itself only.
class NcclCollectiveScope {
 public:
  NcclCollectiveScope(std::string op_name, CollectiveId id, double timeout_s);
  ~NcclCollectiveScope();
  NcclCollectiveScope(const NcclCollectiveScope&) = delete;
  NcclCollectiveScope& operator=(const NcclCollectiveScope&) = delete;

  std::string op_name;
  CollectiveId id;
  double timeout_s = 0;

 private:
  NcclCollectiveScope* previous_ = nullptr;
};

// Destroys the communicators; called by FinalizeProcessGroup before MPI is finalised.
void FinalizeNccl();

}  // namespace ofl::kernels::collective
