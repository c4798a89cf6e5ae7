// The CUDA backend's error handling (kernels/cuda/cuda_check.cpp, kernels/cuda/cuda_backend.cpp),
// run on the host grid with failures injected into the runtime calls (host_grid.h: FailNextCall,
// FailCall), so that every build checks it without a GPU. Each test says what an earlier version
// of the backend did wrong there.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <memory>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "host_grid.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_check.h"
#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"

namespace ofl::kernels::cuda {
namespace {

using cuda_host::CallCount;
using cuda_host::FailCall;
using cuda_host::FailNextCall;

// Captures the warnings of kernels/log_warning.h for a scope: from stderr, where LogWarning writes
// when the VM has not made the runtime's logger "oneflow_lite", and through a sink added to that
// logger when it exists. (Both: the backend's host grid copy may not share this binary's spdlog
// registry, and then writes to stderr although the logger exists.)
class WarningCapture {
 public:
  WarningCapture() : logger_(spdlog::get("oneflow_lite")) {
    if (logger_) {
      sink_ = std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_);
      logger_->sinks().push_back(sink_);
      level_ = logger_->level();
      if (level_ > spdlog::level::warn) logger_->set_level(spdlog::level::warn);
    }
    testing::internal::CaptureStderr();
  }
  ~WarningCapture() { Stop(); }
  WarningCapture(const WarningCapture&) = delete;
  WarningCapture& operator=(const WarningCapture&) = delete;

  // Ends the capture; returns what was logged.
  std::string Stop() {
    if (stopped_) return text_;
    stopped_ = true;
    if (logger_) {
      logger_->flush();
      auto& sinks = logger_->sinks();
      for (auto it = sinks.begin(); it != sinks.end(); ++it) {
        if (*it == sink_) {
          sinks.erase(it);
          break;
        }
      }
      logger_->set_level(level_);
      text_ = stream_.str();
    }
    text_ += testing::internal::GetCapturedStderr();
    return text_;
  }

 private:
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  std::ostringstream stream_;
  spdlog::level::level_enum level_ = spdlog::level::warn;
  bool stopped_ = false;
  std::string text_;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

int CurrentDevice() {
  int device = -1;
  EXPECT_EQ(cudaGetDevice(&device), cudaSuccess);
  return device;
}

// Leaves `error` as the calling thread's last error, the way a failed runtime call does: an
// error that belongs to other code and must still be there for it.
void MakePendingError(cudaError_t error) {
  FailNextCall("cudaMalloc", error);
  void* p = nullptr;
  ASSERT_EQ(cudaMalloc(&p, 64), error);
  ASSERT_EQ(cudaPeekAtLastError(), error);
}

// Every test starts and ends with device 0 current, no pending error, no sticky error.
class CudaBackendErrors : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  }
  void TearDown() override {
    cuda_host::ResetDevice(0);
    cuda_host::ResetDevice(1);
    (void)cudaSetDevice(0);
    (void)cudaGetLastError();
  }
  // The tests that move between devices need two (OFL_CUDA_HOST_SMS lists them; two by default).
  bool TwoDevices() { return backend_.device_count() >= 2; }

  CudaBackend backend_;
};

TEST_F(CudaBackendErrors, GuardClearsAndLogsAFailedRestore) {
  // An earlier ~DeviceGuard ignored the result of the restoring cudaSetDevice: its error stayed as
  // the thread's last error, and the next launch's check (cudaGetLastError) reported
  // cudaErrorInvalidDevice as the kernel's own failure; nothing said the restore had failed.
  if (!TwoDevices()) GTEST_SKIP() << "needs two host grid devices (OFL_CUDA_HOST_SMS)";
  WarningCapture capture;
  EXPECT_NO_THROW({
    DeviceGuard guard(1);
    EXPECT_EQ(CurrentDevice(), 1);
    FailNextCall("cudaSetDevice", cudaErrorInvalidDevice);  // the restore in ~DeviceGuard
  });
  const std::string log = capture.Stop();
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());
  EXPECT_TRUE(Contains(log, "cudaSetDevice")) << log;
  EXPECT_TRUE(Contains(log, "cudaErrorInvalidDevice")) << log;
  EXPECT_TRUE(Contains(log, "restoring device 0 after work on device 1")) << log;
}

TEST_F(CudaBackendErrors, AllocateOnAnotherDeviceSurvivesAFailedRestore) {
  // The same through the backend: allocate(1, n) switches to device 1 and back. The earlier guard
  // left the failed restore's error pending, to be reported by the next unrelated call's check.
  if (!TwoDevices()) GTEST_SKIP() << "needs two host grid devices (OFL_CUDA_HOST_SMS)";
  const uint64_t set_calls = CallCount("cudaSetDevice");
  // The guard's switch to device 1 goes through; its restore of device 0 fails.
  FailCall("cudaSetDevice", cudaErrorInvalidDevice, /*skip=*/1);
  WarningCapture capture;
  void* p = nullptr;
  EXPECT_NO_THROW(p = backend_.allocate(1, 1024));
  const std::string log = capture.Stop();
  ASSERT_EQ(CallCount("cudaSetDevice"), set_calls + 2)
      << "the injected failure was not the restore";
  EXPECT_NE(p, nullptr);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());
  EXPECT_TRUE(Contains(log, "cudaSetDevice")) << log;
  EXPECT_TRUE(Contains(log, "restoring device 0 after work on device 1")) << log;
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 1);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  backend_.deallocate(1, p, 1024);
}

TEST_F(CudaBackendErrors, EventNotReadyKeepsAnUnrelatedPendingError) {
  // query_event used to call cudaGetLastError on "not ready", which clears whatever is pending:
  // with a runtime that returns cudaErrorNotReady without recording it, that was another call's
  // error, which then vanished. Now only a recorded cudaErrorNotReady is cleared.
  NativeEvent event = backend_.create_event(0);
  MakePendingError(cudaErrorInvalidValue);
  FailCall("cudaEventQuery", cudaErrorNotReady, /*skip=*/0, /*record=*/false);
  EXPECT_FALSE(backend_.query_event(event));
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue)
      << cudaGetErrorName(cudaPeekAtLastError());
  (void)cudaGetLastError();
  backend_.destroy_event(0, event);
}

TEST_F(CudaBackendErrors, EventNotReadyLeavesNoLastError) {
  // The other half: with a runtime that does record cudaErrorNotReady, query_event must clear it,
  // or the next launch check reports "not ready" as a failed kernel. (The earlier blanket clear
  // did this too; the test keeps the narrower clear from dropping it.)
  NativeEvent event = backend_.create_event(0);
  FailCall("cudaEventQuery", cudaErrorNotReady, /*skip=*/0, /*record=*/true);
  EXPECT_FALSE(backend_.query_event(event));
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());
  EXPECT_TRUE(backend_.query_event(event));  // the event itself is complete
  backend_.destroy_event(0, event);
}

TEST_F(CudaBackendErrors, StickyErrorFromEventQueryMarksTheDeviceFailed) {
  // An error that leaves the context unusable must come out as DeviceFailed, so that the VM marks
  // the device failed, not as a DeviceError that lets it go on using a lost context.
  NativeEvent event = backend_.create_event(0);
  FailNextCall("cudaEventQuery", cudaErrorIllegalAddress);
  try {
    (void)backend_.query_event(event);
    ADD_FAILURE() << "query_event returned after cudaErrorIllegalAddress";
  } catch (const DeviceFailed& e) {
    EXPECT_TRUE(Contains(e.what(), "cudaEventQuery")) << e.what();
    EXPECT_TRUE(Contains(e.what(), "cudaErrorIllegalAddress")) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not DeviceFailed: " << e.what();
  }
  cuda_host::ResetDevice(0);
  backend_.destroy_event(0, event);
}

TEST_F(CudaBackendErrors, OutOfMemoryGivesNullAndLeavesNoLastError) {
  // cudaErrorMemoryAllocation is answered with nullptr (the pool empties its cache and retries);
  // the error must not stay pending for the next launch check to report as the kernel's.
  FailNextCall("cudaMalloc", cudaErrorMemoryAllocation);
  void* p = reinterpret_cast<void*>(1);
  EXPECT_NO_THROW(p = backend_.allocate(0, 1 << 20));
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());

  FailNextCall("cudaHostAlloc", cudaErrorMemoryAllocation);
  p = reinterpret_cast<void*>(1);
  EXPECT_NO_THROW(p = backend_.allocate_host(1 << 20));
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());
}

TEST_F(CudaBackendErrors, OutOfMemoryKeepsAnUnrelatedPendingError) {
  // allocate and allocate_host used to call cudaGetLastError after an out-of-memory answer, which
  // clears whatever is pending. The failure is injected without recording it, so the pending
  // error is exactly what such a blanket clear would lose; now only the out-of-memory error is
  // cleared.
  MakePendingError(cudaErrorInvalidValue);
  FailCall("cudaMalloc", cudaErrorMemoryAllocation, /*skip=*/0, /*record=*/false);
  EXPECT_EQ(backend_.allocate(0, 1 << 20), nullptr);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue)
      << cudaGetErrorName(cudaPeekAtLastError());

  FailCall("cudaHostAlloc", cudaErrorMemoryAllocation, /*skip=*/0, /*record=*/false);
  EXPECT_EQ(backend_.allocate_host(1 << 20), nullptr);
  EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidValue)
      << cudaGetErrorName(cudaPeekAtLastError());
  (void)cudaGetLastError();
}

// Device memory on `device` holding `values` (through the backend's own copies).
void* DeviceCopyOf(CudaBackend& backend, int device, const std::vector<float>& values) {
  const size_t bytes = values.size() * sizeof(float);
  void* p = backend.allocate(device, bytes);
  EXPECT_NE(p, nullptr);
  backend.copy_async(p, values.data(), bytes, CopyKind::kHostToDevice, nullptr);
  return p;
}

std::vector<float> HostCopyOf(CudaBackend& backend, const void* p, size_t n) {
  std::vector<float> out(n, -1.0f);
  backend.copy_async(out.data(), p, n * sizeof(float), CopyKind::kDeviceToHost, nullptr);
  return out;
}

TEST_F(CudaBackendErrors, FirstCopyBetweenDevicesEnablesPeerAccessBothWaysOnce) {
  // Copies between GPUs used to go without peer access, so the driver staged each one through host
  // memory. Now the first copy between two devices enables access both ways, from the right device
  // (the current device is restored), and later copies between them make no driver call for it.
  if (!TwoDevices()) GTEST_SKIP() << "needs two host grid devices (OFL_CUDA_HOST_SMS)";
  cuda_host::ResetPeerAccess();
  std::vector<float> values(300);
  std::iota(values.begin(), values.end(), 1.0f);
  const size_t bytes = values.size() * sizeof(float);
  void* on0 = DeviceCopyOf(backend_, 0, values);
  void* on1 = backend_.allocate(1, bytes);
  void* back0 = backend_.allocate(0, bytes);
  const uint64_t enables = CallCount("cudaDeviceEnablePeerAccess");

  backend_.copy_async(on1, on0, bytes, CopyKind::kDeviceToDevice, nullptr);
  EXPECT_EQ(CallCount("cudaDeviceEnablePeerAccess"), enables + 2);
  EXPECT_EQ(CurrentDevice(), 0);
  backend_.copy_async(back0, on1, bytes, CopyKind::kDeviceToDevice, nullptr);  // the other way
  EXPECT_EQ(CallCount("cudaDeviceEnablePeerAccess"), enables + 2);
  EXPECT_EQ(CurrentDevice(), 0);
  EXPECT_EQ(HostCopyOf(backend_, back0, values.size()), values);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());

  // Both ways are enabled in the runtime: enabling again is refused as already done.
  for (const auto& [from, to] : {std::pair<int, int>{0, 1}, std::pair<int, int>{1, 0}}) {
    ASSERT_EQ(cudaSetDevice(from), cudaSuccess);
    EXPECT_EQ(cudaDeviceEnablePeerAccess(to, 0), cudaErrorPeerAccessAlreadyEnabled)
        << "from device " << from << " to device " << to;
    (void)cudaGetLastError();
  }
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  backend_.deallocate(0, on0, bytes);
  backend_.deallocate(1, on1, bytes);
  backend_.deallocate(0, back0, bytes);
  cuda_host::ResetPeerAccess();
}

TEST_F(CudaBackendErrors, CopyBetweenDevicesWorksWhenPeerAccessIsRefused) {
  // Peer access is an optimisation: a refusal such as cudaErrorTooManyPeers must not fail the copy
  // (the driver stages it through host memory) nor stay pending for the next call; it is logged.
  if (!TwoDevices()) GTEST_SKIP() << "needs two host grid devices (OFL_CUDA_HOST_SMS)";
  cuda_host::ResetPeerAccess();
  std::vector<float> values(100);
  std::iota(values.begin(), values.end(), -50.0f);
  const size_t bytes = values.size() * sizeof(float);
  void* on0 = DeviceCopyOf(backend_, 0, values);
  void* on1 = backend_.allocate(1, bytes);
  FailNextCall("cudaDeviceEnablePeerAccess", cudaErrorTooManyPeers);
  WarningCapture capture;
  EXPECT_NO_THROW(backend_.copy_async(on1, on0, bytes, CopyKind::kDeviceToDevice, nullptr));
  const std::string log = capture.Stop();
  EXPECT_EQ(HostCopyOf(backend_, on1, values.size()), values);
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());
  EXPECT_EQ(CurrentDevice(), 0);
  EXPECT_TRUE(Contains(log, "cudaDeviceEnablePeerAccess")) << log;
  EXPECT_TRUE(Contains(log, "cudaErrorTooManyPeers")) << log;
  EXPECT_TRUE(Contains(log, "from cuda:0 to cuda:1")) << log;
  backend_.deallocate(0, on0, bytes);
  backend_.deallocate(1, on1, bytes);
  cuda_host::ResetPeerAccess();
}

TEST_F(CudaBackendErrors, StickyErrorsThrowDeviceFailedOthersDeviceError) {
  // A sticky error reported as a plain DeviceError let the VM keep using a context that every
  // later call fails on; a recoverable error reported as DeviceFailed took a usable device out.
  // A recoverable error must also be cleared, or the next call's check reports it again.
  // (tests/cuda/cuda_error_table_test.cpp checks the table against the toolkit's header; this
  // runs in every build.)
  ASSERT_FALSE(StickyErrors().empty());
  for (const StickyError& sticky : StickyErrors()) {
    EXPECT_TRUE(IsSticky(sticky.code)) << cudaGetErrorName(sticky.code);
    try {
      ThrowCudaError(sticky.code, "cudaLaunchKernel");
    } catch (const DeviceFailed& e) {
      EXPECT_TRUE(Contains(e.what(), cudaGetErrorName(sticky.code))) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << cudaGetErrorName(sticky.code) << " is not DeviceFailed: " << e.what();
    }
  }
  for (cudaError_t error : {cudaErrorInvalidValue, cudaErrorMemoryAllocation,
                            cudaErrorInvalidConfiguration, cudaErrorInvalidResourceHandle}) {
    EXPECT_FALSE(IsSticky(error)) << cudaGetErrorName(error);
    MakePendingError(error);
    try {
      ThrowCudaError(error, "cudaMalloc");
    } catch (const DeviceFailed& e) {
      ADD_FAILURE() << cudaGetErrorName(error) << " is DeviceFailed: " << e.what();
    } catch (const DeviceError& e) {
      EXPECT_TRUE(Contains(e.what(), cudaGetErrorName(error))) << e.what();
    }
    EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(error) << " stayed pending";
  }
}

}  // namespace
}  // namespace ofl::kernels::cuda
