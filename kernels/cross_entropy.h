// The fused class-index cross-entropy kernels (ops/cross_entropy_op.cpp): "cross_entropy" gives
// the mean or sum over rows of logsumexp(x_i) - x_i[t_i] for logits x (N, C) and int64 targets t
// (N), rows whose target is ignore_index left out (the mean divides by the rows kept: 0 of them
// gives NaN, as PyTorch's); "cross_entropy_backward" gives its gradient
// g * (softmax(x_i) - onehot(t_i)) / (rows kept, for the mean), 0 on ignored rows. Each row's max
// and sum come from one pass (kernels/softmax.h's SoftmaxPush), computed in float (double for
// float64); the rows' losses are summed in double in row order, whatever the thread count.
//
// cross_entropy:          inputs x (N, C) float, t (N) int64; output 0-dim of x's dtype
// cross_entropy_backward: inputs x, t, g (0-dim, x's dtype); output (N, C) of x's dtype
// attributes ignore_index (int), mean (bool: false is the sum). Any strides. A target outside
// [0, C) other than ignore_index fails the kernel with InvalidArgument naming it.
#pragma once

#include <cstdint>

#include "kernels/kernel.h"

namespace ofl::kernels {

struct CrossEntropySpec {
  int64_t rows = 0, classes = 0;
  int64_t ignore_index = -100;
  bool mean = true;
};

// The checks of both kernels (operand counts, shapes, dtypes, attributes); host code
// (kernels/cpu/cross_entropy_kernel.cpp).
CrossEntropySpec CheckCrossEntropyArgs(const KernelContext& ctx, bool backward);

}  // namespace ofl::kernels
