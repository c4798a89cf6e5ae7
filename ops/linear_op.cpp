// linear(x, weight, bias) for a 2-dim x (N, in), weight (out, in) and bias (out) of one dtype:
// x weight^T + bias as one recorded node, made of mm (the transposed weight passed to BLAS as a
// flag, not copied) and an in-place add of the bias into the product. Its gradient takes each
// input's layout directly: g weight for x, g^T x for the weight (contiguous, of the weight's own
// layout, where mm through a permuted weight gave the transpose of the product, which .grad then
// copied), and g summed over the rows for the bias. ofl::linear takes this op for those shapes
// (oneflow_lite/functional/matmul_functors.cpp) and matmul plus add otherwise.
#include <string>
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"
#include "ops/sbp_rules.h"

namespace ofl::ops {
namespace {

OpSchema MakeLinearOp() {
  OpSchema op;
  op.name = "linear";
  op.num_inputs = 3;
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    const Shape& x = in[0].shape;
    const Shape& w = in[1].shape;
    const Shape& b = in[2].shape;
    if (x.ndim() != 2 || w.ndim() != 2 || b.ndim() != 1 || x[1] != w[1] || b[0] != w[0] ||
        in[1].dtype != in[0].dtype || in[2].dtype != in[0].dtype || in[0].dtype == DType::kBool) {
      throw InvalidArgument("linear: input " + x.str() + " " + to_string(in[0].dtype) +
                            ", weight " + w.str() + " " + to_string(in[1].dtype) + " and bias " +
                            b.str() + " " + to_string(in[2].dtype) + " do not make a linear layer");
    }
    return std::vector<TensorMeta>{TensorMeta{Shape({x[0], w[0]}), in[0].dtype}};
  };
  op.form = ComposeForm{[](const std::vector<Tensor>& in, const Attrs&) {
    Tensor y = mm(in[0], in[1].permute({1, 0}));
    y.add_(in[2]);
    return std::vector<Tensor>{y};
  }};
  op.save_inputs = Bit(0) | Bit(1);
  op.save_inputs_for = [](uint64_t needs) -> uint64_t {
    return ((needs & Bit(0)) ? Bit(1) : 0) | ((needs & Bit(1)) ? Bit(0) : 0);
  };
  op.backward_name = "LinearBackward";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> d(3);
    if (ctx.needs(0)) d[0] = mm(g[0], ctx.inputs[1]);
    if (ctx.needs(1)) d[1] = mm(g[0].permute({1, 0}), ctx.inputs[0]);
    if (ctx.needs(2)) d[2] = g[0].sum({0});
    return d;
  };
  op.sbp_signature = LinearSignature;
  return op;
}
OFL_REGISTER_OP(MakeLinearOp);

}  // namespace
}  // namespace ofl::ops
