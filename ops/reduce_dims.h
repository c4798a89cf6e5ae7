// The dims a reduction takes (sum, mean, amax, amin, logsumexp, max/min along a dim), PyTorch's
// rules: negative dims wrap, a duplicate is an error, no dims means every dim; a 0-dim tensor's
// dim is 0 or -1. Pure functions for the op definitions.
#pragma once

#include <cstdint>
#include <vector>

#include "oneflow_lite/attrs.h"
#include "oneflow_lite/shape.h"

namespace ofl::ops {

// Which of an ndim-dim input's dims `dims` reduces; InvalidArgument naming `op` for a dim out of
// range or given twice.
std::vector<bool> ReducedDims(const char* op, int ndim, const IntList& dims);
// One dim, wrapped (0 for a 0-dim input); InvalidArgument naming `op` when out of range.
int WrapDim(const char* op, int64_t dim, int ndim);
// `in` with the reduced dims as 1s (keepdim), or without them.
Shape KeepdimShape(const Shape& in, const std::vector<bool>& reduced);
Shape DroppedShape(const Shape& in, const std::vector<bool>& reduced);
// The number of elements each output element reduces.
int64_t ReducedCount(const Shape& in, const std::vector<bool>& reduced);

}  // namespace ofl::ops
