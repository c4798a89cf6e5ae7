// The CUDA multi-tensor optimizer steps "adam_step" and "sgd_step" (kernels/optim_step.h): one
// instruction for the whole parameter list, one grid-stride launch per tensor on the stream, each
// element updated by AdamUpdate / SgdUpdate (the CPU kernel's math).
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/optim_step.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

template <class T, class Index>
__global__ void AdamElements(T* p, T* m, T* v, T* vmax, const T* g, Index n,
                             AdamScalars<typename ValueElem<T>::Compute> k) {
  using E = ValueElem<T>;
  using C = typename E::Compute;
  for (Index j = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<Index>(blockDim.x) * gridDim.x) {
    C pj = E::Load(p[j]), mj = E::Load(m[j]), vj = E::Load(v[j]);
    C vmaxj = vmax != nullptr ? E::Load(vmax[j]) : C(0);
    AdamUpdate<C>(pj, mj, vj, vmaxj, E::Load(g[j]), k);
    p[j] = E::Store(pj);
    m[j] = E::Store(mj);
    v[j] = E::Store(vj);
    if (vmax != nullptr) vmax[j] = E::Store(vmaxj);
  }
}

template <class T, class Index>
__global__ void SgdElements(T* p, T* buf, const T* g, Index n,
                            SgdScalars<typename ValueElem<T>::Compute> k) {
  using E = ValueElem<T>;
  using C = typename E::Compute;
  for (Index j = blockIdx.x * static_cast<Index>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<Index>(blockDim.x) * gridDim.x) {
    C pj = E::Load(p[j]);
    C bj = buf != nullptr && !k.first ? E::Load(buf[j]) : C(0);
    SgdUpdate<C>(pj, bj, E::Load(g[j]), k);
    p[j] = E::Store(pj);
    if (buf != nullptr) buf[j] = E::Store(bj);
  }
}

template <class F>
void VisitStepDType(DType dtype, const char* kernel, F&& f) {
  VisitDType<Half, BHalf>(dtype, kernel, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                  std::is_same_v<T, BHalf>) {
      f(tag);
    }
  });
}

void AdamStepKernel(const KernelContext& ctx) {
  const AdamStepSpec spec = CheckAdamStepArgs(ctx);
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  VisitStepDType(spec.dtype, "adam_step", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ValueElem<T>::Compute;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const int64_t n = ctx.inputs[i].shape.numel();
      if (n == 0) continue;
      const AdamScalars<C> k = AdamScalarsFor<C>(spec, i);
      const size_t o = i * static_cast<size_t>(spec.per_tensor);
      T* p = static_cast<T*>(ctx.outputs[o].data);
      T* m = static_cast<T*>(ctx.outputs[o + 1].data);
      T* v = static_cast<T*>(ctx.outputs[o + 2].data);
      T* vmax = spec.amsgrad ? static_cast<T*>(ctx.outputs[o + 3].data) : nullptr;
      const T* g = static_cast<const T*>(ctx.inputs[i].data);
      if (UseNarrowIndex(n <= std::numeric_limits<uint32_t>::max() / 2)) {
        LaunchKernel(&AdamElements<T, uint32_t>, GridFor(n, device), kThreads, 0, stream, p, m, v,
                     vmax, g, static_cast<uint32_t>(n), k);
      } else {
        LaunchKernel(&AdamElements<T, uint64_t>, GridFor(n, device), kThreads, 0, stream, p, m, v,
                     vmax, g, static_cast<uint64_t>(n), k);
      }
    }
  });
  CheckLaunch("adam_step", device);
}

void SgdStepKernel(const KernelContext& ctx) {
  const SgdStepSpec spec = CheckSgdStepArgs(ctx);
  const auto stream = static_cast<cudaStream_t>(ctx.stream);
  const int device = ctx.device_index;
  VisitStepDType(spec.dtype, "sgd_step", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ValueElem<T>::Compute;
    for (size_t i = 0; i < ctx.inputs.size(); ++i) {
      const int64_t n = ctx.inputs[i].shape.numel();
      if (n == 0) continue;
      const SgdScalars<C> k = SgdScalarsFor<C>(spec, i);
      const size_t o = i * static_cast<size_t>(spec.per_tensor);
      T* p = static_cast<T*>(ctx.outputs[o].data);
      T* buf = spec.per_tensor > 1 ? static_cast<T*>(ctx.outputs[o + 1].data) : nullptr;
      const T* g = static_cast<const T*>(ctx.inputs[i].data);
      if (UseNarrowIndex(n <= std::numeric_limits<uint32_t>::max() / 2)) {
        LaunchKernel(&SgdElements<T, uint32_t>, GridFor(n, device), kThreads, 0, stream, p, buf, g,
                     static_cast<uint32_t>(n), k);
      } else {
        LaunchKernel(&SgdElements<T, uint64_t>, GridFor(n, device), kThreads, 0, stream, p, buf, g,
                     static_cast<uint64_t>(n), k);
      }
    }
  });
  CheckLaunch("sgd_step", device);
}

}  // namespace

OFL_REGISTER_CUDA_KERNEL("adam_step", AdamStepKernel);
OFL_REGISTER_CUDA_KERNEL("sgd_step", SgdStepKernel);

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
