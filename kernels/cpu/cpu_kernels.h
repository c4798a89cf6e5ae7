// The CPU kernels. Each meets its op's contract in oneflow_lite/extension.h (written there once,
// for every device) and registers itself beside its code, for cpu and, through the generic
// wrapper, for sim (kernels/register_kernel.h). The comments here say only how.
#pragma once

#include "kernels/kernel.h"

namespace ofl::kernels::cpu {

// Dims are simplified and merged first; inner contiguous runs go through memcpy, inner broadcast
// runs are fills, and large outputs are split over oneTBB's parallel_for.
void CopyKernel(const KernelContext& ctx);

// Whole tiles are copied as contiguous runs.
void RepeatKernel(const KernelContext& ctx);

// Every float dtype accumulates in double through a fixed cascade of accumulators (16-bit results
// rounded once), a summed dim that the input broadcasts (stride 0) is a multiplication, integers
// are exact in 64 bits (then converted back). The order of every sum is fixed, so results are
// deterministic for any thread count.
void ReduceSumToKernel(const KernelContext& ctx);

// Contiguous and broadcast (stride 0) runs are simple loops the compiler vectorises; large outputs
// are split over oneTBB and stream past the cache (kernels/cpu/binary_kernel.cpp).
void AddKernel(const KernelContext& ctx);
void SubKernel(const KernelContext& ctx);
void MulKernel(const KernelContext& ctx);
void DivKernel(const KernelContext& ctx);

// The value is converted once on the host (kernels/fill_value.h), so every device writes the same
// bits.
void FillKernel(const KernelContext& ctx);

void CastKernel(const KernelContext& ctx);

// The copy behind "copy", for kernels that copy a strided view of their own making: element
// [i_0..i_{ndim-1}] of src goes to the same index of dst. Strides are in elements; elements are
// moved as raw bytes of element_size (1, 2, 4 or 8).
void StridedCopy(void* dst, const int64_t* dst_stride, const void* src, const int64_t* src_stride,
                 const int64_t* size, int ndim, size_t element_size);

// "empty": nothing to compute; the output only needs its memory.
void EmptyKernel(const KernelContext& ctx);

}  // namespace ofl::kernels::cpu
