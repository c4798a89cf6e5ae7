// The host grid's stand-in for CUDA's <cuda_fp16.h>: the half type and the conversions the kernels
// use, each rounding as CUDA's does (to nearest, ties to even, from the double or float given).
#pragma once

#include <cuda_runtime.h>

namespace ofl::cuda_host {
struct Half16 {
  unsigned short bits;
};
}  // namespace ofl::cuda_host
using __half = ofl::cuda_host::Half16;

inline __half __ushort_as_half(unsigned short bits) { return __half{bits}; }
inline unsigned short __half_as_ushort(__half h) { return h.bits; }
inline float __half2float(__half h) {
  return static_cast<float>(ofl::cuda_host::FromBits(h.bits, 5, 10));
}
inline __half __double2half(double x) {
  return __half{static_cast<unsigned short>(ofl::cuda_host::ToBits(x, 5, 10))};
}
inline __half __float2half(float x) { return __double2half(static_cast<double>(x)); }
