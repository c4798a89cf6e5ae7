// cross_entropy (fused): the class-index cross-entropy of logits x (N, C) and int64 targets t (N)
// with reduction "mean" or "sum", no class weights and no label smoothing, as one kernel
// (kernels/cross_entropy.h) where ofl::cross_entropy composes about ten ops
// (oneflow_lite/functional/loss_functors.cpp takes this op where its kernel exists for the device
// type, the composition elsewhere). Gradient to x: g * (softmax(x) - onehot(t)), 0 on ignored
// rows, divided by the rows kept for the mean: the op cross_entropy_backward, one kernel, whose own
// gradient (to x and to g, in public ops) makes a recorded backward (create_graph) differentiate
// again.
#include <vector>

#include "oneflow_lite/error.h"
#include "oneflow_lite/extension.h"
#include "oneflow_lite/functional/functional.h"
#include "ops/op_schema.h"

namespace ofl::ops {
namespace {

void CheckOperands(const char* name, const TensorMeta& x, const TensorMeta& t) {
  if (x.shape.ndim() != 2 || !is_floating_point(x.dtype)) {
    throw InvalidArgument(std::string(name) + ": the logits must be 2-dim of a float dtype, got " +
                          x.shape.str() + " " + to_string(x.dtype));
  }
  if (t.shape.ndim() != 1 || t.shape[0] != x.shape[0] || t.dtype != DType::kInt64) {
    throw InvalidArgument(std::string(name) + ": the target must be int64 of shape (" +
                          std::to_string(x.shape[0]) + "), got " + t.shape.str() + " " +
                          to_string(t.dtype));
  }
}

// Each row's weight in the loss: 0 for an ignored row, else 1, over the rows kept for the mean.
Tensor RowWeights(const Tensor& t, int64_t ignore_index, bool mean, DType dtype) {
  Tensor w = ne(t, Scalar(ignore_index)).to(dtype);
  return mean ? w / w.sum() : w;
}

OpSchema MakeCrossEntropyOp() {
  OpSchema op;
  op.name = "cross_entropy";
  op.num_inputs = 2;
  op.attrs = {{"ignore_index", AttrType::kInt}, {"mean", AttrType::kBool}};
  op.form = KernelForm{};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    CheckOperands("cross_entropy", in[0], in[1]);
    return std::vector<TensorMeta>{TensorMeta{Shape(), in[0].dtype}};
  };
  op.save_inputs = Bit(0) | Bit(1);
  op.backward_name = "CrossEntropyBackward";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& g) {
    std::vector<Tensor> out =
        call_op("cross_entropy_backward", {ctx.inputs[0], ctx.inputs[1], g[0]},
                {{"ignore_index", ctx.attrs.get_int("ignore_index")},
                 {"mean", ctx.attrs.get_bool("mean")}});
    return std::vector<Tensor>{out[0], Tensor()};
  };
  return op;
}
OFL_REGISTER_OP(MakeCrossEntropyOp);

OpSchema MakeCrossEntropyBackwardOp() {
  OpSchema op;
  op.name = "cross_entropy_backward";
  op.num_inputs = 3;
  op.attrs = {{"ignore_index", AttrType::kInt}, {"mean", AttrType::kBool}};
  op.form = KernelForm{};
  op.infer = [](const std::vector<TensorMeta>& in, const Attrs&) {
    CheckOperands("cross_entropy_backward", in[0], in[1]);
    if (in[2].shape.ndim() != 0 || in[2].dtype != in[0].dtype) {
      throw InvalidArgument("cross_entropy_backward: the gradient must be 0-dim " +
                            to_string(in[0].dtype) + ", got " + in[2].shape.str() + " " +
                            to_string(in[2].dtype));
    }
    return std::vector<TensorMeta>{in[0]};
  };
  // y = (s - onehot) * w * g, s = softmax(x) by rows, w the row weights: for the upstream G,
  // dx = s * (a - sum(a * s)) by rows with a = G * w * g (softmax's gradient), and
  // dg = sum(G * (s - onehot) * w).
  op.save_inputs = Bit(0) | Bit(1) | Bit(2);
  op.backward_name = "CrossEntropyBackwardBackward";
  op.backward = [](const GradContext& ctx, const std::vector<Tensor>& grads) {
    const Tensor& x = ctx.inputs[0];
    const Tensor& t = ctx.inputs[1];
    const Tensor& g = ctx.inputs[2];
    const Tensor w =
        RowWeights(t, ctx.attrs.get_int("ignore_index"), ctx.attrs.get_bool("mean"), x.dtype())
            .unsqueeze(1);
    const Tensor s = softmax(x, 1);
    std::vector<Tensor> d(3);
    if (ctx.needs(0)) {
      const Tensor a = grads[0] * w * g;
      d[0] = s * (a - (a * s).sum({1}, true));
    }
    if (ctx.needs(2)) {
      const Tensor keep = ne(t, Scalar(ctx.attrs.get_int("ignore_index")));
      const Tensor onehot = one_hot(where(keep, t, zeros_like(t)), x.shape()[1]).to(x.dtype());
      d[2] = (grads[0] * (s - onehot) * w).sum();
    }
    return d;
  };
  return op;
}
OFL_REGISTER_OP(MakeCrossEntropyBackwardOp);

}  // namespace
}  // namespace ofl::ops
