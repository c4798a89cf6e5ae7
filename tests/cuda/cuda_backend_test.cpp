// The CUDA backend where it can be checked. Without a GPU (this machine, CI): "cuda" is still a
// device type, device_count is 0, and every use of it throws DeviceError with CUDA's own reason
// (or "built without CUDA"), leaving the runtime working. With a GPU (tools/gpu_check.sh): what
// only CUDA has, pinned staging, out-of-memory messages with the device's own view, and copies
// between GPUs. The op semantics on cuda:0 are the device-parameterised suites
// (functional/kernels/vm.on_cuda0).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/oneflow_lite.h"

#ifdef OFL_TEST_BUILT_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace ofl {
namespace {

bool HasGpu() { return device_count(DeviceType::kCUDA) > 0; }

template <class Fn>
void ExpectDeviceError(const char* what, Fn fn, const std::string& piece) {
  try {
    fn();
    ADD_FAILURE() << what << ": no DeviceError";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find(piece), std::string::npos)
        << what << ": '" << piece << "' not in: " << e.what();
  }
}

TEST(CudaAvailabilityTest, WithoutAGpuEveryUseIsADeviceErrorWithTheReason) {
  if (HasGpu()) GTEST_SKIP() << "a GPU is present: nothing to refuse";
  EXPECT_EQ(device_count(DeviceType::kCUDA), 0);
  const std::string reason = device_unavailable_reason(DeviceType::kCUDA);
#ifdef OFL_TEST_BUILT_WITH_CUDA
  EXPECT_EQ(reason.rfind("no CUDA device is available: ", 0), 0u) << reason;
  const std::string piece = "cuda:0: no CUDA device is available: ";
#else
  EXPECT_NE(reason.find("built without CUDA"), std::string::npos) << reason;
  const std::string piece = "built without CUDA";
#endif
  EXPECT_EQ(Device("cuda").str(), "cuda:0");  // still a value
  const std::vector<float> data = {1, 2, 3, 4};
  for (int round = 0; round < 2; ++round) {  // a failed use leaves nothing half-made behind
    ExpectDeviceError(
        "empty", [] { (void)empty(Shape({2}), DType::kFloat32, Device("cuda")); }, piece);
    ExpectDeviceError(
        "tensor", [&] { (void)tensor<float>(data, Shape({4}), Device("cuda")); }, piece);
    ExpectDeviceError(
        "to", [&] { (void)tensor<float>(data, Shape({4}), Device("cpu")).to(Device("cuda")); },
        piece);
    ExpectDeviceError(
        "memory_stats", [] { (void)memory_stats(Device("cuda")); }, piece);
    ExpectDeviceError(
        "empty_cache", [] { empty_cache(Device("cuda")); }, piece);
  }
  // The runtime keeps working on the CPU.
  const Tensor x = tensor<float>(data, Shape({4, 1}), Device("cpu"));
  EXPECT_EQ(x.expand({4, 2}).contiguous().to_vector<float>(),
            (std::vector<float>{1, 1, 2, 2, 3, 3, 4, 4}));
}

class CudaBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasGpu()) GTEST_SKIP() << device_unavailable_reason(DeviceType::kCUDA);
  }
};

TEST_F(CudaBackendTest, HostRoundTripsGoThroughPinnedStagingAndKeepEveryValue) {
  std::vector<float> data(1 << 20);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i % 1000);
  const Tensor d = tensor<float>(data, Shape({1024, 1024}), Device("cuda:0"));
  EXPECT_EQ(d.to_vector<float>(), data);
  EXPECT_EQ(d.to(Device("cpu")).to_vector<float>(), data);
  const Tensor row = tensor<float>({1, 2, 3}, Shape({1, 3}), Device("cuda:0"));
  EXPECT_EQ(row.expand({2, 3}).contiguous().to_vector<float>(),
            (std::vector<float>{1, 2, 3, 1, 2, 3}));
}

TEST_F(CudaBackendTest, OutOfMemoryNamesTheDevicesOwnFreeAndTotalMemory) {
  set_memory_limit(Device("cuda:0"), 1 << 20);
  try {
    (void)empty(Shape({4 << 20}), DType::kFloat32, Device("cuda:0"));
    sync();
    ADD_FAILURE() << "no OutOfMemory";
  } catch (const OutOfMemory& e) {
    const std::string msg = e.what();
    for (const char* piece :
         {"out of memory on cuda:0", "limit 1048576 bytes", "device free ", "(cudaMemGetInfo)"}) {
      EXPECT_NE(msg.find(piece), std::string::npos) << "'" << piece << "' not in: " << msg;
    }
  }
  set_memory_limit(Device("cuda:0"), 0);
  EXPECT_EQ(empty(Shape({4 << 20}), DType::kFloat32, Device("cuda:0")).numel(), 4 << 20);
  sync();
}

TEST_F(CudaBackendTest, CopiesBetweenGpusKeepEveryValue) {
  if (device_count(DeviceType::kCUDA) < 2) GTEST_SKIP() << "needs 2 GPUs";
  std::vector<int64_t> data(4096);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int64_t>(i) * 3 - 7;
  const Tensor a = tensor<int64_t>(data, Shape({64, 64}), Device("cuda:0"));
  EXPECT_EQ(a.to(Device("cuda:1")).to_vector<int64_t>(), data);
}

#ifdef OFL_TEST_BUILT_WITH_CUDA
// A copy between two GPUs that can reach each other enables peer access both ways, so that it and
// later copies go directly instead of through host memory: enabling it again is then refused as
// already done.
TEST_F(CudaBackendTest, ACopyBetweenGpusEnablesPeerAccessBothWays) {
  if (device_count(DeviceType::kCUDA) < 2) GTEST_SKIP() << "needs 2 GPUs";
  int forth = 0;
  int back = 0;
  ASSERT_EQ(cudaDeviceCanAccessPeer(&forth, 0, 1), cudaSuccess);
  ASSERT_EQ(cudaDeviceCanAccessPeer(&back, 1, 0), cudaSuccess);
  if (forth == 0 || back == 0) GTEST_SKIP() << "cuda:0 and cuda:1 cannot reach each other";
  const std::vector<float> data = {1, 2, 3, 4};
  const Tensor a = tensor<float>(data, Shape({4}), Device("cuda:0"));
  EXPECT_EQ(a.to(Device("cuda:1")).to_vector<float>(), data);
  int previous = 0;
  ASSERT_EQ(cudaGetDevice(&previous), cudaSuccess);
  for (const auto& [from, to] : {std::pair<int, int>{0, 1}, std::pair<int, int>{1, 0}}) {
    ASSERT_EQ(cudaSetDevice(from), cudaSuccess);
    EXPECT_EQ(cudaDeviceEnablePeerAccess(to, 0), cudaErrorPeerAccessAlreadyEnabled)
        << "peer access from cuda:" << from << " to cuda:" << to << " was not enabled";
    (void)cudaGetLastError();
  }
  ASSERT_EQ(cudaSetDevice(previous), cudaSuccess);
}
#endif  // OFL_TEST_BUILT_WITH_CUDA

}  // namespace
}  // namespace ofl
