#include "oneflow_lite/functional/kernel_lookup.h"

#include <mutex>

namespace ofl::functional {

kernels::KernelFn KernelCache::Refresh(DeviceType type, uint64_t gen, const std::string& caller) {
  const int t = static_cast<int>(type);
  kernels::KernelFn fn = kernels::TryFindKernel(op_, type);
  if (fn == nullptr) {
    throw InvalidArgument(caller + ": no kernel registered for device type " + to_string(type) +
                          (op_ != caller ? " (its kernel is \"" + op_ + "\")" : "") +
                          ". Register one with register_kernel(\"" + op_ + "\", \"" +
                          to_string(type) + "\", fn)");
  }
  fns_[t].store(fn, std::memory_order_release);
  generation_[t].store(gen, std::memory_order_release);
  return fn;
}

namespace {
// Caches by op id, in chunks that never move once made: a reader indexes them without a lock
// while another thread registers an op and makes the next chunk.
constexpr int kChunkBits = 8;
constexpr int kChunkSize = 1 << kChunkBits;
constexpr int kMaxChunks = 256;  // 65536 ops

struct Chunk {
  std::atomic<KernelCache*> caches[kChunkSize] = {};  // never freed, as the chunks
};
std::atomic<Chunk*> chunks[kMaxChunks] = {};
std::mutex grow_mu;

KernelCache& MakeCache(const ops::OpSchema& op) {
  if (op.id < 0 || op.id >= kChunkSize * kMaxChunks) {
    throw Error(op.name + ": internal: op id " + std::to_string(op.id) + " out of range");
  }
  std::lock_guard<std::mutex> lock(grow_mu);
  Chunk* c = chunks[op.id >> kChunkBits].load(std::memory_order_acquire);
  if (c == nullptr) {
    c = new Chunk();  // never freed: ops may be called while the process exits
    chunks[op.id >> kChunkBits].store(c, std::memory_order_release);
  }
  std::atomic<KernelCache*>& slot = c->caches[op.id & (kChunkSize - 1)];
  KernelCache* k = slot.load(std::memory_order_acquire);
  if (k == nullptr) {
    k = new KernelCache(op.kernel_name());
    slot.store(k, std::memory_order_release);
  }
  return *k;
}
}  // namespace

kernels::KernelFn KernelFor(const ops::OpSchema& op, DeviceType type) {
  if (op.id >= 0 && op.id < kChunkSize * kMaxChunks) {
    if (Chunk* c = chunks[op.id >> kChunkBits].load(std::memory_order_acquire)) {
      KernelCache* k = c->caches[op.id & (kChunkSize - 1)].load(std::memory_order_acquire);
      if (k != nullptr) return k->Get(type, op.name);
    }
  }
  return MakeCache(op).Get(type, op.name);
}

}  // namespace ofl::functional
