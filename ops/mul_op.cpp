// mul(a, b) = a * b, with broadcasting. Gradients: g * b and g * a, summed to the operands'
// shapes; saves only the operand each wanted gradient reads (b for a's, a for b's), so a backward
// finds those changed in place through their versions and ignores changes to the others.
#include "ops/broadcast.h"
#include "ops/grad_util.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {
OpSchema MakeMulOp() {
  OpSchema op;
  op.name = "mul";
  op.num_inputs = 2;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    return InferBinary("mul", in, /*allow_integer=*/true);
  };
  op.form = KernelForm{/*kernel=*/"", /*broadcast_inputs=*/true};
  op.input_cast = InputCast::kResultType;
  op.save_inputs = Bit(0) | Bit(1);
  op.save_inputs_for = [](uint64_t needs) -> uint64_t {
    return ((needs & Bit(0)) ? Bit(1) : 0) | ((needs & Bit(1)) ? Bit(0) : 0);
  };
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> dx(2);
    if (ctx.needs(0)) dx[0] = SumTo(g[0] * ctx.inputs[1], ctx.input_info[0].shape);
    if (ctx.needs(1)) dx[1] = SumTo(g[0] * ctx.inputs[0], ctx.input_info[1].shape);
    return dx;
  };
  op.sbp_signature = [](const GlobalInputs& c) {
    return ElementwiseSignature(c, PartialInputs::kOne);
  };
  return op;
}
OFL_REGISTER_OP(MakeMulOp);
}  // namespace
}  // namespace ofl::ops
