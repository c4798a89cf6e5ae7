// The CUDA "mm" and "bmm" kernels: c[i] = a[i] @ b[i] for each batch entry (CheckMatmulArgs gives
// the plan). Float dtypes go to cuBLAS as one strided-batched GEMM (cublasGemmStridedBatchedEx):
// float32 computed in float32 (no TF32, as PyTorch's default), float64 in float64, float16 and
// bfloat16 stored as they are and accumulated in float32. cuBLAS is column-major: a row-major
// product c = a @ b is the column-major c^T = b^T @ a^T, so the operands go in swapped, each in
// place with its own transpose flag (kernels/matmul.h). Integers (cuBLAS has no integer GEMM for
// these types) by a plain kernel, one thread per output element, wrapping as the integer types do.
//
// cuBLAS handles: one per (device, stream), made on first use and bound to its stream before each
// call; never destroyed (the streams' workers may run while statics are destroyed at exit, and a
// GPU context torn down first would fail the destroy). Under the host grid, tests/cuda_host/shim/
// cublas_v2.h runs the same calls on the CPU.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "kernels/cuda/cuda_kernel_list.h"
#include "kernels/cuda/elementwise.h"
#include "kernels/cuda/launch.h"
#include "kernels/dtype_visit.h"
#include "kernels/kernel.h"
#include "kernels/kernel_checks.h"
#include "kernels/matmul.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {
namespace {

[[noreturn]] void ThrowCublas(cublasStatus_t status, const char* call, const char* op, int device) {
  throw DeviceError(std::string(op) + ": " + call + " failed: " + cublasGetStatusString(status) +
                    " (" + Where(op, device) + ")");
}

// The handle of (device, stream), bound to the stream. The caller's device is `device`.
cublasHandle_t HandleFor(int device, cudaStream_t stream, const char* op) {
  static std::mutex* mu = new std::mutex();
  static auto* handles = new std::map<std::pair<int, cudaStream_t>, cublasHandle_t>();
  cublasHandle_t handle = nullptr;
  {
    std::lock_guard<std::mutex> lock(*mu);
    auto it = handles->find({device, stream});
    if (it != handles->end()) {
      handle = it->second;
    } else {
      const cublasStatus_t status = cublasCreate(&handle);
      if (status != CUBLAS_STATUS_SUCCESS) ThrowCublas(status, "cublasCreate", op, device);
      handles->emplace(std::make_pair(device, stream), handle);
    }
  }
  // A stream destroyed and another made at its address finds this handle: bind it every call.
  const cublasStatus_t status = cublasSetStream(handle, stream);
  if (status != CUBLAS_STATUS_SUCCESS) ThrowCublas(status, "cublasSetStream", op, device);
  return handle;
}

cublasOperation_t Op(const GemmOperand& x) { return x.transposed ? CUBLAS_OP_T : CUBLAS_OP_N; }

void CublasGemm(const GemmPlan& p, const KernelContext& ctx, cudaDataType type,
                cublasComputeType_t compute, const void* one, const void* zero, const char* op) {
  cublasHandle_t handle = HandleFor(ctx.device_index, static_cast<cudaStream_t>(ctx.stream), op);
  // Column-major c^T (n x m, ld n) = b^T (n x k) @ a^T (k x m): b first.
  const cublasStatus_t status = cublasGemmStridedBatchedEx(
      handle, Op(p.b), Op(p.a), static_cast<int>(p.n), static_cast<int>(p.m), static_cast<int>(p.k),
      one, ctx.inputs[1].data, type, static_cast<int>(p.b.ld),
      static_cast<long long>(p.b_batch_stride), ctx.inputs[0].data, type, static_cast<int>(p.a.ld),
      static_cast<long long>(p.a_batch_stride), zero, ctx.outputs[0].data, type,
      static_cast<int>(p.n), static_cast<long long>(p.m * p.n), static_cast<int>(p.batch), compute,
      CUBLAS_GEMM_DEFAULT);
  if (status != CUBLAS_STATUS_SUCCESS) {
    ThrowCublas(status, "cublasGemmStridedBatchedEx", op, ctx.device_index);
  }
}

// Integers: output element e (row-major over batch, m, n) is the dot product of its row of a and
// its column of b, in the unsigned compute type.
template <class T>
__global__ void IntegerGemm(T* c, const T* a, const T* b, GemmPlan p) {
  using E = Elem<T>;
  using C = typename E::Compute;
  const uint64_t total = static_cast<uint64_t>(p.batch * p.m * p.n);
  for (uint64_t e = blockIdx.x * static_cast<uint64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<uint64_t>(blockDim.x) * gridDim.x) {
    const int64_t j = static_cast<int64_t>(e % static_cast<uint64_t>(p.n));
    const int64_t row = static_cast<int64_t>(e / static_cast<uint64_t>(p.n));
    const int64_t i = row / p.m, r = row % p.m;
    const T* ai = a + i * p.a_batch_stride;
    const T* bi = b + i * p.b_batch_stride;
    C acc = 0;
    for (int64_t q = 0; q < p.k; ++q) {
      const T x = ai[p.a.transposed ? q * p.a.ld + r : r * p.a.ld + q];
      const T y = bi[p.b.transposed ? j * p.b.ld + q : q * p.b.ld + j];
      acc += E::Load(x) * E::Load(y);
    }
    c[e] = E::Store(acc);
  }
}

template <const char* kName>
void MatmulKernel(const KernelContext& ctx) {
  const GemmPlan p = CheckMatmulArgs(kName, ctx);
  const TensorArg& out = ctx.outputs[0];
  if (out.shape.numel() == 0) return;
  const int device = ctx.device_index;
  const cudaStream_t stream = static_cast<cudaStream_t>(ctx.stream);
  if (p.k == 0) {  // an empty sum: zeros
    const cudaError_t err = cudaMemsetAsync(
        out.data, 0, static_cast<size_t>(out.shape.numel()) * element_size(out.dtype), stream);
    if (err != cudaSuccess) ThrowCudaError(err, "cudaMemsetAsync", Where(kName, device));
    return;
  }
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  switch (out.dtype) {
    case DType::kFloat32:
      return CublasGemm(p, ctx, CUDA_R_32F, CUBLAS_COMPUTE_32F, &one_f, &zero_f, kName);
    case DType::kFloat64:
      return CublasGemm(p, ctx, CUDA_R_64F, CUBLAS_COMPUTE_64F, &one_d, &zero_d, kName);
    case DType::kFloat16:
      return CublasGemm(p, ctx, CUDA_R_16F, CUBLAS_COMPUTE_32F, &one_f, &zero_f, kName);
    case DType::kBFloat16:
      return CublasGemm(p, ctx, CUDA_R_16BF, CUBLAS_COMPUTE_32F, &one_f, &zero_f, kName);
    default:
      break;
  }
  VisitDType<Half, BHalf>(out.dtype, kName, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      LaunchKernel(&IntegerGemm<T>, GridFor(out.shape.numel(), device), kThreads, 0, stream,
                   static_cast<T*>(out.data), static_cast<const T*>(ctx.inputs[0].data),
                   static_cast<const T*>(ctx.inputs[1].data), p);
    }
  });
  CheckLaunch(kName, device);
}

constexpr char kMm[] = "mm";
constexpr char kBmm[] = "bmm";
OFL_REGISTER_CUDA_KERNEL("mm", MatmulKernel<kMm>);
OFL_REGISTER_CUDA_KERNEL("bmm", MatmulKernel<kBmm>);

}  // namespace
}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
