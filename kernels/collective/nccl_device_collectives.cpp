// cuda placements: global tensors' collectives over GPU memory with NCCL (nccl_collectives.h), on
// the GPU's collective stream. Each rank uses the GPU of its node-local rank.
#include <string>

#include "kernels/collective/collectives.h"
#include "kernels/collective/device_collectives.h"
#include "kernels/collective/nccl_collectives.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::collective {
namespace {

class NcclCollectives final : public DeviceCollectives {
 public:
  const char* description() const override {
    return "cuda placements move device memory with NCCL";
  }
  void CheckUsable(const std::string& op, const std::string& placement) const override {
    if (!BuiltWithNccl()) {
      throw InvalidArgument(op + ": " + placement +
                            ": cuda placements need NCCL, and this oneflow_lite was built without "
                            "it (CUDA, MPI and NCCL at build time)");
    }
    if (device_count(DeviceType::kCUDA) == 0) {
      throw DeviceError(op + ": " + placement + ": " +
                        device_unavailable_reason(DeviceType::kCUDA));
    }
  }
  // The GPU of this rank's node-local index (OMPI_COMM_WORLD_LOCAL_RANK; the world rank without
  // it) modulo the GPUs present.
  Device LocalDevice() const override {
    static const Device device = NodeLocalDevice(DeviceType::kCUDA);
    return device;
  }
  void CheckSum(const char* op, DType dtype) const override { NcclCheckSum(op, dtype); }
  bool host_accessible() const override { return false; }

  void AllGatherV(const void* send, int64_t send_count, void* recv,
                  const std::vector<int64_t>& counts, DType dtype, const std::vector<int>& ranks,
                  const Device& device, NativeStream stream) const override {
    NcclAllGatherV(send, send_count, recv, counts, dtype, ranks, device.index(), stream);
  }
  void AllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                    const std::vector<int>& ranks, const Device& device,
                    NativeStream stream) const override {
    NcclAllReduceSum(send, recv, count, dtype, ranks, device.index(), stream);
  }
  void ReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts,
                        DType dtype, const std::vector<int>& ranks, const Device& device,
                        NativeStream stream) const override {
    NcclReduceScatterSum(send, recv, counts, dtype, ranks, device.index(), stream);
  }
  void Broadcast(void* buf, const void* root_src, int64_t count, DType dtype, int root_index,
                 const std::vector<int>& ranks, const Device& device,
                 NativeStream stream) const override {
    NcclBroadcast(buf, root_src, count, dtype, root_index, ranks, device.index(), stream);
  }
};

const NcclCollectives kNccl;
OFL_REGISTER_DEVICE_COLLECTIVES(DeviceType::kCUDA, 1, &kNccl);

}  // namespace
}  // namespace ofl::kernels::collective
