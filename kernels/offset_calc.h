// Index math for the GPU kernels, in a header that compiles for host and device so that the CPU
// tests check exactly what the CUDA kernels run (tests/kernels/offset_calc_test.cpp).
//
// - FixedDivisor: division of 32-bit indices by a divisor fixed at launch, as a multiply-high, an
// add
//   and a shift (the divisor's "magic number", computed once on the host). Exact for every
//   dividend below 2^31, which the 32-bit path guarantees.
// - OffsetCalc<N, Index>: from a linear position in a loop nest (LoopDims, index_util.h, already
//   simplified: size-1 dims dropped, dims sorted and merged) to each of N operands' element
//   offsets. Index is uint32_t when every linear position and every offset fits in 31 bits (the
//   common case: cheaper registers and FixedDivisor), uint64_t otherwise (plain division).
#pragma once

#include <cstdint>

#include "kernels/index_util.h"

namespace ofl::kernels {

struct FixedDivisor {
  uint32_t divisor = 1;
  uint32_t multiplier = 0;
  uint32_t shift = 0;

  FixedDivisor() = default;
  // Host side, once per launch. 1 <= d < 2^31 (0, from an empty loop that never runs, divides
  // like 1 instead of dividing by zero here).
  explicit FixedDivisor(uint32_t d) : divisor(d == 0 ? 1 : d) {
    d = divisor;
    while (shift < 31 && (uint32_t{1} << shift) < d) ++shift;  // ceil(log2(d))
    const uint64_t one = 1;
    multiplier = static_cast<uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }

  // n < 2^31.
  OFL_HOST_DEVICE uint32_t Div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t hi = __umulhi(n, multiplier);
#else
    const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier) >> 32);
#endif
    return (hi + n) >> shift;
  }
  OFL_HOST_DEVICE void DivMod(uint32_t n, uint32_t* q, uint32_t* r) const {
    *q = Div(n);
    *r = n - *q * divisor;
  }
};

// The 64-bit counterpart: a plain division (rare: tensors of 2^31 elements or more).
struct PlainDivmod {
  uint64_t divisor = 1;
  PlainDivmod() = default;
  explicit PlainDivmod(uint64_t d) : divisor(d == 0 ? 1 : d) {}
  OFL_HOST_DEVICE void DivMod(uint64_t n, uint64_t* q, uint64_t* r) const {
    *q = n / divisor;
    *r = n - *q * divisor;
  }
};

template <class Index>
struct DivmodFor;
template <>
struct DivmodFor<uint32_t> {
  using type = FixedDivisor;
};
template <>
struct DivmodFor<uint64_t> {
  using type = PlainDivmod;
};

template <class Index>
using DivmodT = typename DivmodFor<Index>::type;

// Whether a loop nest can take the 32-bit path: its element count and every operand's largest
// offset stay below 2^31, and no stride is negative.
template <int N>
inline bool FitsIn32Bits(const LoopDims<N>& d) {
  constexpr uint64_t kLimit = uint64_t{1} << 31;
  uint64_t numel = 1;
  for (int i = 0; i < d.ndim; ++i) numel *= static_cast<uint64_t>(d.size[i]);
  if (numel == 0) return true;  // nothing runs
  if (numel >= kLimit) return false;
  for (int op = 0; op < N; ++op) {
    uint64_t last = 0;
    for (int i = 0; i < d.ndim; ++i) {
      if (d.stride[op][i] < 0) return false;
      last += static_cast<uint64_t>(d.size[i] - 1) * static_cast<uint64_t>(d.stride[op][i]);
      if (last >= kLimit) return false;
    }
  }
  return true;
}

template <int N, class Index>
struct OffsetCalc {
  using Divmod = typename DivmodFor<Index>::type;
  int ndim = 0;
  Divmod div[kMaxDims];
  Index stride[N][kMaxDims];

  OffsetCalc() = default;
  // Host side: the first `ndim` dims of `d` (callers that walk the innermost dim themselves pass
  // d.ndim - 1).
  OffsetCalc(const LoopDims<N>& d, int dims) : ndim(dims) {
    for (int i = 0; i < dims; ++i) {
      div[i] = Divmod(static_cast<Index>(d.size[i]));
      for (int op = 0; op < N; ++op) stride[op][i] = static_cast<Index>(d.stride[op][i]);
    }
  }

  // Offsets (in elements) of the element at `linear`, row-major over the ndim dims.
  OFL_HOST_DEVICE void Get(Index linear, Index (&offset)[N]) const {
    for (int op = 0; op < N; ++op) offset[op] = 0;
    for (int i = ndim - 1; i >= 0; --i) {
      Index q, r;
      div[i].DivMod(linear, &q, &r);
      for (int op = 0; op < N; ++op) offset[op] += r * stride[op][i];
      linear = q;
    }
  }
};

// Builds the loop nest of a two-operand elementwise copy (operand 0 the output, 1 the input) and
// simplifies it: size-1 dims dropped, dims in the output's memory order, mergeable dims merged.
inline void CopyLoopDims(LoopDims<2>* d, int ndim, const int64_t* size, const int64_t* out_stride,
                         const int64_t* in_stride) {
  const int64_t* const strides[2] = {out_stride, in_stride};
  InitLoopDims<2>(d, ndim, size, strides);
  SortDimsByStride(d);
  CoalesceDims(d);
}

// The loop nest of repeat: the output viewed as (r0, s0, r1, s1, ...) (r the repeat counts, s the
// input shape with leading 1s), the input as a broadcast over the r dims. One pass over the output,
// no intermediate. Returns false when the view needs more than kMaxDims non-trivial dims before
// merging (more than 12 dims repeated and tiled at once); the caller then falls back.
inline bool RepeatLoopDims(LoopDims<2>* d, int in_ndim, const int64_t* in_size,
                           const int64_t* in_stride, int out_ndim, const int64_t* repeats) {
  d->ndim = 0;
  const int lead = out_ndim - in_ndim;
  int64_t out_stride = 1;
  int64_t tmp_size[2 * kMaxDims];
  int64_t tmp_stride[2][2 * kMaxDims];
  int n = 0;
  // Walk from the innermost output dim outwards, then reverse into d.
  for (int i = out_ndim - 1; i >= 0; --i) {
    const int64_t s = i >= lead ? in_size[i - lead] : 1;
    const int64_t st = i >= lead ? in_stride[i - lead] : 0;
    if (s != 1) {
      tmp_size[n] = s;
      tmp_stride[0][n] = out_stride;
      tmp_stride[1][n] = st;
      ++n;
    }
    out_stride *= s;
    if (repeats[i] != 1) {
      tmp_size[n] = repeats[i];
      tmp_stride[0][n] = out_stride;
      tmp_stride[1][n] = 0;
      ++n;
    }
    out_stride *= repeats[i];
  }
  if (n > kMaxDims) return false;
  for (int k = n - 1; k >= 0; --k) {
    d->size[d->ndim] = tmp_size[k];
    d->stride[0][d->ndim] = tmp_stride[0][k];
    d->stride[1][d->ndim] = tmp_stride[1][k];
    ++d->ndim;
  }
  CoalesceDims(d);
  return true;
}

}  // namespace ofl::kernels
