// The host grid's stand-in for CUDA's <cuda_bf16.h>: the bfloat16 type and the conversions the
// kernels use, each rounding as CUDA's does (to nearest, ties to even, from the double or float
// given).
#pragma once

#include <cuda_runtime.h>

namespace ofl::cuda_host {
struct BFloat16 {
  unsigned short bits;
};
}  // namespace ofl::cuda_host
using __nv_bfloat16 = ofl::cuda_host::BFloat16;

inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short bits) { return __nv_bfloat16{bits}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.bits; }
inline float __bfloat162float(__nv_bfloat16 h) {
  return static_cast<float>(ofl::cuda_host::FromBits(h.bits, 8, 7));
}
inline __nv_bfloat16 __double2bfloat16(double x) {
  return __nv_bfloat16{static_cast<unsigned short>(ofl::cuda_host::ToBits(x, 8, 7))};
}
inline __nv_bfloat16 __float2bfloat16(float x) { return __double2bfloat16(static_cast<double>(x)); }
