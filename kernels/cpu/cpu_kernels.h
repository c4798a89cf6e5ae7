// The CPU kernels and their contracts (each registers itself beside its code, for cpu and, through
// the generic wrapper, for sim: kernels/register_kernel.h). Every kernel works for every DType
// its contract does not exclude (copies go by element size) and for arbitrary strides on its
// inputs.
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

// "add", "sub", "mul", "div": inputs[0] (a), inputs[1] (b) and outputs[0] have the same shape and
// the same dtype. The inputs have any strides (stride 0 on broadcast dims); the output has any
// strides whose elements do not overlap, and may be exactly the view of either input or of both
// (the same data pointer and strides: an in-place a += b, or x *= x); any other overlap of the
// output with an input is not supported. out[idx] = a[idx] op b[idx] for every index. Floating
// dtypes compute in their own type (float16 and bfloat16 in float, rounded once to the output, to
// nearest even); integers wrap around as two's complement. InvalidArgument (from the check, before
// anything is touched, with the same text on every device) for: shapes or dtypes that differ
// (naming both), operand counts other than 2 inputs and 1 output, a stride count other than the
// rank, dtype bool, and "div" on an integer dtype (no integer division; the message names the
// dtype). An empty output does nothing (its data may be null); a 0-dim output has one element.
void AddKernel(const KernelContext& ctx);
void SubKernel(const KernelContext& ctx);
void MulKernel(const KernelContext& ctx);
void DivKernel(const KernelContext& ctx);

// "fill": no inputs, one output with any non-overlapping strides and any dtype; attrs[0] holds the
// value as the bit pattern of a double (std::memcpy of the double into an int64_t). Every element
// becomes the value converted to the dtype: bool is value != 0; integers are truncated toward
// zero as static_cast does (a value the dtype cannot hold wraps to its width as two's complement,
// NaN gives 0); float32 rounds to nearest even; float16 and bfloat16 round the double once, to
// nearest even. The value is converted once on the host, so every device writes the same bits.
// InvalidArgument for attrs.size() != 1, any input, outputs.size() != 1, a stride count other
// than the rank. An empty output does nothing (its data may be null).
void FillKernel(const KernelContext& ctx);

// The copy behind "copy", for kernels that copy a strided view of their own making: element
// [i_0..i_{ndim-1}] of src goes to the same index of dst. Strides are in elements; elements are
// moved as raw bytes of element_size (1, 2, 4 or 8).
void StridedCopy(void* dst, const int64_t* dst_stride, const void* src, const int64_t* src_stride,
                 const int64_t* size, int ndim, size_t element_size);

// "empty": nothing to compute; the output only needs its memory.
void EmptyKernel(const KernelContext& ctx);

}  // namespace ofl::kernels::cpu
