// Allocation of the small objects on the per-op path (instructions, policies, their operand lists,
// tensor metadata). They are made on the issuing thread and often die in batches after the VM
// retires them, a pattern that sends glibc's malloc down its slow paths; mimalloc's thread-local
// free lists keep it cheap. Sanitizer builds (OFL_PLAIN_NEW) use plain new/delete instead, so that
// ASan still sees every object.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#ifndef OFL_PLAIN_NEW
#include <mimalloc.h>
#endif

namespace ofl {

#ifdef OFL_PLAIN_NEW
template <class T>
using FastAllocator = std::allocator<T>;
#else
template <class T>
using FastAllocator = mi_stl_allocator<T>;
#endif

template <class T>
using FastVector = std::vector<T, FastAllocator<T>>;

// Derive from this to make `new T` / `delete p` use the fast allocator.
struct FastNew {
#ifndef OFL_PLAIN_NEW
  static void* operator new(size_t n) {
    void* p = mi_malloc(n);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  static void operator delete(void* p) noexcept { mi_free(p); }
#endif
};

template <class T, class... Args>
std::shared_ptr<T> MakeShared(Args&&... args) {
  return std::allocate_shared<T>(FastAllocator<T>(), std::forward<Args>(args)...);
}

}  // namespace ofl
