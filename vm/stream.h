// Stream: one ordered queue of instructions on a device, served by its own worker thread.
// Instructions are pushed in issue order (the VM's submit lock makes the producer side single at
// any moment) and run in that order; a cross-stream predecessor is waited for at the head of the
// queue, the way a CUDA stream waits on an event. Because issue order is a total order that agrees
// with every queue and every dependence edge, this can never deadlock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "oneflow_lite/device.h"
#include "vm/allocator/caching_allocator.h"

namespace ofl::vm {

class Instruction;
class VirtualMachine;

enum class StreamRole { kCompute, kHost2Device, kDevice2Host, kAux };
std::string to_string(StreamRole role);

class Stream {
 public:
  // The ring never fills: the VM's high-water mark keeps in-flight instructions below this.
  static constexpr size_t kRingCapacity = size_t{1} << 17;

  Stream(VirtualMachine* vm, Device device, StreamRole role, CachingAllocator* pool);
  ~Stream();  // stops the worker after it drained its queue
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  const std::string& name() const { return name_; }
  const Device& device() const { return device_; }
  StreamRole role() const { return role_; }
  CachingAllocator* pool() const { return pool_; }
  int index() const { return index_; }
  void set_index(int i) { index_ = i; }

  // Producer side; the caller holds the VM's submit lock.
  void Push(Instruction* instr);

 private:
  void WorkerLoop();

  VirtualMachine* vm_;
  Device device_;
  StreamRole role_;
  CachingAllocator* pool_;
  std::string name_;
  int index_ = 0;

  std::vector<Instruction*> ring_;
  alignas(64) std::atomic<uint64_t> head_{0};  // next slot the worker reads
  alignas(64) std::atomic<uint64_t> tail_{0};  // next slot the producer writes
  uint64_t head_seen_ =
      0;  // the producer's last read of head_ (re-read only when the ring looks full)
  alignas(64) std::atomic<bool> sleeping_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread worker_;
};

}  // namespace ofl::vm
