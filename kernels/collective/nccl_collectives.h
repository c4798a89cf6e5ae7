// The collectives of global tensors on cuda placements: NCCL (from the CUDA toolkit), with its
// communicators' unique ids handed out over MPI. The same contracts as collectives.h, on device
// buffers: each call enqueues its work on `stream` (a cudaStream_t of device `device_index`, the
// VM's collective stream of that GPU) and returns without waiting, so the VM sees it launched and
// later complete, like any kernel.
//
// NCCL needs equal counts per rank; the uneven vector collectives are groups of per-root
// collectives instead (AllGatherV: one broadcast per rank; ReduceScatterSum: one reduce per rank),
// which move no padding. Sums: NCCL has no int16 type, so an int16 sum is refused (before any
// message: NcclCheckSum at the call); bool sums are a max over 0/1, the clamped sum.
#pragma once

#include <cstdint>
#include <vector>

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

// Destroys the communicators; called by FinalizeProcessGroup before MPI is finalised.
void FinalizeNccl();

}  // namespace ofl::kernels::collective
