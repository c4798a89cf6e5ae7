// The "sim" device backend: a simulated asynchronous accelerator, as hostile as a real GPU, that
// the test suites run the VM on to prove it never treats "kernel launched" as "work complete".
//
// - Device memory is not host memory: allocate() hands out addresses of a PROT_NONE mapping, so a
//   host dereference of a device pointer crashes as it would on a GPU. The simulator's own threads
//   reach the same bytes through a second, read-write mapping of the same memfd (HostView()).
// - Every stream is a thread with a FIFO of tasks; each task starts after a random delay (with rare
//   long stalls), so streams finish out of order and an event completes long after its record.
// - Freed memory is poisoned at once (0xFB bytes), so reading memory freed too early shows garbage,
//   and under ThreadSanitizer a free that did not wait for the stream is a reported race.
// - Faults can be injected into query_event, once or sticky (the device then fails for good).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "kernels/kernel.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::sim {

// seed, capacity_bytes and max_delay_us default to the table of settings' OFL_SIM_SEED,
// OFL_SIM_MEMORY_MB and OFL_SIM_MAX_DELAY_US (tests/kernels/settings_reports_test.cpp checks).
struct SimConfig {
  int devices = 2;
  size_t capacity_bytes = size_t{256} << 20;  // per device
  uint64_t seed = 12345;                      // stream s draws its delays from seed + s
  int max_delay_us = 200;                     // each task waits uniform [0, max_delay_us]; 0: none
  int stall_per_mille = 5;                    // chance (per 1000 tasks) of a long stall instead
  int stall_us = 2000;
};

// The defaults, overridden by OFL_SIM_SEED, OFL_SIM_MEMORY_MB (capacity per device, 1 to 1048576)
// and OFL_SIM_MAX_DELAY_US (0: no delays and no stalls), read through the table of settings
// (oneflow_lite/settings.h). A value that is not a whole number in range keeps the default and is
// reported naming the variable, the value and the range: added to `warnings` when given, else
// logged (once per process).
SimConfig SimConfigFromEnv(std::vector<std::string>* warnings = nullptr);

class SimBackend final : public ofl::DeviceBackend {
 public:
  explicit SimBackend(const SimConfig& config);
  // Shutdown(), then releases the device memory.
  ~SimBackend() override;
  SimBackend(const SimBackend&) = delete;
  SimBackend& operator=(const SimBackend&) = delete;

  // The process-wide instance (from SimConfigFromEnv()), created on first use and never destroyed:
  // kernels and streams may still run while the process exits.
  static SimBackend& Instance();
  // Instance() for register_device_backend: a shared_ptr that does not own it.
  static std::shared_ptr<ofl::DeviceBackend> SharedInstance();

  const SimConfig& config() const { return config_; }

  // ofl::DeviceBackend. Every method may be called from any thread. Handles of another backend, or
  // already destroyed, throw InvalidArgument; an index out of range throws DeviceError; every call
  // that starts work on a device that failed (a sticky fault) throws DeviceFailed naming the fault.
  int device_count() override;
  // nullptr when `bytes` does not fit (first fit, 256-byte aligned); never throws for that.
  void* allocate(int index, size_t bytes) override;
  // Poisons the range (0xFB) on the calling thread, then frees it. `bytes` must be the size given
  // to allocate(), else InvalidArgument. nullptr is a no-op.
  void deallocate(int index, void* ptr, size_t bytes) override;
  ofl::NativeStream create_stream(int index) override;
  // Runs the tasks still queued, then joins the stream's thread.
  void destroy_stream(int index, ofl::NativeStream stream) override;
  ofl::NativeEvent create_event(int index) override;
  void destroy_event(int index, ofl::NativeEvent event) override;
  void record_event(ofl::NativeEvent event, ofl::NativeStream stream) override;
  // Also throws DeviceError once for an exception a stream task of the event's device threw (the
  // asynchronous error report of a real device).
  bool query_event(ofl::NativeEvent event) override;
  void synchronize_event(ofl::NativeEvent event) override;
  void stream_wait_event(ofl::NativeStream stream, ofl::NativeEvent event) override;
  // Device pointers must lie in a live allocation and match `kind`, else InvalidArgument.
  void copy_async(void* dst, const void* src, size_t bytes, ofl::CopyKind kind,
                  ofl::NativeStream stream) override;
  // "capacity 1048576 bytes (OFL_SIM_MEMORY_MB), 524288 free, largest free range 524288": what an
  // out-of-memory message adds about the device itself.
  std::string memory_info(int index) override;
  bool synchronous() const override { return false; }
  bool host_accessible() const override { return false; }

  // The read-write view of a device pointer of any device, for code that runs on the stream
  // threads. nullptr stays nullptr; any other pointer (host memory) is returned unchanged.
  void* HostView(const void* device_ptr) const;
  // Runs `work` on the stream's thread after every task enqueued before it, after a random delay.
  // An exception it throws is reported by the next query_event on the device.
  void Enqueue(ofl::NativeStream stream, std::function<void()> work);

  // The n-th query_event (n >= 1) on device `index` from now on throws DeviceError naming
  // "sim:<index>" and "injected"; sticky: it throws DeviceFailed instead, and the device fails.
  void InjectQueryFault(int index, int64_t n, bool sticky);
  // Forgets injected faults, failed devices and pending asynchronous errors (for tests).
  void ClearFaults();
  // Drains and joins every stream not yet destroyed; their handles become invalid.
  void Shutdown();

 private:
  struct DeviceState;
  struct SimStream;
  struct SimEvent;

  DeviceState& CheckIndex(int index, const char* op) const;
  DeviceState& CheckUsable(int index, const char* op) const;
  void EnsureArena(DeviceState& d) const;
  std::shared_ptr<SimStream> FindStream(ofl::NativeStream stream, const char* op) const;
  std::shared_ptr<SimEvent> FindEvent(ofl::NativeEvent event, const char* op) const;
  // The device whose memory holds `p`, or -1.
  int DeviceOf(const void* p) const;
  void CheckCopyOperand(const char* role, const void* p, size_t bytes, bool want_device,
                        ofl::CopyKind kind, const void* dst, const void* src) const;
  void Push(SimStream& stream, std::function<void()> work, bool delayed);
  void RunWorker(std::shared_ptr<SimStream> stream);
  void ThrowIfAsyncError(DeviceState& d);
  // Throws DeviceError for the first fault a marker of generation <= gen brought (e.mu held).
  static void ThrowEventFault(SimEvent& e, uint64_t gen);

  const SimConfig config_;
  std::unique_ptr<std::unique_ptr<DeviceState>[]> devices_;
  struct Registry;
  std::unique_ptr<Registry> registry_;
};

}  // namespace ofl::kernels::sim
