// InstrRef: an intrusive, reference-counted handle to an Instruction.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace ofl::vm {

class Instruction;
class EagerBlobObject;
void DestroyInstruction(Instruction* instr);
// Marks an instruction's release list as closed (the instruction has run).
inline EagerBlobObject* const kReleasesClosed = reinterpret_cast<EagerBlobObject*>(uintptr_t{1});
std::atomic<int32_t>& RefCountOf(Instruction* instr);

class InstrRef {
 public:
  InstrRef() = default;
  explicit InstrRef(Instruction* p) : p_(p) {
    if (p_) RefCountOf(p_).fetch_add(1, std::memory_order_relaxed);
  }
  InstrRef(const InstrRef& o) : InstrRef(o.p_) {}
  InstrRef(InstrRef&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  InstrRef& operator=(InstrRef o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~InstrRef() { reset(); }
  void reset() {
    if (p_ && RefCountOf(p_).fetch_sub(1, std::memory_order_acq_rel) == 1) DestroyInstruction(p_);
    p_ = nullptr;
  }
  Instruction* get() const { return p_; }
  Instruction* operator->() const { return p_; }
  Instruction& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  Instruction* p_ = nullptr;
};

}  // namespace ofl::vm
