// The sim backend's memory (see sim_backend.h): each device's arena is one memfd mapped twice (a
// no-access view handed out as device pointers, a read-write view the sim's streams work through),
// carved by a first-fit free list; and the copies between it and the host, checked against it.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>

#include "kernels/sim/sim_state.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::sim {

using namespace detail;  // NOLINT(google-build-using-namespace): the sim's own helpers

// ---- Memory ----------------------------------------------------------------------------------

void SimBackend::EnsureArena(DeviceState& d) const {
  if (d.device_view.load(std::memory_order_acquire) != nullptr || d.capacity == 0) return;
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.device_view.load(std::memory_order_relaxed) != nullptr) return;
  auto fail = [&](const char* what) {
    const int err = errno;
    throw DeviceError("allocate: " + Name(d.index) + ": " + what + " failed for " +
                      std::to_string(d.capacity) + " bytes: " + std::strerror(err));
  };
  const std::string name = "ofl-" + Name(d.index);
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) fail("memfd_create");
  if (ftruncate(fd, static_cast<off_t>(d.capacity)) != 0) {
    close(fd);
    fail("ftruncate");
  }
  // The same pages twice: addresses the host cannot touch (handed out), and the simulator's view.
  void* none = mmap(nullptr, d.capacity, PROT_NONE, MAP_SHARED, fd, 0);
  if (none == MAP_FAILED) {
    close(fd);
    fail("mmap");
  }
  void* rw = mmap(nullptr, d.capacity, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (rw == MAP_FAILED) {
    munmap(none, d.capacity);
    close(fd);
    fail("mmap");
  }
  d.fd = fd;
  d.worker_view = static_cast<char*>(rw);
  d.free_blocks.emplace(0, d.capacity);
  d.device_view.store(static_cast<char*>(none), std::memory_order_release);
}

int SimBackend::DeviceOf(const void* p) const {
  const uintptr_t u = reinterpret_cast<uintptr_t>(p);
  for (int i = 0; i < config_.devices; ++i) {
    const DeviceState& d = *devices_[i];
    const char* base = d.device_view.load(std::memory_order_acquire);
    if (base != nullptr && u - reinterpret_cast<uintptr_t>(base) < d.capacity) return i;
  }
  return -1;
}

void* SimBackend::HostView(const void* device_ptr) const {
  const int i = DeviceOf(device_ptr);
  if (i < 0) return const_cast<void*>(device_ptr);
  const DeviceState& d = *devices_[i];
  const size_t offset = static_cast<size_t>(static_cast<const char*>(device_ptr) -
                                            d.device_view.load(std::memory_order_acquire));
  return d.worker_view + offset;
}

void* SimBackend::allocate(int index, size_t bytes) {
  DeviceState& d = CheckUsable(index, "allocate");
  EnsureArena(d);
  if (bytes > d.capacity) return nullptr;
  const size_t size = RoundUp(bytes == 0 ? 1 : bytes, kAlignment);  // distinct pointers, even 0
  std::lock_guard<std::mutex> lock(d.mu);
  for (auto it = d.free_blocks.begin(); it != d.free_blocks.end(); ++it) {
    if (it->second < size) continue;
    const size_t offset = it->first;
    const size_t left = it->second - size;
    d.free_blocks.erase(it);
    if (left > 0) d.free_blocks.emplace(offset + size, left);
    d.live.emplace(offset, DeviceState::Allocation{size, bytes});
    return d.device_view.load(std::memory_order_relaxed) + offset;
  }
  return nullptr;
}

std::string SimBackend::memory_info(int index) {
  DeviceState& d = CheckIndex(index, "memory_info");
  size_t free = 0, largest = 0;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    for (const auto& [offset, size] : d.free_blocks) {
      free += size;
      largest = std::max(largest, size);
    }
  }
  if (d.device_view.load(std::memory_order_acquire) == nullptr) free = largest = d.capacity;
  return "device capacity " + std::to_string(d.capacity) + " bytes (OFL_SIM_MEMORY_MB), " +
         std::to_string(free) + " free, largest free range " + std::to_string(largest);
}

void SimBackend::deallocate(int index, void* ptr, size_t bytes) {
  if (ptr == nullptr) return;
  DeviceState& d = CheckIndex(index, "deallocate");  // a failed device still takes memory back
  if (DeviceOf(ptr) != index) {
    throw InvalidArgument("deallocate: " + PtrStr(ptr) + " is not " + Name(index) + " memory");
  }
  const size_t offset =
      static_cast<size_t>(static_cast<char*>(ptr) - d.device_view.load(std::memory_order_acquire));
  size_t size = 0;
  {
    std::lock_guard<std::mutex> lock(d.mu);
    auto it = d.live.find(offset);
    if (it == d.live.end()) {
      throw InvalidArgument("deallocate: " + PtrStr(ptr) + " is not a live " + Name(index) +
                            " allocation (freed twice, or not the start of one)");
    }
    if (it->second.requested != bytes) {
      throw InvalidArgument("deallocate: " + PtrStr(ptr) + " on " + Name(index) + " was given " +
                            std::to_string(bytes) + " bytes but allocated with " +
                            std::to_string(it->second.requested));
    }
    size = it->second.size;
    d.live.erase(it);
  }
  // Poison now, on this thread, before the range can be handed out again: a stream still using it
  // reads garbage, and ThreadSanitizer reports the free as a race with that stream.
  std::memset(d.worker_view + offset, kPoison, size);
  // Back to the free list, merged with free neighbours so that large requests fit again.
  std::lock_guard<std::mutex> lock(d.mu);
  size_t start = offset;
  size_t end = offset + size;
  auto next = d.free_blocks.lower_bound(offset);
  if (next != d.free_blocks.end() && next->first == end) {
    end += next->second;
    next = d.free_blocks.erase(next);
  }
  if (next != d.free_blocks.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      start = prev->first;
      d.free_blocks.erase(prev);
    }
  }
  d.free_blocks.emplace(start, end - start);
}
// ---- Copies ----------------------------------------------------------------------------------

void SimBackend::CheckCopyOperand(const char* role, const void* p, size_t bytes, bool want_device,
                                  CopyKind kind, const void* dst, const void* src) const {
  const int dev = DeviceOf(p);
  auto fail = [&](const std::string& why) {
    throw InvalidArgument("copy_async(" + std::string(KindName(kind)) + ", dst " + PtrStr(dst) +
                          ", src " + PtrStr(src) + ", " + std::to_string(bytes) +
                          " bytes): " + why);
  };
  if (!want_device) {
    if (dev >= 0) fail(std::string(role) + " is " + Name(dev) + " memory, not host memory");
    if (p == nullptr) fail(std::string(role) + " is null");
    return;
  }
  if (dev < 0) fail(std::string(role) + " is not sim device memory");
  CheckUsable(dev, "copy_async");
  DeviceState& d = *devices_[dev];
  const size_t offset = static_cast<size_t>(static_cast<const char*>(p) -
                                            d.device_view.load(std::memory_order_acquire));
  std::lock_guard<std::mutex> lock(d.mu);
  auto it = d.live.upper_bound(offset);
  if (it == d.live.begin()) fail(std::string(role) + " is not in a live allocation");
  --it;
  if (offset + bytes > it->first + it->second.requested || offset + bytes < offset) {
    fail(std::string(role) + " range is not inside a live " + Name(dev) + " allocation");
  }
}

void SimBackend::copy_async(void* dst, const void* src, size_t bytes, CopyKind kind,
                            NativeStream stream) {
  std::shared_ptr<SimStream> s = FindStream(stream, "copy_async");
  CheckUsable(s->device, "copy_async");
  if (kind != CopyKind::kHostToDevice && kind != CopyKind::kDeviceToHost &&
      kind != CopyKind::kDeviceToDevice) {
    throw InvalidArgument("copy_async: unknown CopyKind " + std::to_string(static_cast<int>(kind)));
  }
  if (bytes == 0) return;
  const bool dst_device = kind != CopyKind::kDeviceToHost;
  const bool src_device = kind != CopyKind::kHostToDevice;
  CheckCopyOperand("dst", dst, bytes, dst_device, kind, dst, src);
  CheckCopyOperand("src", src, bytes, src_device, kind, dst, src);
  void* to = HostView(dst);
  const void* from = HostView(src);
  const uintptr_t t = reinterpret_cast<uintptr_t>(to);
  const uintptr_t f = reinterpret_cast<uintptr_t>(from);
  if (kind == CopyKind::kDeviceToDevice && t < f + bytes && f < t + bytes) {
    throw InvalidArgument("copy_async(DeviceToDevice, dst " + PtrStr(dst) + ", src " + PtrStr(src) +
                          ", " + std::to_string(bytes) + " bytes): the ranges overlap");
  }
  Push(
      *s, [to, from, bytes] { std::memcpy(to, from, bytes); }, true);
}
}  // namespace ofl::kernels::sim
