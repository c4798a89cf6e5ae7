// TensorImpl: a tensor's view metadata plus the storage it shares with its views. Internal: the
// public API speaks of Tensor only.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/placement.h"
#include "oneflow_lite/shape.h"
#include "vm/eager_blob_object.h"
#include "vm/instruction.h"

namespace ofl {

namespace autograd {
struct AutogradMeta;
}

// A tensor's storage, shared by its views: the VM's blob (its memory, the dependences of the
// instructions that touch it, the tensors' holds on it) and what the tensors keep per storage
// above the VM, the version counter (as c10's VariableVersion). One object: the counter fills the
// blob's last 4 bytes, so a storage costs no allocation beyond its blob's (docs/benchmarks.md).
class Storage final : public vm::EagerBlobObject {
 public:
  using vm::EagerBlobObject::EagerBlobObject;

  // Bumped by every in-place op on the storage at the call (the in-place form of the local
  // stage); read by a backward to find the tensors it saved that were changed since.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void BumpVersion() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::atomic<uint32_t> version_{0};
};

// A tensor's hold on its storage; the views of a tensor share it. The holds are counted in the
// blob itself (EagerBlobObject::AddTensorRef), so a storage costs no object of its own. When the
// last hold goes, it hands the blob to VirtualMachine::Release, which orders the free after every
// instruction still using the blob.
class StorageRef {
 public:
  StorageRef() = default;
  // The storage's first hold (no tensor held it before).
  explicit StorageRef(std::shared_ptr<Storage> storage) : blob_(std::move(storage)) {
    if (blob_) blob_->AddTensorRef();
  }
  StorageRef(const StorageRef& other) : blob_(other.blob_) {
    if (blob_) blob_->AddTensorRef();
  }
  StorageRef(StorageRef&& other) noexcept = default;  // leaves other empty
  StorageRef& operator=(StorageRef other) noexcept {
    blob_.swap(other.blob_);
    return *this;
  }
  ~StorageRef() {
    if (blob_ && blob_->DropTensorRef()) ReleaseLast();
  }

  const vm::BlobPtr& blob() const { return blob_; }
  // The storage held (a StorageRef is made from one only, so the blob is one).
  Storage* operator->() const { return static_cast<Storage*>(blob_.get()); }
  explicit operator bool() const { return blob_ != nullptr; }
  friend bool operator==(const StorageRef& a, const StorageRef& b) { return a.blob_ == b.blob_; }
  friend bool operator!=(const StorageRef& a, const StorageRef& b) { return a.blob_ != b.blob_; }

 private:
  void ReleaseLast() noexcept;  // the last hold went: VirtualMachine::Release(blob_)
  vm::BlobPtr blob_;
};

// What makes a tensor global: its placement, SBP and logical shape. The TensorImpl around it
// describes this rank's physical shard (an empty one on ranks outside the placement).
struct GlobalMeta {
  Placement placement;
  Sbp sbp;
  Shape logical_shape;
};

// Kept at 144 bytes (a 160-byte allocation with its control block; one per live tensor): the
// dtype and device are the storage's (its blob's), and the rarely used parts (the strides as a
// std::vector, the global metadata) sit behind one pointer, made on first use.
class TensorImpl {
 public:
  TensorImpl(const Shape& shape, Strides stride, int64_t offset, StorageRef storage)
      : shape_(shape), stride_(std::move(stride)), offset_(offset), storage_(std::move(storage)) {}

  ~TensorImpl() { delete extras_.load(std::memory_order_relaxed); }
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  const Shape& shape() const { return shape_; }
  const Strides& stride() const { return stride_; }
  // The strides as the std::vector that Tensor::stride() returns: made on the first call (from any
  // thread), then kept for the tensor's life, so tensors whose strides nobody asks for as a vector
  // cost no heap allocation for them.
  const std::vector<int64_t>& stride_vector() const;
  int64_t offset() const { return offset_; }
  DType dtype() const { return storage_.blob()->dtype(); }
  const Device& device() const { return storage_.blob()->device(); }
  const StorageRef& storage() const { return storage_; }
  const vm::BlobPtr& blob() const { return storage_.blob(); }
  // Null for a local tensor.
  const std::shared_ptr<const GlobalMeta>& global() const {
    const Extras* e = extras_.load(std::memory_order_acquire);
    return e != nullptr ? e->global : kNoGlobal;
  }
  // Only while the tensor is being made, before any other thread can see it.
  void set_global(std::shared_ptr<const GlobalMeta> g) { GetExtras()->global = std::move(g); }
  // The tensor's autograd state (oneflow_lite/autograd/graph.h): null for a tensor that neither
  // requires grad nor was made by a recorded op, which is one load to find out.
  autograd::AutogradMeta* autograd() const {
    const Extras* e = extras_.load(std::memory_order_acquire);
    return e != nullptr ? e->autograd.get() : nullptr;
  }
  // Made on first use. Autograd state is the calling thread's to change: a tensor's autograd
  // members are not to be called on the same tensor from two threads at once (as in PyTorch).
  autograd::AutogradMeta& mutable_autograd();

  // This view as an instruction operand.
  vm::BlobArg arg() const;
  // The same storage seen through another shape / stride / offset.
  vm::BlobArg arg(const Shape& shape, const Strides& stride, int64_t offset) const;

 private:
  struct Extras {
    ~Extras() { delete stride_vector.load(std::memory_order_relaxed); }
    std::atomic<std::vector<int64_t>*> stride_vector{nullptr};
    std::shared_ptr<const GlobalMeta> global;
    std::shared_ptr<autograd::AutogradMeta> autograd;
  };
  inline static const std::shared_ptr<const GlobalMeta> kNoGlobal{};
  // The extras, made by the first caller that needs them (from any thread; one wins).
  Extras* GetExtras() const;

  Shape shape_;
  Strides stride_;
  mutable std::atomic<Extras*> extras_{nullptr};
  int64_t offset_;
  StorageRef storage_;
};

}  // namespace ofl
