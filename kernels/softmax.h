// The "softmax" and "log_softmax" kernels' shared parts: along one dim, exp(x - max) / sum and
// x - max - log(sum), with the max and the sum found in one pass over the row (the running sum is
// rescaled whenever a larger element arrives), then a second pass writing the row. Written once
// for the CPU kernel (kernels/cpu/softmax_kernel.cpp) and the CUDA one (kernels/cuda/
// softmax_kernel.cu), computed in float (float64 in double), as PyTorch's. Rows with -inf
// elements give them 0 (log: -inf); a NaN, a row of -inf only, or a second +inf gives NaN, as
// PyTorch's.
#pragma once

#include <cstdint>

#include "kernels/index_util.h"  // OFL_HOST_DEVICE
#include "kernels/kernel.h"
#include "kernels/unary_ops.h"  // unary_detail::Exp, Log

namespace ofl::kernels {

// The running max m and the sum s of exp(x - m) after element v.
template <class C>
OFL_HOST_DEVICE inline void SoftmaxPush(C v, C* m, C* s) {
  if (v > *m) {
    // A first finite element (m still -inf) starts the sum; a larger one rescales it.
    *s = (*s == C(0) ? C(0) : *s * unary_detail::Exp<C>(*m - v)) + C(1);
    *m = v;
  } else if (!(v == *m && *s == C(0))) {  // a -inf before anything larger adds nothing
    *s += unary_detail::Exp<C>(v - *m);
  }
}

// What the row's outputs divide by (softmax) or subtract (log_softmax): the sum or its log; NaN
// when the max is +inf.
template <bool kLog, class C>
OFL_HOST_DEVICE inline C SoftmaxNorm(C m, C s) {
  if (m - m != C(0) && m > C(0)) return m - m;  // +inf: inf - inf is NaN
  return kLog ? unary_detail::Log<C>(s) : s;
}

// The output for element v of a row with max m: norm is the sum (softmax) or its log.
template <bool kLog, class C>
OFL_HOST_DEVICE inline C SoftmaxValue(C v, C m, C norm) {
  if constexpr (kLog) {
    return v - m - norm;
  } else {
    return unary_detail::Exp<C>(v - m) / norm;
  }
}

// "softmax", "log_softmax": one input of a float dtype, one output of its shape and dtype;
// attribute "dim" in range (wrapped; -1 and 0 for a 0-dim input). Returns the dim, non-negative
// (0 for a 0-dim input). Defined beside the other checks (kernels/kernel_checks.cpp).
int CheckSoftmaxArgs(const char* op, const KernelContext& ctx);

}  // namespace ofl::kernels
