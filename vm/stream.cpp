#include "vm/stream.h"

#include "vm/instruction.h"
#include "vm/spin.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

std::string to_string(StreamRole role) {
  switch (role) {
    case StreamRole::kCompute:
      return "compute";
    case StreamRole::kHost2Device:
      return "h2d";
    case StreamRole::kDevice2Host:
      return "d2h";
    case StreamRole::kAux:
      return "aux";
  }
  return "unknown";
}

Stream::Stream(VirtualMachine* vm, Device device, StreamRole role, CachingAllocator* pool)
    : vm_(vm),
      device_(device),
      role_(role),
      pool_(pool),
      name_(device.str() + "/" + to_string(role)),
      ring_(kRingCapacity, nullptr) {
  worker_ = std::thread([this] { WorkerLoop(); });
}

Stream::~Stream() {
  stop_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_one();
  }
  if (worker_.joinable()) worker_.join();
}

void Stream::Push(Instruction* instr) {
  const uint64_t t = tail_.load(std::memory_order_relaxed);
  // head_ is written by the worker on every instruction; reading it on every push would pull its
  // cache line across cores each time, so the producer keeps a stale copy until it looks full.
  while (t - head_seen_ >= kRingCapacity) {
    head_seen_ = head_.load(std::memory_order_acquire);
    if (t - head_seen_ >= kRingCapacity) std::this_thread::yield();
  }
  ring_[t & (kRingCapacity - 1)] = instr;
  tail_.store(t + 1, std::memory_order_seq_cst);
  // Pairs with the worker's store to sleeping_ then load of tail_: one of the two sees the other.
  if (sleeping_.load(std::memory_order_seq_cst)) {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_one();
  }
}

void Stream::WorkerLoop() {
  const int64_t spin_ns = vm_->spin_ns();
  uint64_t head = head_.load(std::memory_order_relaxed);
  for (;;) {
    if (head == tail_.load(std::memory_order_acquire)) {
      const bool got =
          SpinUntil([&] { return head != tail_.load(std::memory_order_acquire); }, spin_ns);
      if (!got) {
        std::unique_lock<std::mutex> lock(mu_);
        sleeping_.store(true, std::memory_order_seq_cst);
        while (head == tail_.load(std::memory_order_seq_cst) && !stop_.load()) cv_.wait(lock);
        sleeping_.store(false, std::memory_order_relaxed);
      }
      if (head == tail_.load(std::memory_order_acquire)) {
        if (stop_.load()) return;
        continue;
      }
    }
    Instruction* instr = ring_[head & (kRingCapacity - 1)];
    ++head;
    head_.store(head, std::memory_order_release);
    vm_->Run(instr);
  }
}

}  // namespace ofl::vm
