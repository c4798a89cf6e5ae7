// Device-side pieces the CUDA kernels share (binary, copy, fill, reduce_sum): the storage of the
// 16-bit float types, the 16-byte vector of the rows layout, and where a row chunk of that layout
// lies (the chunks themselves: RowChunk in launch.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/cuda_namespace.h"
#include "kernels/cuda/launch.h"
#include "kernels/offset_calc.h"

namespace ofl::kernels::cuda {
inline namespace OFL_CUDA_BUILD {

// float16 and bfloat16 elements as stored: their bits, converted with CUDA's intrinsics where
// they are computed with (each kernel chooses the type it computes in).
struct Half {
  uint16_t bits;
};
struct BHalf {
  uint16_t bits;
};

// One aligned 16-byte load or store.
struct alignas(16) Vec16 {
  uint4 v;
};

// Chunk `k` of the rows layout, where rows of `inner` elements are cut into `row_div`'s divisor of
// chunks each (RowChunk): sets `off` to the row's start in each of the N operands (operand 0 the
// output `out`), `c` to the chunk's index in its row and [begin, end) to its elements; false when
// the chunk lies past its row's end.
template <int N, class T, class Index>
__device__ inline bool LocateRowChunk(Index k, const DivmodT<Index>& row_div,
                                      const OffsetCalc<N, Index>& outer, const T* out, Index inner,
                                      Index (&off)[N], Index* c, Index* begin, Index* end) {
  Index row;
  row_div.DivMod(k, &row, c);
  outer.Get(row, off);
  return RowChunk(out + off[0], inner, *c, begin, end);
}

}  // namespace OFL_CUDA_BUILD
}  // namespace ofl::kernels::cuda
