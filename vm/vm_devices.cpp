// The VirtualMachine's devices: their pools and streams (made on first use, through the device
// backend registry), devices that failed, and draining a device's launched work.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "kernels/device_backend.h"
#include "oneflow_lite/error.h"
#include "vm/log.h"
#include "vm/virtual_machine.h"

namespace ofl::vm {

CachingAllocator* VirtualMachine::GetAllocator(const Device& device) {
  DeviceBackend* backend = nullptr;
  try {
    backend = kernels::GetBackend(device.type());
  } catch (const DeviceError& e) {
    throw DeviceError(device.str() + ": " + e.what());
  }
  std::lock_guard<std::mutex> lock(streams_mu_);
  auto& pool = pools_[device.str()];
  if (!pool) {
    int count = 0;
    try {
      count = backend->device_count();
    } catch (const std::exception& e) {
      pools_.erase(device.str());
      throw DeviceError(device.str() + ": device_count() failed: " + e.what());
    }
    if (count == 0) {
      pools_.erase(device.str());
      const std::string reason = backend->unavailable_reason();
      if (!reason.empty()) throw DeviceError(device.str() + ": " + reason);
    }
    if (device.index() >= count) {
      pools_.erase(device.str());
      const std::string type = to_string(device.type());
      if (count <= 0) {
        throw DeviceError(device.str() + ": no such device: device type " + type +
                          " has no device on this machine (its backend's device_count() " +
                          "returned " + std::to_string(count) + ")");
      }
      throw DeviceError(device.str() + ": no such device: device type " + type + " has " +
                        std::to_string(count) + " device(s) on this machine (valid indices 0.." +
                        std::to_string(count - 1) + ")");
    }
    auto memory = std::make_unique<DeviceMemoryBackend>(backend, device.index());
    pool = std::make_unique<CachingAllocator>(device, std::move(memory));
    if (observing_pools_) {
      pool->SetObserver([this, name = device.str()](const PoolEvent& e) { OnPoolEvent(name, e); });
    }
  }
  return pool.get();
}

CachingAllocator* VirtualMachine::GetStagingPool(DeviceType type) {
  DeviceBackend* backend = kernels::GetBackend(type);
  std::lock_guard<std::mutex> lock(streams_mu_);
  auto& pool = staging_pools_[static_cast<int>(type)];
  if (!pool) {
    pool = std::make_unique<CachingAllocator>(Device(DeviceType::kCPU, 0),
                                              std::make_unique<HostStagingBackend>(backend),
                                              "host staging for " + to_string(type));
  }
  return pool.get();
}

Stream* VirtualMachine::GetStream(const Device& device, StreamRole role) {
  if (any_device_failed_.load(std::memory_order_relaxed)) CheckDeviceUsable(device);
  if (closing_.load(std::memory_order_relaxed))
    OnClosing(device.str(), /*throw_if_shut_down=*/true);
  const int index = device.index();
  std::atomic<Stream*>* indexed = nullptr;
  if (index < kMaxIndexedDevice) {
    indexed = &stream_index_[static_cast<int>(device.type())][index][static_cast<int>(role)];
    if (Stream* s = indexed->load(std::memory_order_acquire)) return s;
  }
  CachingAllocator* pool = GetAllocator(device);
  DeviceBackend* backend = kernels::GetBackend(device.type());
  std::lock_guard<std::mutex> lock(streams_mu_);
  auto key = std::make_pair(device.str(), static_cast<int>(role));
  auto& s = streams_[key];
  if (!s) {
    threads_started_.store(true, std::memory_order_seq_cst);  // before any thread of it exists
    try {
      s = std::make_unique<Stream>(this, device, role, pool, backend);
    } catch (const std::exception& e) {
      streams_.erase(key);
      // A fault the device cannot recover from may reach a new stream first, before the thread
      // that hit it marked the device: marked here too, before the error is visible, so that the
      // next op on the device throws as well.
      if (dynamic_cast<const DeviceFailed*>(&e) != nullptr) MarkDeviceFailed(device, e.what());
      throw DeviceError(device.str() + ": creating its " + to_string(role) +
                        " stream failed: " + e.what());
    }
    s->set_index(static_cast<int>(stream_list_.size()));
    stream_list_.push_back(s.get());
  }
  if (indexed != nullptr) indexed->store(s.get(), std::memory_order_release);
  return s.get();
}

void VirtualMachine::ThrowShutDown(const std::string& what) {
  if (Get().forked()) {
    throw Error(what + ": oneflow_lite cannot be used in a forked child process (pid " +
                std::to_string(getpid()) +
                "): its parent had started the runtime's threads, which fork() does not copy. Use "
                "the runtime in the parent only, or start the child with exec (posix_spawn)");
  }
  throw Error(what +
              ": the runtime was shut down (ofl::shutdown or process exit); no more work "
              "can be issued");
}

void VirtualMachine::MarkDeviceFailed(const Device& device, const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(failed_mu_);
    failed_devices_.emplace(device.str(), what);  // keeps the first fault
  }
  any_device_failed_.store(true, std::memory_order_seq_cst);
  Logger().error("{} failed: {}; every later op on it throws DeviceError", device.str(), what);
}

void VirtualMachine::CheckDeviceUsable(const Device& device) {
  std::lock_guard<std::mutex> lock(failed_mu_);
  auto it = failed_devices_.find(device.str());
  if (it == failed_devices_.end()) return;
  throw DeviceError(device.str() + " is unusable: it failed earlier with a fault it cannot " +
                    "recover from (first fault: " + it->second + ")");
}

bool VirtualMachine::IsFailed(const Device& device) {
  std::lock_guard<std::mutex> lock(failed_mu_);
  return failed_devices_.count(device.str()) != 0;
}

void VirtualMachine::DrainDevice(const Device& device) {
  std::vector<Stream*> mine;
  for (Stream* s : streams()) {
    if (s->device() == device && s->async()) mine.push_back(s);
  }
  // Every stream of the device is polled in each round, the caller's own included: a launched
  // instruction on one stream may wait on the device for one launched on another, whose completion
  // only that stream's poll observes. When the caller is that stream's worker (the out-of-memory
  // retry in Prepare), nobody else would ever poll it: draining one stream at a time would wait for
  // work that only the caller can complete (vm/THREADING.md, "Memory"). Everything launched
  // completes without host action, so the rounds end; a device that stops completing work is given
  // up on after the hang timeout with no completion anywhere, and the caller's retry then fails.
  const int64_t timeout_ns = wait_timeout_ns_.load(std::memory_order_relaxed);
  uint64_t completed = CompletedCount();
  int64_t last_progress = NowNs();
  for (;;) {
    bool busy = false;
    for (Stream* s : mine) busy = s->PollCompletions() || busy;
    if (!busy) return;
    const uint64_t now_completed = CompletedCount();
    if (now_completed != completed) {
      completed = now_completed;
      last_progress = NowNs();
    } else if (timeout_ns > 0 && NowNs() - last_progress > timeout_ns) {
      Logger().warn(
          "draining {}: no instruction completed for {} s; giving up on its launched work",
          device.str(), static_cast<double>(timeout_ns) / 1e9);
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::vector<Stream*> VirtualMachine::streams() {
  std::lock_guard<std::mutex> lock(streams_mu_);
  return stream_list_;
}

}  // namespace ofl::vm
