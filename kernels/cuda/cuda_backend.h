// The CUDA backend of the device interface (oneflow_lite/extension.h): memory from cudaMalloc (the
// VM's caching pool splits it), pinned staging memory from cudaHostAlloc, non-blocking streams per
// device and role, events without timing (the VM's streams pool and reuse them), and copies with
// cudaMemcpyAsync (device to device across GPUs goes through unified addressing: a direct peer copy
// where the two GPUs can reach each other, staged by the driver through the host otherwise; peer
// access between two GPUs is enabled, both ways, on the first copy between them).
//
// Without a usable GPU (no device, no driver) device_count() is 0 and unavailable_reason() says
// why in CUDA's words, so every op on "cuda" throws DeviceError with that reason.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/cuda/cuda_namespace.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {

class CudaBackend final : public DeviceBackend {
 public:
  int device_count() override;
  std::string unavailable_reason() override;
  void set_device(int index) override;
  void* allocate(int index, size_t bytes) override;
  void deallocate(int index, void* ptr, size_t bytes) override;
  void* allocate_host(size_t bytes) override;
  void deallocate_host(void* ptr, size_t bytes) override;
  NativeStream create_stream(int index) override;
  void destroy_stream(int index, NativeStream stream) override;
  NativeEvent create_event(int index) override;
  void destroy_event(int index, NativeEvent event) override;
  void record_event(NativeEvent event, NativeStream stream) override;
  bool query_event(NativeEvent event) override;
  void synchronize_event(NativeEvent event) override;
  void stream_wait_event(NativeStream stream, NativeEvent event) override;
  void copy_async(void* dst, const void* src, size_t bytes, CopyKind kind,
                  NativeStream stream) override;
  std::string memory_info(int index) override;

 private:
  void Probe();
  // Before a copy between two GPUs: enables peer access between the devices holding `dst` and
  // `src`, both ways, the first time a copy joins them.
  void EnsurePeerAccess(void* dst, const void* src);
  // Lets `from`'s context reach `to`'s memory when the hardware can; called with peer_mu_ held.
  void EnablePeer(int from, int to);
  std::once_flag probed_;
  int count_ = 0;
  std::string reason_;
  // Peer access from device a to device b, at [a * count_ + b]: kPeerUnknown until the first copy
  // between them, then kPeerEnabled or kPeerUnavailable. Read without the lock on the copy path;
  // written only under peer_mu_, so that one thread makes the driver calls for a pair.
  enum : uint8_t { kPeerUnknown, kPeerEnabled, kPeerUnavailable };
  std::unique_ptr<std::atomic<uint8_t>[]> peer_;
  std::mutex peer_mu_;
};

// The CUDA kernels of "copy", "repeat" and "reduce_sum_to" (kernels/cuda/*.cu; each registers
// itself: cuda_kernel_list.h).
void CopyKernel(const KernelContext& ctx);
void RepeatKernel(const KernelContext& ctx);
void ReduceSumToKernel(const KernelContext& ctx);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
