// Helpers for the backwards of the op files, written with public ops only (so they run on every
// device and are themselves recorded instructions).
#pragma once

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/tensor.h"
#include "ops/op_schema.h"

namespace ofl::ops {

// g summed over the dims where `shape` was broadcast to g's shape (g itself when the shapes
// agree): the gradient of a broadcast operand.
inline Tensor SumTo(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  return expand_backward(g, shape);
}

// Zeros of input i's shape on its device in `dtype` (a global input's: broadcast over its
// placement), for a backward that adds into them (gather's scatter_add).
inline Tensor ZerosOfInput(const GradContext& ctx, int i, DType dtype) {
  const ArgInfo& a = ctx.input_info[static_cast<size_t>(i)];
  if (a.placement) return ctx.global_zeros(a, dtype);
  return zeros(a.shape, dtype, a.device);
}

}  // namespace ofl::ops
