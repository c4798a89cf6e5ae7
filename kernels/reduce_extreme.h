// The "max_dim" and "min_dim" kernels' shared parts: the largest (smallest) element along one dim
// and its index, for every position of the other dims, written once for the CPU kernel (kernels/
// cpu/reduce_extreme_kernel.cpp) and the CUDA one (kernels/cuda/reduce_extreme_kernel.cu, which
// the host grid runs on the CPU). PyTorch's rules: a NaN wins (the first NaN of the row), and
// among equal values the first index.
#pragma once

#include <cstdint>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE

namespace ofl::kernels {

// Whether value v (at a later index) replaces the best so far, b; C the compute type.
template <bool kMax, class C>
OFL_HOST_DEVICE inline bool ExtremeReplaces(C v, C b) {
  if constexpr (kMax) {
    return (v != v && b == b) || v > b;  // NaN != NaN: the first NaN stays
  } else {
    return (v != v && b == b) || v < b;
  }
}

}  // namespace ofl::kernels
