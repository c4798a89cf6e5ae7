// The sim backend (see sim_backend.h): device memory as twin mappings of one memfd per device,
// streams as worker threads with randomly delayed FIFOs, events as generation counters, and
// injectable faults.
#include "kernels/sim/sim_backend.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/builtin_device.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/settings.h"

namespace ofl::kernels::sim {

namespace {

// Every allocation starts and ends on this boundary, as cudaMalloc's do (at least).
constexpr size_t kAlignment = 256;
constexpr unsigned char kPoison = 0xFB;

size_t RoundUp(size_t n, size_t a) { return (n + a - 1) / a * a; }

std::string Name(int index) { return "sim:" + std::to_string(index); }

std::string PtrStr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

const char* KindName(CopyKind kind) {
  switch (kind) {
    case CopyKind::kHostToDevice:
      return "HostToDevice";
    case CopyKind::kDeviceToHost:
      return "DeviceToHost";
    case CopyKind::kDeviceToDevice:
      return "DeviceToDevice";
  }
  return "unknown CopyKind";
}

}  // namespace

SimConfig SimConfigFromEnv(std::vector<std::string>* warnings) {
  const settings::Reader r(settings::Environment, warnings);
  SimConfig c;
  c.seed = static_cast<uint64_t>(r.Int("OFL_SIM_SEED"));
  // Up to 1 TiB per device: only address space is reserved, pages are committed on first touch.
  c.capacity_bytes = static_cast<size_t>(r.Int("OFL_SIM_MEMORY_MB")) << 20;
  c.max_delay_us = static_cast<int>(r.Int("OFL_SIM_MAX_DELAY_US"));
  return c;
}

// ---- State -----------------------------------------------------------------------------------

struct SimBackend::DeviceState {
  struct Allocation {
    size_t size;       // rounded to kAlignment: what the free list gets back
    size_t requested;  // what allocate() was asked for: deallocate must say the same
  };

  int index = 0;
  size_t capacity = 0;

  // The arena, mapped twice: device_view (no access) is what allocate() hands out, so the host
  // faults on touching device memory as it would on a GPU's; worker_view (read-write) is what the
  // sim's streams run kernels and copies through. Both are set once under `mu`; device_view is
  // published last (release), so a reader that sees it non-null (acquire) also sees worker_view.
  std::mutex mu;
  std::atomic<char*> device_view{nullptr};
  char* worker_view = nullptr;
  int fd = -1;
  std::map<size_t, size_t> free_blocks;  // offset -> size, disjoint, never adjacent (coalesced)
  std::map<size_t, Allocation> live;     // offset -> block handed out by allocate()

  // Faults.
  std::mutex fault_mu;
  bool failed = false;
  std::string first_fault;  // why the device failed
  int64_t query_countdown = 0;
  bool query_sticky = false;
  std::string async_error;  // the first exception a stream task threw, until a query reports it
};

struct SimBackend::SimStream {
  struct Task {
    std::function<void()> fn;
    bool delayed = true;  // event markers are not: they add nothing a delay before the work lacks
  };

  int device = 0;
  uint64_t id = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Task> queue;
  bool stopping = false;
  std::mt19937_64 rng;  // the worker's alone
  std::thread thread;
};

struct SimBackend::SimEvent {
  int device = 0;
  std::mutex mu;
  std::condition_variable cv;
  uint64_t last = 0;  // generation of the latest record; 0: never recorded (complete)
  // Generations recorded whose marker has not run yet. A set, not a counter: a re-record on
  // another stream may finish before the earlier one, and a stream_wait_event must still wait for
  // the generation it captured.
  std::set<uint64_t> pending;
};

// Live handles: a handle not found here (destroyed, or never ours) is rejected, not dereferenced.
struct SimBackend::Registry {
  std::mutex mu;
  std::unordered_map<void*, std::shared_ptr<SimStream>> streams;
  std::unordered_map<void*, std::shared_ptr<SimEvent>> events;
  uint64_t next_stream_id = 0;
};

// ---- Construction ----------------------------------------------------------------------------

SimBackend::SimBackend(const SimConfig& config) : config_(config), registry_(new Registry()) {
  if (config_.devices < 0 || config_.max_delay_us < 0 || config_.stall_per_mille < 0 ||
      config_.stall_per_mille > 1000 || config_.stall_us < 0) {
    throw InvalidArgument("SimBackend: bad SimConfig (devices " + std::to_string(config_.devices) +
                          ", max_delay_us " + std::to_string(config_.max_delay_us) +
                          ", stall_per_mille " + std::to_string(config_.stall_per_mille) +
                          ", stall_us " + std::to_string(config_.stall_us) + ")");
  }
  devices_.reset(new std::unique_ptr<DeviceState>[static_cast<size_t>(config_.devices)]);
  for (int i = 0; i < config_.devices; ++i) {
    devices_[i] = std::make_unique<DeviceState>();
    devices_[i]->index = i;
    devices_[i]->capacity = config_.capacity_bytes / kAlignment * kAlignment;
  }
}

SimBackend::~SimBackend() {
  Shutdown();
  for (int i = 0; i < config_.devices; ++i) {
    DeviceState& d = *devices_[i];
    char* none = d.device_view.load(std::memory_order_acquire);
    if (none != nullptr) {
      munmap(none, d.capacity);
      munmap(d.worker_view, d.capacity);
      close(d.fd);
    }
  }
}

SimBackend& SimBackend::Instance() {
  // Never destroyed: VM workers and stream threads may still use it while statics are destroyed.
  static SimBackend* instance = new SimBackend(SimConfigFromEnv());
  return *instance;
}

std::shared_ptr<DeviceBackend> SimBackend::SharedInstance() {
  return std::shared_ptr<DeviceBackend>(&Instance(), [](DeviceBackend*) {});
}

void SimBackend::Shutdown() {
  std::unordered_map<void*, std::shared_ptr<SimStream>> streams;
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    streams.swap(registry_->streams);
  }
  // Stop every stream before joining any: one may be waiting for an event another will record.
  for (auto& [handle, s] : streams) {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stopping = true;
    s->cv.notify_all();
  }
  for (auto& [handle, s] : streams) {
    if (s->thread.get_id() == std::this_thread::get_id()) {
      s->thread.detach();  // called from a task: the thread ends once it returns
    } else {
      s->thread.join();
    }
  }
}

// ---- Checks ----------------------------------------------------------------------------------

int SimBackend::device_count() { return config_.devices; }

SimBackend::DeviceState& SimBackend::CheckIndex(int index, const char* op) const {
  if (index < 0 || index >= config_.devices) {
    throw DeviceError(std::string(op) + ": device index " + std::to_string(index) +
                      " is out of range for sim (device_count " + std::to_string(config_.devices) +
                      ")");
  }
  return *devices_[index];
}

SimBackend::DeviceState& SimBackend::CheckUsable(int index, const char* op) const {
  DeviceState& d = CheckIndex(index, op);
  std::lock_guard<std::mutex> lock(d.fault_mu);
  if (d.failed) {
    throw DeviceFailed(std::string(op) + ": " + Name(index) +
                       " failed after an unrecoverable fault: " + d.first_fault);
  }
  return d;
}

void SimBackend::ThrowIfAsyncError(DeviceState& d) {
  std::string msg;
  {
    std::lock_guard<std::mutex> lock(d.fault_mu);
    msg.swap(d.async_error);
  }
  if (!msg.empty()) throw DeviceError(msg);
}

std::shared_ptr<SimBackend::SimStream> SimBackend::FindStream(NativeStream stream,
                                                              const char* op) const {
  std::lock_guard<std::mutex> lock(registry_->mu);
  auto it = registry_->streams.find(stream);
  if (it == registry_->streams.end()) {
    throw InvalidArgument(std::string(op) + ": " + PtrStr(stream) +
                          " is not a live stream of this sim backend");
  }
  return it->second;
}

std::shared_ptr<SimBackend::SimEvent> SimBackend::FindEvent(NativeEvent event,
                                                            const char* op) const {
  std::lock_guard<std::mutex> lock(registry_->mu);
  auto it = registry_->events.find(event);
  if (it == registry_->events.end()) {
    throw InvalidArgument(std::string(op) + ": " + PtrStr(event) +
                          " is not a live event of this sim backend");
  }
  return it->second;
}

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

// ---- Streams ---------------------------------------------------------------------------------

NativeStream SimBackend::create_stream(int index) {
  CheckUsable(index, "create_stream");
  auto s = std::make_shared<SimStream>();
  s->device = index;
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    s->id = registry_->next_stream_id++;
  }
  s->rng.seed(config_.seed + s->id);
  // The worker holds the SimStream too: a thread detached by Shutdown() (called from one of its own
  // tasks) still needs it.
  s->thread = std::thread(&SimBackend::RunWorker, this, s);
  // A name like "ofl-sim0-s12" in debuggers and TSan reports (at most 15 characters).
  const std::string name = "ofl-sim" + std::to_string(index) + "-s" + std::to_string(s->id);
  pthread_setname_np(s->thread.native_handle(), name.substr(0, 15).c_str());
  std::lock_guard<std::mutex> lock(registry_->mu);
  registry_->streams.emplace(s.get(), s);
  return s.get();
}

void SimBackend::destroy_stream(int index, NativeStream stream) {
  CheckIndex(index, "destroy_stream");
  std::shared_ptr<SimStream> s;
  {
    std::lock_guard<std::mutex> lock(registry_->mu);
    auto it = registry_->streams.find(stream);
    if (it == registry_->streams.end() || it->second->device != index) {
      throw InvalidArgument("destroy_stream: " + PtrStr(stream) + " is not a live stream of " +
                            Name(index));
    }
    if (it->second->thread.get_id() == std::this_thread::get_id()) {
      throw InvalidArgument("destroy_stream: called from a task of the stream itself");
    }
    s = it->second;
    registry_->streams.erase(it);
  }
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->stopping = true;
  }
  s->cv.notify_all();
  s->thread.join();  // the worker runs what is still queued first
}

void SimBackend::Push(SimStream& s, std::function<void()> work, bool delayed) {
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.stopping) {
      throw InvalidArgument("sim stream of " + Name(s.device) + " is being destroyed");
    }
    s.queue.push_back(SimStream::Task{std::move(work), delayed});
  }
  s.cv.notify_one();
}

void SimBackend::RunWorker(std::shared_ptr<SimStream> s) {
  std::uniform_int_distribution<int> delay(0, config_.max_delay_us);
  std::uniform_int_distribution<int> per_mille(0, 999);
  for (;;) {
    SimStream::Task task;
    {
      std::unique_lock<std::mutex> lock(s->mu);
      s->cv.wait(lock, [&s] { return !s->queue.empty() || s->stopping; });
      if (s->queue.empty()) return;  // stopping, and drained
      task = std::move(s->queue.front());
      s->queue.pop_front();
    }
    if (task.delayed && config_.max_delay_us > 0) {
      int us = delay(s->rng);
      if (per_mille(s->rng) < config_.stall_per_mille) us = config_.stall_us;
      if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
    }
    std::string error;
    try {
      task.fn();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "unknown exception";
    }
    if (!error.empty()) {
      // A device reports a failed kernel at a later query, not at the launch.
      DeviceState& d = *devices_[s->device];
      std::lock_guard<std::mutex> lock(d.fault_mu);
      if (d.async_error.empty()) {
        d.async_error =
            Name(s->device) + ": a task on stream " + std::to_string(s->id) + " failed: " + error;
      }
    }
  }
}

void SimBackend::Enqueue(NativeStream stream, std::function<void()> work) {
  std::shared_ptr<SimStream> s = FindStream(stream, "Enqueue");
  CheckUsable(s->device, "Enqueue");
  Push(*s, std::move(work), true);
}

// ---- Events ----------------------------------------------------------------------------------

NativeEvent SimBackend::create_event(int index) {
  CheckUsable(index, "create_event");
  auto e = std::make_shared<SimEvent>();
  e->device = index;
  std::lock_guard<std::mutex> lock(registry_->mu);
  registry_->events.emplace(e.get(), e);
  return e.get();
}

void SimBackend::destroy_event(int index, NativeEvent event) {
  CheckIndex(index, "destroy_event");
  std::lock_guard<std::mutex> lock(registry_->mu);
  auto it = registry_->events.find(event);
  if (it == registry_->events.end() || it->second->device != index) {
    throw InvalidArgument("destroy_event: " + PtrStr(event) + " is not a live event of " +
                          Name(index));
  }
  registry_->events.erase(it);  // markers still queued keep the SimEvent alive, as in CUDA
}

void SimBackend::record_event(NativeEvent event, NativeStream stream) {
  std::shared_ptr<SimEvent> e = FindEvent(event, "record_event");
  std::shared_ptr<SimStream> s = FindStream(stream, "record_event");
  CheckUsable(e->device, "record_event");
  CheckUsable(s->device, "record_event");
  uint64_t gen = 0;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    gen = ++e->last;
    e->pending.insert(gen);
  }
  try {
    Push(
        *s,
        [e, gen] {
          {
            std::lock_guard<std::mutex> lock(e->mu);
            e->pending.erase(gen);
          }
          e->cv.notify_all();
        },
        false);
  } catch (...) {
    std::lock_guard<std::mutex> lock(e->mu);
    e->pending.erase(gen);
    throw;
  }
}

bool SimBackend::query_event(NativeEvent event) {
  std::shared_ptr<SimEvent> e = FindEvent(event, "query_event");
  DeviceState& d = CheckUsable(e->device, "query_event");
  {
    std::lock_guard<std::mutex> lock(d.fault_mu);
    if (d.query_countdown > 0 && --d.query_countdown == 0) {
      const std::string msg = "query_event: " + Name(d.index) + ": injected " +
                              (d.query_sticky ? "sticky" : "one-time") + " device fault";
      if (d.query_sticky) {
        d.failed = true;
        d.first_fault = msg;
        throw DeviceFailed(msg);
      }
      throw DeviceError(msg);
    }
  }
  ThrowIfAsyncError(d);
  std::lock_guard<std::mutex> lock(e->mu);
  return e->pending.count(e->last) == 0;
}

void SimBackend::synchronize_event(NativeEvent event) {
  std::shared_ptr<SimEvent> e = FindEvent(event, "synchronize_event");
  DeviceState& d = CheckUsable(e->device, "synchronize_event");
  {
    std::unique_lock<std::mutex> lock(e->mu);
    const uint64_t gen = e->last;
    e->cv.wait(lock, [&] { return e->pending.count(gen) == 0; });
  }
  ThrowIfAsyncError(d);
}

void SimBackend::stream_wait_event(NativeStream stream, NativeEvent event) {
  std::shared_ptr<SimEvent> e = FindEvent(event, "stream_wait_event");
  std::shared_ptr<SimStream> s = FindStream(stream, "stream_wait_event");
  CheckUsable(e->device, "stream_wait_event");
  CheckUsable(s->device, "stream_wait_event");
  uint64_t gen = 0;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    gen = e->last;
    if (e->pending.count(gen) == 0) return;  // already complete (or never recorded)
  }
  // The stream's thread itself blocks: everything queued behind this really waits.
  Push(
      *s,
      [e, gen] {
        std::unique_lock<std::mutex> lock(e->mu);
        e->cv.wait(lock, [&] { return e->pending.count(gen) == 0; });
      },
      true);
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

// ---- Faults ----------------------------------------------------------------------------------

void SimBackend::InjectQueryFault(int index, int64_t n, bool sticky) {
  DeviceState& d = CheckIndex(index, "InjectQueryFault");
  if (n < 1) {
    throw InvalidArgument("InjectQueryFault: n must be >= 1, got " + std::to_string(n));
  }
  std::lock_guard<std::mutex> lock(d.fault_mu);
  d.query_countdown = n;
  d.query_sticky = sticky;
}

void SimBackend::ClearFaults() {
  for (int i = 0; i < config_.devices; ++i) {
    DeviceState& d = *devices_[i];
    std::lock_guard<std::mutex> lock(d.fault_mu);
    d.failed = false;
    d.first_fault.clear();
    d.query_countdown = 0;
    d.query_sticky = false;
    d.async_error.clear();
  }
}

// The simulated accelerator, made on first use: the one process-wide instance.
OFL_REGISTER_BUILTIN_DEVICE(DeviceType::kSim, 1, &SimBackend::SharedInstance, nullptr);

}  // namespace ofl::kernels::sim
