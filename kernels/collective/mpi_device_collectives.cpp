// cpu placements: global tensors' collectives over host memory with MPI (collectives.h), run by
// the CPU's collective stream (a synchronous stream: its native stream is not used).
#include <cstring>

#include "kernels/collective/collectives.h"
#include "kernels/collective/device_collectives.h"

namespace ofl::kernels::collective {
namespace {

class MpiCollectives final : public DeviceCollectives {
 public:
  const char* description() const override { return "cpu placements move host memory with MPI"; }
  Device LocalDevice() const override { return Device(DeviceType::kCPU, 0); }
  bool has_all_to_all() const override { return true; }
  bool host_accessible() const override { return true; }

  void AllGatherV(const void* send, int64_t send_count, void* recv,
                  const std::vector<int64_t>& counts, DType dtype, const std::vector<int>& ranks,
                  const Device&, NativeStream) const override {
    collective::AllGatherV(send, send_count, recv, counts, dtype, ranks);
  }
  void AllReduceSum(const void* send, void* recv, int64_t count, DType dtype,
                    const std::vector<int>& ranks, const Device&, NativeStream) const override {
    collective::AllReduceSum(send, recv, count, dtype, ranks);
  }
  void ReduceScatterSum(const void* send, void* recv, const std::vector<int64_t>& counts,
                        DType dtype, const std::vector<int>& ranks, const Device&,
                        NativeStream) const override {
    collective::ReduceScatterSum(send, recv, counts, dtype, ranks);
  }
  void AllToAllV(const void* send, const std::vector<int64_t>& send_counts,
                 const std::vector<int64_t>& send_displs, void* recv,
                 const std::vector<int64_t>& recv_counts, const std::vector<int64_t>& recv_displs,
                 DType dtype, const std::vector<int>& ranks, const Device&,
                 NativeStream) const override {
    collective::AllToAllV(send, send_counts, send_displs, recv, recv_counts, recv_displs, dtype,
                          ranks);
  }
  void Broadcast(void* buf, const void* root_src, int64_t count, DType dtype, int root_index,
                 const std::vector<int>& ranks, const Device&, NativeStream) const override {
    const size_t bytes = static_cast<size_t>(count) * element_size(dtype);
    if (root_src != nullptr && root_src != buf && bytes > 0) std::memcpy(buf, root_src, bytes);
    collective::Broadcast(buf, count, dtype, root_index, ranks);
  }
};

const MpiCollectives kMpi;
OFL_REGISTER_DEVICE_COLLECTIVES(DeviceType::kCPU, 0, &kMpi);

}  // namespace
}  // namespace ofl::kernels::collective
