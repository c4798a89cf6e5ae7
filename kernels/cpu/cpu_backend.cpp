#include "kernels/cpu/cpu_backend.h"

#include <cstdlib>
#include <cstring>

namespace ofl::kernels::cpu {

namespace {
// A stream or event of a synchronous backend carries no state; any non-null token will do.
char token;
}  // namespace

void* CpuBackend::allocate(int /*index*/, size_t bytes) {
  void* p = nullptr;
  if (bytes == 0 || posix_memalign(&p, 4096, (bytes + 4095) / 4096 * 4096) != 0) return nullptr;
  return p;
}

void CpuBackend::deallocate(int /*index*/, void* ptr, size_t /*bytes*/) { std::free(ptr); }

NativeStream CpuBackend::create_stream(int /*index*/) { return &token; }

NativeEvent CpuBackend::create_event(int /*index*/) { return &token; }

void CpuBackend::copy_async(void* dst, const void* src, size_t bytes, CopyKind /*kind*/,
                            NativeStream /*stream*/) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

}  // namespace ofl::kernels::cpu
