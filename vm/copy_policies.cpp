#include "vm/copy_policies.h"

#include "oneflow_lite/error.h"
#include "vm/stream.h"

namespace ofl::vm {

HostBuffer::HostBuffer(CachingAllocator* pool, size_t bytes, bool allocate_now)
    : pool_(pool), bytes_(bytes) {
  if (allocate_now) Allocate();
}

void HostBuffer::Allocate() {
  if (bytes_ == 0 || data_ != nullptr) return;
  block_ = pool_->Allocate(bytes_, nullptr, "staging");
  data_ = static_cast<char*>(CachingAllocator::Data(block_));
}

HostBuffer::~HostBuffer() {
  try {
    pool_->Free(block_);
  } catch (...) {  // Free only throws for a double free, which a HostBuffer cannot do
  }
}

std::unique_ptr<DeviceCopyPolicy> DeviceCopyPolicy::HostToDevice(std::string op, BlobArg dst,
                                                                 std::shared_ptr<HostBuffer> src,
                                                                 size_t bytes) {
  std::unique_ptr<DeviceCopyPolicy> p(new DeviceCopyPolicy());
  p->op_ = std::move(op);
  p->kind_ = CopyKind::kHostToDevice;
  p->bytes_ = bytes;
  p->dst_ = std::move(dst);
  p->has_dst_blob_ = true;
  p->buffer_ = std::move(src);
  p->writes_.push_back(p->dst_.blob);
  return p;
}

std::unique_ptr<DeviceCopyPolicy> DeviceCopyPolicy::DeviceToHost(std::string op, BlobArg src,
                                                                 std::shared_ptr<HostBuffer> dst,
                                                                 size_t bytes) {
  std::unique_ptr<DeviceCopyPolicy> p(new DeviceCopyPolicy());
  p->op_ = std::move(op);
  p->kind_ = CopyKind::kDeviceToHost;
  p->bytes_ = bytes;
  p->src_ = std::move(src);
  p->has_src_blob_ = true;
  p->buffer_ = std::move(dst);
  p->reads_.push_back(p->src_.blob);
  return p;
}

std::unique_ptr<DeviceCopyPolicy> DeviceCopyPolicy::BlobToBlob(std::string op, BlobArg src,
                                                               BlobArg dst, CopyKind kind,
                                                               size_t bytes) {
  std::unique_ptr<DeviceCopyPolicy> p(new DeviceCopyPolicy());
  p->op_ = std::move(op);
  p->kind_ = kind;
  p->bytes_ = bytes;
  p->src_ = std::move(src);
  p->dst_ = std::move(dst);
  p->has_src_blob_ = p->has_dst_blob_ = true;
  p->reads_.push_back(p->src_.blob);
  p->writes_.push_back(p->dst_.blob);
  return p;
}

void DeviceCopyPolicy::Compute(Instruction* instr) {
  if (bytes_ == 0) return;
  if (buffer_) buffer_->Allocate();
  const void* src = has_src_blob_ ? src_.Resolve().data : buffer_->data();
  void* dst = has_dst_blob_ ? dst_.Resolve().data : buffer_->data();
  Stream* stream = instr->stream();
  stream->backend()->copy_async(dst, src, bytes_, kind_, stream->native());
}

}  // namespace ofl::vm
