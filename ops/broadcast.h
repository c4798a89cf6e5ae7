// Broadcasting (PyTorch's rules) as pure functions, for the elementwise ops: the common shape of
// two operands, and the strides that view an operand as that shape without a copy.
#pragma once

#include <vector>

#include "oneflow_lite/extension.h"
#include "oneflow_lite/shape.h"

namespace ofl::ops {

// Shapes are right-aligned; each pair of dims must be equal or one of them 1. InvalidArgument
// naming the op, both shapes and the dim otherwise.
Shape BroadcastShapes(const char* op, const Shape& a, const Shape& b);
// `in` (with in_stride) seen as `out`, which it broadcasts to: stride 0 on new leading dims and on
// size-1 dims that out makes larger. InvalidArgument naming the op and both shapes when `in` does
// not broadcast to `out`.
Strides BroadcastStrides(const char* op, const Shape& in, const Strides& in_stride,
                         const Shape& out);

// The inference of the elementwise binary ops: two inputs of one dtype (InvalidArgument naming
// both), not bool, not an integer dtype when !allow_integer; the output has the broadcast shape.
std::vector<TensorMeta> InferBinary(const char* op, const std::vector<TensorMeta>& inputs,
                                    bool allow_integer);

}  // namespace ofl::ops
