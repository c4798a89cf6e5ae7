// where(condition, x, y): x where condition is true, else y, elementwise with broadcasting of all
// three; condition is bool, x and y are cast to their promoted type (PyTorch's result_type).
// Gradients: g where condition holds to x, where it does not to y (zeros elsewhere), summed to
// their shapes; the condition gets none. Saves the condition.
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/array_ops.h"
#include "ops/broadcast.h"
#include "ops/grad_util.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeWhereOp() {
  OpSchema op;
  op.name = "where";
  op.num_inputs = 3;
  op.form = KernelForm{/*kernel=*/"", /*broadcast_inputs=*/true};
  op.input_cast = InputCast::kResultTypeAfterFirst;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    if (in[0].dtype != DType::kBool) {
      throw InvalidArgument("where: the condition's dtype is " + to_string(in[0].dtype) +
                            "; expected bool (compare, or cast with .to(bool), first)");
    }
    if (in[1].dtype != in[2].dtype) {
      throw InvalidArgument("where: x and y have different dtypes, " + to_string(in[1].dtype) +
                            " and " + to_string(in[2].dtype));
    }
    CheckDType("where", in[1].dtype);
    const Shape shape =
        BroadcastShapes("where", BroadcastShapes("where", in[0].shape, in[1].shape), in[2].shape);
    return std::vector<TensorMeta>{TensorMeta{shape, in[1].dtype}};
  };
  op.save_inputs = Bit(0);
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    const Tensor& c = ctx.inputs[0];
    const Tensor zero =
        zeros(Shape(std::vector<int64_t>{}), g[0].dtype(), ctx.input_info[1].device);
    std::vector<Tensor> dx(3);
    if (ctx.needs(1)) dx[1] = SumTo(where(c, g[0], zero), ctx.input_info[1].shape);
    if (ctx.needs(2)) dx[2] = SumTo(where(c, zero, g[0]), ctx.input_info[2].shape);
    return dx;
  };
  op.sbp_signature = [](const GlobalInputs& c) {
    return ElementwiseSignature(c, PartialInputs::kNone);
  };
  return op;
}
OFL_REGISTER_OP(MakeWhereOp);
}  // namespace
}  // namespace ofl::ops
