// The hand-written bodies of the op table's `view` and `to(dtype)` (ops/op_table.py: body
// "manual"): view is reshape's definition after a check that x's strides allow a view; to(dtype)
// is the cast op, or x itself when it has the dtype (PyTorch's Tensor.to). The other array ops'
// functions are generated from the table.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "oneflow_lite/functional/op_call.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"

namespace ofl {

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
  return functional::Call(op, x, Attrs(op.attrs, shape));
}

Tensor to(const Tensor& x, DType dtype) {
  static const ops::OpSchema& op = ops::BuiltinOp("cast");
  if (x.defined() && x.dtype() == dtype) return x;
  return functional::Call(op, x, Attrs(op.attrs, dtype));
}

}  // namespace ofl
