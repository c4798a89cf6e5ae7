// The CPU kernels and their contracts (each registers itself beside its code, for cpu and, through
// the generic wrapper, for sim: kernels/register_kernel.h). Every kernel works for every DType
// (copies go by element size) and for arbitrary strides on its inputs.
#pragma once

#include "kernels/kernel.h"

namespace ofl::kernels::cpu {

// "copy": inputs[0] and outputs[0] have the same shape and any strides (an expanded input has
// stride 0 on broadcast dims). outputs[0][idx] = inputs[0][idx] for every index. Dims are
// simplified and merged first; inner contiguous runs go through memcpy, inner broadcast runs are
// fills, and large outputs are split over oneTBB's parallel_for.
void CopyKernel(const KernelContext& ctx);

// "repeat": inputs[0] has shape s (k dims, any strides); outputs[0] is contiguous with n >= k dims,
// attrs holds the n repeat counts r, and out.shape[i] = r[i] * s_padded[i] where s_padded is s
// with n - k leading 1s. out[idx] = in[idx mod s_padded]. Whole tiles are copied as contiguous
// runs.
void RepeatKernel(const KernelContext& ctx);

// "reduce_sum_to": inputs[0] has shape D (n dims, any strides); outputs[0] is contiguous with n
// dims, each equal to D[i] or 1; dims where out is 1 and D is not are summed. Every float dtype
// accumulates in double through a fixed cascade of accumulators (16-bit results rounded once),
// a summed dim that the input broadcasts (stride 0) is a multiplication, integers are exact in 64
// bits (then converted back). The order of every sum is fixed, so results are deterministic for
// any thread count. bool throws InvalidArgument.
void ReduceSumToKernel(const KernelContext& ctx);

// The copy behind "copy", for kernels that copy a strided view of their own making: element
// [i_0..i_{ndim-1}] of src goes to the same index of dst. Strides are in elements; elements are
// moved as raw bytes of element_size (1, 2, 4 or 8).
void StridedCopy(void* dst, const int64_t* dst_stride, const void* src, const int64_t* src_stride,
                 const int64_t* size, int ndim, size_t element_size);

// "empty": nothing to compute; the output only needs its memory.
void EmptyKernel(const KernelContext& ctx);

}  // namespace ofl::kernels::cpu
