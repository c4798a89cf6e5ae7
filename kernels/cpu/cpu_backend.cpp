#include "kernels/cpu/cpu_backend.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "kernels/builtin_device.h"

namespace ofl::kernels::cpu {

namespace {
// A stream or event of a synchronous backend carries no state; any non-null token will do.
char token;

constexpr size_t kPageSize = 4096;

// The most a single host segment may be. Asking the C library for more than the machine has can
// only fail, and under sanitizers an absurd request aborts instead of returning null.
size_t MaxHostAllocation() {
  static const size_t max_bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return std::numeric_limits<size_t>::max() / 4;
    return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
  }();
  return max_bytes;
}
}  // namespace

// Page-aligned memory from the C library: the CPU pool's segments.
void* CpuBackend::allocate(int /*index*/, size_t bytes) {
  if (bytes == 0 || bytes > MaxHostAllocation()) return nullptr;
  void* p = nullptr;
  const size_t rounded = (bytes + kPageSize - 1) & ~(kPageSize - 1);
  if (posix_memalign(&p, kPageSize, rounded) != 0) return nullptr;
  return p;
}

void CpuBackend::deallocate(int /*index*/, void* ptr, size_t /*bytes*/) { std::free(ptr); }

NativeStream CpuBackend::create_stream(int /*index*/) { return &token; }

NativeEvent CpuBackend::create_event(int /*index*/) { return &token; }

void CpuBackend::copy_async(void* dst, const void* src, size_t bytes, CopyKind /*kind*/,
                            NativeStream /*stream*/) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}

std::shared_ptr<DeviceBackend> MakeCpuBackend() { return std::make_shared<CpuBackend>(); }

OFL_REGISTER_BUILTIN_DEVICE(DeviceType::kCPU, 0, &MakeCpuBackend, nullptr);

}  // namespace ofl::kernels::cpu
