// Reductions in a dtype of the caller's choosing, as torch.sum(x, dim, keepdim, dtype=...): the
// tensor is cast to dtype first (autograd flows through the cast), then summed, and the result is
// of dtype (an integer sum wraps at dtype's width, as PyTorch's: int8 values summed in int32 give
// int32, int32 values summed in int32 wrap past 2^31 - 1; in bool it is whether any element is
// nonzero). InvalidArgument for an undefined or global tensor. The sum without a dtype is the op
// table's ofl::sum.
#pragma once

#include <cstdint>
#include <vector>

#include "oneflow_lite/dtype.h"
#include "oneflow_lite/tensor.h"

namespace ofl {

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, DType dtype);
// Over every dim.
Tensor sum(const Tensor& x, DType dtype);

}  // namespace ofl
