// pow(x, exponent) = x ** exponent for a number exponent (a double attribute): a float tensor
// (an integer one is cast to float32 first). Gradient: g * exponent * x ** (exponent - 1), and
// zeros for exponent 0 (where x ** -1 would make 0 * inf at x = 0). Written with public ops, the
// backward runs on every device and is itself differentiable.
#include <vector>

#include "oneflow_lite/functional/functional.h"
#include "ops/unary_op.h"

namespace ofl::ops {
namespace {
OpSchema MakePowScalarOp() {
  OpSchema op = MakeUnaryOp("pow_scalar", UnaryDTypes::kFloat, Bit(0), 0,
                            [](const GradContext& ctx, const std::vector<Tensor>& g) {
                              const double p = ctx.attrs.get_double("exponent");
                              if (p == 0) return OneGrad(zeros_like(g[0]));
                              return OneGrad(g[0] * (pow(ctx.inputs[0], p - 1) * p));
                            });
  op.attrs = {{"exponent", AttrType::kDouble}};
  return op;
}
OFL_REGISTER_OP(MakePowScalarOp);
}  // namespace
}  // namespace ofl::ops
