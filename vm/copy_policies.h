// Instruction policies that move bytes with the device backend's asynchronous copies: host <->
// device transfers through staging memory, and copies between devices (Tensor::to). Each runs on
// a stream of the device the backend belongs to and only enqueues the copy; the VM waits for its
// completion event wherever the host or another device needs the bytes.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "oneflow_lite/extension.h"
#include "vm/allocator/caching_allocator.h"
#include "vm/instruction.h"

namespace ofl::vm {

// A staging buffer from the host staging pool of a device type (DeviceRegistry::GetStagingPool:
// a caching pool over the backend's allocate_host, pinned memory for CUDA), returned to that pool
// when the last holder lets go. A policy holds it until the instruction is retired, which is after
// its copy completed, so the pool never hands out a buffer a copy may still read or write.
class HostBuffer {
 public:
  // allocate_now == false: the memory is allocated by Allocate(), on the worker that fills it
  // (a read allocates no staging for a tensor whose producer failed).
  HostBuffer(CachingAllocator* pool, size_t bytes, bool allocate_now = true);
  // Throws OutOfMemory when there is no host memory left; a no-op once allocated.
  void Allocate();
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  char* data() const { return data_; }
  size_t size() const { return bytes_; }

 private:
  CachingAllocator* pool_;
  CachingAllocator::Block* block_ = nullptr;
  char* data_ = nullptr;
  size_t bytes_;
};

// Copies `bytes` contiguous bytes between two blob views (either may be a HostBuffer instead):
// H2D writes `dst` from the buffer, D2H reads `src` into the buffer, D2D copies src to dst. The
// views are contiguous; the copy goes through the running stream's backend.
class DeviceCopyPolicy final : public InstructionPolicy {
 public:
  // Host -> device: dst blob, source buffer.
  static std::unique_ptr<DeviceCopyPolicy> HostToDevice(std::string op, BlobArg dst,
                                                        std::shared_ptr<HostBuffer> src,
                                                        size_t bytes);
  // Device -> host buffer.
  static std::unique_ptr<DeviceCopyPolicy> DeviceToHost(std::string op, BlobArg src,
                                                        std::shared_ptr<HostBuffer> dst,
                                                        size_t bytes);
  // Blob -> blob (different devices, or a host blob on either side).
  static std::unique_ptr<DeviceCopyPolicy> BlobToBlob(std::string op, BlobArg src, BlobArg dst,
                                                      CopyKind kind, size_t bytes);

  const char* policy_name() const override { return "DeviceCopy"; }
  const std::string& op_name() const override { return op_; }
  void Compute(Instruction* instr) override;

 private:
  DeviceCopyPolicy() = default;
  std::string op_;
  CopyKind kind_ = CopyKind::kDeviceToDevice;
  size_t bytes_ = 0;
  bool has_src_blob_ = false, has_dst_blob_ = false;
  BlobArg src_, dst_;
  std::shared_ptr<HostBuffer> buffer_;
};

}  // namespace ofl::vm
