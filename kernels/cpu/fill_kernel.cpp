// The CPU "fill" kernel: every element of a strided output becomes one value. It is the copy of a
// one-element source broadcast over the output (StridedCopy with every source stride 0), so it
// takes the copy's fills: vectorised runs, streaming stores into large outputs, oneTBB for large
// ones.
#include <cstdint>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/fill_value.h"
#include "kernels/kernel_checks.h"
#include "kernels/register_kernel.h"

namespace ofl::kernels::cpu {

void FillKernel(const KernelContext& ctx) {
  CheckFillArgs(ctx);
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  alignas(8) unsigned char value[8] = {};
  FillValueToElement(FillValueOf(ctx.attributes.get_scalar("value")), out.dtype, value);
  const int64_t zeros[kMaxDims] = {};
  StridedCopy(out.data, out.stride.data(), value, zeros, out.shape.data(), out.shape.ndim(),
              element_size(out.dtype));
}
OFL_REGISTER_CPU_KERNEL("fill", FillKernel, CheckFillArgs);

}  // namespace ofl::kernels::cpu
