// The CPU kernels are reachable through the registry under their op names.
#include <gtest/gtest.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/kernel.h"

namespace ofl::kernels {
namespace {

TEST(CpuKernelRegistryTest, BuiltinsAreRegistered) {
  EXPECT_EQ(FindKernel("copy", DeviceType::kCPU), &cpu::CopyKernel);
  EXPECT_EQ(FindKernel("repeat", DeviceType::kCPU), &cpu::RepeatKernel);
  EXPECT_EQ(FindKernel("reduce_sum_to", DeviceType::kCPU), &cpu::ReduceSumToKernel);
  EXPECT_EQ(FindKernel("empty", DeviceType::kCPU), &cpu::EmptyKernel);
  EXPECT_EQ(FindKernel("add", DeviceType::kCPU), &cpu::AddKernel);
  EXPECT_EQ(FindKernel("sub", DeviceType::kCPU), &cpu::SubKernel);
  EXPECT_EQ(FindKernel("mul", DeviceType::kCPU), &cpu::MulKernel);
  EXPECT_EQ(FindKernel("div", DeviceType::kCPU), &cpu::DivKernel);
  EXPECT_EQ(FindKernel("fill", DeviceType::kCPU), &cpu::FillKernel);
  EXPECT_EQ(TryFindKernel("no_such_op", DeviceType::kCPU), nullptr);
}

TEST(CpuKernelRegistryTest, EmptyKernelTouchesNothing) {
  KernelContext ctx;
  TensorArg out;
  out.shape = Shape({2, 3});
  out.stride = Shape({3, 1});
  ctx.outputs.push_back(out);
  EXPECT_NO_THROW(cpu::EmptyKernel(ctx));
}

}  // namespace
}  // namespace ofl::kernels
