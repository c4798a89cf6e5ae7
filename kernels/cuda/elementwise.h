// Device-side pieces the CUDA kernels share (binary, unary, cast, copy, fill, reduce_sum): the
// storage of the 16-bit float types and how each element type computes (Elem), the 16-byte vector
// of the rows layout, and where a row chunk of that layout lies (the chunks themselves: RowChunk
// in launch.h).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

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

// How each element type computes: integers in an unsigned type of at least 32 bits (two's-
// complement wrap-around), floats in their own type, float16 and bfloat16 in float (rounded once
// to the stored type, to nearest even).
template <class T>
struct Elem {  // the integers
  using Unsigned = std::make_unsigned_t<T>;
  using Compute = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, Unsigned>;
  __device__ static Compute Load(T x) { return static_cast<Compute>(static_cast<Unsigned>(x)); }
  __device__ static T Store(Compute c) { return static_cast<T>(static_cast<Unsigned>(c)); }
};
template <class T>
struct FloatElem {
  using Compute = T;
  __device__ static T Load(T x) { return x; }
  __device__ static T Store(T c) { return c; }
};
template <>
struct Elem<float> : FloatElem<float> {};
template <>
struct Elem<double> : FloatElem<double> {};
template <>
struct Elem<Half> {
  using Compute = float;
  __device__ static float Load(Half x) { return __half2float(__ushort_as_half(x.bits)); }
  __device__ static Half Store(float c) { return Half{__half_as_ushort(__float2half(c))}; }
};
template <>
struct Elem<BHalf> {
  using Compute = float;
  __device__ static float Load(BHalf x) { return __bfloat162float(__ushort_as_bfloat16(x.bits)); }
  __device__ static BHalf Store(float c) {
    return BHalf{__bfloat16_as_ushort(__float2bfloat16(c))};
  }
};

// How the kernels that keep each type's own values load and compute it (cast, the pointwise ops):
// float16 and bfloat16 through float (Elem), every other type as itself.
template <class T>
struct ValueElem {
  using Compute = T;
  __device__ static T Load(T x) { return x; }
  __device__ static T Store(T c) { return c; }
};
template <>
struct ValueElem<Half> : Elem<Half> {};
template <>
struct ValueElem<BHalf> : Elem<BHalf> {};

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
