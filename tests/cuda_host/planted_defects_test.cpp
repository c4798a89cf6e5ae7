// The host grid catches what a GPU run would: copies of the CUDA kernel files, each with one
// planted defect (tests/cuda_host/CMakeLists.txt: a missing alignment check, a dropped offset, a
// divergent barrier, a shortened reduction tree), run the same cases as the real kernels, and each
// defect shows up as a fault of the emulated device or as values that differ from the CPU kernel's.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "host_grid.h"
#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"
#include "oneflow_lite/error.h"

// The kernels of each build: the real ones, and the copies with a planted defect (a copy_kernel.cu
// defect comes with that file's kernels only; the reduction is then the real one).
namespace ofl::kernels::cuda {
namespace host_grid {
void CopyKernel(const KernelContext& ctx);
void ReduceSumToKernel(const KernelContext& ctx);
}  // namespace host_grid
namespace planted_alignment {
void CopyKernel(const KernelContext& ctx);
}  // namespace planted_alignment
namespace planted_offset {
void CopyKernel(const KernelContext& ctx);
}  // namespace planted_offset
namespace planted_barrier {
void ReduceSumToKernel(const KernelContext& ctx);
}  // namespace planted_barrier
namespace planted_tree {
void ReduceSumToKernel(const KernelContext& ctx);
}  // namespace planted_tree
}  // namespace ofl::kernels::cuda

namespace ofl::cuda_host {
namespace {

struct Build {
  const char* name;
  KernelFn copy;
  KernelFn reduce;
};

// What a run of the cases found.
struct Outcome {
  int mismatches = 0;  // cases whose output differs from the CPU kernel's
  std::string faults;  // device faults and errors, one per line
};

// One operand in emulated device memory (cudaMalloc: 256-byte aligned), at `offset` elements.
struct DeviceBuffer {
  void* base = nullptr;
  size_t bytes = 0;
  DeviceBuffer(size_t b) : bytes(b) { EXPECT_EQ(cudaMalloc(&base, bytes), cudaSuccess); }
  ~DeviceBuffer() { EXPECT_EQ(cudaFree(base), cudaSuccess); }
  char* at(size_t byte_offset) const { return static_cast<char*>(base) + byte_offset; }
};

// Runs `kernel` and the CPU kernel `reference` over the same operands (input: `in_bytes` of
// random data at `in_offset` bytes; output: `out_bytes` at offset 0) and compares the outputs.
void RunCase(KernelFn kernel, KernelFn reference, KernelContext ctx, size_t in_bytes,
             size_t in_offset, size_t out_bytes, Outcome* outcome) {
  // Small whole numbers: every sum is exact, whatever the order of its additions.
  std::mt19937_64 rng(7);
  std::vector<unsigned char> host(in_bytes);
  const DType dtype = ctx.inputs[0].dtype;
  for (size_t at = 0; at + element_size(dtype) <= in_bytes; at += element_size(dtype)) {
    const double v = static_cast<double>(rng() % 64);
    if (dtype == DType::kFloat64) {
      std::memcpy(&host[at], &v, 8);
    } else {
      const float f = static_cast<float>(v);
      std::memcpy(&host[at], &f, 4);
    }
  }
  std::vector<unsigned char> expected(out_bytes, 0), got(out_bytes, 0);
  KernelContext cpu = ctx;
  cpu.inputs[0].data = host.data();
  cpu.outputs[0].data = expected.data();
  reference(cpu);
  DeviceBuffer in(in_bytes + in_offset), out(out_bytes);
  std::memcpy(in.at(in_offset), host.data(), in_bytes);
  std::memset(out.at(0), 0, out_bytes);
  ctx.inputs[0].data = in.at(in_offset);
  ctx.outputs[0].data = out.at(0);
  ctx.stream = nullptr;
  ctx.device_index = 0;
  try {
    kernel(ctx);
    std::memcpy(got.data(), out.at(0), out_bytes);
    if (got != expected) ++outcome->mismatches;
  } catch (const std::exception& e) {
    outcome->faults += std::string(e.what()) + " [" + LastDiagnosis() + "]\n";
    ResetDevice(0);  // a test's privilege: a real process would have to restart
  }
}

TensorArg Arg(std::vector<int64_t> shape, std::vector<int64_t> stride, DType dtype) {
  TensorArg a;
  a.shape = Shape(shape);
  a.stride = Shape(stride);
  a.dtype = dtype;
  return a;
}

Outcome RunCases(const Build& b) {
  Outcome o;
  KernelContext ctx;
  // A contiguous float copy whose input starts 4 bytes past a 16-byte boundary: one memcpy.
  ctx.inputs = {Arg({8, 64}, {64, 1}, DType::kFloat32)};
  ctx.outputs = {Arg({8, 64}, {64, 1}, DType::kFloat32)};
  RunCase(b.copy, &kernels::cpu::CopyKernel, ctx, 8 * 64 * 4, 4, 8 * 64 * 4, &o);
  // Rows of 64 floats 72 apart (a narrowed view) into a contiguous output: 16-byte loads and
  // stores.
  ctx.inputs = {Arg({8, 64}, {72, 1}, DType::kFloat32)};
  RunCase(b.copy, &kernels::cpu::CopyKernel, ctx, 8 * 72 * 4, 0, 8 * 64 * 4, &o);
  // The same rows starting 4 bytes past a 16-byte boundary: 16-byte stores, element loads.
  RunCase(b.copy, &kernels::cpu::CopyKernel, ctx, 8 * 72 * 4, 4, 8 * 64 * 4, &o);
  // 64 long float64 sums along the fastest dim: a block of 256 threads and a shared-memory tree.
  ctx.inputs = {Arg({64, 5000}, {5000, 1}, DType::kFloat64)};
  ctx.outputs = {Arg({64, 1}, {1, 1}, DType::kFloat64)};
  RunCase(b.reduce, &kernels::cpu::ReduceSumToKernel, ctx, 64 * 5000 * 8, 0, 64 * 8, &o);
  return o;
}

TEST(PlantedDefectsTest, TheRealKernelsPassEveryCase) {
  const Outcome o = RunCases({"host_grid", &kernels::cuda::host_grid::CopyKernel,
                              &kernels::cuda::host_grid::ReduceSumToKernel});
  EXPECT_EQ(o.mismatches, 0);
  EXPECT_EQ(o.faults, "");
}

TEST(PlantedDefectsTest, AMissingAlignmentCheckIsAMisalignedAddressFault) {
  const Outcome o = RunCases({"alignment", &kernels::cuda::planted_alignment::CopyKernel,
                              &kernels::cuda::host_grid::ReduceSumToKernel});
  EXPECT_NE(o.faults.find("cudaErrorMisalignedAddress"), std::string::npos) << o.faults;
  EXPECT_NE(o.faults.find("16-byte vector load"), std::string::npos) << o.faults;
}

TEST(PlantedDefectsTest, ADroppedOffsetGivesWrongValues) {
  const Outcome o = RunCases({"offset", &kernels::cuda::planted_offset::CopyKernel,
                              &kernels::cuda::host_grid::ReduceSumToKernel});
  EXPECT_EQ(o.faults, "");
  EXPECT_EQ(o.mismatches, 2);  // both cases of rows
}

TEST(PlantedDefectsTest, ADivergentBarrierIsALaunchFailure) {
  const Outcome o = RunCases({"barrier", &kernels::cuda::host_grid::CopyKernel,
                              &kernels::cuda::planted_barrier::ReduceSumToKernel});
  EXPECT_NE(o.faults.find("cudaErrorLaunchFailure"), std::string::npos) << o.faults;
  EXPECT_NE(o.faults.find("divergent __syncthreads"), std::string::npos) << o.faults;
}

TEST(PlantedDefectsTest, AShortenedReductionTreeGivesWrongSums) {
  const Outcome o = RunCases({"tree", &kernels::cuda::host_grid::CopyKernel,
                              &kernels::cuda::planted_tree::ReduceSumToKernel});
  EXPECT_EQ(o.faults, "");
  EXPECT_EQ(o.mismatches, 1);
}

}  // namespace
}  // namespace ofl::cuda_host
