// The host grid's own rules (host_grid.h), on small kernels written here: barriers, shared memory,
// divergent barriers, misaligned 16-byte accesses, bad launch configurations, streams of another
// device, checked copies, and the half/bfloat16 conversions.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host_grid.h"
#include "kernels/cuda/cuda_backend.h"
#include "oneflow_lite/dtype.h"

namespace ofl::cuda_host {
namespace {

class HostGridTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetDevice(0); }
  void TearDown() override {
    ResetDevice(0);
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
};

// Reverses each block's 64 values through shared memory: correct only if every thread's write
// lands before any thread's read.
__global__ void ReverseBlocks(float* x) {
  __shared__ float buf[64];
  const unsigned i = blockIdx.x * 64 + threadIdx.x;
  buf[threadIdx.x] = x[i];
  __syncthreads();
  x[i] = buf[63 - threadIdx.x];
}

TEST_F(HostGridTest, BarriersOrderSharedMemoryWithinEachBlock) {
  std::vector<float> h(64 * 5);
  for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<float>(i);
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), h.size() * 4), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice, nullptr),
            cudaSuccess);
  const uint64_t barriers = GetStats().barriers;
  Launch(&ReverseBlocks, dim3(5), dim3(64), 0, nullptr, d);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess) << LastDiagnosis();
  EXPECT_EQ(GetStats().barriers - barriers, 5u);  // one release per block
  std::vector<float> got(h.size());
  ASSERT_EQ(cudaMemcpyAsync(got.data(), d, h.size() * 4, cudaMemcpyDeviceToHost, nullptr),
            cudaSuccess);
  for (int b = 0; b < 5; ++b) {
    for (int t = 0; t < 64; ++t) EXPECT_EQ(got[b * 64 + t], h[b * 64 + 63 - t]);
  }
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

// Odd threads return before the barrier the even ones wait at.
__global__ void ReturnBeforeBarrier(int* x) {
  if (threadIdx.x % 2 == 1) return;
  __syncthreads();
  x[threadIdx.x] = 1;
}

TEST_F(HostGridTest, AThreadReturningWhileOthersWaitAtABarrierIsALaunchFailure) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 64 * 4), cudaSuccess);
  Launch(&ReturnBeforeBarrier, dim3(1), dim3(64), 0, nullptr, d);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_NE(LastDiagnosis().find("divergent __syncthreads"), std::string::npos) << LastDiagnosis();
  // Sticky, as a lost CUDA context: every later call fails the same way.
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaFree(d), cudaErrorLaunchFailure);
  ResetDevice(0);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

__global__ void TwoBarrierSites(int* x) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  x[threadIdx.x] = 1;
}

TEST_F(HostGridTest, ThreadsWaitingAtDifferentBarriersAreALaunchFailure) {
  int* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 32 * 4), cudaSuccess);
  Launch(&TwoBarrierSites, dim3(1), dim3(32), 0, nullptr, d);
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_NE(LastDiagnosis().find("host_grid_test.cpp"), std::string::npos) << LastDiagnosis();
  ResetDevice(0);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

__global__ void LoadVector(const float* in, float* out) {
  const uint4 v = *reinterpret_cast<const uint4*>(in);
  *reinterpret_cast<uint4*>(out) = v;
}

TEST_F(HostGridTest, AMisalignedSixteenByteAccessIsAMisalignedAddressFault) {
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 64 * 4), cudaSuccess);
  Launch(&LoadVector, dim3(1), dim3(1), 0, nullptr, d, d + 8);  // aligned: fine
  ASSERT_EQ(cudaGetLastError(), cudaSuccess) << LastDiagnosis();
  Launch(&LoadVector, dim3(1), dim3(1), 0, nullptr, d + 1, d + 8);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMisalignedAddress);
  EXPECT_NE(LastDiagnosis().find("16-byte vector load"), std::string::npos) << LastDiagnosis();
  ResetDevice(0);
  Launch(&LoadVector, dim3(1), dim3(1), 0, nullptr, d, d + 9);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMisalignedAddress);
  EXPECT_NE(LastDiagnosis().find("16-byte vector store"), std::string::npos) << LastDiagnosis();
  ResetDevice(0);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

__global__ void Nothing() {}

TEST_F(HostGridTest, ABadConfigurationIsAnErrorOfThatLaunchOnly) {
  Launch(&Nothing, dim3(1), dim3(2048), 0, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // not sticky
  Launch(&Nothing, dim3(0), dim3(32), 0, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  Launch(&Nothing, dim3(1, 70000), dim3(32), 0, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  Launch(&Nothing, dim3(1), dim3(32), 0, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST_F(HostGridTest, ALaunchOnAStreamOfAnotherDeviceIsAnInvalidHandle) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_GE(count, 2) << "OFL_CUDA_HOST_SMS lists fewer than two devices";
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  Launch(&Nothing, dim3(1), dim3(1), 0, s);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidResourceHandle);
  ASSERT_EQ(cudaSetDevice(1), cudaSuccess);
  Launch(&Nothing, dim3(1), dim3(1), 0, s);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST_F(HostGridTest, CopiesAreCheckedAgainstTheAllocations) {
  char* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 100), cudaSuccess);
  std::vector<char> h(200);
  EXPECT_EQ(cudaMemcpyAsync(d, h.data(), 100, cudaMemcpyHostToDevice, nullptr), cudaSuccess);
  // Past the end of the allocation, host memory as device memory, overlapping ranges, null.
  EXPECT_EQ(cudaMemcpyAsync(d + 50, h.data(), 51, cudaMemcpyHostToDevice, nullptr),
            cudaErrorInvalidValue);
  EXPECT_NE(LastDiagnosis().find("not inside one cudaMalloc allocation"), std::string::npos);
  EXPECT_EQ(cudaMemcpyAsync(h.data(), h.data() + 100, 10, cudaMemcpyDeviceToHost, nullptr),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyAsync(d, d + 10, 20, cudaMemcpyDeviceToDevice, nullptr),
            cudaErrorInvalidValue);
  EXPECT_NE(LastDiagnosis().find("overlap"), std::string::npos);
  EXPECT_EQ(cudaMemsetAsync(d + 90, 0, 20, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemsetAsync(d + 90, 0, 10, nullptr), cudaSuccess);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);  // the last failure, as CUDA records it
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaFree(d + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
  (void)cudaGetLastError();
}

// A transposed 100x100 copy (the element path: 10,000 threads' worth of work) through the CUDA
// copy kernel: device 0 has 1 SM, so GridFor caps the grid at 8 blocks of 256 threads and the
// grid-stride loop makes 5 rounds; device 1 has an H100's 132 SMs, so the grid covers the work in
// one. The index path follows SetWideIndex.
TEST_F(HostGridTest, GridsFollowTheDevicesSmCountsAndTheIndexPathFollowsTheWideSetting) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_GE(count, 2) << "OFL_CUDA_HOST_SMS lists fewer than two devices";
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&d), 2 * 10000 * 4), cudaSuccess);
  KernelContext ctx;
  TensorArg a;
  a.data = d;
  a.shape = Shape({100, 100});
  a.stride = Shape({1, 100});
  ctx.inputs.push_back(a);
  a.data = d + 10000;
  a.stride = Shape({100, 1});
  ctx.outputs.push_back(a);
  const std::pair<int, uint64_t> runs[] = {{0, 8}, {1, 40}};
  for (const auto& [device, blocks] : runs) {
    ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
    ctx.device_index = device;
    for (bool wide : {false, true}) {
      SetWideIndex(wide);
      const Stats before = GetStats();
      kernels::cuda::CopyKernel(ctx);
      const Stats after = GetStats();
      EXPECT_EQ(after.last_blocks, blocks) << "cuda:" << device;
      EXPECT_EQ(after.wide_index - before.wide_index, wide ? 1u : 0u);
      EXPECT_EQ(after.narrow_index - before.narrow_index, wide ? 0u : 1u);
    }
  }
  SetWideIndex(false);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

TEST_F(HostGridTest, HalfConversionsMatchTheRuntimesFloat16ForEveryValue) {
  for (unsigned bits = 0; bits < 65536; ++bits) {
    const auto b = static_cast<uint16_t>(bits);
    float16 f16;
    std::memcpy(&f16, &b, 2);
    const float want = static_cast<float>(f16);
    const float got = __half2float(__ushort_as_half(b));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << bits;
      continue;
    }
    ASSERT_EQ(got, want) << bits;
    // Every half value and the midpoints next to it round as the runtime rounds floats.
    EXPECT_EQ(__half_as_ushort(__double2half(want)), bits) << bits;
    bfloat16 bf;
    std::memcpy(&bf, &b, 2);
    const float bwant = static_cast<float>(bf);
    if (!std::isnan(bwant)) {
      ASSERT_EQ(__bfloat162float(__ushort_as_bfloat16(b)), bwant) << bits;
      EXPECT_EQ(__bfloat16_as_ushort(__double2bfloat16(bwant)), bits) << bits;
    }
  }
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> dist(-70000.f, 70000.f);
  for (int i = 0; i < 200000; ++i) {
    const float x = i % 2 == 0 ? dist(rng) : dist(rng) * 1e-6f;
    const float16 h(x);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    EXPECT_EQ(__half_as_ushort(__double2half(x)), want) << x;
    const bfloat16 bh(x);
    std::memcpy(&want, &bh, 2);
    EXPECT_EQ(__bfloat16_as_ushort(__double2bfloat16(x)), want) << x;
  }
}

}  // namespace
}  // namespace ofl::cuda_host
