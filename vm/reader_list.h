// ReaderList: the readers recorded in a blob's Dependence since its last writer. A vector of
// InstrRef in 16 bytes (pointer and two 32-bit counts, where std::vector takes 24): every live
// tensor's blob holds one, so its size is per-tensor memory. Touched only under the VM's submit
// lock, like the rest of Dependence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "oneflow_lite/small_object.h"
#include "vm/instruction_ref.h"

namespace ofl::vm {

class ReaderList {
 public:
  ReaderList() = default;
  ~ReaderList() {
    clear();
    if (data_ != nullptr) SmallObjectFree(data_);
  }
  ReaderList(const ReaderList&) = delete;
  ReaderList& operator=(const ReaderList&) = delete;

  const InstrRef* begin() const { return data_; }
  const InstrRef* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  InstrRef& operator[](size_t i) { return data_[i]; }
  InstrRef& back() { return data_[size_ - 1]; }

  void push_back(InstrRef r) {
    if (size_ == capacity_) Grow(capacity_ == 0 ? 4 : 2 * static_cast<size_t>(capacity_));
    new (data_ + size_) InstrRef(std::move(r));
    ++size_;
  }
  void pop_back() { data_[--size_].~InstrRef(); }
  void clear() {
    while (size_ > 0) pop_back();
  }
  void reserve(size_t n) {
    if (n > capacity_) Grow(n);
  }
  // Drops the readers for which pred(reader) holds, keeping the others' order.
  template <class Pred>
  void RemoveIf(Pred pred) {
    uint32_t kept = 0;
    for (uint32_t i = 0; i < size_; ++i) {
      if (pred(static_cast<const InstrRef&>(data_[i]))) continue;
      if (kept != i) data_[kept] = std::move(data_[i]);
      ++kept;
    }
    while (size_ > kept) pop_back();
  }

 private:
  void Grow(size_t n) {
    auto* grown = static_cast<InstrRef*>(SmallObjectMalloc(n * sizeof(InstrRef)));
    for (uint32_t i = 0; i < size_; ++i) {
      new (grown + i) InstrRef(std::move(data_[i]));
      data_[i].~InstrRef();
    }
    if (data_ != nullptr) SmallObjectFree(data_);
    data_ = grown;
    capacity_ = static_cast<uint32_t>(n);
  }

  InstrRef* data_ = nullptr;
  uint32_t size_ = 0;
  uint32_t capacity_ = 0;
};

}  // namespace ofl::vm
