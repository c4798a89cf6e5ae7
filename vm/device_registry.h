// DeviceRegistry: the VM's devices. It makes and keeps each device's streams (one per role, with a
// lock-free indexed table for the per-op look-up), its caching pool, the host staging pool per
// device type, and the record of devices that failed with a fault they cannot recover from.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/device.h"
#include "vm/allocator/caching_allocator.h"
#include "vm/stream.h"

namespace ofl::vm {

class DeviceRegistry {
 public:
  // What the registry needs from the VM that owns it.
  struct Hooks {
    // Set while the runtime closes (exit, shutdown, a fork child): GetStream then calls on_closing.
    const std::atomic<bool>* closing = nullptr;
    // Throws, parks the calling thread, or returns (the call goes on); `what` names the device.
    std::function<void(const std::string& what)> on_closing;
    // Makes a stream (its worker thread starts with it).
    std::function<std::unique_ptr<Stream>(const Device&, StreamRole, CachingAllocator*,
                                          DeviceBackend*)>
        make_stream;
    // Receives every pool's events while pools are observed (ObservePools).
    std::function<void(const std::string& device, const PoolEvent& event)> on_pool_event;
  };
  explicit DeviceRegistry(Hooks hooks) : hooks_(std::move(hooks)) {}

  // Throws DeviceError for a device this build or machine cannot use.
  Stream* GetStream(const Device& device, StreamRole role = StreamRole::kCompute);
  CachingAllocator* GetAllocator(const Device& device);
  // The pool of host staging buffers for transfers to and from devices of `type` (one per device
  // type: its memory comes from the backend's allocate_host). Made on first use.
  CachingAllocator* GetStagingPool(DeviceType type);
  std::vector<Stream*> streams();

  // The device reported a fault it cannot recover from: every later op on it throws DeviceError
  // naming this first fault.
  void MarkDeviceFailed(const Device& device, const std::string& what);
  // Throws DeviceError naming the first fault when `device` failed.
  void CheckDeviceUsable(const Device& device);
  bool IsFailed(const Device& device);
  // Whether any device failed (a relaxed read: the per-op paths check it before IsFailed).
  bool any_device_failed() const { return any_device_failed_.load(std::memory_order_relaxed); }

  // Whether a stream (its worker thread) was ever created.
  bool threads_started() const { return threads_started_.load(); }

  // Starts or stops passing every pool's events to hooks.on_pool_event (pools made later too).
  void ObservePools(bool on);
  // Returns every pool's memory to its backend, then the staging pools' (checking `exiting` before
  // each: at exit host memory goes back with the process). Returns the registry's lock, still
  // held, for the rest of the shutdown.
  std::unique_lock<std::mutex> ClosePools(const std::atomic<bool>& exiting);

 private:
  Hooks hooks_;

  std::mutex streams_mu_;
  std::map<std::pair<std::string, int>, std::unique_ptr<Stream>> streams_;
  std::map<std::string, std::unique_ptr<CachingAllocator>> pools_;
  std::unique_ptr<CachingAllocator> staging_pools_[kMaxDeviceTypes];  // guarded by streams_mu_
  std::vector<Stream*> stream_list_;
  // Lock-free look-up of already created streams: [device type][device index][role].
  static constexpr int kMaxIndexedDevice = 16;
  std::atomic<Stream*> stream_index_[kMaxDeviceTypes][kMaxIndexedDevice][kNumStreamRoles] = {};
  bool observing_pools_ = false;  // guarded by streams_mu_

  // Devices that reported a fault they cannot recover from, with the first fault.
  std::atomic<bool> any_device_failed_{false};
  std::mutex failed_mu_;
  std::map<std::string, std::string> failed_devices_;

  std::atomic<bool> threads_started_{false};  // a stream (its worker thread) was ever created
};

}  // namespace ofl::vm
