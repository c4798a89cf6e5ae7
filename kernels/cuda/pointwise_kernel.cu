// The CUDA pointwise kernels (kernels/pointwise_ops.h): comparisons and logical ops into bool,
// maximum/minimum, bitwise ops, clamp and where, over strided views of one shape (broadcast inputs
// have stride 0), by the loops of map_kernel.h, with the math of one element shared with the CPU
// kernels.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/map_kernel.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/kernel_checks.h"
#include "kernels/pointwise_ops.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

template <PointwiseOp kOp, class T>
struct BinaryFn {
  using E = ValueElem<T>;
  using Out = std::conditional_t<PointwiseGivesBool(kOp), bool, T>;
  using Ins = std::tuple<T, T>;
  using Params = PointwiseParams;
  __device__ static Out Apply(T a, T b, const PointwiseParams&) {
    const auto r = ApplyPointwise<kOp, typename E::Compute>(E::Load(a), E::Load(b));
    if constexpr (PointwiseGivesBool(kOp)) {
      return r;
    } else {
      return E::Store(r);
    }
  }
};

template <PointwiseOp kOp, class T>
struct UnaryFn {
  using E = ValueElem<T>;
  using In = T;
  using Out = std::conditional_t<PointwiseGivesBool(kOp), bool, T>;
  using Params = PointwiseParams;
  __device__ static Out Apply(T x, const PointwiseParams& p) {
    const auto r = ApplyPointwise<kOp, typename E::Compute>(E::Load(x), p);
    if constexpr (PointwiseGivesBool(kOp)) {
      return r;
    } else {
      return E::Store(r);
    }
  }
};

template <class T>
struct WhereFn {
  using Out = T;
  using Ins = std::tuple<bool, T, T>;
  using Params = PointwiseParams;
  __device__ static T Apply(bool c, T a, T b, const PointwiseParams&) { return c ? a : b; }
};

template <PointwiseOp kOp>
void PointwiseKernel(const KernelContext& ctx) {
  PointwiseParams p;
  CheckPointwiseArgs(kOp, ctx, &p);
  const TensorArg& out = ctx.outputs[0];
  const TensorArg* in = ctx.inputs.data();
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  const char* name = PointwiseOpName(kOp);
  const DType dtype = in[kOp == PointwiseOp::kWhere ? 1 : 0].dtype;
  VisitDType<Half, BHalf>(dtype, name, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!PointwiseTakes<kOp, T>()) {
      throw InvalidArgument(Where(name, device) + ": no kernel for dtype " + to_string(dtype));
    } else if constexpr (kOp == PointwiseOp::kWhere) {
      LaunchMapN<WhereFn<T>>(out, p, stream, device, name, in[0], in[1], in[2]);
    } else if constexpr (PointwiseArity(kOp) == 2) {
      LaunchMapN<BinaryFn<kOp, T>>(out, p, stream, device, name, in[0], in[1]);
    } else {
      LaunchMap<UnaryFn<kOp, T>>(out, in[0], p, stream, device, name);
    }
  });
}

#define OFL_CUDA_POINTWISE_KERNEL(name, op)                                               \
  void op##Kernel(const KernelContext& ctx) { PointwiseKernel<PointwiseOp::k##op>(ctx); } \
  OFL_REGISTER_CUDA_KERNEL(name, op##Kernel)

OFL_CUDA_POINTWISE_KERNEL("eq", Eq);
OFL_CUDA_POINTWISE_KERNEL("ne", Ne);
OFL_CUDA_POINTWISE_KERNEL("lt", Lt);
OFL_CUDA_POINTWISE_KERNEL("le", Le);
OFL_CUDA_POINTWISE_KERNEL("gt", Gt);
OFL_CUDA_POINTWISE_KERNEL("ge", Ge);
OFL_CUDA_POINTWISE_KERNEL("logical_and", LogicalAnd);
OFL_CUDA_POINTWISE_KERNEL("logical_or", LogicalOr);
OFL_CUDA_POINTWISE_KERNEL("logical_xor", LogicalXor);
OFL_CUDA_POINTWISE_KERNEL("logical_not", LogicalNot);
OFL_CUDA_POINTWISE_KERNEL("maximum", Maximum);
OFL_CUDA_POINTWISE_KERNEL("minimum", Minimum);
OFL_CUDA_POINTWISE_KERNEL("pow", Pow);
OFL_CUDA_POINTWISE_KERNEL("bitwise_and", BitwiseAnd);
OFL_CUDA_POINTWISE_KERNEL("bitwise_or", BitwiseOr);
OFL_CUDA_POINTWISE_KERNEL("bitwise_xor", BitwiseXor);
OFL_CUDA_POINTWISE_KERNEL("bitwise_not", BitwiseNot);
OFL_CUDA_POINTWISE_KERNEL("clamp", Clamp);
OFL_CUDA_POINTWISE_KERNEL("clamp_min", ClampMin);
OFL_CUDA_POINTWISE_KERNEL("clamp_max", ClampMax);
OFL_CUDA_POINTWISE_KERNEL("where", Where);

}  // namespace
}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
