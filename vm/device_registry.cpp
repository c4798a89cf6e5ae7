// DeviceRegistry: the VM's devices, their pools and streams (made on first use, through the device
// backend registry), the host staging pools, and the devices that failed.
#include <string>
#include <vector>

#include "kernels/device_backend.h"
#include "oneflow_lite/error.h"
#include "vm/device_registry.h"
#include "vm/log.h"

namespace ofl::vm {

CachingAllocator* DeviceRegistry::GetAllocator(const Device& device) {
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
      pool->SetObserver(
          [this, name = device.str()](const PoolEvent& e) { hooks_.on_pool_event(name, e); });
    }
  }
  return pool.get();
}

CachingAllocator* DeviceRegistry::GetStagingPool(DeviceType type) {
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

Stream* DeviceRegistry::GetStream(const Device& device, StreamRole role) {
  if (any_device_failed_.load(std::memory_order_relaxed)) CheckDeviceUsable(device);
  if (hooks_.closing->load(std::memory_order_relaxed)) hooks_.on_closing(device.str());
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
      s = hooks_.make_stream(device, role, pool, backend);
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

void DeviceRegistry::MarkDeviceFailed(const Device& device, const std::string& what) {
  {
    std::lock_guard<std::mutex> lock(failed_mu_);
    failed_devices_.emplace(device.str(), what);  // keeps the first fault
  }
  any_device_failed_.store(true, std::memory_order_seq_cst);
  Logger().error("{} failed: {}; every later op on it throws DeviceError", device.str(), what);
}

void DeviceRegistry::CheckDeviceUsable(const Device& device) {
  std::lock_guard<std::mutex> lock(failed_mu_);
  auto it = failed_devices_.find(device.str());
  if (it == failed_devices_.end()) return;
  throw DeviceError(device.str() + " is unusable: it failed earlier with a fault it cannot " +
                    "recover from (first fault: " + it->second + ")");
}

bool DeviceRegistry::IsFailed(const Device& device) {
  std::lock_guard<std::mutex> lock(failed_mu_);
  return failed_devices_.count(device.str()) != 0;
}

std::vector<Stream*> DeviceRegistry::streams() {
  std::lock_guard<std::mutex> lock(streams_mu_);
  return stream_list_;
}

void DeviceRegistry::ObservePools(bool on) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  if (observing_pools_ == on) return;
  observing_pools_ = on;
  for (auto& [name, pool] : pools_) {
    if (on) {
      pool->SetObserver([this, name = name](const PoolEvent& e) { hooks_.on_pool_event(name, e); });
    } else {
      pool->SetObserver(nullptr);
    }
  }
}

std::unique_lock<std::mutex> DeviceRegistry::ClosePools(const std::atomic<bool>& exiting) {
  std::unique_lock<std::mutex> lock(streams_mu_);
  for (auto& [name, pool] : pools_) {
    try {
      pool->Close();
    } catch (const std::exception& e) {
      Logger().warn("shutdown: returning the memory of {} failed: {}", name, e.what());
    }
  }
  // At exit (std::exit on one thread while another reads a device tensor), a reader may still be
  // copying out of its staging buffer after its transfer finished: no instruction covers that copy,
  // so the drain before the shutdown does not wait for it. Host memory goes back with the process;
  // ofl::shutdown, which the program calls when it is done with the runtime, returns it.
  for (auto& pool : staging_pools_) {
    if (exiting.load()) break;
    try {
      if (pool) pool->Close();
    } catch (const std::exception& e) {
      Logger().warn("shutdown: returning the host staging memory failed: {}", e.what());
    }
  }
  return lock;
}

}  // namespace ofl::vm
