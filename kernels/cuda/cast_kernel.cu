// The CUDA "cast" kernel: out[idx] = in[idx] converted to out's dtype by kernels/cast_value.h's
// rules (the CPU kernel's, so a cast gives the same bits on every device), over strided views of
// one shape, by the one-input loop of map_kernel.h; every pair of the ten dtypes.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/cast_value.h"
#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/map_kernel.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/kernel_checks.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

struct NoParams {};

template <class To, class From>
struct CastFn {
  using Out = To;
  using In = From;
  using Params = NoParams;
  __device__ static To Apply(From x, const NoParams&) {
    return ValueElem<To>::Store(
        CastValue<typename ValueElem<To>::Compute>(ValueElem<From>::Load(x)));
  }
};

void CastKernel(const KernelContext& ctx) {
  CheckCastArgs(ctx);
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  VisitDType<Half, BHalf>(in.dtype, "cast", [&](auto from) {
    VisitDType<Half, BHalf>(out.dtype, "cast", [&](auto to) {
      using From = typename decltype(from)::type;
      using To = typename decltype(to)::type;
      LaunchMap<CastFn<To, From>>(out, in, NoParams{}, stream, device, "cast");
    });
  });
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL("cast", CastKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
