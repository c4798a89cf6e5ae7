// The sim backend (see sim_backend.h): streams as worker threads with randomly delayed FIFOs,
// events as generation counters, and injectable faults. Device memory (twin mappings of one memfd
// per device) and copies are in sim_memory.cpp; the state both use is in sim_state.h.
#include "kernels/sim/sim_backend.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "kernels/builtin_device.h"
#include "kernels/sim/sim_state.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/settings.h"

namespace ofl::kernels::sim {

using namespace detail;  // NOLINT(google-build-using-namespace): the sim's own helpers

SimConfig SimConfigFromEnv(std::vector<std::string>* warnings) {
  const settings::Reader r(settings::Environment, warnings);
  SimConfig c;
  c.seed = static_cast<uint64_t>(r.Int("OFL_SIM_SEED"));
  // Up to 1 TiB per device: only address space is reserved, pages are committed on first touch.
  c.capacity_bytes = static_cast<size_t>(r.Int("OFL_SIM_MEMORY_MB")) << 20;
  c.max_delay_us = static_cast<int>(r.Int("OFL_SIM_MAX_DELAY_US"));
  return c;
}

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

void SimBackend::ThrowEventFault(SimEvent& e, uint64_t gen) {
  // e.mu held. The first fault of the generations up to `gen`, reported once.
  auto end = e.faults.upper_bound(gen);
  if (e.faults.begin() == end) return;
  const std::string msg = e.faults.begin()->second;
  e.faults.erase(e.faults.begin(), end);
  throw DeviceError(msg);
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
  // A fault no event of this stream carried: the device's next query reports it.
  std::string fault;
  {
    std::lock_guard<std::mutex> lock(s->mu);
    fault.swap(s->async_error);
  }
  if (!fault.empty()) {
    DeviceState& d = *devices_[index];
    std::lock_guard<std::mutex> lock(d.fault_mu);
    if (d.async_error.empty()) d.async_error = std::move(fault);
  }
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
      // A device reports a failed kernel at a later query, not at the launch: at the query of
      // the next event this stream records (the marker moves it there).
      std::lock_guard<std::mutex> lock(s->mu);
      if (s->async_error.empty()) {
        s->async_error =
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
    // The marker runs on s's own worker, which holds s alive.
    SimStream* stream = s.get();
    Push(
        *s,
        [e, gen, stream] {
          std::string fault;
          {
            std::lock_guard<std::mutex> lock(stream->mu);
            fault.swap(stream->async_error);
          }
          {
            std::lock_guard<std::mutex> lock(e->mu);
            if (!fault.empty()) e->faults.emplace(gen, std::move(fault));
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
  // Completion first, then the faults: a task that failed before the event's marker ran has
  // recorded its fault by then (the stream runs in order), so an event seen complete is never
  // reported clean while a fault of the work before it is still to come. (Checked the other way
  // round, a failed kernel finishing between the two checks left its event complete and its fault
  // for some later query.)
  bool done = false;
  {
    std::lock_guard<std::mutex> lock(e->mu);
    done = e->pending.count(e->last) == 0;
    if (done) ThrowEventFault(*e, e->last);
  }
  ThrowIfAsyncError(d);
  return done;
}

void SimBackend::synchronize_event(NativeEvent event) {
  std::shared_ptr<SimEvent> e = FindEvent(event, "synchronize_event");
  DeviceState& d = CheckUsable(e->device, "synchronize_event");
  {
    std::unique_lock<std::mutex> lock(e->mu);
    const uint64_t gen = e->last;
    e->cv.wait(lock, [&] { return e->pending.count(gen) == 0; });
    ThrowEventFault(*e, gen);
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
