// The "mm" and "bmm" kernels' shared parts: how a strided matrix is handed to a GEMM (OpenBLAS on
// the CPU, cuBLAS on CUDA) without a copy. A GEMM reads a matrix in one of two layouts, each with
// a leading dimension: rows one after another (row-major, element (i, j) at i * ld + j) or columns
// one after another (column-major, (i, j) at j * ld + i), ld at least the length of a row (of a
// column). A view whose strides are one of those (a contiguous tensor, a transposed one, a narrowed
// one) goes in place, with a transpose flag for the second; any other is copied first by the op's
// function (ops/matmul_op.h), so the kernels refuse it.
#pragma once

#include <cstdint>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE
#include "kernels/kernel.h"

namespace ofl::kernels {

// A matrix as a row-major GEMM reads it: `transposed` false: row-major with leading dimension ld;
// true: the transpose of a row-major matrix (so column-major), leading dimension ld.
struct GemmOperand {
  bool transposed = false;
  int64_t ld = 0;
};

// The GEMM layout of a rows x cols view with strides (row_stride, col_stride), or false when it has
// none. A dim of size 1 takes any stride (it is never stepped over).
OFL_HOST_DEVICE inline bool GemmLayoutOf(int64_t rows, int64_t cols, int64_t row_stride,
                                         int64_t col_stride, GemmOperand* out) {
  const int64_t min_row = cols > 1 ? cols : 1, min_col = rows > 1 ? rows : 1;
  if (cols <= 1 || col_stride == 1) {
    const int64_t ld = rows <= 1 ? min_row : row_stride;
    if (ld >= min_row) {
      *out = GemmOperand{false, ld};
      return true;
    }
  }
  if (rows <= 1 || row_stride == 1) {
    const int64_t ld = cols <= 1 ? min_col : col_stride;
    if (ld >= min_col) {
      *out = GemmOperand{true, ld};
      return true;
    }
  }
  return false;
}

// One batched product c[i] = a[i] @ b[i] (a: m x k, b: k x n, c: m x n, row-major and contiguous)
// as the kernels run it: the operands' layouts and the element distance between batch entries (0
// for an operand broadcast over the batch).
struct GemmPlan {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  GemmOperand a, b;
  int64_t a_batch_stride = 0, b_batch_stride = 0;
};

// The argument check of the "mm" and "bmm" kernels, beside the others' (kernels/kernel_checks.cpp):
// "mm" (2-dim operands) and "bmm" (3-dim, a batch first): inputs a (b x m x k) and b (b x k x n),
// one output (b x m x n), contiguous; one dtype, not bool; each input in a GEMM layout
// (kernels/matmul.h); every size and leading dimension below 2^31 (BLAS takes 32-bit ints).
// Returns the plan the kernel runs.
GemmPlan CheckMatmulArgs(const char* op, const KernelContext& ctx);

}  // namespace ofl::kernels
