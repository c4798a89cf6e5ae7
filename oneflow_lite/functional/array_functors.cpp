// The C++ API of the array ops: each call goes through its op's definition (ops/<name>_op.cpp) on
// the one generic path (dispatch.h), local or global.
#include <vector>

#include "oneflow_lite/functional/dispatch.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl {

using functional::Dispatch;

// Each function looks its op up once (function-local statics: the op files register at load).
Tensor expand(const Tensor& x, const std::vector<int64_t>& sizes) {
  static const ops::OpSchema& op = ops::BuiltinOp("expand");
  return Dispatch(op, x, sizes);
}

Tensor contiguous(const Tensor& x) {
  static const ops::OpSchema& op = ops::BuiltinOp("contiguous");
  return Dispatch(op, x, {});
}

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  static const ops::OpSchema& op = ops::BuiltinOp("repeat");
  return Dispatch(op, x, repeats);
}

Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  static const ops::OpSchema& op = ops::BuiltinOp("reshape");
  return Dispatch(op, x, shape);
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  static const ops::OpSchema& op = ops::BuiltinOp("permute");
  return Dispatch(op, x, dims);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  static const ops::OpSchema& op = ops::BuiltinOp("narrow");
  return Dispatch(op, x, {dim, start, length});
}

Tensor expand_backward(const Tensor& dy, const Shape& input_shape) {
  static const ops::OpSchema& op = ops::BuiltinOp("expand_backward");
  return Dispatch(op, dy, input_shape.vec());
}

Tensor repeat_backward(const Tensor& dy, const Shape& input_shape,
                       const std::vector<int64_t>& repeats) {
  static const ops::OpSchema& op = ops::BuiltinOp("repeat_backward");
  return Dispatch(op, dy, ops::RepeatBackwardAttrs(input_shape, repeats));
}

}  // namespace ofl
