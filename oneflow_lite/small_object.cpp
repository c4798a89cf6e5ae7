#include "oneflow_lite/small_object.h"

#include <cstdlib>

#ifndef OFL_PLAIN_NEW
#include <mimalloc.h>
#endif

namespace ofl {

void* SmallObjectMalloc(size_t bytes) {
#ifdef OFL_PLAIN_NEW
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
#else
  void* p = mi_malloc(bytes);
#endif
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void SmallObjectFree(void* p) noexcept {
#ifdef OFL_PLAIN_NEW
  std::free(p);
#else
  mi_free(p);
#endif
}

}  // namespace ofl
