// EagerBlobObject: the VM's view of one storage (views of a tensor share it). It knows its device,
// its byte size, the pool block it got in Prepare (or the caller's memory it views, for
// ofl::from_blob), the dependence object that orders the instructions touching it, and the error
// that poisoned it, if any.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "oneflow_lite/device.h"
#include "oneflow_lite/dtype.h"
#include "oneflow_lite/small_object.h"
#include "vm/allocator/caching_allocator.h"
#include "vm/instruction_ref.h"
#include "vm/reader_list.h"
#include "vm/vm_error.h"

namespace ofl::vm {

class Stream;

// Last writer and the readers since. Touched only under the VM's submit lock. The readers are
// pruned of finished instructions when their list is full (64 or more), before it grows.
struct Dependence {
  InstrRef last_writer;
  ReaderList readers;
};

class EagerBlobObject {
 public:
  // dtype: what the tensors viewing it hold (they all share it); a blob with no tensor can take
  // the default.
  EagerBlobObject(Device device, size_t bytes, Stream* producer, DType dtype = DType::kUInt8);
  ~EagerBlobObject();  // returns the block directly when nothing else can touch it any more
  EagerBlobObject(const EagerBlobObject&) = delete;
  EagerBlobObject& operator=(const EagerBlobObject&) = delete;

  const Device& device() const;  // the producer stream's
  size_t bytes() const { return bytes_; }
  DType dtype() const { return static_cast<DType>(dtype_); }
  uint64_t id() const { return id_; }
  Stream* producer_stream() const { return producer_; }
  char* data() const {
    return block_ ? static_cast<char*>(CachingAllocator::Data(block_)) : nullptr;
  }
  bool allocated() const { return block_ != nullptr || bytes_ == 0; }

  // Allocate: called in Prepare by the worker of the first instruction that writes the blob, on
  // that instruction's stream (not necessarily the producer stream). Free: by the worker that runs
  // the blob's last user (a folded release) or its ReleaseTensor, or by the releasing thread when
  // every user has finished.
  void Allocate(CachingAllocator* pool, bool* cache_hit, const char* owner);
  // Allocate from a cached block only (CachingAllocator::TryAllocateCached), before any instruction
  // used the blob; returns whether the blob now has its memory.
  bool TryAllocateCached(CachingAllocator* pool, const char* owner);
  // Free of an external blob (SetExternal) calls its on_release instead, once.
  void Free();
  // Makes the blob view `data`, memory it does not own (ofl::from_blob): allocated from now on, it
  // never touches a pool, and Free gives the memory back by calling on_release (if set) once, on
  // the path that would return a pool's block: after every instruction that used the blob
  // completed (vm/THREADING.md, "Memory"). Called before any instruction or direct run can see the
  // blob. Throws only std::bad_alloc, having called nothing.
  void SetExternal(void* data, std::function<void()> on_release);
  // The blob's tensor died (VirtualMachine::Release, before it arranges the Free): its block counts
  // as free in the pool's stats from now on, or from its Allocate if that has not happened yet.
  // Whichever of Allocate and MarkDead comes second tells the pool, so it is told exactly once.
  void MarkDead();

  Dependence& dependence() { return dep_; }
  // Set (under the submit lock) when an instruction first records the blob in its dependences;
  // a blob never issued (made by empty, used only by direct runs) has no dependence to look at
  // when its tensor dies. The store precedes the death of the tensor through the reference counts.
  void MarkIssued() {
    if (!issued_.load(std::memory_order_relaxed)) issued_.store(true, std::memory_order_release);
  }
  bool issued() const { return issued_.load(std::memory_order_acquire); }
  // Poison, read by the instructions ordered after the one that failed to produce this blob. It is
  // set by that instruction's worker before it publishes "done", and on an asynchronous device
  // also after launch, by whichever thread observes the fault while successors on other streams
  // already check their inputs: so the pointer is stored and loaded atomically, behind a flag that
  // keeps the healthy path (no error) at one load.
  VmErrorPtr error() const {
    if (!has_error_.load(std::memory_order_acquire)) return nullptr;
    return std::atomic_load(&error_);
  }
  void set_error(VmErrorPtr e) {
    std::atomic_store(&error_, std::move(e));
    has_error_.store(true, std::memory_order_release);
  }

  // The tensors' holds on this blob (ofl::StorageRef): added by any thread that copies a hold it
  // has; DropTensorRef returns true for the last one, whose owner then releases the blob.
  void AddTensorRef() { tensor_refs_.fetch_add(1, std::memory_order_relaxed); }
  bool DropTensorRef() { return tensor_refs_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
  // How many tensors hold the blob now (exact only when no other thread can copy or drop one).
  uint32_t tensor_refs() const { return tensor_refs_.load(std::memory_order_acquire); }

  // Link in an instruction's list of blobs to free once it has run (see VirtualMachine::Release).
  EagerBlobObject* next_release = nullptr;

 private:
  void ReleaseExternal() noexcept;  // Free of an external blob

  // One live tensor costs one of these, so it is kept small (92 bytes of fields, 96 with the tail
  // that a tensor's storage, ofl::Storage, fills with its version counter; a 112-byte allocation
  // with the control block): the device comes from the producer stream, and the fields the
  // issuing side writes (dep_, issued_) share cache lines with the ones a worker writes (block_,
  // life_, error_). Each side writes its fields a few times in the blob's life, so the lines
  // seldom move.
  size_t bytes_;
  Stream* producer_;  // never null
  Dependence dep_;    // written by the issuing side
  // An external blob has a block_ (CachingAllocator::NewExternalBlock) and no pool_.
  CachingAllocator* pool_ = nullptr;
  CachingAllocator::Block* block_ = nullptr;
  VmErrorPtr error_;
  std::atomic<bool> issued_{false};
  static constexpr uint8_t kHasBlock = 1, kDead = 2;
  std::atomic<uint8_t> life_{0};  // kHasBlock (set by Allocate) | kDead (set by MarkDead)
  std::atomic<bool> has_error_{false};
  uint8_t dtype_;
  std::atomic<uint32_t> tensor_refs_{0};
  // The trace's name for the blob: 32 bits (it wraps after 4 billion blobs, far more than a
  // trace holds), last, so that the 4 bytes after it are free for a derived class.
  uint32_t id_;
};

using BlobPtr = std::shared_ptr<EagerBlobObject>;

}  // namespace ofl::vm
