// pow(a, b) = a ** b elementwise, both tensors, with broadcasting, in their promoted type (integer
// or float; integers exactly, as PyTorch's). One of the pointwise ops (ops/pointwise_op.h).
// Gradients, as PyTorch's: g * b * a ** (b - 1) to a (0 where b is 0), g * a ** b * log(a) to b
// (0 where a is 0 and b >= 0), each summed to its operand's shape; written with public ops, so
// differentiable again.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/grad_util.h"
#include "ops/pointwise_op.h"

namespace ofl::ops {
namespace {
OpSchema MakePowOp() {
  OpSchema op = MakePointwiseOp(
      "pow", PointwiseDTypes::kNumeric, Bit(0) | Bit(1),
      [](const GradContext& ctx, const std::vector<Tensor>& g) {
        const Tensor& a = ctx.inputs[0];
        const Tensor& b = ctx.inputs[1];
        std::vector<Tensor> dx(2);
        if (ctx.needs(0)) {
          const Tensor d = b * pow(a, b - 1);
          dx[0] = SumTo(g[0] * where(b == 0, zeros_like(d), d), ctx.input_info[0].shape);
        }
        if (ctx.needs(1)) {
          const Tensor d = ctx.outputs[0] * log(a);
          dx[1] = SumTo(g[0] * where(logical_and(a == 0, b >= 0), zeros_like(d), d),
                        ctx.input_info[1].shape);
        }
        return dx;
      });
  op.save_outputs = Bit(0);
  return op;
}
OFL_REGISTER_OP(MakePowOp);
}  // namespace
}  // namespace ofl::ops
