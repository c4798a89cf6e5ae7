// narrow(x, dim, start, length): attributes dim, start, length (ints; negative dim and start wrap).
// A view (ops/array_ops.h InferNarrow). Local tensors only. Gradient: g between zeros along dim
// (a cat, so that a second derivative flows through it).
#include <string>
#include <utility>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/op_schema.h"
#include "ops/reduce_dims.h"

namespace ofl::ops {
namespace {
OpSchema MakeNarrowOp() {
  OpSchema op;
  op.name = "narrow";
  op.attrs = {{"dim", AttrType::kInt}, {"start", AttrType::kInt}, {"length", AttrType::kInt}};
  ViewForm view;
  view.geometry = [](const Shape& shape, const Strides& stride, DType, const Attrs& attrs) {
    return std::optional<ViewGeometry>(InferNarrow(
        shape, stride, attrs.get_int("dim"), attrs.get_int("start"), attrs.get_int("length")));
  };
  op.form = std::move(view);
  // g between zeros along dim: a cat (itself differentiable, so a backward recorded with
  // create_graph keeps g's history; a copy_ into a view of zeros would not).
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const ArgInfo& x = ctx.input_info[0];
    const int d = WrapDim("narrow", ctx.attrs.get_int("dim"), x.shape.ndim());
    int64_t start = ctx.attrs.get_int("start");
    const int64_t length = ctx.attrs.get_int("length");
    if (start < 0) start += x.shape[d];
    std::vector<int64_t> before = x.shape.vec(), after = x.shape.vec();
    before[static_cast<size_t>(d)] = start;
    after[static_cast<size_t>(d)] = x.shape[d] - start - length;
    return std::vector<Tensor>{cat({zeros(Shape(before), g[0].dtype(), x.device), g[0],
                                    zeros(Shape(after), g[0].dtype(), x.device)},
                                   d)};
  };
  return op;
}
OFL_REGISTER_OP(MakeNarrowOp);
}  // namespace
}  // namespace ofl::ops
