// Allocation of the small objects on the per-op path (instructions, policies, their operand lists,
// tensor metadata). They are made on the issuing thread and often die in batches after the VM
// retires them, a pattern that sends glibc's malloc down its slow paths; mimalloc's thread-local
// free lists keep it cheap. mimalloc stays private to liboneflow_lite (SmallObjectMalloc /
// SmallObjectFree are the only door), so a program linking oneflow_lite keeps its own malloc.
// Sanitizer builds (OFL_PLAIN_NEW) use plain new/delete instead, so that ASan still sees every
// object.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

// For the library's thread-locals on the per-op path: the initial-exec model reads one with a
// single instruction, where a shared library's default model calls __tls_get_addr each time. They
// are a few dozen bytes, well inside the static TLS that glibc keeps for libraries loaded later.
#if defined(__GNUC__) && !defined(OFL_PLAIN_NEW)
#define OFL_TLS_INITIAL_EXEC __attribute__((tls_model("initial-exec")))
#else
#define OFL_TLS_INITIAL_EXEC
#endif

namespace ofl {

// Never returns null: throws std::bad_alloc.
void* SmallObjectMalloc(size_t bytes);
void SmallObjectFree(void* p) noexcept;

#ifdef OFL_PLAIN_NEW
template <class T>
using SmallObjectAllocator = std::allocator<T>;
#else
template <class T>
struct SmallObjectAllocator {
  using value_type = T;
  SmallObjectAllocator() noexcept = default;
  template <class U>
  SmallObjectAllocator(const SmallObjectAllocator<U>&) noexcept {
  }  // NOLINT(google-explicit-constructor)
  T* allocate(size_t n) { return static_cast<T*>(SmallObjectMalloc(n * sizeof(T))); }
  void deallocate(T* p, size_t) noexcept { SmallObjectFree(p); }
  template <class U>
  bool operator==(const SmallObjectAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const SmallObjectAllocator<U>&) const noexcept {
    return false;
  }
};
#endif

template <class T>
using SmallObjectVector = std::vector<T, SmallObjectAllocator<T>>;

// Derive from this to make `new T` / `delete p` use the small-object allocator.
struct SmallObjectNew {
#ifndef OFL_PLAIN_NEW
  static void* operator new(size_t n) { return SmallObjectMalloc(n); }
  static void operator delete(void* p) noexcept { SmallObjectFree(p); }
#endif
};

template <class T, class... Args>
std::shared_ptr<T> MakeShared(Args&&... args) {
  return std::allocate_shared<T>(SmallObjectAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace ofl
