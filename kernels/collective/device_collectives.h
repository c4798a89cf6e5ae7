// The collectives of global tensors over the memory of one device type: an entry per device type
// that placements may name, registered from its own file with OFL_REGISTER_DEVICE_COLLECTIVES. MPI
// moves host memory for cpu placements (mpi_device_collectives.cpp, over collectives.h); NCCL
// moves GPU memory for cuda placements (nccl_device_collectives.cpp, over nccl_collectives.h); MPI
// moves the simulated accelerator's memory for sim placements through host staging buffers, which
// the sim's own copies fill and empty on the collective stream (sim_device_collectives.cpp).
// Boxing (oneflow_lite/functional/boxing.cpp) calls through an entry and never asks which device
// it has. The contracts of the calls are collectives.h's, on buffers of the entry's device; each
// call runs on the collective stream of `device` (its native stream `stream`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::collective {

class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;

  // "cpu placements move host memory with MPI": for the error naming the supported types.
  virtual const char* description() const = 0;
  // Throws, naming `op` and `placement`, when placements of this type cannot be used by this
  // process (a build without NCCL: InvalidArgument; no GPU: DeviceError).
  virtual void CheckUsable(const std::string& op, const std::string& placement) const {}
  // The device this rank's shards live on.
  virtual Device LocalDevice() const = 0;
  // Throws InvalidArgument naming `op` when sums of `dtype` are not supported.
  virtual void CheckSum(const char* op, DType dtype) const {}
  // Whether AllToAllV moves uneven blocks; without it, an S(i) -> S(j) boxing goes through
  // broadcast (an all-gather, then a local slice).
  virtual bool has_all_to_all() const { return false; }
  // Whether an S -> P boxing (the own slice in a zero buffer, no communication) is made on the
  // host and copied back rather than by a host function on this device's memory.
  virtual bool host_accessible() const = 0;

  virtual void AllGatherV(const void* send, int64_t send_count, void* recv,
                          const std::vector<int64_t>& counts, DType dtype,
                          const std::vector<int>& ranks, const Device& device,
                          NativeStream stream) const = 0;
  virtual void AllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                            const std::vector<int>& ranks, const Device& device,
                            NativeStream stream) const = 0;
  virtual void ReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts,
                                DType dtype, const std::vector<int>& ranks, const Device& device,
                                NativeStream stream) const = 0;
  // Only where has_all_to_all().
  virtual void AllToAllV(const void* send, const std::vector<int64_t>& send_counts,
                         const std::vector<int64_t>& send_displs, void* recv,
                         const std::vector<int64_t>& recv_counts,
                         const std::vector<int64_t>& recv_displs, DType dtype,
                         const std::vector<int>& ranks, const Device& device,
                         NativeStream stream) const;
  // buf on every rank = the root's `root_src` (read on the root only; copied into the root's buf
  // first when they differ).
  virtual void Broadcast(void* buf, const void* root_src, int64_t count, DType dtype,
                         int root_index, const std::vector<int>& ranks, const Device& device,
                         NativeStream stream) const = 0;
};

// The device of `type` for this rank's node-local index (collective::NodeLocalRank) modulo the
// devices of the type present (index 0 when there are none): each rank's own GPU, its own sim.
Device NodeLocalDevice(DeviceType type);

// The entry of `type`; null when global tensors do not support the type.
const DeviceCollectives* FindDeviceCollectives(DeviceType type);
// "cpu placements move host memory with MPI, cuda placements device memory with NCCL".
std::string DeviceCollectivesDescription();

void RegisterDeviceCollectives(DeviceType type, int listed_at, const DeviceCollectives* entry);
struct DeviceCollectivesRegistrar {
  DeviceCollectivesRegistrar(DeviceType type, int listed_at, const DeviceCollectives* entry) {
    RegisterDeviceCollectives(type, listed_at, entry);
  }
};

}  // namespace ofl::kernels::collective

// One per device type, in the file of its collectives: OFL_REGISTER_DEVICE_COLLECTIVES(
// DeviceType::kCPU, 0, &kMpiCollectives). `listed_at` orders the types in messages.
#define OFL_REGISTER_DEVICE_COLLECTIVES(type, listed_at, entry)       \
  static const ::ofl::kernels::collective::DeviceCollectivesRegistrar \
      ofl_device_collectives_registrar_ {                             \
    type, listed_at, entry                                            \
  }
