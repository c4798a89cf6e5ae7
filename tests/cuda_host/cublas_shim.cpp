// The host grid's cuBLAS (shim/cublas_v2.h says what it checks): handles that record a stream, and
// cublasGemmStridedBatchedEx as a host-grid kernel, one emulated thread per output element,
// accumulating in the compute type in order of k.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "host_grid.h"

struct OflHostCublasContext {
  cudaStream_t stream = nullptr;
};

namespace {

using ofl::cuda_host::FromBits;
using ofl::cuda_host::ToBits;

struct GemmArgs {
  bool trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc, stride_a, stride_b, stride_c, batch;
  const void* a;
  const void* b;
  void* c;
  cudaDataType type;
  double alpha, beta;
};

double Load(const void* base, int64_t i, cudaDataType type) {
  switch (type) {
    case CUDA_R_32F:
      return static_cast<const float*>(base)[i];
    case CUDA_R_64F:
      return static_cast<const double*>(base)[i];
    case CUDA_R_16F:
      return FromBits(static_cast<const uint16_t*>(base)[i], 5, 10);
    case CUDA_R_16BF:
      return FromBits(static_cast<const uint16_t*>(base)[i], 8, 7);
  }
  return 0;
}

void Store(void* base, int64_t i, cudaDataType type, double v) {
  switch (type) {
    case CUDA_R_32F:
      static_cast<float*>(base)[i] = static_cast<float>(v);
      break;
    case CUDA_R_64F:
      static_cast<double*>(base)[i] = v;
      break;
    case CUDA_R_16F:
      static_cast<uint16_t*>(base)[i] = static_cast<uint16_t>(ToBits(v, 5, 10));
      break;
    case CUDA_R_16BF:
      static_cast<uint16_t*>(base)[i] = static_cast<uint16_t>(ToBits(v, 8, 7));
      break;
  }
}

// One output element per thread, column-major: c[b][i + j * ldc] = alpha * sum_q op(a)(i, q) *
// op(b)(q, j) + beta * c (c not read when beta is 0, as cuBLAS).
template <class Acc>
void GemmThread(GemmArgs g) {
  const int64_t total = g.batch * g.m * g.n;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const int64_t i = e % g.m, j = (e / g.m) % g.n, bt = e / (g.m * g.n);
    Acc acc = 0;
    for (int64_t q = 0; q < g.k; ++q) {
      const int64_t ia = bt * g.stride_a + (g.trans_a ? q + i * g.lda : i + q * g.lda);
      const int64_t ib = bt * g.stride_b + (g.trans_b ? j + q * g.ldb : q + j * g.ldb);
      acc += static_cast<Acc>(Load(g.a, ia, g.type)) * static_cast<Acc>(Load(g.b, ib, g.type));
    }
    const int64_t ic = bt * g.stride_c + i + j * g.ldc;
    double v = static_cast<double>(static_cast<Acc>(g.alpha) * acc);
    if (g.beta != 0) v += g.beta * Load(g.c, ic, g.type);
    Store(g.c, ic, g.type, v);
  }
}

size_t ElementBytes(cudaDataType type) {
  return type == CUDA_R_64F ? 8 : type == CUDA_R_32F ? 4 : 2;
}

// Whether every element of `batch` matrices (rows x cols, column-major, leading dimension ld,
// stride apart) lies in one device allocation.
bool InDeviceMemory(const void* p, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                    int64_t batch, cudaDataType type, const char* which) {
  if (rows == 0 || cols == 0 || batch == 0) return true;
  const int64_t last = (batch - 1) * stride + (cols - 1) * ld + rows;  // one past, in elements
  return ofl::cuda_host::CheckDeviceRange(
      p, static_cast<size_t>(last) * ElementBytes(type),
      std::string("cublasGemmStridedBatchedEx: matrix ") + which + " (" + std::to_string(rows) +
          " x " + std::to_string(cols) + ", ld " + std::to_string(ld) + ", batch stride " +
          std::to_string(stride) + ", batch " + std::to_string(batch) +
          ") reaches outside device memory");
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new OflHostCublasContext();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "the library was not initialized";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an unsupported value or parameter was passed to the function";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "the GPU program failed to execute";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    default:
      return "unknown cuBLAS status";
  }
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long strideA, const void* B,
    cudaDataType Btype, int ldb, long long strideB, const void* beta, void* C, cudaDataType Ctype,
    int ldc, long long strideC, int batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t /*algo*/) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  // op(A) is m x k, op(B) k x n; stored column-major as A: (ta ? k x m : m x k), and so on.
  const int64_t a_rows = ta ? k : m, a_cols = ta ? m : k;
  const int64_t b_rows = tb ? n : k, b_cols = tb ? k : n;
  if (m < 0 || n < 0 || k < 0 || batchCount < 0 || lda < std::max<int64_t>(1, a_rows) ||
      ldb < std::max<int64_t>(1, b_rows) || ldc < std::max(1, m) || alpha == nullptr ||
      beta == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  if (Atype != Ctype || Btype != Ctype ||
      (computeType == CUBLAS_COMPUTE_64F) != (Ctype == CUDA_R_64F)) {
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (m == 0 || n == 0 || batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  const bool wide = computeType == CUBLAS_COMPUTE_64F;
  GemmArgs g{ta,
             tb,
             m,
             n,
             k,
             lda,
             ldb,
             ldc,
             strideA,
             strideB,
             strideC,
             batchCount,
             A,
             B,
             C,
             Ctype,
             wide ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha),
             wide ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta)};
  if (!InDeviceMemory(A, a_rows, a_cols, lda, strideA, batchCount, Atype, "A") ||
      !InDeviceMemory(B, b_rows, b_cols, ldb, strideB, batchCount, Btype, "B") ||
      !InDeviceMemory(C, m, n, ldc, strideC, batchCount, Ctype, "C")) {
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  const int64_t total = int64_t{batchCount} * m * n;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>((total + 255) / 256, 64));
  if (wide) {
    ofl::cuda_host::Launch(&GemmThread<double>, dim3(blocks), dim3(256), 0, handle->stream, g);
  } else {
    ofl::cuda_host::Launch(&GemmThread<float>, dim3(blocks), dim3(256), 0, handle->stream, g);
  }
  return cudaPeekAtLastError() == cudaSuccess ? CUBLAS_STATUS_SUCCESS
                                              : CUBLAS_STATUS_EXECUTION_FAILED;
}
