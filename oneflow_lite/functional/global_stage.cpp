// The global stage of an op call (op_call.h): the logical output and its SBP from the definition
// (the same verdict on every rank: only logical shapes enter it), boxing to broadcast where no
// SBP passes through, then the autograd stage on this rank's shard with its physical attributes.
// Ranks outside the placement compute nothing.
#include <optional>
#include <string>

#include "oneflow_lite/distributed.h"
#include "oneflow_lite/functional/functor_util.h"
#include "oneflow_lite/functional/global_util.h"
#include "oneflow_lite/functional/stages.h"
#include "ops/array_ops.h"
#include "ops/sbp_rules.h"

namespace ofl::functional::stage {

namespace {
Shape LogicalOutput(const ops::OpSchema& op, const Shape& in, DType dtype, const Attrs& attrs) {
  if (const ops::ViewForm* view = op.as<ops::ViewForm>()) {
    std::optional<ops::ViewGeometry> v = view->geometry(in, RowMajorStrides(in), dtype, attrs);
    if (!v) throw Error(op.name + ": internal: no view of a contiguous tensor");
    return v->shape;
  }
  std::vector<TensorMeta> out = op.infer({TensorMeta{in, dtype}}, attrs);
  if (out.size() != 1) throw Error(op.name + ": internal: a global op with one output only");
  ops::CheckDType(op.name.c_str(), out[0].dtype);
  ops::CheckShape(op.name.c_str(), "output shape", out[0].shape, element_size(out[0].dtype));
  return out[0].shape;
}
}  // namespace

Tensor Global(const ops::OpSchema& op, const Tensor& x, const Attrs& attrs) {
  const char* name = op.name.c_str();
  // An op without an SBP signature refuses global tensors (the message says what to do).
  if (!op.sbp) (void)ImplOf(name, x);
  const GlobalMeta& g = *LocalImplOf(name, x).global();
  const Shape& in = g.logical_shape;
  const Shape out = LogicalOutput(op, in, x.dtype(), attrs);
  const ops::GlobalCall logical{in, g.sbp, out, attrs};
  const std::optional<Sbp> passes = op.sbp(logical);
  const Sbp out_sbp = passes ? *passes : Sbp::broadcast();
  const Sbp in_sbp = passes ? g.sbp : Sbp::broadcast();
  const Tensor src = passes ? x : x.to_global(g.placement, Sbp::broadcast());
  const int me = g.placement.index_of(ofl::rank());
  if (me < 0) return GlobalOverShard(EmptyShard(x.dtype()), g.placement, out_sbp, out);
  const Tensor shard = ShardOf(src);
  const Shape local_out = ops::PhysicalShape(out, out_sbp, g.placement.size(), me);
  const ops::GlobalCall call{in, in_sbp, out, attrs};
  const Attrs local_attrs =
      op.local_attrs ? op.local_attrs(call, out_sbp, shard.shape(), local_out) : attrs;
  return GlobalOverShard(Autograd(op, shard, local_attrs), g.placement, out_sbp, out);
}

std::vector<Tensor> Global(const ops::OpSchema& op, const std::vector<Tensor>& inputs,
                           const Attrs& attrs) {
  if (op.sbp && inputs.size() == 1) return {Global(op, inputs[0], attrs)};
  // SBP signatures exist for single-input ops only: name the first global input.
  for (const Tensor& x : inputs) (void)ImplOf(op.name.c_str(), x);
  throw Error(op.name + ": internal: no global input");
}

}  // namespace ofl::functional::stage
