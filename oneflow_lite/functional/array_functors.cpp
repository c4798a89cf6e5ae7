// The C++ API of the array ops: each call goes through its op's definition (ops/<name>_op.cpp) on
// the stages of an op call (op_call.h), local or global.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl {

using functional::Call;

// Each function looks its op up once (function-local statics: the op files register at load).
Tensor expand(const Tensor& x, const std::vector<int64_t>& sizes) {
  static const ops::OpSchema& op = ops::BuiltinOp("expand");
  return Call(op, x, Attrs(op.attrs, sizes));
}

Tensor contiguous(const Tensor& x) {
  static const ops::OpSchema& op = ops::BuiltinOp("contiguous");
  return Call(op, x, {});
}

Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats) {
  static const ops::OpSchema& op = ops::BuiltinOp("repeat");
  return Call(op, x, Attrs(op.attrs, repeats));
}

Tensor reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  static const ops::OpSchema& op = ops::BuiltinOp("reshape");
  return Call(op, x, Attrs(op.attrs, shape));
}

Tensor view(const Tensor& x, const std::vector<int64_t>& shape) {
  static const ops::OpSchema& op = ops::BuiltinOp("reshape");
  // A global tensor's view is checked on its shards by reshape's own rule (it boxes instead).
  if (x.defined() && !x.is_global()) {
    const Shape out = ops::InferReshape(x.shape(), shape);  // reshape's own shape errors
    if (!ops::ReshapeStrides(x.shape(), Strides(x.stride()), out)) {
      throw InvalidArgument("view: shape " + out.str() +
                            " is not compatible with the input's shape " + x.shape().str() +
                            " and strides " + Strides(x.stride()).str() +
                            " (no view of the same storage has it); use reshape, which copies");
    }
  }
  return Call(op, x, Attrs(op.attrs, shape));
}

Tensor clone(const Tensor& x) {
  static const ops::OpSchema& op = ops::BuiltinOp("clone");
  return Call(op, x, {});
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  static const ops::OpSchema& op = ops::BuiltinOp("permute");
  return Call(op, x, Attrs(op.attrs, dims));
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  static const ops::OpSchema& op = ops::BuiltinOp("narrow");
  return Call(op, x, Attrs(op.attrs, dim, start, length));
}

Tensor expand_backward(const Tensor& dy, const Shape& input_shape) {
  static const ops::OpSchema& op = ops::BuiltinOp("expand_backward");
  return Call(op, dy, Attrs(op.attrs, input_shape));
}

Tensor repeat_backward(const Tensor& dy, const Shape& input_shape,
                       const std::vector<int64_t>& repeats) {
  static const ops::OpSchema& op = ops::BuiltinOp("repeat_backward");
  return Call(op, dy, Attrs(op.attrs, input_shape, repeats));
}

}  // namespace ofl
