#include "vm/eager_blob_object.h"

#include <stdexcept>
#include <utility>

#include "vm/log.h"
#include "vm/stream.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

// Every live tensor holds one: the size is part of the memory a tensor costs (docs/benchmarks.md).
static_assert(sizeof(void*) != 8 || sizeof(EagerBlobObject) <= 96,
              "EagerBlobObject grew past 96 bytes: a live tensor's blob no longer fits 112 bytes "
              "with its shared_ptr control block");

EagerBlobObject::EagerBlobObject(Device device, size_t bytes, Stream* producer, DType dtype)
    : bytes_(bytes),
      producer_(producer),
      dtype_(static_cast<uint8_t>(dtype)),
      id_(static_cast<uint32_t>(VirtualMachine::Get().NewBlobId())) {
  if (producer == nullptr || producer->device() != device) {
    throw std::logic_error("EagerBlobObject: the producer stream must be a stream of " +
                           device.str());
  }
}

const Device& EagerBlobObject::device() const { return producer_->device(); }

EagerBlobObject::~EagerBlobObject() { Free(); }

void EagerBlobObject::Allocate(CachingAllocator* pool, bool* cache_hit, const char* owner) {
  if (block_ != nullptr || bytes_ == 0) return;
  block_ = pool->Allocate(bytes_, cache_hit, owner);
  pool_ = pool;
  // Release publishes block_ and pool_ to a MarkDead that runs concurrently on the issuing side.
  if (life_.fetch_or(kHasBlock, std::memory_order_acq_rel) & kDead) pool_->MarkDead(block_);
}

bool EagerBlobObject::TryAllocateCached(CachingAllocator* pool, const char* owner) {
  if (block_ != nullptr || bytes_ == 0) return true;
  block_ = pool->TryAllocateCached(bytes_, owner);
  if (block_ == nullptr) return false;
  pool_ = pool;
  life_.fetch_or(kHasBlock, std::memory_order_acq_rel);  // no instruction has seen the blob yet
  return true;
}

void EagerBlobObject::MarkDead() {
  if (bytes_ == 0) return;
  // Acquire: seeing kHasBlock means block_ and pool_ are written.
  if (life_.fetch_or(kDead, std::memory_order_acq_rel) & kHasBlock) pool_->MarkDead(block_);
}

void EagerBlobObject::Free() {
  if (block_ == nullptr) return;
  if (__builtin_expect(pool_ == nullptr, 0)) {
    ReleaseExternal();
    return;
  }
  pool_->Free(block_);
  block_ = nullptr;
}

void EagerBlobObject::SetExternal(void* data, std::function<void()> on_release) {
  // kHasBlock stays clear, so MarkDead never tells a pool about it.
  block_ = CachingAllocator::NewExternalBlock(data, bytes_, std::move(on_release));
}

void EagerBlobObject::ReleaseExternal() noexcept {
  std::function<void()> on_release =
      CachingAllocator::DeleteExternalBlock(std::exchange(block_, nullptr));
  if (!on_release) return;
  // It may run on a VM worker, where nothing could catch it: an exception is logged and dropped.
  try {
    on_release();
  } catch (const std::exception& e) {
    Logger().error("from_blob: on_release of blob #{} threw: {}", id_, e.what());
  } catch (...) {
    Logger().error("from_blob: on_release of blob #{} threw a non-standard exception", id_);
  }
}

}  // namespace ofl::vm
