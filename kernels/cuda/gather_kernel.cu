// The CUDA "gather" and "scatter_add" kernels (kernels/gather.h): gather, one thread per output
// element; scatter_add, a copy of self (LaunchCopy), then one thread per row along dim adding its
// src elements in order, so the sums are deterministic and equal the CPU kernel's. An index value
// outside 0 .. size - 1 traps (a device fault, as PyTorch's device-side assert: the CUDA context
// is lost). 64-bit index math throughout.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype_visit.h"
#include "kernels/gather.h"
#include "kernels/kernel.h"
#include "kernels/offset_calc.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

using Calc3 = OffsetCalc<3, uint64_t>;

// Operands of calc: 0 the output, 1 the index, 2 x with its dim's stride 0.
template <class U>
__global__ void Gather(U* out, const int64_t* index, const U* x, uint64_t count, int64_t size,
                       int64_t step, Calc3 calc) {
  for (uint64_t p = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; p < count;
       p += static_cast<uint64_t>(blockDim.x) * gridDim.x) {
    uint64_t off[3];
    calc.Get(p, off);
    const int64_t i = index[off[1]];
    if (i < 0 || i >= size) __trap();
    out[off[0]] = x[static_cast<int64_t>(off[2]) + i * step];
  }
}

void GatherKernel(const KernelContext& ctx) {
  const int dim = CheckGatherArgs(ctx);
  const TensorArg& x = ctx.inputs[0];
  const TensorArg& index = ctx.inputs[1];
  const TensorArg& out = ctx.outputs[0];
  const int64_t count = out.shape.numel();
  if (count == 0) return;
  const bool scalar = x.shape.ndim() == 0;
  const int64_t size = scalar ? 1 : x.shape[dim];
  const int64_t step = scalar ? 0 : x.stride[dim];
  Strides x_stride = x.stride;
  if (!scalar) x_stride[dim] = 0;
  LoopDims<3> d;
  const int64_t* const strides[3] = {out.stride.data(), index.stride.data(), x_stride.data()};
  InitLoopDims<3>(&d, out.shape.ndim(), out.shape.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const auto launch = [&](auto tag) {
    using U = decltype(tag);
    LaunchKernel(&Gather<U>, GridFor(count, ctx.device_index), kThreads, 0,
                 static_cast<cudaStream_t>(ctx.stream), static_cast<U*>(out.data),
                 static_cast<const int64_t*>(index.data), static_cast<const U*>(x.data),
                 static_cast<uint64_t>(count), size, step, Calc3(d, d.ndim));
  };
  switch (element_size(x.dtype)) {
    case 1:
      launch(uint8_t{});
      break;
    case 2:
      launch(uint16_t{});
      break;
    case 4:
      launch(uint32_t{});
      break;
    default:
      launch(uint64_t{});
  }
  CheckLaunch("gather", ctx.device_index);
}

// Operands of calc: 0 the output, 1 the index, 2 src, over the rows (the index's positions with
// dim dropped).
template <class T>
__global__ void AddRows(T* out, const int64_t* index, const T* src, uint64_t rows, int64_t n,
                        int64_t size, int64_t out_step, int64_t index_step, int64_t src_step,
                        Calc3 calc) {
  using E = Elem<T>;
  for (uint64_t p = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; p < rows;
       p += static_cast<uint64_t>(blockDim.x) * gridDim.x) {
    uint64_t off[3];
    calc.Get(p, off);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = index[static_cast<int64_t>(off[1]) + k * index_step];
      if (i < 0 || i >= size) __trap();
      T& dst = out[static_cast<int64_t>(off[0]) + i * out_step];
      dst = E::Store(E::Load(dst) + E::Load(src[static_cast<int64_t>(off[2]) + k * src_step]));
    }
  }
}

void ScatterAddKernel(const KernelContext& ctx) {
  const int dim = CheckScatterAddArgs(ctx);
  const TensorArg& self = ctx.inputs[0];
  const TensorArg& index = ctx.inputs[1];
  const TensorArg& src = ctx.inputs[2];
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream);
  {  // out = self
    LoopDims<2> c;
    const int64_t* const strides[2] = {out.stride.data(), self.stride.data()};
    InitLoopDims<2>(&c, out.shape.ndim(), out.shape.data(), strides);
    SortDimsByStride(&c);
    CoalesceDims(&c);
    LaunchCopy(c, out.data, self.data, static_cast<int>(element_size(out.dtype)), stream,
               ctx.device_index, "scatter_add");
  }
  if (index.shape.numel() == 0) return;
  const bool scalar = self.shape.ndim() == 0;
  const int64_t size = scalar ? 1 : self.shape[dim];
  const int64_t n = scalar ? 1 : index.shape[dim];
  Shape rows = index.shape;
  if (!scalar) rows[dim] = 1;
  LoopDims<3> d;
  const int64_t* const strides[3] = {out.stride.data(), index.stride.data(), src.stride.data()};
  InitLoopDims<3>(&d, rows.ndim(), rows.data(), strides);
  SortDimsByStride(&d);
  CoalesceDims(&d);
  const uint64_t count = static_cast<uint64_t>(NumElements(d));
  VisitDType<Half, BHalf>(self.dtype, "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>) {
      LaunchKernel(&AddRows<T>, GridFor(static_cast<int64_t>(count), ctx.device_index), kThreads, 0,
                   stream, static_cast<T*>(out.data), static_cast<const int64_t*>(index.data),
                   static_cast<const T*>(src.data), count, n, size,
                   scalar ? int64_t{0} : out.stride[dim], scalar ? int64_t{0} : index.stride[dim],
                   scalar ? int64_t{0} : src.stride[dim], Calc3(d, d.ndim));
    }
  });
  CheckLaunch("scatter_add", ctx.device_index);
}

OFL_REGISTER_CUDA_KERNEL("gather", GatherKernel);
OFL_REGISTER_CUDA_KERNEL("scatter_add", ScatterAddKernel);

}  // namespace
}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
